package prober

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/clock"
)

func TestObserve(t *testing.T) {
	probe := func(success, failure int32) *corev1.Probe {
		return &corev1.Probe{SuccessThreshold: success, FailureThreshold: failure}
	}
	tests := []struct {
		name     string
		kind     Kind
		probe    *corev1.Probe
		outcomes []Result
		want     []Result // the verdict after each outcome
		hold     bool
	}{
		{name: "readiness succeeds at once", kind: Readiness, probe: probe(1, 3),
			outcomes: []Result{Success}, want: []Result{Success}},
		{name: "readiness needs successThreshold", kind: Readiness, probe: probe(2, 3),
			outcomes: []Result{Success, Failure, Success, Success}, want: []Result{Failure, Failure, Failure, Success}},
		{name: "readiness fails after failureThreshold", kind: Readiness, probe: probe(1, 3),
			outcomes: []Result{Success, Failure, Failure, Success, Failure, Failure, Failure},
			want:     []Result{Success, Success, Success, Success, Success, Success, Failure}},
		{name: "liveness holds on failure", kind: Liveness, probe: probe(1, 2),
			outcomes: []Result{Failure, Failure}, want: []Result{Success, Failure}, hold: true},
		{name: "default thresholds 1 and 3", kind: Liveness, probe: probe(0, 0),
			outcomes: []Result{Failure, Failure, Failure}, want: []Result{Success, Success, Failure}, hold: true},
		{name: "startup unknown until success", kind: Startup, probe: probe(1, 3),
			outcomes: []Result{Failure, Success}, want: []Result{Unknown, Success}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := probeState{result: initial(tt.kind)}
			for i, o := range tt.outcomes {
				s.observe(tt.kind, tt.probe, o)
				if s.result != tt.want[i] {
					t.Fatalf("after outcome %d (%v): %v, want %v", i, o, s.result, tt.want[i])
				}
			}
			if s.onHold != tt.hold {
				t.Errorf("onHold %v, want %v", s.onHold, tt.hold)
			}
		})
	}
}

// scriptRunner answers each probe kind from a settable outcome.
type scriptRunner struct {
	mu   sync.Mutex
	out  map[Kind]Result
	runs map[Kind]int
}

func (s *scriptRunner) Run(_ context.Context, kind Kind, _ *corev1.Probe, _ Target) Outcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs[kind]++
	r := s.out[kind]
	if r == Unknown {
		r = Success
	}
	return Outcome{Result: r, Output: "scripted"}
}

func (s *scriptRunner) set(k Kind, r Result) {
	s.mu.Lock()
	s.out[k] = r
	s.mu.Unlock()
}

func (s *scriptRunner) count(k Kind) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[k]
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestManager(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(t0)
	run := &scriptRunner{out: map[Kind]Result{}, runs: map[Kind]int{}}
	var mu sync.Mutex
	var changes []types.UID
	var events []string
	m := New(Config{Runner: run, Clock: clk,
		OnChange: func(uid types.UID) { mu.Lock(); changes = append(changes, uid); mu.Unlock() },
		Event: func(_ *corev1.Pod, c, typ, reason, msg string) {
			mu.Lock()
			events = append(events, reason+": "+msg)
			mu.Unlock()
		}})
	c := corev1.Container{Name: "app",
		StartupProbe:   &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 30},
		ReadinessProbe: &corev1.Probe{PeriodSeconds: 5, InitialDelaySeconds: 10},
		LivenessProbe:  &corev1.Probe{PeriodSeconds: 10, FailureThreshold: 2}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "u1"}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
	m.Update(ctx, pod, "10.0.0.5", map[string]Running{"app": {ID: "c1", StartedAt: t0}})
	// Every worker has its ticker before the clock moves.
	waitFor(t, "three workers waiting", func() bool { return clk.Waiters() == 3 })

	// The startup probe runs at once and succeeds.
	waitFor(t, "started", func() bool { return m.Started(&c, "c1") })
	if m.Ready(&c, "c1") {
		t.Fatal("ready before the readiness probe's initial delay")
	}
	// Readiness: initialDelaySeconds 10 after the container started.
	clk.Step(5 * time.Second)
	if run.count(Readiness) != 0 || m.Ready(&c, "c1") {
		t.Fatal("readiness probed before its initial delay")
	}
	clk.Step(5 * time.Second)
	waitFor(t, "ready", func() bool { return m.Ready(&c, "c1") })
	// Liveness fails twice (failureThreshold 2): the container is unhealthy.
	run.set(Liveness, Failure)
	for i := 0; i < 2; i++ {
		n := run.count(Liveness)
		clk.Step(10 * time.Second)
		waitFor(t, "a liveness round", func() bool { return run.count(Liveness) > n })
	}
	waitFor(t, "unhealthy", func() bool { return m.Unhealthy(&c, "c1") != "" })
	if got, want := m.Unhealthy(&c, "c1"), "Container app failed liveness probe, will be restarted"; got != want {
		t.Errorf("Unhealthy %q, want %q", got, want)
	}
	mu.Lock()
	var unhealthy int
	for _, e := range events {
		if e == "Unhealthy: Liveness probe failed: scripted" {
			unhealthy++
		}
	}
	nChanges := len(changes)
	mu.Unlock()
	if unhealthy != 2 {
		t.Errorf("%d Unhealthy liveness events, want 2: %v", unhealthy, events)
	}
	if nChanges < 3 { // started, ready, unhealthy
		t.Errorf("%d OnChange calls, want ≥ 3", nChanges)
	}
	// The restarted container (a new ID) starts over.
	run.set(Liveness, Success)
	m.Update(ctx, pod, "10.0.0.5", map[string]Running{"app": {ID: "c2", StartedAt: clk.Now()}})
	if m.Unhealthy(&c, "c2") != "" || m.Ready(&c, "c2") {
		t.Error("a new container inherited the old one's results")
	}
	if _, ok := m.Result("c1", Liveness); ok {
		t.Error("the old container's results were kept")
	}
	waitFor(t, "the new container started", func() bool { return m.Started(&c, "c2") })
	m.Remove("u1")
	if _, ok := m.Result("c2", Startup); ok {
		t.Error("Remove kept results")
	}
}

func TestSidecarAndInitProbes(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	ready := &corev1.Probe{PeriodSeconds: 1}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "u1"}, Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init", ReadinessProbe: ready}, {Name: "sidecar", RestartPolicy: &always, ReadinessProbe: ready}},
		Containers:     []corev1.Container{{Name: "app"}}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run := &scriptRunner{out: map[Kind]Result{}, runs: map[Kind]int{}}
	m := New(Config{Runner: run, Clock: clock.NewFake(time.Now())})
	m.Update(ctx, pod, "", map[string]Running{"init": {ID: "i"}, "sidecar": {ID: "s"}, "app": {ID: "a"}})
	if _, ok := m.Result("i", Readiness); ok {
		t.Error("a regular init container's probe runs")
	}
	if _, ok := m.Result("s", Readiness); !ok {
		t.Error("a sidecar's readiness probe does not run")
	}
	if !m.Ready(&pod.Spec.Containers[0], "a") {
		t.Error("a container without probes is not ready")
	}
}
