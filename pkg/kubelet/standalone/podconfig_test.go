package standalone

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/containerd"
	"github.com/skiff-sh/skiff/pkg/kubelet"
	"github.com/skiff-sh/skiff/pkg/kubelet/volume"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// The kubelet's CRI configurations work on a real containerd: a container
// sees its resolved environment (configMap, downward API, service
// variables, $(VAR) in its command), runs as the user, group and
// capabilities its security context says with a read-only root
// filesystem, gets the cluster DNS and the managed /etc/hosts, and its
// cgroup has the CPU quota and memory limit of its resources.
func TestPodConfigOnContainerd(t *testing.T) {
	for _, bin := range []string{"containerd", "runc", "ctr"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed (apt-get install containerd runc): this test runs a real containerd", bin)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: containerd and runc need root here")
	}
	if testing.Short() {
		t.Skip("-short: this test runs a real containerd")
	}
	base, err := os.MkdirTemp("", "ctp")
	must(t, err)
	t.Cleanup(func() {
		if err := os.RemoveAll(base); err != nil {
			t.Errorf("removing %s: %v", base, err)
		}
	})
	env := testenv.StartT(t, testenv.Config{})
	must(t, env.EnsureServiceAccount(context.Background(), "default", "default"))
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	must(t, err)

	bridge, subnet := fmt.Sprintf("skp%d", os.Getpid()%100000), fmt.Sprintf("10.252.%d.0/24", os.Getpid()%250)
	conflist := fmt.Sprintf(`{"cniVersion": "0.4.0", "name": "skiff-test", "plugins": [{"type": "bridge", "bridge": %q,
  "isGateway": true, "ipMasq": false, "ipam": {"type": "host-local", "ranges": [[{"subnet": %q}]],
  "routes": [{"dst": "0.0.0.0/0"}], "dataDir": %q}}]}`, bridge, subnet, filepath.Join(base, "cni", "ipam"))
	must(t, os.MkdirAll(filepath.Join(base, "cni", "net.d"), 0o755))
	must(t, os.WriteFile(filepath.Join(base, "cni", "net.d", "10-test.conflist"), []byte(conflist), 0o644))
	t.Cleanup(func() { exec.Command("ip", "link", "del", bridge).Run() })

	sup, err := containerd.New(containerd.Config{Dir: filepath.Join(base, "containerd"), RemovePodsOnStop: true})
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	supDone, kDone := make(chan error, 1), make(chan error, 1)
	go func() { supDone <- sup.Run(ctx) }()
	kctx, kcancel := context.WithCancel(ctx)
	t.Cleanup(func() {
		kcancel()
		if err := <-kDone; err != nil {
			t.Errorf("kubelet: %v", err)
		}
		cancel()
		if err := <-supDone; err != nil {
			t.Errorf("containerd: %v", err)
		}
	})
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	if err := sup.WaitReady(wctx); err != nil {
		kDone <- nil
		t.Fatal(err)
	}
	writeImages(t, filepath.Join(base, "images.tar"))
	if _, err := containerd.ImportImage(ctx, sup.Socket(), filepath.Join(base, "images.tar")); err != nil {
		kDone <- nil
		t.Fatal(err)
	}
	go func() {
		kDone <- Run(kctx, Config{Client: c, Endpoint: sup.Endpoint(), Events: true,
			Kubelet: kubelet.Config{NodeName: "node-1", PodLogDir: filepath.Join(base, "pods"), RootDir: filepath.Join(base, "kubelet"),
				Volumes: &volume.Config{}, ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local"}})
	}()

	cms := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](c).Namespace("default")
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"greeting": "hello"}}, metav1.CreateOptions{})
	must(t, err)
	script := strings.Join([]string{
		`echo "GREETING=$GREETING POD=$MY_POD SVC=$KUBERNETES_SERVICE_HOST"`,
		`echo "UID=$(id -u) GID=$(id -g) GROUPS=$(id -G)"`,
		`grep CapEff /proc/self/status`,
		`touch /rootfs-write 2>/dev/null && echo ROOTFS=rw || echo ROOTFS=ro`,
		`grep -c nameserver /etc/resolv.conf; cat /etc/resolv.conf`,
		`grep web-0 /etc/hosts`,
		`echo "QUOTA=$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us 2>/dev/null || cat /sys/fs/cgroup/cpu.max 2>/dev/null)"`,
		`echo "MEM=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max 2>/dev/null)"`,
		`echo -n "all done" > /dev/termination-log`,
	}, "; ")
	grace := int64(1)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "configured"}, Spec: corev1.PodSpec{
		NodeName: "node-1", RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: &grace,
		Hostname: "web-0", Subdomain: "web", AutomountServiceAccountToken: ptr(false),
		SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr(int64(1000)), RunAsGroup: ptr(int64(3000)), SupplementalGroups: []int64{4000}},
		Containers: []corev1.Container{{Name: "main", Image: "busybox:test", Command: []string{"/bin/sh", "-c", "$(SCRIPT)"},
			Env: []corev1.EnvVar{
				{Name: "GREETING", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: "greeting"}}},
				{Name: "MY_POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
				{Name: "SCRIPT", Value: script}},
			SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr(true), ReadOnlyRootFilesystem: ptr(true), AllowPrivilegeEscalation: ptr(false),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("64Mi")}},
		}}}}
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	_, err = pods.Create(ctx, pod, metav1.CreateOptions{})
	must(t, err)
	var last *corev1.Pod
	waitFor(t, 60*time.Second, "pod configured to finish", func() bool {
		p, err := pods.Get(ctx, "configured", metav1.GetOptions{})
		must(t, err)
		last = p
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	}, func() any {
		evs, _ := client.For[*corev1.Event, *corev1.EventList](c).Namespace("default").List(ctx, metav1.ListOptions{})
		var msgs []string
		if evs != nil {
			for _, e := range evs.Items {
				msgs = append(msgs, e.Reason+": "+e.Message)
			}
		}
		return fmt.Sprintf("%+v\nevents:\n%s", last.Status, strings.Join(msgs, "\n"))
	})
	logs, err := filepath.Glob(filepath.Join(base, "pods", "default_configured_*", "main", "0.log"))
	must(t, err)
	if len(logs) != 1 {
		t.Fatalf("log files %q (status %+v)", logs, last.Status)
	}
	b, err := os.ReadFile(logs[0])
	must(t, err)
	out := string(b)
	if last.Status.Phase != corev1.PodSucceeded {
		t.Errorf("phase %s; log:\n%s", last.Status.Phase, out)
	}
	if cs := last.Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.Message != "all done" {
		t.Errorf("the termination message is not in the status: %+v", cs)
	}
	for _, want := range []string{
		"GREETING=hello POD=configured SVC=10.",
		"UID=1000 GID=3000 GROUPS=3000 4000",
		"CapEff:\t0000000000000000",
		"ROOTFS=ro",
		"nameserver 10.96.0.10",
		"search default.svc.cluster.local svc.cluster.local cluster.local",
		"options ndots:5",
		"\tweb-0.web.default.svc.cluster.local\tweb-0",
		"QUOTA=50000",
		"MEM=67108864",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the container's output lacks %q:\n%s", want, out)
		}
	}
}

func ptr[T any](v T) *T { return &v }
