package kubelet

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
	"github.com/skiff-sh/skiff/pkg/kubelet/sim"
)

// debug adds an ephemeral container through pods/ephemeralcontainers, as
// kubectl debug does.
func (h *harness) debug(t *testing.T, pod, name, target string) {
	t.Helper()
	patch := `{"spec":{"ephemeralContainers":[{"name":"` + name + `","image":"busybox:1.35.0","targetContainerName":"` + target + `"}]}}`
	if _, err := h.pods.Patch(h.ctx, pod, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "ephemeralcontainers"); err != nil {
		t.Fatal(err)
	}
}

func (h *harness) creates(name string) int {
	h.cri.mu.Lock()
	defer h.cri.mu.Unlock()
	n := 0
	for _, c := range h.cri.creates {
		if c.GetConfig().GetMetadata().GetName() == name {
			n++
		}
	}
	return n
}

func ephemeralStatus(p *corev1.Pod, name string) *corev1.ContainerStatus {
	return findStatus(p.Status.EphemeralContainerStatuses, name)
}

// An ephemeral container of a running pod starts once in the pod's
// sandbox, in its target's PID namespace, is reported running then
// terminated, and is not restarted (restartPolicy Always); the pod stays
// Running and Ready.
func TestEphemeralContainerRunsOnce(t *testing.T) {
	h := newHarness(t, sim.Config{RunDuration: 3 * time.Second})
	h.create(t, simplePod("web", "app"))
	p := h.podWhere(t, "web", 0, isReady)
	appID := strings.TrimPrefix(p.Status.ContainerStatuses[0].ContainerID, sim.RuntimeName+"://")

	h.debug(t, "web", "dbg", "app")
	p = h.podWhere(t, "web", 0, func(p *corev1.Pod) bool {
		s := ephemeralStatus(p, "dbg")
		return s != nil && s.State.Running != nil
	})
	s := ephemeralStatus(p, "dbg")
	if s.Ready || s.Started != nil || s.RestartCount != 0 || s.Image != "busybox:1.35.0" || !strings.HasPrefix(s.ContainerID, sim.RuntimeName+"://") {
		t.Errorf("running ephemeral container status %+v", s)
	}
	if !isReady(p) || len(p.Status.ContainerStatuses) != 1 {
		t.Errorf("pod with a running ephemeral container: phase %s, ready %v, %d container statuses", p.Status.Phase, isReady(p), len(p.Status.ContainerStatuses))
	}
	req := h.cri.created("dbg")
	ns := req.GetConfig().GetLinux().GetSecurityContext().GetNamespaceOptions()
	if ns.GetPid() != runtimeapi.NamespaceMode_TARGET || ns.GetTargetId() != appID {
		t.Errorf("ephemeral container namespaces %v, want PID TARGET %s", ns, appID)
	}
	if typ := req.GetConfig().GetAnnotations()[cri.AnnotationContainerType]; typ != "ephemeral" {
		t.Errorf("container type %q", typ)
	}
	if sb := h.cri.sandboxes; len(sb) != 1 {
		t.Errorf("%d sandboxes run, want 1", len(sb))
	}
	if req.GetPodSandboxId() == "" || req.GetPodSandboxId() != h.cri.created("app").GetPodSandboxId() {
		t.Errorf("ephemeral container in sandbox %q, the pod's is %q", req.GetPodSandboxId(), h.cri.created("app").GetPodSandboxId())
	}

	// It runs to completion (the sim's run duration) and stays done.
	p = h.podWhere(t, "web", time.Second, func(p *corev1.Pod) bool {
		s := ephemeralStatus(p, "dbg")
		return s != nil && s.State.Terminated != nil
	})
	if s := ephemeralStatus(p, "dbg"); s.State.Terminated.ExitCode != 0 || s.State.Terminated.Reason != "Completed" || s.RestartCount != 0 {
		t.Errorf("terminated ephemeral container %+v", s)
	}
	for i := 0; i < 5; i++ {
		h.clk.Step(20 * time.Second)
		time.Sleep(30 * time.Millisecond)
	}
	p, err := h.pods.Get(h.ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := h.creates("dbg"); n != 1 {
		t.Errorf("ephemeral container created %d times, want once", n)
	}
	if s := ephemeralStatus(p, "dbg"); s == nil || s.State.Terminated == nil || !isReady(p) {
		t.Errorf("after 100 s: ephemeral %+v, pod ready %v", s, isReady(p))
	}

	// A second one without a target: its own PID namespace.
	h.debug(t, "web", "dbg2", "")
	h.podWhere(t, "web", 0, func(p *corev1.Pod) bool {
		s := ephemeralStatus(p, "dbg2")
		return s != nil && s.State.Running != nil
	})
	if ns := h.cri.created("dbg2").GetConfig().GetLinux().GetSecurityContext().GetNamespaceOptions(); ns.GetPid() != runtimeapi.NamespaceMode_CONTAINER || ns.GetTargetId() != "" {
		t.Errorf("untargeted ephemeral container namespaces %v", ns)
	}

	// Deleting the pod kills it with the rest.
	if err := h.pods.Delete(h.ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every container stopped", func() (bool, error) {
		l, err := h.rt.ListContainers(h.ctx, &runtimeapi.ListContainersRequest{})
		if err != nil {
			return false, err
		}
		for _, c := range l.Containers {
			if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
				return false, nil
			}
		}
		return true, nil
	})
}

// An ephemeral container added to a pod that finished never starts.
func TestEphemeralContainerNotStartedInAFinishedPod(t *testing.T) {
	h := newHarness(t, sim.Config{RunDuration: 2 * time.Second})
	p := simplePod("job", "work")
	p.Spec.RestartPolicy = corev1.RestartPolicyNever
	h.create(t, p)
	h.podWhere(t, "job", time.Second, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	h.debug(t, "job", "dbg", "")
	for i := 0; i < 5; i++ {
		h.clk.Step(10 * time.Second)
		time.Sleep(30 * time.Millisecond)
	}
	if n := h.creates("dbg"); n != 0 {
		t.Errorf("ephemeral container created %d times in a Succeeded pod", n)
	}
	if p, err := h.pods.Get(h.ctx, "job", metav1.GetOptions{}); err != nil || len(p.Status.EphemeralContainerStatuses) != 0 || p.Status.Phase != corev1.PodSucceeded {
		t.Errorf("finished pod: %v, ephemeral statuses %+v", err, p.Status.EphemeralContainerStatuses)
	}
}

// An ephemeral container whose target does not run (here crash-looping)
// waits with CreateContainerConfigError and upstream's message.
func TestEphemeralContainerTargetNotRunning(t *testing.T) {
	h := newHarness(t, sim.Config{})
	p := simplePod("crasher", "app")
	p.Annotations = map[string]string{sim.AnnotationRunDuration: "0s", sim.AnnotationExitCode: "1"}
	h.create(t, p)
	h.podWhere(t, "crasher", 0, func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount > 0
	})
	h.debug(t, "crasher", "dbg", "app")
	p = h.podWhere(t, "crasher", 0, func(p *corev1.Pod) bool {
		s := ephemeralStatus(p, "dbg")
		return s != nil && s.State.Waiting != nil && s.State.Waiting.Reason == "CreateContainerConfigError"
	})
	if w := ephemeralStatus(p, "dbg").State.Waiting; w.Message != "unable to find target container app" {
		t.Errorf("waiting %+v", w)
	}
	if n := h.creates("dbg"); n != 0 {
		t.Errorf("created %d times without its target", n)
	}
	found := false
	for _, e := range h.events() {
		found = found || e == "Warning Failed Error: unable to find target container app"
	}
	if !found {
		t.Error("no Failed event for the missing target")
	}
}
