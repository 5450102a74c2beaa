package standalone

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/kubelet"
	"github.com/skiff-sh/skiff/pkg/kubelet/volume"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// A pod on a real containerd sees its volumes: a configMap (read-only,
// one key also by subPath), a secret, the downward API, the injected
// service account token, a Memory emptyDir (a tmpfs) and a hostPath it
// writes to; once deleted, its directory and tmpfs are gone.
func TestVolumesOnContainerd(t *testing.T) {
	r := newRealRuntime(t, testenv.Config{})
	c, base, ctx := r.c, r.base, r.ctx
	root := filepath.Join(base, "kubelet")
	r.runKubelet(t, Config{Events: true,
		Kubelet: kubelet.Config{NodeName: "node-1", PodLogDir: filepath.Join(base, "pods"), RootDir: root, Volumes: &volume.Config{ResyncPeriod: time.Second}}})

	cms := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](c).Namespace("default")
	for name, data := range map[string]map[string]string{"kube-root-ca.crt": {"ca.crt": "PEM"}, "cfg": {"greeting": "hello", "app.conf": "x=1"}} {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	secrets := client.For[*corev1.Secret, *corev1.SecretList](c).Namespace("default")
	if _, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sec"}, Data: map[string][]byte{"pw": []byte("s3cret")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hostDir := filepath.Join(base, "host")
	grace := int64(1)
	script := strings.Join([]string{
		"cat /etc/cfg/greeting; echo", "cat /etc/sec/pw; echo", "cat /etc/podinfo/name; echo",
		"cat /var/run/secrets/kubernetes.io/serviceaccount/namespace; echo",
		"test -s /var/run/secrets/kubernetes.io/serviceaccount/token && echo token-ok",
		"grep ' /scratch ' /proc/mounts | cut -d' ' -f3",
		"echo x > /scratch/f && echo scratch-ok",
		"touch /etc/cfg/new 2>/dev/null || echo cfg-read-only",
		"cat /app.conf; echo",
		"echo from-pod > /host/out",
		"grep -q '\tvols$' /etc/hosts && echo hosts-ok",
	}, "; ")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "vols"}, Spec: corev1.PodSpec{
		NodeName: "node-1", RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: &grace,
		Volumes: []corev1.Volume{
			{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
			{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "sec"}}},
			{Name: "podinfo", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}}},
			{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptrTo(resource.MustParse("4Mi"))}}},
			{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostDir, Type: ptrTo(corev1.HostPathDirectoryOrCreate)}}},
		},
		Containers: []corev1.Container{{Name: "main", Image: "busybox:test", Command: []string{"/bin/sh", "-c", script},
			VolumeMounts: []corev1.VolumeMount{
				{Name: "cfg", MountPath: "/etc/cfg"}, {Name: "cfg", MountPath: "/app.conf", SubPath: "app.conf"},
				{Name: "sec", MountPath: "/etc/sec"}, {Name: "podinfo", MountPath: "/etc/podinfo"},
				{Name: "scratch", MountPath: "/scratch"}, {Name: "host", MountPath: "/host"},
			}}}}}
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var last *corev1.Pod
	waitFor(t, 60*time.Second, "pod vols Succeeded", func() bool {
		p, err := pods.Get(ctx, "vols", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		last = p
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	}, func() any { return last.Status })
	logs, err := filepath.Glob(filepath.Join(base, "pods", "default_vols_*", "main", "0.log"))
	must(t, err)
	if len(logs) != 1 {
		t.Fatalf("log files: %q", logs)
	}
	b, err := os.ReadFile(logs[0])
	must(t, err)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		// CRI log lines: <time> stdout F <text>
		if f := strings.SplitN(l, " ", 4); len(f) == 4 {
			lines = append(lines, f[3])
		}
	}
	want := []string{"hello", "s3cret", "vols", "default", "token-ok", "tmpfs", "scratch-ok", "cfg-read-only", "x=1", "hosts-ok"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("the pod saw:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if last.Status.Phase != corev1.PodSucceeded {
		t.Errorf("pod %s", last.Status.Phase)
	}
	if out, err := os.ReadFile(filepath.Join(hostDir, "out")); err != nil || string(out) != "from-pod\n" {
		t.Errorf("hostPath file: %q, %v", out, err)
	}
	if err := pods.Delete(ctx, "vols", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "pod vols gone and its directory removed", func() bool {
		_, err := pods.Get(ctx, "vols", metav1.GetOptions{})
		_, serr := os.Stat(filepath.Join(root, "pods", string(created.UID)))
		return apierrors.IsNotFound(err) && os.IsNotExist(serr)
	}, nil)

	// A running container sees a configMap update through its mount of
	// the volume directory (the ..data swap), within a resync period (1 s
	// here, 1 min by default).
	watcher := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "watcher"}, Spec: corev1.PodSpec{
		NodeName: "node-1", TerminationGracePeriodSeconds: &grace, AutomountServiceAccountToken: new(bool),
		Volumes: []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}}},
		Containers: []corev1.Container{{Name: "main", Image: "busybox:test",
			Command:      []string{"/bin/sh", "-c", "while true; do cat /etc/cfg/greeting; echo; sleep 0.2; done"},
			VolumeMounts: []corev1.VolumeMount{{Name: "cfg", MountPath: "/etc/cfg"}}}}}}
	if _, err := pods.Create(ctx, watcher, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	watcherLog := func() string {
		logs, _ := filepath.Glob(filepath.Join(base, "pods", "default_watcher_*", "main", "0.log"))
		if len(logs) != 1 {
			return ""
		}
		b, _ := os.ReadFile(logs[0])
		return string(b)
	}
	waitFor(t, 60*time.Second, "the watcher to print the greeting", func() bool { return strings.Contains(watcherLog(), " hello\n") }, nil)
	cm, err := cms.Get(ctx, "cfg", metav1.GetOptions{})
	must(t, err)
	cm.Data["greeting"] = "bonjour"
	_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	must(t, err)
	waitFor(t, 30*time.Second, "the watcher to see the update", func() bool { return strings.Contains(watcherLog(), " bonjour\n") }, func() any { return watcherLog() })
	must(t, pods.Delete(ctx, "watcher", metav1.DeleteOptions{}))
	waitFor(t, 60*time.Second, "pod watcher gone", func() bool {
		_, err := pods.Get(ctx, "watcher", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, nil)

	if mi, err := os.ReadFile("/proc/self/mountinfo"); err == nil && strings.Contains(string(mi), root) {
		t.Errorf("mounts left under %s", root)
	}
}

func ptrTo[T any](v T) *T { return &v }
