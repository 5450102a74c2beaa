package kubelet

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	created = runtimeapi.ContainerState_CONTAINER_CREATED
	running = runtimeapi.ContainerState_CONTAINER_RUNNING
	exitedS = runtimeapi.ContainerState_CONTAINER_EXITED
)

func testPod(policy corev1.RestartPolicy, inits []corev1.Container, names ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-1"},
		Spec: corev1.PodSpec{RestartPolicy: policy, InitContainers: inits}}
	for _, n := range names {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: n, Image: "img"})
	}
	return p
}

func initC(name string) corev1.Container { return corev1.Container{Name: name, Image: "img"} }

func sidecarC(name string) corev1.Container {
	always := corev1.ContainerRestartPolicyAlways
	return corev1.Container{Name: name, Image: "img", RestartPolicy: &always}
}

// cs is a container in sandbox "sb" that started at t0 and (when exited)
// finished `finished` after t0.
func cs(name string, attempt uint32, state runtimeapi.ContainerState, exit int32, finished time.Duration) *containerStatus {
	c := &containerStatus{ID: name + "-" + string(rune('0'+attempt)), Name: name, SandboxID: "sb", Attempt: attempt, State: state, StartedAt: t0, CreatedAt: t0}
	if state == exitedS {
		c.ExitCode, c.FinishedAt = exit, t0.Add(finished)
	}
	return c
}

func ready(cs ...*containerStatus) *podRuntimeStatus {
	return &podRuntimeStatus{SandboxID: "sb", SandboxReady: true, IPs: []string{"10.88.0.2"}, Containers: cs}
}

func TestComputePodActions(t *testing.T) {
	never, onFailure, always := corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure, corev1.RestartPolicyAlways
	deleting := testPod(always, nil, "a")
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	succeeded := testPod(never, nil, "a")
	succeeded.Status.Phase = corev1.PodSucceeded
	tests := []struct {
		name string
		pod  *corev1.Pod
		st   *podRuntimeStatus
		now  time.Duration // after t0
		want podActions
	}{
		{name: "new pod: sandbox and every container", pod: testPod(always, nil, "a", "b"), st: &podRuntimeStatus{},
			want: podActions{CreateSandbox: true, ContainersToStart: []containerToStart{{Name: "a", Type: "regular", Attempt: 0}, {Name: "b", Type: "regular", Attempt: 0}}}},
		{name: "new pod with init containers: only the first init", pod: testPod(always, []corev1.Container{initC("i1"), initC("i2")}, "a"), st: &podRuntimeStatus{},
			want: podActions{CreateSandbox: true, ContainersToStart: []containerToStart{{Name: "i1", Type: "init", Attempt: 0}}}},
		{name: "init running: wait", pod: testPod(always, []corev1.Container{initC("i1"), initC("i2")}, "a"), st: ready(cs("i1", 0, running, 0, 0))},
		{name: "init created: wait", pod: testPod(always, []corev1.Container{initC("i1")}, "a"), st: ready(cs("i1", 0, created, 0, 0))},
		{name: "first init done: the second", pod: testPod(always, []corev1.Container{initC("i1"), initC("i2")}, "a"), st: ready(cs("i1", 0, exitedS, 0, time.Second)),
			want: podActions{ContainersToStart: []containerToStart{{Name: "i2", Type: "init", Attempt: 0}}}},
		{name: "inits done: regular containers", pod: testPod(always, []corev1.Container{initC("i1"), initC("i2")}, "a"),
			st:   ready(cs("i1", 0, exitedS, 0, time.Second), cs("i2", 0, exitedS, 0, time.Second)),
			want: podActions{ContainersToStart: []containerToStart{{Name: "a", Type: "regular", Attempt: 0}}}},
		{name: "init failed, Never: the pod fails", pod: testPod(never, []corev1.Container{initC("i1")}, "a"), st: ready(cs("i1", 0, exitedS, 1, time.Second)),
			want: podActions{KillPod: true}},
		{name: "init failed, OnFailure: restarted at once the first time", pod: testPod(onFailure, []corev1.Container{initC("i1")}, "a"),
			st: ready(cs("i1", 0, exitedS, 1, time.Second)), now: time.Second,
			want: podActions{ContainersToStart: []containerToStart{{Name: "i1", Type: "init", Attempt: 1}}}},
		{name: "sidecar first: the next init waits for it", pod: testPod(always, []corev1.Container{sidecarC("s"), initC("i1")}, "a"), st: &podRuntimeStatus{},
			want: podActions{CreateSandbox: true, ContainersToStart: []containerToStart{{Name: "s", Type: "sidecar", Attempt: 0}}}},
		{name: "sidecar running: next init", pod: testPod(always, []corev1.Container{sidecarC("s"), initC("i1")}, "a"), st: ready(cs("s", 0, running, 0, 0)),
			want: podActions{ContainersToStart: []containerToStart{{Name: "i1", Type: "init", Attempt: 0}}}},
		{name: "sidecar crashed after running: restarted, regular containers go on", pod: testPod(always, []corev1.Container{sidecarC("s")}, "a"),
			st: ready(cs("s", 0, exitedS, 1, time.Second)), now: time.Second,
			want: podActions{ContainersToStart: []containerToStart{{Name: "s", Type: "sidecar", Attempt: 1}, {Name: "a", Type: "regular", Attempt: 0}}}},
		{name: "crash, Always, in back-off", pod: testPod(always, nil, "a"), st: ready(cs("a", 1, exitedS, 1, time.Second)), now: 6 * time.Second,
			want: podActions{BackOff: map[string]time.Duration{"a": 5 * time.Second}}},
		{name: "crash, Always, back-off over", pod: testPod(always, nil, "a"), st: ready(cs("a", 1, exitedS, 1, time.Second)), now: 11 * time.Second,
			want: podActions{ContainersToStart: []containerToStart{{Name: "a", Type: "regular", Attempt: 2}}}},
		{name: "success, Always: restarted", pod: testPod(always, nil, "a"), st: ready(cs("a", 0, exitedS, 0, time.Second)), now: time.Second,
			want: podActions{ContainersToStart: []containerToStart{{Name: "a", Type: "regular", Attempt: 1}}}},
		{name: "success, OnFailure: done", pod: testPod(onFailure, nil, "a"), st: ready(cs("a", 0, exitedS, 0, time.Second))},
		{name: "failure, Never: done", pod: testPod(never, nil, "a"), st: ready(cs("a", 0, exitedS, 1, time.Second))},
		{name: "job done: its sidecar is stopped", pod: testPod(never, []corev1.Container{sidecarC("s")}, "a"),
			st:   ready(cs("s", 0, running, 0, 0), cs("a", 0, exitedS, 0, time.Second)),
			want: podActions{ContainersToKill: []string{"s-0"}}},
		{name: "container not in the spec is killed", pod: testPod(always, nil, "a"), st: ready(cs("a", 0, running, 0, 0), cs("old", 0, running, 0, 0)),
			want: podActions{ContainersToKill: []string{"old-0"}}},
		{name: "deleting: kill", pod: deleting, st: ready(cs("a", 0, running, 0, 0)), want: podActions{KillPod: true}},
		{name: "succeeded: kill", pod: succeeded, st: ready(cs("a", 0, exitedS, 0, time.Second)), want: podActions{KillPod: true}},
		{name: "sandbox died: a new one, restart counts go on", pod: testPod(always, nil, "a"),
			st:   &podRuntimeStatus{SandboxID: "sb", SandboxAttempt: 0, Containers: []*containerStatus{cs("a", 0, exitedS, 137, time.Second)}},
			want: podActions{CreateSandbox: true, SandboxAttempt: 1, ContainersToStart: []containerToStart{{Name: "a", Type: "regular", Attempt: 1}}}},
		{name: "sandbox gone after a job completed: not started again", pod: testPod(never, nil, "a"),
			st: &podRuntimeStatus{SandboxID: "sb", Containers: []*containerStatus{cs("a", 0, exitedS, 0, time.Second)}}},
	}
	// Ephemeral containers: started once each, never restarted.
	debug := func(policy corev1.RestartPolicy, inits []corev1.Container, target string) *corev1.Pod {
		p := testPod(policy, inits, "a")
		p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{TargetContainerName: target,
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "dbg", Image: "busybox"}}}
		return p
	}
	lostDebugger := debug(always, nil, "")
	lostDebugger.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{{Name: "dbg",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}}}
	deletingDebug := debug(always, nil, "a")
	deletingDebug.DeletionTimestamp = &metav1.Time{Time: t0}
	tests = append(tests, []struct {
		name string
		pod  *corev1.Pod
		st   *podRuntimeStatus
		now  time.Duration // after t0
		want podActions
	}{
		{name: "ephemeral added: started with its target's ID", pod: debug(always, nil, "a"), st: ready(cs("a", 0, running, 0, 0)),
			want: podActions{ContainersToStart: []containerToStart{{Name: "dbg", Type: "ephemeral", TargetID: "a-0"}}}},
		{name: "ephemeral without a target", pod: debug(never, nil, ""), st: ready(cs("a", 0, running, 0, 0)),
			want: podActions{ContainersToStart: []containerToStart{{Name: "dbg", Type: "ephemeral"}}}},
		{name: "ephemeral whose target does not run: no target ID", pod: debug(never, nil, "a"), st: ready(cs("a", 0, exitedS, 1, time.Second)), now: 2 * time.Second,
			want: podActions{ContainersToStart: []containerToStart{{Name: "dbg", Type: "ephemeral"}}}},
		{name: "ephemeral running: kept", pod: debug(always, nil, "a"), st: ready(cs("a", 0, running, 0, 0), cs("dbg", 0, running, 0, 0))},
		{name: "ephemeral exited, Always: not restarted", pod: debug(always, nil, "a"), st: ready(cs("a", 0, running, 0, 0), cs("dbg", 0, exitedS, 1, time.Second)), now: time.Hour},
		{name: "ephemeral gone from the runtime after it ran: not started again", pod: lostDebugger, st: ready(cs("a", 0, running, 0, 0))},
		{name: "ephemeral while an init container runs: started", pod: debug(always, []corev1.Container{initC("i1")}, ""), st: ready(cs("i1", 0, running, 0, 0)),
			want: podActions{ContainersToStart: []containerToStart{{Name: "dbg", Type: "ephemeral"}}}},
		{name: "new sandbox: ephemeral not started in that sync", pod: debug(always, nil, ""),
			st:   &podRuntimeStatus{SandboxID: "sb", Containers: []*containerStatus{cs("a", 0, exitedS, 137, time.Second)}},
			want: podActions{CreateSandbox: true, SandboxAttempt: 1, ContainersToStart: []containerToStart{{Name: "a", Type: "regular", Attempt: 1}}}},
		{name: "ephemeral of an old sandbox: not started again", pod: debug(always, nil, ""),
			st: &podRuntimeStatus{SandboxID: "sb2", SandboxReady: true, Containers: []*containerStatus{
				{ID: "a-1", Name: "a", SandboxID: "sb2", Attempt: 1, State: running}, cs("dbg", 0, exitedS, 137, time.Second)}}},
		{name: "deleting: the ephemeral container is killed with the rest", pod: deletingDebug,
			st: ready(cs("a", 0, running, 0, 0), cs("dbg", 0, running, 0, 0)), want: podActions{KillPod: true}},
	}...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := computePodActions(tt.pod, tt.st, t0.Add(tt.now))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestBackOffDelay(t *testing.T) {
	tests := []struct {
		attempt uint32
		ran     time.Duration
		want    time.Duration
	}{
		{0, time.Second, 0},
		{1, time.Second, 10 * time.Second},
		{2, time.Second, 20 * time.Second},
		{3, time.Second, 40 * time.Second},
		{5, time.Second, 160 * time.Second},
		{6, time.Second, 5 * time.Minute},
		{30, time.Second, 5 * time.Minute},
		{4, 10 * time.Minute, 0}, // ran long enough: starts over
	}
	for _, tt := range tests {
		c := &containerStatus{Attempt: tt.attempt, StartedAt: t0, FinishedAt: t0.Add(tt.ran)}
		if got := backOffDelay(c); got != tt.want {
			t.Errorf("attempt %d ran %s: delay %s, want %s", tt.attempt, tt.ran, got, tt.want)
		}
	}
}
