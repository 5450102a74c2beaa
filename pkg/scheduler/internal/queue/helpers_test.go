package queue

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// epoch is on a whole second, so back-off windows line up with it.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const waitTimeout = 20 * time.Second

func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// prioritySort is PrioritySort's Less: higher priority first, then the
// earlier Timestamp.
func prioritySort(a, b *framework.QueuedPodInfo) bool {
	pa, pb := prio(a.Pod), prio(b.Pod)
	return pa > pb || (pa == pb && a.Timestamp.Before(b.Timestamp))
}

func prio(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

type podOpt func(*corev1.Pod)

func withPriority(v int32) podOpt { return func(p *corev1.Pod) { p.Spec.Priority = &v } }
func withGates(names ...string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.SchedulingGates = nil
		for _, n := range names {
			p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: n})
		}
	}
}
func withLabels(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		p.Labels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}
func withNominated(node string) podOpt {
	return func(p *corev1.Pod) { p.Status.NominatedNodeName = node }
}

func mkPod(name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}}
	for _, o := range opts {
		o(p)
	}
	return p
}

// gatesPlugin is the SchedulingGates PreEnqueue plugin.
type gatesPlugin struct{}

func (gatesPlugin) Name() string { return "SchedulingGates" }
func (gatesPlugin) PreEnqueue(_ context.Context, p *corev1.Pod) *framework.Status {
	if len(p.Spec.SchedulingGates) == 0 {
		return nil
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, "waiting for scheduling gates")
}

var (
	nodeAdd    = framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}
	nodeTaint  = framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeTaint}
	nodeLabel  = framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeLabel}
	pvcAdd     = framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add}
	gatesEvent = framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodSchedulingGatesEliminated}
)

func hintOf(h framework.QueueingHint, err error) framework.QueueingHintFn {
	return func(*slog.Logger, *corev1.Pod, any, any) (framework.QueueingHint, error) { return h, err }
}

var errHint = errors.New("hint failed")

// testHints: plugin "Fit" registers NodeAdd (Queue) and UpdateNodeTaint
// (QueueSkip); "Taint" registers UpdateNodeTaint with a nil hint (Queue);
// "Broken" registers NodeAdd with a failing hint; "Volume" registers PVC
// Add (Queue); SchedulingGates registers the gates-eliminated pod update.
func testHints() map[string]QueueingHintMap {
	return map[string]QueueingHintMap{"": {
		nodeAdd: {
			{PluginName: "Fit", QueueingHintFn: hintOf(framework.Queue, nil)},
			{PluginName: "Broken", QueueingHintFn: hintOf(framework.QueueSkip, errHint)},
		},
		nodeTaint: {
			{PluginName: "Fit", QueueingHintFn: hintOf(framework.QueueSkip, nil)},
			{PluginName: "Taint"},
		},
		pvcAdd:     {{PluginName: "Volume", QueueingHintFn: hintOf(framework.Queue, nil)}},
		gatesEvent: {{PluginName: "SchedulingGates"}},
	}}
}

type fixture struct {
	q     *PriorityQueue
	clock *clock.Fake
}

func newFixture(t *testing.T, mutate ...func(*Config)) *fixture {
	t.Helper()
	fc := clock.NewFake(epoch)
	cfg := Config{
		Clock:             fc,
		LessFunc:          prioritySort,
		PreEnqueuePlugins: map[string][]framework.PreEnqueuePlugin{"": {gatesPlugin{}}},
		QueueingHints:     testHints(),
	}
	for _, m := range mutate {
		m(&cfg)
	}
	q := New(cfg)
	t.Cleanup(q.Close)
	return &fixture{q: q, clock: fc}
}

// where names the sub-queue holding pod ("active", "backoff",
// "unschedulable", "gated", "inflight", "" for none).
func (f *fixture) where(pod *corev1.Pod) string {
	q := f.q
	q.lock.RLock()
	defer q.lock.RUnlock()
	k := objKey(pod)
	var in []string
	if q.activeQ.Has(k) {
		in = append(in, "active")
	}
	if q.backoffQ.has(k) {
		in = append(in, "backoff")
	}
	if e, ok := q.unschedulable[k]; ok {
		if e.gated {
			in = append(in, "gated")
		} else {
			in = append(in, "unschedulable")
		}
	}
	if _, ok := q.inFlightPods[pod.UID]; ok {
		in = append(in, "inflight")
	}
	switch len(in) {
	case 0:
		return ""
	case 1:
		return in[0]
	}
	return "MANY:" + strings.Join(in, ",")
}

// pop pops without blocking (the test knows the queue is not empty).
func (f *fixture) pop(t *testing.T) *framework.QueuedPodInfo {
	t.Helper()
	f.q.lock.RLock()
	n := f.q.activeQ.Len()
	if f.q.popEarly {
		n += f.q.backoffQ.rejected.Len()
	}
	f.q.lock.RUnlock()
	if n == 0 {
		t.Fatalf("pop: queue empty")
	}
	pi, err := f.q.Pop(nil)
	if err != nil || pi == nil {
		t.Fatalf("Pop = %v, %v", pi, err)
	}
	return pi
}

// fail hands a popped pod back as rejected by plugins (none: an error).
func (f *fixture) fail(t *testing.T, pi *framework.QueuedPodInfo, plugins ...string) {
	t.Helper()
	pi.UnschedulablePlugins = sets.New(plugins...)
	if err := f.q.AddUnschedulableIfNotPresent(nil, pi, f.q.SchedulingCycle()); err != nil {
		t.Fatal(err)
	}
}

// failPending hands a popped pod back as Pending on plugins.
func (f *fixture) failPending(t *testing.T, pi *framework.QueuedPodInfo, plugins ...string) {
	t.Helper()
	pi.PendingPlugins = sets.New(plugins...)
	if err := f.q.AddUnschedulableIfNotPresent(nil, pi, f.q.SchedulingCycle()); err != nil {
		t.Fatal(err)
	}
}

func podNames(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	sort.Strings(out)
	return out
}
