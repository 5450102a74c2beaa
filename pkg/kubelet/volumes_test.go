package kubelet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/kubelet/sim"
	"github.com/skiff-sh/skiff/pkg/kubelet/volume"
)

// A pod whose configMap is missing stays Pending with FailedMount events
// and no sandbox; once the configMap exists it runs with the volume
// mounted; once it is deleted its volumes are gone.
func TestVolumesSetUpBeforeTheSandbox(t *testing.T) {
	root := t.TempDir()
	h := newHarness(t, sim.Config{}, func(c *Config) { c.RootDir = root; c.Volumes = &volume.Config{} })
	cms := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](h.c).Namespace("default")
	// The kube-api-access volume needs the cluster CA's configMap (the
	// controller manager's root-ca-cert-publisher makes it).
	if _, err := cms.Create(h.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt"}, Data: map[string]string{"ca.crt": "PEM"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := simplePod("web", "app")
	pod.Spec.Volumes = []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "cfg", MountPath: "/etc/app"}}
	h.create(t, pod)
	want := `Warning FailedMount MountVolume.SetUp failed for volume "cfg" : configmap "app-config" not found`
	waitFor(t, "the FailedMount event", func() (bool, error) {
		for _, e := range h.events() {
			if e == want {
				return true, nil
			}
		}
		return false, nil
	})
	p := h.podWhere(t, "web", 0, func(p *corev1.Pod) bool { return len(p.Status.ContainerStatuses) == 1 })
	if p.Status.Phase != corev1.PodPending || p.Status.ContainerStatuses[0].State.Waiting == nil ||
		p.Status.ContainerStatuses[0].State.Waiting.Reason != "ContainerCreating" {
		t.Errorf("pod status %+v, want Pending with the container ContainerCreating", p.Status)
	}
	h.cri.mu.Lock()
	sandboxes := len(h.cri.sandboxes)
	h.cri.mu.Unlock()
	if sandboxes != 0 {
		t.Fatalf("%d sandboxes created before the volumes were ready", sandboxes)
	}
	if _, err := cms.Create(h.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app-config"}, Data: map[string]string{"app.conf": "x=1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Retried after the pod workers' back-off.
	p = h.podWhere(t, "web", 2*time.Second, isReady)
	dir := filepath.Join(root, "pods", string(p.UID), "volumes", "kubernetes.io~configmap", "cfg")
	if b, err := os.ReadFile(filepath.Join(dir, "app.conf")); err != nil || string(b) != "x=1" {
		t.Fatalf("app.conf: %q, %v", b, err)
	}
	h.cri.mu.Lock()
	var mounts []*runtimeapi.Mount
	for _, c := range h.cri.creates {
		if c.Config.GetMetadata().GetName() == "app" {
			mounts = c.Config.Mounts
		}
	}
	h.cri.mu.Unlock()
	var paths []string
	for _, m := range mounts {
		paths = append(paths, m.ContainerPath)
		if m.ContainerPath == "/etc/app" && (m.HostPath != dir || !m.Readonly) {
			t.Errorf("mount %v, want %s read-only", m, dir)
		}
	}
	if got := strings.Join(paths, ","); got != "/etc/app,/var/run/secrets/kubernetes.io/serviceaccount,/etc/hosts,/dev/termination-log" { // the kubelet's hosts file and termination message last
		t.Errorf("container mounts %s", got)
	}
	hosts, err := os.ReadFile(filepath.Join(root, "pods", string(p.UID), "etc-hosts"))
	if err != nil || !strings.HasPrefix(string(hosts), "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n") ||
		!strings.HasSuffix(string(hosts), "\n"+p.Status.PodIP+"\tweb\n") {
		t.Errorf("etc-hosts %q, %v", hosts, err)
	}
	if err := h.pods.Delete(h.ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitStepping(t, "pod gone", time.Second, func() (bool, error) {
		_, err := h.pods.Get(h.ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
	waitFor(t, "the pod's directory removed", func() (bool, error) {
		_, err := os.Stat(filepath.Join(root, "pods", string(p.UID)))
		return os.IsNotExist(err), err
	})
}

// A pod that finished gives its volumes back (its emptyDir is gone) while
// it stays in the API server.
func TestVolumesReleasedWhenThePodFinishes(t *testing.T) {
	root := t.TempDir()
	h := newHarness(t, sim.Config{RunDuration: 3 * time.Second}, func(c *Config) { c.RootDir = root; c.Volumes = &volume.Config{} })
	p := simplePod("job-pod", "work")
	p.Spec.RestartPolicy = corev1.RestartPolicyNever
	p.Spec.AutomountServiceAccountToken = new(bool)
	p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
	h.create(t, p)
	p = h.podWhere(t, "job-pod", 0, isReady)
	dir := filepath.Join(root, "pods", string(p.UID), "volumes", "kubernetes.io~empty-dir", "scratch")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("emptyDir of the running pod: %v", err)
	}
	h.podWhere(t, "job-pod", time.Second, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	// The volumes go; the containers' termination message files stay
	// while the pod exists.
	waitFor(t, "the finished pod's volumes released", func() (bool, error) {
		_, err := os.Stat(filepath.Join(root, "pods", string(p.UID), "volumes"))
		return os.IsNotExist(err), err
	})
	// Later syncs of the finished pod set nothing up again.
	h.clk.Step(time.Minute)
	time.Sleep(100 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(root, "pods", string(p.UID), "volumes")); !os.IsNotExist(err) {
		t.Errorf("volumes of a finished pod set up again: %v", err)
	}
}

// subPathExpr expands from the container's whole environment (here a
// configMapKeyRef), as upstream's.
func TestSubPathExprFromTheEnvironment(t *testing.T) {
	root := t.TempDir()
	h := newHarness(t, sim.Config{}, func(c *Config) { c.RootDir = root; c.Volumes = &volume.Config{} })
	cms := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](h.c).Namespace("default")
	if _, err := cms.Create(h.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"dir": "tenant-a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := simplePod("web", "app")
	p.Spec.AutomountServiceAccountToken = new(bool)
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "DIR", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "dir"}}}}
	p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data", SubPathExpr: "$(DIR)/logs"}}
	h.create(t, p)
	p = h.podWhere(t, "web", 0, isReady)
	want := filepath.Join(root, "pods", string(p.UID), "volumes", "kubernetes.io~empty-dir", "data", "tenant-a", "logs")
	h.cri.mu.Lock()
	defer h.cri.mu.Unlock()
	// The volume's mount, then the kubelet's managed /etc/hosts and
	// termination message file.
	if len(h.cri.creates) != 1 || len(h.cri.creates[0].Config.Mounts) != 3 || h.cri.creates[0].Config.Mounts[0].HostPath != want ||
		h.cri.creates[0].Config.Mounts[1].ContainerPath != "/etc/hosts" || h.cri.creates[0].Config.Mounts[2].ContainerPath != "/dev/termination-log" {
		t.Fatalf("container created with %v, want the mount from %s", h.cri.creates, want)
	}
}

// The directory of a pod the kubelet does not have (left by an earlier
// kubelet) is removed after two cleanup rounds; a running pod's stays.
func TestOrphanedPodDirectoriesRemoved(t *testing.T) {
	root := t.TempDir()
	orphan := filepath.Join(root, "pods", "0000-orphan", "volumes", "kubernetes.io~empty-dir", "x")
	if err := os.MkdirAll(orphan, 0o755); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, sim.Config{}, func(c *Config) { c.RootDir = root; c.Volumes = &volume.Config{} })
	p := simplePod("web", "app")
	p.Spec.AutomountServiceAccountToken = new(bool)
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	h.create(t, p)
	p = h.podWhere(t, "web", 0, isReady)
	mine := filepath.Join(root, "pods", string(p.UID))
	gone := func() bool { _, err := os.Stat(filepath.Join(root, "pods", "0000-orphan")); return os.IsNotExist(err) }
	h.clk.Step(orphanCleanupPeriod)
	time.Sleep(100 * time.Millisecond)
	if gone() {
		t.Fatal("an orphan removed at its first sighting")
	}
	h.waitStepping(t, "the orphan removed", orphanCleanupPeriod, func() (bool, error) { return gone(), nil })
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("the running pod's directory: %v", err)
	}
}
