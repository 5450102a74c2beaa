package kubelet

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/kubelet/gc"
	"github.com/skiff-sh/skiff/pkg/kubelet/sim"
	"github.com/skiff-sh/skiff/pkg/kubelet/volume"
)

// Pods whose simulated memory usage pushes memory.available under the
// 100Mi hard threshold: the pod using more than it requested is evicted
// (Failed/Evicted with upstream's message, a Warning event, the
// DisruptionTarget condition), the node reports MemoryPressure, new
// BestEffort pods are refused while it lasts and it clears 5 min after
// the pressure is gone.
func TestMemoryPressureEvictsThePodOverItsRequest(t *testing.T) {
	h := newHarness(t, sim.Config{}, func(c *Config) {
		c.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("1Gi"),
			corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("100Gi")}
	})
	nodes := client.For[*corev1.Node, *corev1.NodeList](h.c)
	memoryPressure := func() *corev1.NodeCondition {
		n, err := nodes.Get(h.ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return nil
		}
		for i := range n.Status.Conditions {
			if n.Status.Conditions[i].Type == corev1.NodeMemoryPressure {
				return &n.Status.Conditions[i]
			}
		}
		return nil
	}
	small := simplePod("small", "app")
	small.Annotations = map[string]string{sim.AnnotationMemoryUsage: "50Mi"}
	small.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("100Mi")}
	h.create(t, small)
	h.podWhere(t, "small", time.Second, isReady)
	if c := memoryPressure(); c == nil || c.Status != corev1.ConditionFalse || c.Reason != "KubeletHasSufficientMemory" {
		t.Fatalf("MemoryPressure %+v before the hog", c)
	}

	hog := simplePod("hog", "app")
	hog.Annotations = map[string]string{sim.AnnotationMemoryUsage: "950Mi"}
	h.create(t, hog)
	want := "The node was low on resource: memory. Threshold quantity: 100Mi, available: 24Mi. Container app was using 950Mi, request is 0, has larger consumption of memory. "
	p := h.podWhere(t, "hog", 2*time.Second, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if p.Status.Reason != "Evicted" || p.Status.Message != want {
		t.Errorf("hog status %q %q, want Evicted %q", p.Status.Reason, p.Status.Message, want)
	}
	if c := condition(p, corev1.DisruptionTarget); c == nil || c.Status != corev1.ConditionTrue || c.Reason != "TerminationByKubelet" || c.Message != want {
		t.Errorf("DisruptionTarget %+v", c)
	}
	h.waitStepping(t, "MemoryPressure True", time.Second, func() (bool, error) {
		c := memoryPressure()
		return c != nil && c.Status == corev1.ConditionTrue && c.Reason == "KubeletHasInsufficientMemory" &&
			c.Message == "kubelet has insufficient memory available", nil
	})
	var evicted, met bool
	for _, e := range h.events() {
		evicted = evicted || e == "Warning Evicted "+want
		met = met || e == "Warning EvictionThresholdMet Attempting to reclaim memory"
	}
	if !evicted || !met {
		t.Errorf("Evicted event %v, EvictionThresholdMet %v", evicted, met)
	}
	// The hog's container is killed; the small pod runs on.
	h.waitStepping(t, "the hog's container stopped", time.Second, func() (bool, error) {
		p, err := h.pods.Get(h.ctx, "hog", metav1.GetOptions{})
		return err == nil && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Terminated != nil, err
	})
	if p, _ := h.pods.Get(h.ctx, "small", metav1.GetOptions{}); !isReady(p) {
		t.Errorf("small is %s", p.Status.Phase)
	}

	// Under MemoryPressure a BestEffort pod is refused, a Burstable one runs.
	h.create(t, simplePod("late", "app"))
	p = h.podWhere(t, "late", 0, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if p.Status.Reason != "Evicted" || p.Status.Message != "The node had condition: [MemoryPressure]. " {
		t.Errorf("late: %q %q", p.Status.Reason, p.Status.Message)
	}
	// Its container never ran: upstream's TerminatePod marks it failed.
	if cs := p.Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.Reason != "ContainerStatusUnknown" ||
		cs[0].State.Terminated.ExitCode != 137 || cs[0].State.Terminated.Message != "The container could not be located when the pod was terminated" {
		t.Errorf("late's container statuses %+v", cs)
	}
	burstable := simplePod("late-burstable", "app")
	burstable.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("10Mi")}
	h.create(t, burstable)
	h.podWhere(t, "late-burstable", 0, isReady)
	refused := false
	for _, e := range h.events() {
		refused = refused || strings.HasPrefix(e, "Warning Evicted The node had condition: [MemoryPressure]. ")
	}
	if !refused {
		t.Error("no Evicted event for the refused pod")
	}

	// The pressure is gone; the condition clears after the transition period.
	h.clk.Step(4 * time.Minute)
	time.Sleep(50 * time.Millisecond)
	if c := memoryPressure(); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("MemoryPressure %+v within the transition period", c)
	}
	h.waitStepping(t, "MemoryPressure False", 10*time.Second, func() (bool, error) {
		c := memoryPressure()
		return c != nil && c.Status == corev1.ConditionFalse && c.Reason == "KubeletHasSufficientMemory", nil
	})
	if p, _ := h.pods.Get(h.ctx, "small", metav1.GetOptions{}); !isReady(p) {
		t.Errorf("small is %s", p.Status.Phase)
	}
}

// fakeMachine is a node whose disk usage the test decides: base plus 5Gi
// per dead container the runtime holds.
type fakeMachine struct {
	rt   *sim.Runtime
	used atomic.Int64 // bytes besides dead containers; 0: no pressure
}

func (m *fakeMachine) Memory(context.Context) (uint64, uint64, error) { return 8 << 30, 1 << 30, nil }
func (m *fakeMachine) PIDs(context.Context) (uint64, uint64, error)   { return 4194304, 100, nil }
func (m *fakeMachine) ImageFs(ctx context.Context, _ *runtimeapi.FilesystemUsage) (gc.FsStats, error) {
	return m.NodeFs(ctx)
}
func (m *fakeMachine) NodeFs(ctx context.Context) (gc.FsStats, error) {
	used := uint64(m.used.Load())
	if used > 0 {
		resp, err := m.rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
			State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_EXITED}}})
		if err != nil {
			return gc.FsStats{}, err
		}
		used += uint64(len(resp.Containers)) * (5 << 30)
	}
	return gc.FsStats{CapacityBytes: 100 << 30, AvailableBytes: 100<<30 - min(used, 100<<30), Inodes: 1 << 20, InodesFree: 1 << 19}, nil
}

// Disk pressure: the dead containers of a finished pod are reclaimed
// before any pod is evicted; the node reports DiskPressure and refuses
// new pods; when reclaiming is not enough the running pod is evicted.
func TestDiskPressureReclaimsThenEvicts(t *testing.T) {
	m := &fakeMachine{}
	h := newHarness(t, sim.Config{}, func(c *Config) { c.Machine = m })
	m.rt = h.rt
	job := simplePod("job", "app")
	job.Spec.RestartPolicy = corev1.RestartPolicyNever
	job.Annotations = map[string]string{sim.AnnotationRunDuration: "0s"}
	h.create(t, job)
	h.podWhere(t, "job", time.Second, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	web := simplePod("web", "app")
	web.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("10Mi")}
	h.create(t, web)
	h.podWhere(t, "web", time.Second, isReady)

	// 82Gi + the job's dead container (5Gi): 13Gi left, under imagefs' 15%.
	m.used.Store(82 << 30)
	nodes := client.For[*corev1.Node, *corev1.NodeList](h.c)
	h.waitStepping(t, "DiskPressure True", time.Second, func() (bool, error) {
		n, err := nodes.Get(h.ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeDiskPressure {
				return c.Status == corev1.ConditionTrue && c.Reason == "KubeletHasDiskPressure" && c.Message == "kubelet has disk pressure", nil
			}
		}
		return false, nil
	})
	if fs, _ := m.NodeFs(h.ctx); fs.AvailableBytes != 18<<30 {
		t.Errorf("available %d after reclaim, want 18Gi (the job's dead container removed)", fs.AvailableBytes)
	}
	if p, _ := h.pods.Get(h.ctx, "web", metav1.GetOptions{}); !isReady(p) {
		t.Fatalf("web is %s: evicted although reclaiming was enough", p.Status.Phase)
	}
	// A new pod, even Burstable, is refused under disk pressure.
	late := simplePod("late", "app")
	late.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("10Mi")}
	h.create(t, late)
	p := h.podWhere(t, "late", 0, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if p.Status.Reason != "Evicted" || p.Status.Message != "The node had condition: [DiskPressure]. " {
		t.Errorf("late: %q %q", p.Status.Reason, p.Status.Message)
	}
	// Reclaiming no longer helps: web goes.
	m.used.Store(95 << 30)
	p = h.podWhere(t, "web", time.Second, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	want := "The node was low on resource: ephemeral-storage. Threshold quantity: 16106128000, available: 5Gi. " // imagefs.available<15% (of 100Gi through a float32) comes first
	if p.Status.Reason != "Evicted" || p.Status.Message != want {
		t.Errorf("web: %q %q, want %q", p.Status.Reason, p.Status.Message, want)
	}
}

// An emptyDir written past its sizeLimit gets its pod evicted (no
// DisruptionTarget: upstream adds it for threshold evictions only).
func TestEmptyDirOverItsSizeLimitIsEvicted(t *testing.T) {
	root := t.TempDir()
	h := newHarness(t, sim.Config{}, func(c *Config) { c.RootDir = root; c.Volumes = &volume.Config{} })
	p := simplePod("writer", "app")
	limit := resource.MustParse("1Ki")
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &limit}}}}
	p.Spec.AutomountServiceAccountToken = new(bool)
	p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	h.create(t, p)
	p = h.podWhere(t, "writer", time.Second, isReady)
	dir := filepath.Join(root, "pods", string(p.UID), "volumes", volume.PluginEmptyDir, "data")
	if err := os.WriteFile(filepath.Join(dir, "blob"), make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	p = h.podWhere(t, "writer", 20*time.Second, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if want := `Usage of EmptyDir volume "data" exceeds the limit "1Ki". `; p.Status.Reason != "Evicted" || p.Status.Message != want {
		t.Errorf("status %q %q, want Evicted %q", p.Status.Reason, p.Status.Message, want)
	}
	if c := condition(p, corev1.DisruptionTarget); c != nil {
		t.Errorf("DisruptionTarget %+v", c)
	}
}
