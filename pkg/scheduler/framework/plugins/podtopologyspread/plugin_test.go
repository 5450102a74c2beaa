package podtopologyspread

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	schedcache "github.com/skiff-sh/skiff/pkg/scheduler/internal/cache"
)

func TestNew(t *testing.T) {
	snap := schedcache.NewEmptySnapshot()
	if _, err := New(context.Background(), nil, &fakeHandle{}); err == nil {
		t.Error("no snapshot lister: want an error")
	}
	if _, err := New(context.Background(), nil, &fakeHandle{lister: snap}); err == nil {
		t.Error("system defaults without an informer factory: want an error")
	}
	if _, err := New(context.Background(), listArgs, &fakeHandle{lister: snap}); err != nil {
		t.Errorf("List defaulting without constraints needs no factory: %v", err)
	}
	if _, err := New(context.Background(), &config.NodeAffinityArgs{}, &fakeHandle{lister: snap}); err == nil {
		t.Error("args of another plugin: want an error")
	}
	bad := &config.PodTopologySpreadArgs{DefaultingType: config.ListDefaulting, DefaultConstraints: []corev1.TopologySpreadConstraint{
		{MaxSkew: 0, TopologyKey: "zone", WhenUnsatisfiable: corev1.ScheduleAnyway}}}
	if _, err := New(context.Background(), bad, &fakeHandle{lister: snap, factory: informers.NewSharedInformerFactory(nil, 0)}); err == nil {
		t.Error("maxSkew 0: want a validation error")
	}
	p, err := New(context.Background(), nil, &fakeHandle{lister: snap, factory: informers.NewSharedInformerFactory(nil, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if pl := p.(*PodTopologySpread); !pl.systemDefaulted || len(pl.defaultConstraints) != 2 || pl.services == nil || pl.replicaSets == nil {
		t.Errorf("defaults: %+v", pl)
	}
}

// List defaulting: the args' constraints apply to pods with a Service.
func TestListDefaultConstraints(t *testing.T) {
	args := &config.PodTopologySpreadArgs{DefaultingType: config.ListDefaulting, DefaultConstraints: []corev1.TopologySpreadConstraint{
		{MaxSkew: 1, TopologyKey: "node", WhenUnsatisfiable: corev1.DoNotSchedule}}}
	nodes := []*corev1.Node{makeNode("node-a", "node", "node-a"), makeNode("node-b", "node", "node-b")}
	pods := []*corev1.Pod{makePod("w1").node("node-a").label("app", "web").obj()}
	svc := &corev1.Service{Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}}}
	svc.Namespace, svc.Name = "default", "web"
	p, snap := newPlugin(t, args, pods, nodes, svc)
	all, _ := snap.NodeInfos().List()
	pod := makePod("w2").label("app", "web").obj()
	state := framework.NewCycleState()
	if _, st := p.PreFilter(context.Background(), state, pod, all); !st.IsSuccess() {
		t.Fatal(st)
	}
	na, _ := snap.NodeInfos().Get("node-a")
	nb, _ := snap.NodeInfos().Get("node-b")
	if st := p.Filter(context.Background(), state, pod, na); st.Code() != framework.Unschedulable {
		t.Errorf("node-a: %v", st)
	}
	if st := p.Filter(context.Background(), state, pod, nb); !st.IsSuccess() {
		t.Errorf("node-b: %v", st)
	}
	// A pod no Service selects gets no default constraints.
	if _, st := p.PreFilter(context.Background(), framework.NewCycleState(), makePod("x").label("app", "x").obj(), all); !st.IsSkip() {
		t.Errorf("unselected pod: %v, want Skip", st)
	}
}

func TestEventsToRegister(t *testing.T) {
	p, _ := newPlugin(t, listArgs, nil, nil)
	evs, err := p.EventsToRegister(context.Background())
	if err != nil || len(evs) != 2 {
		t.Fatalf("%v %v", evs, err)
	}
	want := []framework.ClusterEvent{
		{Resource: framework.Pod, ActionType: framework.Add | framework.UpdatePodLabel | framework.UpdatePodToleration | framework.Delete},
		{Resource: framework.Node, ActionType: framework.Add | framework.Delete | framework.UpdateNodeLabel | framework.UpdateNodeTaint},
	}
	for i := range want {
		if evs[i].Event != want[i] || evs[i].QueueingHintFn == nil {
			t.Errorf("event %d: %+v, want %+v with a hint", i, evs[i].Event, want[i])
		}
	}
}

// Cases from upstream's Test_isSchedulableAfterNodeChange.
func TestIsSchedulableAfterNodeChange(t *testing.T) {
	pod := makePod("p").label("foo", "").spread(1, "zone", corev1.DoNotSchedule, fooSelector).spread(1, "node", corev1.DoNotSchedule, fooSelector).obj()
	n := func(kv ...string) *corev1.Node { return makeNode("node-a", kv...) }
	cases := []struct {
		name           string
		pod            *corev1.Pod
		oldObj, newObj any
		want           framework.QueueingHint
	}{
		{name: "node without the keys added", newObj: n("zone", "zone1"), want: framework.QueueSkip},
		{name: "node with the keys added", newObj: n("zone", "zone1", "node", "node-a"), want: framework.Queue},
		{name: "node without the keys deleted", oldObj: n("zone", "zone1"), want: framework.QueueSkip},
		{name: "node with the keys deleted", oldObj: n("zone", "zone1", "node", "node-a"), want: framework.Queue},
		{name: "topology value changed", oldObj: n("zone", "zone1", "node", "node-a"), newObj: n("zone", "zone2", "node", "node-a"), want: framework.Queue},
		{name: "unrelated label changed", oldObj: n("zone", "zone1", "node", "node-a"), newObj: n("zone", "zone1", "node", "node-a", "x", "y"), want: framework.QueueSkip},
		{name: "key added", oldObj: n("zone", "zone1"), newObj: n("zone", "zone1", "node", "node-a"), want: framework.Queue},
		{name: "key removed", oldObj: n("zone", "zone1", "node", "node-a"), newObj: n("zone", "zone1"), want: framework.Queue},
		{name: "taints changed on a matching node", oldObj: n("zone", "zone1", "node", "node-a"), newObj: tainted(n("zone", "zone1", "node", "node-a"), "t"), want: framework.Queue},
		{name: "taints changed on a node without the keys", oldObj: n("zone", "zone1"), newObj: tainted(n("zone", "zone1"), "t"), want: framework.QueueSkip},
		{name: "pod without constraints: any node", pod: makePod("q").obj(), newObj: n(), want: framework.Queue},
	}
	p, _ := newPlugin(t, listArgs, nil, nil)
	for _, tc := range cases {
		pp := pod
		if tc.pod != nil {
			pp = tc.pod
		}
		got, err := p.isSchedulableAfterNodeChange(nil, pp, tc.oldObj, tc.newObj)
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	if got, err := p.isSchedulableAfterNodeChange(nil, pod, nil, "not-a-node"); err == nil || got != framework.Queue {
		t.Errorf("wrong object: %v, %v", got, err)
	}
}

// Cases from upstream's Test_isSchedulableAfterPodChange.
func TestIsSchedulableAfterPodChange(t *testing.T) {
	pod := makePod("p").label("foo", "").spread(1, "zone", corev1.DoNotSchedule, fooSelector).spread(1, "node", corev1.DoNotSchedule, barSelector).obj()
	honorPod := makePod("p").label("foo", "").spread(1, "zone", corev1.DoNotSchedule, fooSelector, spreadOpts{nodeTaintsPolicy: &honor}).obj()
	cases := []struct {
		name           string
		pod            *corev1.Pod
		oldObj, newObj any
		want           framework.QueueingHint
	}{
		{name: "add pod with matching labels", newObj: makePod("q").node("node-a").label("foo", "").obj(), want: framework.Queue},
		{name: "add unscheduled pod", newObj: makePod("q").label("foo", "").obj(), want: framework.QueueSkip},
		{name: "add pod in another namespace", newObj: makePod("q").namespace("ns1").node("node-a").label("foo", "").obj(), want: framework.QueueSkip},
		{name: "add pod without matching labels", newObj: makePod("q").node("node-a").label("baz", "").obj(), want: framework.QueueSkip},
		{name: "delete pod with matching labels", oldObj: makePod("q").node("node-a").label("foo", "").obj(), want: framework.Queue},
		{name: "delete pod without matching labels", oldObj: makePod("q").node("node-a").label("baz", "").obj(), want: framework.QueueSkip},
		{name: "label change making it match", oldObj: makePod("q").node("node-a").label("baz", "").obj(), newObj: makePod("q").node("node-a").label("bar", "").obj(), want: framework.Queue},
		{name: "label change making it unmatch", oldObj: makePod("q").node("node-a").label("foo", "").obj(), newObj: makePod("q").node("node-a").obj(), want: framework.Queue},
		{name: "label change keeping the match", oldObj: makePod("q").node("node-a").label("foo", "").obj(), newObj: makePod("q").node("node-a").label("foo", "").label("x", "").obj(), want: framework.QueueSkip},
		{name: "no label change", oldObj: makePod("q").node("node-a").label("foo", "").obj(), newObj: makePod("q").node("node-a").label("foo", "").obj(), want: framework.QueueSkip},
		{name: "own toleration added, taints policy Honor", pod: honorPod, oldObj: makePod("p").label("foo", "").obj(), newObj: makePod("p").label("foo", "").toleration("t").obj(), want: framework.Queue},
		{name: "own toleration added, taints policy Ignore", oldObj: makePod("p").label("foo", "").obj(), newObj: makePod("p").label("foo", "").toleration("t").obj(), want: framework.QueueSkip},
	}
	p, _ := newPlugin(t, listArgs, nil, nil)
	for _, tc := range cases {
		pp := pod
		if tc.pod != nil {
			pp = tc.pod
		}
		got, err := p.isSchedulableAfterPodChange(nil, pp, tc.oldObj, tc.newObj)
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

func BenchmarkFilter(b *testing.B) {
	var nodes []*corev1.Node
	var pods []*corev1.Pod
	for i := 0; i < 100; i++ {
		name := "n" + string(rune('A'+i%26)) + string(rune('a'+i/26))
		nodes = append(nodes, makeNode(name, corev1.LabelHostname, name, "zone", "z"+string(rune('0'+i%3))))
		pods = append(pods, makePod("p"+name).node(name).label("foo", "").obj())
	}
	snap := schedcache.NewSnapshot(pods, nodes)
	pl, err := New(context.Background(), listArgs, &fakeHandle{lister: snap})
	if err != nil {
		b.Fatal(err)
	}
	p := pl.(*PodTopologySpread)
	pod := makePod("p").label("foo", "").spread(1, "zone", corev1.DoNotSchedule, fooSelector).spread(1, corev1.LabelHostname, corev1.DoNotSchedule, fooSelector).obj()
	all, _ := snap.NodeInfos().List()
	state := framework.NewCycleState()
	if _, st := p.PreFilter(context.Background(), state, pod, all); !st.IsSuccess() {
		b.Fatal(st)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, ni := range all {
			p.Filter(context.Background(), state, pod, ni)
		}
	}
}
