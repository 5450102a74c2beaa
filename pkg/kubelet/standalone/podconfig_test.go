package standalone

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
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
	r := newRealRuntime(t, testenv.Config{})
	c, base, ctx := r.c, r.base, r.ctx
	var err error
	r.runKubelet(t, Config{Events: true,
		Kubelet: kubelet.Config{NodeName: "node-1", PodLogDir: filepath.Join(base, "pods"), RootDir: filepath.Join(base, "kubelet"),
			Volumes: &volume.Config{}, ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local"}})

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
