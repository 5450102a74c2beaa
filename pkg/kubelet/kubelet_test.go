package kubelet

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/kubelet/prober"
	"github.com/skiff-sh/skiff/pkg/kubelet/sim"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

type harness struct {
	ctx  context.Context
	clk  *clock.Fake
	rt   *sim.Runtime
	c    *client.Client
	pods *client.Typed[*corev1.Pod, *corev1.PodList]
	rec  *record.FakeRecorder
	cri  *recordingRuntime // the requests the kubelet sent (rt underneath)
}

const nodeName = "sim-node-1"

func newHarness(t *testing.T, simCfg sim.Config, opts ...func(*Config)) *harness {
	return newHarnessProbing(t, simCfg, nil, opts...)
}

// newHarnessProbing runs probes through probeRunner (nil: simulated probes).
func newHarnessProbing(t *testing.T, simCfg sim.Config, probeRunner prober.Runner, opts ...func(*Config)) *harness {
	t.Helper()
	env := testenv.StartT(t)
	if err := env.EnsureServiceAccount(context.Background(), "default", "default"); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	simCfg.Clock = clk
	rt := sim.New(simCfg)
	rec := record.NewFakeRecorder(10000)
	rr := &recordingRuntime{Runtime: rt}
	cfg := Config{Client: c, NodeName: nodeName, Runtime: rr, Images: rr, Clock: clk, NodeIP: "10.0.0.7", Recorder: rec,
		NodeLabels: map[string]string{"skiff.sh/runtime": "sim"}, ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local", SimulateHandlers: probeRunner == nil, ProbeRunner: probeRunner}
	for _, o := range opts {
		o(&cfg)
	}
	k, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	h := &harness{ctx: ctx, clk: clk, rt: rt, cri: rr, c: c, rec: rec, pods: client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")}
	// The lease, node status and PLEG tickers are armed: the fake clock
	// may move.
	waitFor(t, "the kubelet's tickers", func() (bool, error) { return clk.Waiters() >= 3, nil })
	return h
}

func waitFor(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (last error %v)", what, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitStepping waits for cond, moving the fake clock by step between
// checks (the simulated runtime's states follow the clock).
func (h *harness) waitStepping(t *testing.T, what string, step time.Duration, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (last error %v)", what, err)
		}
		h.clk.Step(step)
		time.Sleep(10 * time.Millisecond)
	}
}

func (h *harness) create(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	pod.Namespace = "default"
	pod.Spec.NodeName = nodeName
	if _, err := h.pods.Create(h.ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// podWhere waits until the pod satisfies cond and returns it.
func (h *harness) podWhere(t *testing.T, name string, step time.Duration, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	check := func() (bool, error) {
		p, err := h.pods.Get(h.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = p
		return cond(p), nil
	}
	if step > 0 {
		h.waitStepping(t, "pod "+name, step, check)
	} else {
		waitFor(t, "pod "+name, check)
	}
	return last
}

// events is what was recorded so far.
func (h *harness) events() []string {
	var out []string
	for {
		select {
		case e := <-h.rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func condition(p *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func isReady(p *corev1.Pod) bool {
	c := condition(p, corev1.PodReady)
	return p.Status.Phase == corev1.PodRunning && c != nil && c.Status == corev1.ConditionTrue
}

func simplePod(name string, containers ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c, Image: "registry.example/" + c + ":1"})
	}
	return p
}

func TestPodReachesRunning(t *testing.T) {
	h := newHarness(t, sim.Config{})
	h.create(t, simplePod("web", "nginx", "agent"))
	p := h.podWhere(t, "web", 0, isReady)
	if p.Status.PodIP != "10.88.0.2" || len(p.Status.PodIPs) != 1 || p.Status.PodIPs[0].IP != "10.88.0.2" {
		t.Errorf("pod IPs %q %v, want 10.88.0.2", p.Status.PodIP, p.Status.PodIPs)
	}
	if p.Status.HostIP != "10.0.0.7" || len(p.Status.HostIPs) != 1 {
		t.Errorf("host IPs %q %v", p.Status.HostIP, p.Status.HostIPs)
	}
	if p.Status.StartTime == nil || p.Status.QOSClass != corev1.PodQOSBestEffort {
		t.Errorf("startTime %v qosClass %q", p.Status.StartTime, p.Status.QOSClass)
	}
	for _, typ := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady, corev1.PodScheduled} {
		if c := condition(p, typ); c == nil || c.Status != corev1.ConditionTrue {
			t.Errorf("condition %s: %+v", typ, c)
		}
	}
	if len(p.Status.ContainerStatuses) != 2 || p.Status.ContainerStatuses[0].Name != "agent" {
		t.Fatalf("container statuses (sorted by name) %+v", p.Status.ContainerStatuses)
	}
	want := []string{
		`Normal Pulling Pulling image "registry.example/nginx:1"`,
		`Normal Pulled Successfully pulled image "registry.example/nginx:1" in 0s (0s including waiting). Image size: 5242880 bytes.`,
		`Normal Created Created container: nginx`, `Normal Started Started container nginx`,
		`Normal Pulling Pulling image "registry.example/agent:1"`,
		`Normal Pulled Successfully pulled image "registry.example/agent:1" in 0s (0s including waiting). Image size: 5242880 bytes.`,
		`Normal Created Created container: agent`, `Normal Started Started container agent`,
	}
	if got := h.events(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Nothing changes: relists and resyncs write no status.
	h.clk.Step(3 * time.Second)
	time.Sleep(100 * time.Millisecond)
	if again, err := h.pods.Get(h.ctx, "web", metav1.GetOptions{}); err != nil || again.ResourceVersion != p.ResourceVersion {
		t.Errorf("pod written again without a change: %v, resourceVersion %s -> %s", err, p.ResourceVersion, again.ResourceVersion)
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil || !cs.Ready || cs.Started == nil || !*cs.Started || cs.RestartCount != 0 ||
			!strings.HasPrefix(cs.ContainerID, sim.RuntimeName+"://") || !strings.HasPrefix(cs.ImageID, "sha256:") || cs.Image == "" {
			t.Errorf("container status %+v", cs)
		}
	}
}

// Probes are not run: a container with a readiness probe reads ready
// once its initialDelaySeconds have passed.
func TestReadinessAfterInitialDelay(t *testing.T) {
	h := newHarness(t, sim.Config{})
	p := simplePod("slow", "app")
	p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{InitialDelaySeconds: 5,
		ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}}}
	h.create(t, p)
	p = h.podWhere(t, "slow", 0, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	if c := condition(p, corev1.PodReady); c == nil || c.Status != corev1.ConditionFalse || c.Message != "containers with unready status: [app]" {
		t.Errorf("Ready before the initial delay: %+v", c)
	}
	if p.Status.ContainerStatuses[0].Ready {
		t.Error("container ready before the initial delay")
	}
	h.clk.Step(4 * time.Second)
	time.Sleep(50 * time.Millisecond)
	if p, _ := h.pods.Get(h.ctx, "slow", metav1.GetOptions{}); isReady(p) {
		t.Fatal("ready after 4s of a 5s initial delay")
	}
	h.clk.Step(time.Second)
	h.podWhere(t, "slow", 0, isReady)
}

func TestInitContainerRunsFirst(t *testing.T) {
	h := newHarness(t, sim.Config{InitRunDuration: 5 * time.Second})
	p := simplePod("with-init", "main")
	p.Spec.InitContainers = []corev1.Container{{Name: "setup", Image: "busybox"}}
	h.create(t, p)
	p = h.podWhere(t, "with-init", 0, func(p *corev1.Pod) bool {
		return len(p.Status.InitContainerStatuses) == 1 && p.Status.InitContainerStatuses[0].State.Running != nil
	})
	if p.Status.Phase != corev1.PodPending {
		t.Errorf("phase %s while initializing, want Pending", p.Status.Phase)
	}
	if c := condition(p, corev1.PodInitialized); c == nil || c.Status != corev1.ConditionFalse || c.Reason != "ContainersNotInitialized" ||
		c.Message != "containers with incomplete status: [setup]" {
		t.Errorf("Initialized %+v", c)
	}
	if w := p.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "PodInitializing" {
		t.Errorf("main container while initializing: %+v", p.Status.ContainerStatuses[0].State)
	}
	p = h.podWhere(t, "with-init", time.Second, isReady)
	init, main := p.Status.InitContainerStatuses[0], p.Status.ContainerStatuses[0]
	if init.State.Terminated == nil || init.State.Terminated.Reason != "Completed" || !init.Ready {
		t.Fatalf("init container %+v", init)
	}
	if main.State.Running.StartedAt.Before(&init.State.Terminated.FinishedAt) {
		t.Errorf("main started %v before init finished %v", main.State.Running.StartedAt, init.State.Terminated.FinishedAt)
	}
}

func TestRunToCompletion(t *testing.T) {
	h := newHarness(t, sim.Config{RunDuration: 3 * time.Second})
	p := simplePod("job-pod", "work")
	p.Spec.RestartPolicy = corev1.RestartPolicyNever
	h.create(t, p)
	h.podWhere(t, "job-pod", 0, isReady)
	p = h.podWhere(t, "job-pod", time.Second, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	cs := p.Status.ContainerStatuses[0]
	if cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 0 || cs.State.Terminated.Reason != "Completed" || cs.Ready {
		t.Errorf("container %+v", cs)
	}
	if c := condition(p, corev1.PodReady); c == nil || c.Status != corev1.ConditionFalse || c.Reason != "PodCompleted" {
		t.Errorf("Ready %+v", c)
	}
	// The finished pod's sandbox is stopped (its IP released), the IP stays in status.
	waitFor(t, "sandbox stopped", func() (bool, error) {
		l, err := h.rt.ListPodSandbox(h.ctx, &runtimeapi.ListPodSandboxRequest{})
		return err == nil && len(l.Items) == 1 && l.Items[0].State == runtimeapi.PodSandboxState_SANDBOX_NOTREADY, err
	})
	if p.Status.PodIP == "" {
		t.Error("pod IP gone from a finished pod's status")
	}
}

// A Job-like pod with a sidecar: the sidecar starts first, the main
// container runs to completion, then the sidecar is stopped and the pod
// Succeeded.
func TestSidecarStopsWhenTheJobIsDone(t *testing.T) {
	h := newHarness(t, sim.Config{RunDuration: 3 * time.Second})
	p := simplePod("job-sidecar", "work")
	p.Spec.RestartPolicy = corev1.RestartPolicyNever
	always := corev1.ContainerRestartPolicyAlways
	p.Spec.InitContainers = []corev1.Container{{Name: "proxy", Image: "proxy", RestartPolicy: &always}}
	h.create(t, p)
	p = h.podWhere(t, "job-sidecar", 0, isReady)
	if s := p.Status.InitContainerStatuses[0]; s.State.Running == nil || !s.Ready {
		t.Errorf("sidecar while the job runs: %+v", s)
	}
	p = h.podWhere(t, "job-sidecar", time.Second, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	waitFor(t, "sidecar stopped", func() (bool, error) {
		p, err := h.pods.Get(h.ctx, "job-sidecar", metav1.GetOptions{})
		return err == nil && p.Status.InitContainerStatuses[0].State.Terminated != nil && p.Status.Phase == corev1.PodSucceeded, err
	})
	if c := condition(p, corev1.PodInitialized); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("Initialized %+v", c)
	}
}

func TestFailingContainerRestartsWithBackOff(t *testing.T) {
	h := newHarness(t, sim.Config{})
	p := simplePod("crasher", "app")
	p.Annotations = map[string]string{sim.AnnotationRunDuration: "0s", sim.AnnotationExitCode: "1"}
	h.create(t, p)
	crashLoop := func(restarts int32, backOff string) func(*corev1.Pod) bool {
		return func(p *corev1.Pod) bool {
			if len(p.Status.ContainerStatuses) != 1 {
				return false
			}
			cs := p.Status.ContainerStatuses[0]
			return cs.RestartCount == restarts && cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff" &&
				strings.HasPrefix(cs.State.Waiting.Message, "back-off "+backOff+" restarting failed container=app pod=crasher_default(")
		}
	}
	// The first restart is immediate, the second waits 10 s.
	p = h.podWhere(t, "crasher", 0, crashLoop(1, "10s"))
	cs := p.Status.ContainerStatuses[0]
	if cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ExitCode != 1 || cs.LastTerminationState.Terminated.Reason != "Error" {
		t.Errorf("last state %+v", cs.LastTerminationState)
	}
	if p.Status.Phase != corev1.PodRunning {
		t.Errorf("phase %s, want Running (restartPolicy Always)", p.Status.Phase)
	}
	if c := condition(p, corev1.PodReady); c == nil || c.Status != corev1.ConditionFalse || c.Message != "containers with unready status: [app]" {
		t.Errorf("Ready %+v", c)
	}
	backOffs := 0
	for _, e := range h.events() {
		if strings.HasPrefix(e, "Warning BackOff Back-off restarting failed container app in pod crasher_default(") {
			backOffs++
		}
	}
	if backOffs != 1 {
		t.Errorf("%d BackOff events, want 1", backOffs)
	}
	h.clk.Step(9 * time.Second)
	time.Sleep(50 * time.Millisecond)
	if p, _ := h.pods.Get(h.ctx, "crasher", metav1.GetOptions{}); p.Status.ContainerStatuses[0].RestartCount != 1 {
		t.Fatalf("restarted before its back-off ended: %+v", p.Status.ContainerStatuses[0])
	}
	h.clk.Step(time.Second)
	h.podWhere(t, "crasher", 0, crashLoop(2, "20s"))
}

func TestGracefulDeletion(t *testing.T) {
	h := newHarness(t, sim.Config{StopLatency: 3 * time.Second})
	h.create(t, simplePod("doomed", "app"))
	h.podWhere(t, "doomed", 0, isReady)
	if err := h.pods.Delete(h.ctx, "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := h.pods.Get(h.ctx, "doomed", metav1.GetOptions{})
	if err != nil || p.DeletionTimestamp == nil {
		t.Fatalf("a bound pod is deleted gracefully: %v %v", p, err)
	}
	// Its container takes the stop latency to exit: until the clock moves
	// the pod stays.
	time.Sleep(100 * time.Millisecond)
	if _, err := h.pods.Get(h.ctx, "doomed", metav1.GetOptions{}); err != nil {
		t.Fatalf("pod gone before its container stopped: %v", err)
	}
	h.waitStepping(t, "pod gone", time.Second, func() (bool, error) {
		_, err := h.pods.Get(h.ctx, "doomed", metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
	waitFor(t, "sandbox removed", func() (bool, error) {
		l, err := h.rt.ListPodSandbox(h.ctx, &runtimeapi.ListPodSandboxRequest{})
		return err == nil && len(l.Items) == 0, err
	})
}

func TestNodeRegistrationLeaseAndStatus(t *testing.T) {
	h := newHarness(t, sim.Config{})
	nodes := client.For[*corev1.Node, *corev1.NodeList](h.c)
	leases := client.For[*coordinationv1.Lease, *coordinationv1.LeaseList](h.c).Namespace("kube-node-lease")
	n, err := nodes.Get(h.ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Labels["kubernetes.io/hostname"] != nodeName || n.Labels["skiff.sh/runtime"] != "sim" || n.Labels["kubernetes.io/os"] != "linux" {
		t.Errorf("labels %v", n.Labels)
	}
	if n.Status.NodeInfo.KubeletVersion != Version || !strings.HasPrefix(n.Status.NodeInfo.ContainerRuntimeVersion, sim.RuntimeName+"://") {
		t.Errorf("nodeInfo %+v", n.Status.NodeInfo)
	}
	if n.Status.Capacity.Pods().Value() != 110 || n.Status.Allocatable.Cpu().Value() != 8 {
		t.Errorf("capacity %v allocatable %v", n.Status.Capacity, n.Status.Allocatable)
	}
	want := map[corev1.NodeConditionType]string{
		corev1.NodeMemoryPressure: "False/KubeletHasSufficientMemory/kubelet has sufficient memory available",
		corev1.NodeDiskPressure:   "False/KubeletHasNoDiskPressure/kubelet has no disk pressure",
		corev1.NodePIDPressure:    "False/KubeletHasSufficientPID/kubelet has sufficient PID available",
		corev1.NodeReady:          "True/KubeletReady/kubelet is posting ready status",
	}
	if len(n.Status.Conditions) != len(want) {
		t.Errorf("conditions %+v", n.Status.Conditions)
	}
	for _, c := range n.Status.Conditions {
		if got := fmt.Sprintf("%s/%s/%s", c.Status, c.Reason, c.Message); got != want[c.Type] {
			t.Errorf("condition %s: %s, want %s", c.Type, got, want[c.Type])
		}
	}
	if len(n.Status.Addresses) != 2 || n.Status.Addresses[0] != (corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.0.0.7"}) {
		t.Errorf("addresses %v", n.Status.Addresses)
	}

	var first time.Time
	waitFor(t, "lease", func() (bool, error) {
		l, err := leases.Get(h.ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if *l.Spec.HolderIdentity != nodeName || *l.Spec.LeaseDurationSeconds != 40 || len(l.OwnerReferences) != 1 ||
			l.OwnerReferences[0].Kind != "Node" || l.OwnerReferences[0].UID != n.UID {
			t.Fatalf("lease %+v", l)
		}
		first = l.Spec.RenewTime.Time
		return true, nil
	})
	h.clk.Step(10 * time.Second)
	waitFor(t, "lease renewed", func() (bool, error) {
		l, err := leases.Get(h.ctx, nodeName, metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime.Time.Sub(first) == 10*time.Second, err
	})

	// Unchanged status is not posted again before the report frequency;
	// then it is, with new heartbeats and the same transition times.
	h.clk.Step(4*time.Minute + 40*time.Second)
	time.Sleep(50 * time.Millisecond)
	if n2, _ := nodes.Get(h.ctx, nodeName, metav1.GetOptions{}); n2.ResourceVersion != n.ResourceVersion {
		t.Errorf("unchanged node status posted before the report frequency")
	}
	h.clk.Step(20 * time.Second)
	waitFor(t, "status reported", func() (bool, error) {
		n2, err := nodes.Get(h.ctx, nodeName, metav1.GetOptions{})
		if err != nil || n2.ResourceVersion == n.ResourceVersion {
			return false, err
		}
		for _, c := range n2.Status.Conditions {
			if c.Type == corev1.NodeReady && (!c.LastTransitionTime.Equal(&n.Status.Conditions[3].LastTransitionTime) || !c.LastHeartbeatTime.After(n.Status.Conditions[3].LastHeartbeatTime.Time)) {
				t.Fatalf("Ready after report: %+v (before %+v)", c, n.Status.Conditions[3])
			}
		}
		return true, nil
	})
}

// livenessRunner fails the liveness probes of the container "bad"'s
// first instance and passes everything else.
type livenessRunner struct{ firstID chan string }

func (r *livenessRunner) Run(_ context.Context, kind prober.Kind, _ *corev1.Probe, t prober.Target) prober.Outcome {
	if kind == prober.Readiness {
		return prober.Outcome{Result: prober.Success}
	}
	select {
	case id := <-r.firstID:
		r.firstID <- id
		if id == t.ContainerID {
			return prober.Outcome{Result: prober.Failure, Output: "HTTP probe failed with statuscode: 500"}
		}
	default:
		r.firstID <- t.ContainerID
		return prober.Outcome{Result: prober.Failure, Output: "HTTP probe failed with statuscode: 500"}
	}
	return prober.Outcome{Result: prober.Success}
}

// Real probes: readiness gates Ready, a failing liveness probe restarts
// the container (upstream's Unhealthy and Killing events), and the new
// container starts from fresh results.
func TestProbes(t *testing.T) {
	h := newHarnessProbing(t, sim.Config{StopLatency: time.Second}, &livenessRunner{firstID: make(chan string, 1)})
	p := simplePod("probed", "bad")
	p.Spec.Containers[0].LivenessProbe = &corev1.Probe{PeriodSeconds: 10, FailureThreshold: 3,
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(8080)}}}
	p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{PeriodSeconds: 5,
		ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}}
	h.create(t, p)
	p = h.podWhere(t, "probed", time.Second, isReady)
	if p.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Fatalf("restarted before the liveness probe failed 3 times: %+v", p.Status.ContainerStatuses[0])
	}
	p = h.podWhere(t, "probed", 5*time.Second, func(p *corev1.Pod) bool {
		return p.Status.ContainerStatuses[0].RestartCount == 1 && p.Status.ContainerStatuses[0].State.Running != nil
	})
	if lt := p.Status.ContainerStatuses[0].LastTerminationState.Terminated; lt == nil || lt.ExitCode != 143 {
		t.Errorf("last termination %+v, want exit 143 (stopped)", lt)
	}
	evs := strings.Join(h.events(), "\n")
	for _, want := range []string{
		"Warning Unhealthy Liveness probe failed: HTTP probe failed with statuscode: 500",
		"Normal Killing Container bad failed liveness probe, will be restarted",
	} {
		if !strings.Contains(evs, want) {
			t.Errorf("no event %q in:\n%s", want, evs)
		}
	}
	// The second container passes its probes and stays.
	h.podWhere(t, "probed", 10*time.Second, func(p *corev1.Pod) bool {
		return isReady(p) && p.Status.ContainerStatuses[0].RestartCount == 1
	})
	h.clk.Step(time.Minute)
	if p, _ := h.pods.Get(h.ctx, "probed", metav1.GetOptions{}); p.Status.ContainerStatuses[0].RestartCount != 1 {
		t.Errorf("restart count %d after the healthy container ran a minute, want 1", p.Status.ContainerStatuses[0].RestartCount)
	}
}

// passRunner passes every probe.
type passRunner struct{}

func (passRunner) Run(context.Context, prober.Kind, *corev1.Probe, prober.Target) prober.Outcome {
	return prober.Outcome{Result: prober.Success}
}

// Lifecycle hooks: a preStop sleep holds the stop for its duration within
// the grace period; a postStart hook that cannot reach the container
// fails it (FailedPostStartHook), and it is killed and restarted.
func TestLifecycleHooks(t *testing.T) {
	h := newHarnessProbing(t, sim.Config{}, passRunner{})
	grace := int64(30)
	p := simplePod("hooked", "app")
	p.Spec.TerminationGracePeriodSeconds = &grace
	p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 10}}}
	h.create(t, p)
	h.podWhere(t, "hooked", time.Second, isReady)
	if err := h.pods.Delete(h.ctx, "hooked", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	running := func() bool {
		l, err := h.rt.ListContainers(h.ctx, &runtimeapi.ListContainersRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range l.Containers {
			if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
				return true
			}
		}
		return false
	}
	waitFor(t, "the Killing event", func() (bool, error) {
		return strings.Contains(strings.Join(h.events(), "\n"), "Normal Killing Stopping container app"), nil
	})
	h.clk.Step(9 * time.Second)
	if !running() {
		t.Fatal("the container stopped before its 10 s preStop sleep ended")
	}
	h.waitStepping(t, "the container stopped after its preStop hook", time.Second, func() (bool, error) { return !running(), nil })
	h.waitStepping(t, "pod gone", time.Second, func() (bool, error) {
		_, err := h.pods.Get(h.ctx, "hooked", metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})

	// postStart: an httpGet to a port nobody listens on.
	p = simplePod("poststart", "app")
	p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{
		HTTPGet: &corev1.HTTPGetAction{Host: "127.0.0.1", Port: intstr.FromInt32(1), Path: "/hook"}}}
	h.create(t, p)
	var evs []string
	waitFor(t, "FailedPostStartHook", func() (bool, error) {
		evs = append(evs, h.events()...)
		return strings.Contains(strings.Join(evs, "\n"), "Warning FailedPostStartHook HTTP lifecycle hook (/hook) for Container \"app\" in Pod \"poststart_default("), nil
	})
	h.podWhere(t, "poststart", time.Second, func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 1
	})
}
