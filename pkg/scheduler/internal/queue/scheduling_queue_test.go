package queue

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

func TestPopOrder(t *testing.T) {
	type add struct {
		name string
		prio int32
	}
	tests := []struct {
		name string
		adds []add // added one second apart
		want []string
	}{
		{"priority first", []add{{"low", 0}, {"high", 100}, {"mid", 50}}, []string{"high", "mid", "low"}},
		{"same priority: earlier first", []add{{"a", 5}, {"b", 5}, {"c", 5}}, []string{"a", "b", "c"}},
		{"mixed", []add{{"a", 0}, {"b", 10}, {"c", 10}, {"d", 5}, {"e", 0}}, []string{"b", "c", "d", "a", "e"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			for _, a := range tc.adds {
				f.q.Add(nil, mkPod(a.name, withPriority(a.prio)))
				f.clock.Step(time.Second)
			}
			var got []string
			for range tc.adds {
				pi := f.pop(t)
				got = append(got, pi.Pod.Name)
				if pi.Attempts != 1 || pi.InitialAttemptTimestamp == nil {
					t.Errorf("%s: Attempts=%d InitialAttemptTimestamp=%v, want 1 and set", pi.Pod.Name, pi.Attempts, pi.InitialAttemptTimestamp)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("pop order %v, want %v", got, tc.want)
			}
			if c := f.q.SchedulingCycle(); c != int64(len(tc.adds)) {
				t.Errorf("SchedulingCycle = %d, want %d", c, len(tc.adds))
			}
		})
	}
}

func TestBackoffDuration(t *testing.T) {
	bq := newBackoffQueue(time.Now, time.Second, 10*time.Second, prioritySort, false)
	for _, tc := range []struct {
		count int
		want  time.Duration
	}{{0, 0}, {1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second}, {4, 8 * time.Second}, {5, 10 * time.Second}, {6, 10 * time.Second}, {70, 10 * time.Second}} {
		if got := bq.backoffDuration(tc.count); got != tc.want {
			t.Errorf("backoffDuration(%d) = %v, want %v", tc.count, got, tc.want)
		}
	}
}

// A pod failing again and again with an error backs off 1s, 2s, 4s, 8s,
// 10s, 10s; the flush moves it to activeQ only once the back-off ended.
func TestBackoffGrowsAndFlushes(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.DisablePopFromBackoffQ = true })
	pod := mkPod("p")
	f.q.Add(nil, pod)
	for i, want := range []time.Duration{1, 2, 4, 8, 10, 10} {
		want *= time.Second
		pi := f.pop(t)
		f.fail(t, pi) // no rejecting plugin: an error
		if w := f.where(pod); w != "backoff" {
			t.Fatalf("attempt %d: pod in %q, want backoff", i+1, w)
		}
		if got := pi.BackoffExpiration.Sub(f.clock.Now()); got != want || pi.ConsecutiveErrorsCount != i+1 {
			t.Fatalf("attempt %d: back-off %v (errors %d), want %v", i+1, got, pi.ConsecutiveErrorsCount, want)
		}
		f.clock.Step(want)
		f.q.flushBackoffQCompleted()
		if w := f.where(pod); w != "backoff" {
			t.Fatalf("attempt %d: at expiry pod in %q, want still backoff", i+1, w)
		}
		f.clock.Step(time.Millisecond)
		f.q.flushBackoffQCompleted()
		if w := f.where(pod); w != "active" {
			t.Fatalf("attempt %d: after expiry pod in %q, want active", i+1, w)
		}
	}
}

// Rejections and errors are counted apart: a rejection after errors resets
// the error count, and the back-off follows the rejection count.
func TestBackoffErrorsVsRejections(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.DisablePopFromBackoffQ = true })
	pod := mkPod("p")
	f.q.Add(nil, pod)
	steps := []struct {
		plugins []string
		want    time.Duration
	}{
		{nil, time.Second},                 // error 1
		{nil, 2 * time.Second},             // error 2
		{nil, 4 * time.Second},             // error 3
		{[]string{"Fit"}, time.Second},     // rejection 1: errors reset
		{nil, time.Second},                 // error 1 again
		{[]string{"Fit"}, 2 * time.Second}, // rejection 2
	}
	for i, s := range steps {
		pi := f.pop(t)
		// An event in flight sends rejected pods to backoffQ too.
		f.q.MoveAllToActiveOrBackoffQueue(nil, nodeAdd, nil, nil, nil)
		f.fail(t, pi, s.plugins...)
		if got := pi.BackoffExpiration.Sub(f.clock.Now()); got != s.want {
			t.Fatalf("step %d: back-off %v, want %v (unschedulable %d, errors %d)", i, got, s.want, pi.UnschedulableCount, pi.ConsecutiveErrorsCount)
		}
		f.clock.Step(s.want + time.Millisecond)
		f.q.flushBackoffQCompleted()
	}
}

// With SchedulerPopFromBackoffQ (default) expiries are truncated to 1s
// windows and a window completes when the clock has left it; Pop takes a
// rejected pod from backoffQ early when activeQ is empty, never an
// errored one.
func TestBackoffWindowsAndPopFromBackoffQ(t *testing.T) {
	f := newFixture(t)
	f.clock.Step(500 * time.Millisecond)
	rejected, errored := mkPod("rejected"), mkPod("errored")
	f.q.Add(nil, rejected)
	f.q.Add(nil, errored)
	p1, p2 := f.pop(t), f.pop(t)
	f.q.MoveAllToActiveOrBackoffQueue(nil, nodeAdd, nil, nil, nil)
	f.fail(t, p1, "Fit")
	f.fail(t, p2)
	if want := epoch.Add(time.Second); !p1.BackoffExpiration.Equal(want) || !p2.BackoffExpiration.Equal(want) {
		t.Fatalf("expiries %v %v, want %v (0.5s + 1s truncated)", p1.BackoffExpiration, p2.BackoffExpiration, want)
	}
	f.clock.SetTime(epoch.Add(1900 * time.Millisecond))
	f.q.flushBackoffQCompleted()
	if f.where(errored) != "backoff" {
		t.Fatalf("errored pod in %q at 1.9s, want backoff (window of its expiry not over)", f.where(errored))
	}
	// activeQ empty: Pop takes the rejected pod early, not the errored one.
	pi := f.pop(t)
	if pi.Pod.Name != "rejected" {
		t.Fatalf("popped %s, want rejected", pi.Pod.Name)
	}
	f.q.lock.RLock()
	early := f.q.activeQ.Len() + f.q.backoffQ.rejected.Len()
	f.q.lock.RUnlock()
	if early != 0 {
		t.Fatalf("%d pods poppable, want 0 (errored pods are not popped early)", early)
	}
	f.clock.SetTime(epoch.Add(2 * time.Second))
	f.q.flushBackoffQCompleted()
	if f.where(errored) != "active" {
		t.Fatalf("errored pod in %q at 2s, want active", f.where(errored))
	}
}

func TestQueueingHints(t *testing.T) {
	other := mkPod("other")
	tests := []struct {
		name     string
		rejected []string // UnschedulablePlugins
		pending  []string // PendingPlugins
		wait     time.Duration
		event    framework.ClusterEvent
		newObj   any
		preCheck PreEnqueueCheck
		want     string
	}{
		{name: "registered event, hint Queue, backing off", rejected: []string{"Fit"}, event: nodeAdd, want: "backoff"},
		{name: "registered event, hint Queue, back-off over", rejected: []string{"Fit"}, wait: 2 * time.Second, event: nodeAdd, want: "active"},
		{name: "registered event, hint QueueSkip", rejected: []string{"Fit"}, event: nodeTaint, want: "unschedulable"},
		{name: "nil hint fn is Queue", rejected: []string{"Taint"}, event: nodeTaint, want: "backoff"},
		{name: "hint error is Queue", rejected: []string{"Broken"}, event: nodeAdd, want: "backoff"},
		{name: "event another plugin registered", rejected: []string{"Volume"}, event: nodeAdd, want: "unschedulable"},
		{name: "event nobody registered", rejected: []string{"Fit"}, event: nodeLabel, want: "unschedulable"},
		{name: "one of two rejectors says Queue", rejected: []string{"Fit", "Volume"}, event: pvcAdd, want: "backoff"},
		{name: "pending plugin Queue: straight to activeQ", rejected: []string{"Fit"}, pending: []string{"Volume"}, event: pvcAdd, want: "active"},
		{name: "wildcard timeout event", rejected: []string{"Fit"}, event: framework.EventUnschedulableTimeout, want: "backoff"},
		{name: "force activate for another pod", rejected: []string{"Fit"}, event: framework.EventForceActivate, newObj: other, want: "unschedulable"},
		{name: "preCheck refuses", rejected: []string{"Fit"}, event: nodeAdd, preCheck: func(*corev1.Pod) bool { return false }, want: "unschedulable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			pod := mkPod("p")
			f.q.Add(nil, pod)
			pi := f.pop(t)
			pi.PendingPlugins = sets.New(tc.pending...)
			f.fail(t, pi, tc.rejected...)
			if w := f.where(pod); w != "unschedulable" {
				t.Fatalf("after failure pod in %q, want unschedulable", w)
			}
			f.clock.Step(tc.wait)
			f.q.MoveAllToActiveOrBackoffQueue(nil, tc.event, nil, tc.newObj, tc.preCheck)
			if w := f.where(pod); w != tc.want {
				t.Errorf("after %s pod in %q, want %q", tc.event.Label(), w, tc.want)
			}
		})
	}
}

// Events that arrive while a pod is being scheduled are offered to its
// rejecting plugins when it comes back.
func TestInFlightEvents(t *testing.T) {
	tests := []struct {
		name    string
		events  []framework.ClusterEvent // during the attempt
		plugins []string
		pending []string
		want    string
	}{
		{name: "no event", plugins: []string{"Fit"}, want: "unschedulable"},
		{name: "registered event", events: []framework.ClusterEvent{nodeAdd}, plugins: []string{"Fit"}, want: "backoff"},
		{name: "event of another plugin", events: []framework.ClusterEvent{pvcAdd}, plugins: []string{"Fit"}, want: "unschedulable"},
		{name: "hint QueueSkip", events: []framework.ClusterEvent{nodeTaint}, plugins: []string{"Fit"}, want: "unschedulable"},
		{name: "skip then queue", events: []framework.ClusterEvent{nodeTaint, pvcAdd, nodeAdd}, plugins: []string{"Fit"}, want: "backoff"},
		{name: "pending plugin", events: []framework.ClusterEvent{pvcAdd}, pending: []string{"Volume"}, want: "active"},
		{name: "error ignores events", plugins: nil, want: "backoff"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			pod := mkPod("p")
			f.q.Add(nil, pod)
			pi := f.pop(t)
			for _, e := range tc.events {
				f.q.MoveAllToActiveOrBackoffQueue(nil, e, nil, nil, nil)
			}
			pi.PendingPlugins = sets.New(tc.pending...)
			f.fail(t, pi, tc.plugins...)
			if w := f.where(pod); w != tc.want {
				t.Errorf("pod in %q, want %q", w, tc.want)
			}
			if n := f.q.inFlightEvents.Len(); n != 0 {
				t.Errorf("%d in-flight entries left after the attempt ended", n)
			}
		})
	}
}

// Only events after a pod was popped count for it; Activate and the pod's
// own update while in flight are remembered too.
func TestInFlightEventsOrder(t *testing.T) {
	f := newFixture(t)
	a, b, c := mkPod("a", withPriority(3)), mkPod("b", withPriority(2)), mkPod("c", withPriority(1))
	for _, p := range []*corev1.Pod{a, b, c} {
		f.q.Add(nil, p)
	}
	pa := f.pop(t)
	f.q.MoveAllToActiveOrBackoffQueue(nil, nodeAdd, nil, nil, nil) // a sees it
	pb := f.pop(t)
	pc := f.pop(t)
	f.q.Activate(nil, map[string]*corev1.Pod{"ns/c": c}) // only for c
	f.fail(t, pb, "Fit")
	f.fail(t, pa, "Fit")
	f.fail(t, pc, "Fit")
	got := []string{f.where(a), f.where(b), f.where(c)}
	if want := []string{"backoff", "unschedulable", "backoff"}; !slices.Equal(got, want) {
		t.Errorf("a, b, c in %v, want %v", got, want)
	}
	if n := f.q.inFlightEvents.Len(); n != 0 {
		t.Errorf("%d in-flight entries left", n)
	}
	// An event with nobody in flight is not kept.
	f.q.MoveAllToActiveOrBackoffQueue(nil, pvcAdd, nil, nil, nil)
	if n := f.q.inFlightEvents.Len(); n != 0 {
		t.Errorf("event kept with no pod in flight")
	}
}

func TestUnschedulableTimeout(t *testing.T) {
	f := newFixture(t)
	pod, gated := mkPod("p"), mkPod("g", withGates("wait"))
	f.q.Add(nil, pod)
	f.q.Add(nil, gated)
	f.fail(t, f.pop(t), "Fit")
	f.clock.Step(DefaultPodMaxInUnschedulablePodsDuration)
	f.q.flushUnschedulablePodsLeftover()
	if w := f.where(pod); w != "unschedulable" {
		t.Fatalf("after exactly 5m pod in %q, want unschedulable", w)
	}
	f.clock.Step(time.Second)
	f.q.flushUnschedulablePodsLeftover()
	if w := f.where(pod); w != "active" {
		t.Fatalf("after 5m1s pod in %q, want active", w)
	}
	if w := f.where(gated); w != "gated" {
		t.Fatalf("gated pod in %q, want still gated (the timeout does not ungate)", w)
	}
}

// Run drives both flushers from the clock and closes the queue at the end.
func TestRunFlushers(t *testing.T) {
	f := newFixture(t)
	errored, parked := mkPod("errored"), mkPod("parked")
	f.q.Add(nil, errored)
	f.q.Add(nil, parked)
	p1, p2 := f.pop(t), f.pop(t)
	f.fail(t, p1)        // error: backoffQ, 1s
	f.fail(t, p2, "Fit") // unschedulable pool
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.q.Run(ctx) }()
	eventually(t, "Run to arm its timers", func() bool { return f.clock.Waiters() == 2 })
	if w := f.where(errored); w != "backoff" {
		t.Fatalf("errored pod in %q before its back-off ended", w)
	}
	f.clock.Step(2 * time.Second)
	eventually(t, "the back-off flush", func() bool { return f.where(errored) == "active" })
	if w := f.where(parked); w != "unschedulable" {
		t.Fatalf("parked pod in %q after 2s", w)
	}
	for i := 0; i < 10; i++ {
		f.clock.Step(30 * time.Second)
	}
	eventually(t, "the unschedulable flush", func() bool { return f.where(parked) == "active" })
	cancel()
	<-done
	if pi, err := f.q.Pop(nil); pi != nil || err != nil {
		t.Fatalf("Pop after Run ended = %v, %v; want nil (closed)", pi, err)
	}
}

func TestSchedulingGates(t *testing.T) {
	f := newFixture(t)
	gated := mkPod("g", withGates("a", "b"))
	f.q.Add(nil, gated)
	if w := f.where(gated); w != "gated" {
		t.Fatalf("gated pod in %q", w)
	}
	pi, _ := f.q.GetPod("g", "ns")
	if pi.GatingPlugin != "SchedulingGates" || !pi.UnschedulablePlugins.Has("SchedulingGates") {
		t.Fatalf("GatingPlugin %q, UnschedulablePlugins %v", pi.GatingPlugin, pi.UnschedulablePlugins)
	}
	if _, s := f.q.PendingPods(); s != "activeQ:0; backoffQ:0; unschedulablePods:1; gatedPods:1" {
		t.Fatalf("PendingPods summary %q", s)
	}
	// Events the gating plugin did not register leave it alone.
	f.q.MoveAllToActiveOrBackoffQueue(nil, nodeAdd, nil, nil, nil)
	// Removing one gate: still gated.
	one := mkPod("g", withGates("b"))
	f.q.Update(nil, gated, one)
	if w := f.where(gated); w != "gated" {
		t.Fatalf("after removing one gate pod in %q", w)
	}
	// Removing the last gate: poppable.
	none := mkPod("g")
	f.q.Update(nil, one, none)
	if w := f.where(gated); w != "active" {
		t.Fatalf("after removing every gate pod in %q, want active", w)
	}
	if got := f.pop(t); got.Pod != none || got.GatingPlugin != "" || got.UnschedulablePlugins.Len() != 0 {
		t.Fatalf("popped %v (gating %q, plugins %v), want the ungated pod", got.Pod.Name, got.GatingPlugin, got.UnschedulablePlugins)
	}
}

func TestUpdate(t *testing.T) {
	t.Run("in activeQ: in place", func(t *testing.T) {
		f := newFixture(t)
		old := mkPod("p")
		f.q.Add(nil, old)
		nw := mkPod("p", withLabels("x", "y"))
		f.q.Update(nil, old, nw)
		if pi, ok := f.q.GetPod("p", "ns"); !ok || pi.Pod != nw || f.where(nw) != "active" {
			t.Fatalf("pod not updated in activeQ")
		}
	})
	t.Run("unschedulable: label change registered by the rejector", func(t *testing.T) {
		f := newFixture(t, func(c *Config) {
			c.QueueingHints[""][framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodLabel}] = []QueueingHintFunction{{PluginName: "Affinity"}}
		})
		old := mkPod("p")
		f.q.Add(nil, old)
		f.fail(t, f.pop(t), "Fit")
		// A status-only change: the plain Update nobody registered.
		st := old.DeepCopy()
		st.Status.Message = "x"
		f.q.Update(nil, old, st)
		if w := f.where(old); w != "unschedulable" {
			t.Fatalf("after status change pod in %q", w)
		}
		// A label change, but Fit did not register it.
		lab := mkPod("p", withLabels("a", "b"))
		f.q.Update(nil, st, lab)
		if w := f.where(old); w != "unschedulable" {
			t.Fatalf("after label change (not Fit's event) pod in %q", w)
		}
		if pi, _ := f.q.GetPod("p", "ns"); pi.Pod != lab {
			t.Fatalf("pooled pod not updated")
		}
		f.q.Delete(lab)
		f.q.Add(nil, lab)
		f.fail(t, f.pop(t), "Affinity")
		lab2 := mkPod("p", withLabels("a", "c"))
		f.q.Update(nil, lab, lab2)
		if w := f.where(lab2); w != "backoff" {
			t.Fatalf("after label change registered by the rejector pod in %q, want backoff", w)
		}
	})
	t.Run("in flight: recorded", func(t *testing.T) {
		f := newFixture(t, func(c *Config) {
			c.QueueingHints[""][framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodLabel}] = []QueueingHintFunction{{PluginName: "Affinity"}}
		})
		old := mkPod("p")
		f.q.Add(nil, old)
		pi := f.pop(t)
		f.q.Update(nil, old, mkPod("p", withLabels("a", "b")))
		if w := f.where(old); w != "inflight" {
			t.Fatalf("pod in %q, want still in flight", w)
		}
		f.fail(t, pi, "Affinity")
		if w := f.where(old); w != "backoff" {
			t.Fatalf("pod in %q, want backoff (its update arrived in flight)", w)
		}
	})
	t.Run("unknown pod: added", func(t *testing.T) {
		f := newFixture(t)
		p := mkPod("p")
		f.q.Update(nil, nil, p)
		if w := f.where(p); w != "active" {
			t.Fatalf("pod in %q", w)
		}
	})
}

func TestDelete(t *testing.T) {
	for _, where := range []string{"active", "backoff", "unschedulable", "gated"} {
		t.Run(where, func(t *testing.T) {
			f := newFixture(t)
			var pod *corev1.Pod
			switch where {
			case "active":
				pod = mkPod("p", withNominated("n1"))
				f.q.Add(nil, pod)
			case "gated":
				pod = mkPod("p", withGates("g"))
				f.q.Add(nil, pod)
			default:
				pod = mkPod("p")
				f.q.Add(nil, pod)
				pi := f.pop(t)
				if where == "backoff" {
					f.fail(t, pi)
				} else {
					f.fail(t, pi, "Fit")
				}
			}
			if w := f.where(pod); w != where {
				t.Fatalf("setup: pod in %q, want %q", w, where)
			}
			f.q.Delete(pod)
			if w := f.where(pod); w != "" {
				t.Fatalf("after Delete pod in %q", w)
			}
			if pods, s := f.q.PendingPods(); len(pods) != 0 {
				t.Fatalf("PendingPods after Delete: %v (%s)", podNames(pods), s)
			}
			if n := f.q.NominatedPodsForNode("n1"); len(n) != 0 {
				t.Fatalf("still nominated")
			}
			if f.q.gated != 0 {
				t.Fatalf("gated count %d after Delete", f.q.gated)
			}
		})
	}
}

func TestPopBlocksUntilAddAndReturnsAfterClose(t *testing.T) {
	f := newFixture(t)
	popped := make(chan *framework.QueuedPodInfo, 1)
	pop := func() {
		pi, err := f.q.Pop(nil)
		if err != nil {
			t.Error(err)
		}
		popped <- pi
	}
	waiting := func() bool {
		f.q.lock.RLock()
		defer f.q.lock.RUnlock()
		return f.q.popWaiting == 1
	}
	go pop()
	eventually(t, "Pop to block", waiting)
	select {
	case pi := <-popped:
		t.Fatalf("Pop returned %v on an empty queue", pi)
	default:
	}
	f.q.Add(nil, mkPod("p"))
	if pi := <-popped; pi == nil || pi.Pod.Name != "p" {
		t.Fatalf("Pop = %v, want p", pi)
	}
	// A gated pod does not wake it.
	go pop()
	eventually(t, "Pop to block", waiting)
	f.q.Add(nil, mkPod("g", withGates("x")))
	f.q.Close()
	if pi := <-popped; pi != nil {
		t.Fatalf("Pop after Close = %v, want nil", pi.Pod.Name)
	}
}

func TestActivate(t *testing.T) {
	f := newFixture(t)
	u, b, active := mkPod("u"), mkPod("b"), mkPod("a")
	f.q.Add(nil, u)
	f.q.Add(nil, b)
	f.fail(t, f.pop(t), "Fit")
	f.fail(t, f.pop(t))
	f.q.Add(nil, active)
	f.q.Activate(nil, map[string]*corev1.Pod{"ns/u": u, "ns/b": b, "ns/a": active, "ns/x": mkPod("x")})
	for _, p := range []*corev1.Pod{u, b, active} {
		if w := f.where(p); w != "active" {
			t.Errorf("%s in %q, want active", p.Name, w)
		}
	}
	if w := f.where(mkPod("x")); w != "" {
		t.Errorf("unknown pod added by Activate")
	}
}

func TestAssignedPodAdded(t *testing.T) {
	f := newFixture(t, func(c *Config) {
		c.QueueingHints[""][framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Add}] = []QueueingHintFunction{{PluginName: "InterPodAffinity"}, {PluginName: "PodTopologySpread"}}
	})
	aff := mkPod("aff")
	aff.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, TopologyKey: "zone",
	}}}}
	spread := mkPod("spread")
	f.q.Add(nil, aff)
	f.q.Add(nil, spread)
	f.fail(t, f.pop(t), "InterPodAffinity")
	f.fail(t, f.pop(t), "PodTopologySpread")

	web := mkPod("web", withLabels("app", "web"))
	web.Namespace = "other"
	f.q.AssignedPodAdded(nil, web)
	if a, s := f.where(aff), f.where(spread); a != "unschedulable" || s != "unschedulable" {
		t.Fatalf("unrelated bound pod moved aff=%q spread=%q", a, s)
	}
	db := mkPod("db", withLabels("app", "db"))
	f.q.AssignedPodAdded(nil, db)
	if a, s := f.where(aff), f.where(spread); a != "backoff" || s != "backoff" {
		t.Fatalf("matching bound pod: aff=%q spread=%q, want both backoff", a, s)
	}
}

func TestNominator(t *testing.T) {
	f := newFixture(t)
	nodesOf := func(n string) []string {
		var out []string
		for _, pi := range f.q.NominatedPodsForNode(n) {
			out = append(out, pi.Pod.Name)
		}
		slices.Sort(out)
		return out
	}
	// status.nominatedNodeName is picked up when the pod is added.
	a := mkPod("a", withNominated("n1"))
	f.q.Add(nil, a)
	// Preemption nominates b before the status is written.
	b := mkPod("b")
	f.q.Add(nil, b)
	f.q.AddNominatedPod(nil, framework.NewPodInfo(b), &framework.NominatingInfo{NominatedNodeName: "n1", NominatingMode: framework.ModeOverride})
	if got := nodesOf("n1"); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("n1 nominated %v", got)
	}
	// The returned PodInfo is the queue's version of the pod.
	for _, pi := range f.q.NominatedPodsForNode("n1") {
		if pi.Pod.Name == "a" && pi.Pod != a {
			t.Errorf("nominated PodInfo is not the queued pod")
		}
	}
	// An update without nominatedNodeName keeps preemption's node.
	b2 := mkPod("b", withLabels("v", "2"))
	f.q.UpdateNominatedPod(nil, b, framework.NewPodInfo(b2))
	if got := nodesOf("n1"); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("after update without nomination n1 = %v", got)
	}
	// A new nominatedNodeName moves it.
	b3 := mkPod("b", withNominated("n2"))
	f.q.UpdateNominatedPod(nil, b2, framework.NewPodInfo(b3))
	if got, got2 := nodesOf("n1"), nodesOf("n2"); !slices.Equal(got, []string{"a"}) || !slices.Equal(got2, []string{"b"}) {
		t.Fatalf("after moving b: n1=%v n2=%v", got, got2)
	}
	// Update through the queue follows the status too.
	a2 := mkPod("a")
	f.q.Update(nil, a, a2)
	if got := nodesOf("n1"); len(got) != 0 {
		t.Fatalf("a still nominated after its nomination was cleared: %v", got)
	}
	f.q.DeleteNominatedPodIfExists(b3)
	if got := nodesOf("n2"); len(got) != 0 {
		t.Fatalf("n2 = %v after delete", got)
	}
	// A pod the lister reports bound is not nominated.
	bound := mkPod("bound")
	bound.Spec.NodeName = "n9"
	g := newFixture(t, func(c *Config) {
		c.PodLister = func(ns, name string) (*corev1.Pod, error) {
			if name == "bound" {
				return bound, nil
			}
			return nil, fmt.Errorf("not found")
		}
	})
	g.q.AddNominatedPod(nil, framework.NewPodInfo(mkPod("bound")), &framework.NominatingInfo{NominatedNodeName: "n3", NominatingMode: framework.ModeOverride})
	g.q.AddNominatedPod(nil, framework.NewPodInfo(mkPod("gone")), &framework.NominatingInfo{NominatedNodeName: "n3", NominatingMode: framework.ModeOverride})
	if n := g.q.NominatedPodsForNode("n3"); len(n) != 0 {
		t.Fatalf("bound or gone pods nominated: %d", len(n))
	}
}

func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var lbl []string
			for _, l := range m.GetLabel() {
				lbl = append(lbl, l.GetName()+"="+l.GetValue())
			}
			v := m.GetGauge().GetValue()
			if m.Counter != nil {
				v = m.GetCounter().GetValue()
			}
			got[mf.GetName()+"{"+strings.Join(lbl, ",")+"}"] = v
		}
	}
	return got
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := newFixture(t, func(c *Config) { c.Metrics = reg })
	f.q.Add(nil, mkPod("a"))
	f.q.Add(nil, mkPod("b"))
	g := mkPod("g", withGates("x"))
	f.q.Add(nil, g)
	f.fail(t, f.pop(t))        // error → backoff
	f.fail(t, f.pop(t), "Fit") // → unschedulable
	f.q.Add(nil, mkPod("c"))
	want := map[string]float64{
		"scheduler_pending_pods{queue=active}":                                                  1,
		"scheduler_pending_pods{queue=backoff}":                                                 1,
		"scheduler_pending_pods{queue=unschedulable}":                                           1,
		"scheduler_pending_pods{queue=gated}":                                                   1,
		"scheduler_queue_incoming_pods_total{event=UnschedulablePodAdd,queue=active}":           3,
		"scheduler_queue_incoming_pods_total{event=UnschedulablePodAdd,queue=unschedulable}":    1,
		"scheduler_queue_incoming_pods_total{event=ScheduleAttemptFailure,queue=backoff}":       1,
		"scheduler_queue_incoming_pods_total{event=ScheduleAttemptFailure,queue=unschedulable}": 1,
		"scheduler_unschedulable_pods{plugin=Fit,profile=}":                                     1,
		"scheduler_unschedulable_pods{plugin=SchedulingGates,profile=}":                         1,
	}
	check := func(stage string) {
		t.Helper()
		got := gather(t, reg)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %v, want %v", stage, k, got[k], v)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: series %v, want exactly %v", stage, got, want)
		}
	}
	check("after failures")
	// The rejected pod is retried (its plugins are cleared at Pop), the
	// gated one deleted.
	f.q.Activate(nil, map[string]*corev1.Pod{"ns/b": mkPod("b")})
	f.q.Delete(g)
	want["scheduler_pending_pods{queue=active}"] = 2
	want["scheduler_pending_pods{queue=unschedulable}"] = 0
	want["scheduler_pending_pods{queue=gated}"] = 0
	want["scheduler_queue_incoming_pods_total{event=ForceActivate,queue=active}"] = 1
	want["scheduler_unschedulable_pods{plugin=SchedulingGates,profile=}"] = 0
	check("after activate and delete")
	for f.q.SchedulingCycle() < 4 {
		f.pop(t)
	}
	want["scheduler_pending_pods{queue=active}"] = 0
	want["scheduler_unschedulable_pods{plugin=Fit,profile=}"] = 0
	check("after popping everything")
}

func TestAddUnschedulableIfNotPresentRejectsDuplicates(t *testing.T) {
	f := newFixture(t)
	p := mkPod("p")
	f.q.Add(nil, p)
	pi := f.pop(t)
	f.q.Add(nil, p) // the informer re-adds it meanwhile
	if err := f.q.AddUnschedulableIfNotPresent(nil, pi, 1); err == nil {
		t.Fatal("no error for a pod already in activeQ")
	}
	if w := f.where(p); w != "active" {
		t.Fatalf("pod in %q, want active (in-flight mark ended)", w)
	}
}

// A plugin without EnqueueExtensions registers WildCard/All: every event
// may help the pods it rejected.
func TestQueueingHintMapAddWildcard(t *testing.T) {
	f := newFixture(t, func(c *Config) {
		c.QueueingHints[""].Add("Any", []framework.ClusterEventWithHint{{Event: framework.ClusterEvent{Resource: framework.WildCard, ActionType: framework.All}}})
	})
	pod := mkPod("p")
	f.q.Add(nil, pod)
	f.fail(t, f.pop(t), "Any")
	f.q.MoveAllToActiveOrBackoffQueue(nil, framework.ClusterEvent{Resource: framework.StorageClass, ActionType: framework.Add}, nil, nil, nil)
	if w := f.where(pod); w != "backoff" {
		t.Fatalf("pod in %q, want backoff", w)
	}
}

// A bound pod's scale-down may help any pod NodeResourcesFit rejected;
// its other changes only pods with affinity to it.
func TestAssignedPodUpdated(t *testing.T) {
	scaleDown := framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodScaleDown}
	labelChange := framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodLabel}
	f := newFixture(t, func(c *Config) {
		c.QueueingHints[""][scaleDown] = []QueueingHintFunction{{PluginName: "Fit"}}
		c.QueueingHints[""][labelChange] = []QueueingHintFunction{{PluginName: "Fit"}}
	})
	pod := mkPod("p")
	f.q.Add(nil, pod)
	f.fail(t, f.pop(t), "Fit")
	bound := mkPod("bound")
	bound.Spec.NodeName = "n1"
	f.q.AssignedPodUpdated(nil, bound, bound, labelChange)
	if w := f.where(pod); w != "unschedulable" {
		t.Fatalf("label change of an unrelated bound pod moved it to %q", w)
	}
	f.q.AssignedPodUpdated(nil, bound, bound, scaleDown)
	if w := f.where(pod); w != "backoff" {
		t.Fatalf("after a scale-down pod in %q, want backoff", w)
	}
	// In backoffQ an update is applied in place.
	nw := mkPod("p", withLabels("v", "2"))
	f.q.Update(nil, pod, nw)
	if pi, _ := f.q.GetPod("p", "ns"); pi.Pod != nw || f.where(nw) != "backoff" {
		t.Fatalf("pod not updated in place in backoffQ")
	}
}
