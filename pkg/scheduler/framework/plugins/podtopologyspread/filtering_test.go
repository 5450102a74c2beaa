package podtopologyspread

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// fourNodes are upstream's node-a/b (zone1) and node-x/y (zone2) with a
// "node" label.
func fourNodes() []*corev1.Node {
	return []*corev1.Node{
		makeNode("node-a", "zone", "zone1", "node", "node-a"),
		makeNode("node-b", "zone", "zone1", "node", "node-b"),
		makeNode("node-x", "zone", "zone2", "node", "node-x"),
		makeNode("node-y", "zone", "zone2", "node", "node-y"),
	}
}

// foo pods: count per node name.
func fooPods(counts map[string]int) []*corev1.Pod {
	var out []*corev1.Pod
	for _, n := range []string{"node-a", "node-b", "node-x", "node-y"} {
		for i := 0; i < counts[n]; i++ {
			out = append(out, makePod("p-"+n+string(rune('0'+i))).node(n).label("foo", "").obj())
		}
	}
	return out
}

const (
	ok    = framework.Success
	unsch = framework.Unschedulable
	unres = framework.UnschedulableAndUnresolvable
)

// Cases from upstream's TestSingleConstraint and TestMultipleConstraints.
func TestFilter(t *testing.T) {
	cases := []struct {
		name  string
		pod   *corev1.Pod
		nodes []*corev1.Node
		pods  []*corev1.Pod
		want  map[string]framework.Code
	}{
		{name: "no existing pods", pod: makePod("p").label("foo", "").spread(1, "zone", corev1.DoNotSchedule, fooSelector).obj(), nodes: fourNodes(),
			want: map[string]framework.Code{"node-a": ok, "node-b": ok, "node-x": ok, "node-y": ok}},
		{name: "incoming pod doesn't match itself", pod: makePod("p").label("foo", "").spread(1, "zone", corev1.DoNotSchedule, barSelector).obj(), nodes: fourNodes(),
			want: map[string]framework.Code{"node-a": ok, "node-b": ok, "node-x": ok, "node-y": ok}},
		{name: "pods in other namespaces do not count", pod: makePod("p").label("foo", "").spread(1, "zone", corev1.DoNotSchedule, fooSelector).obj(), nodes: fourNodes(),
			pods: []*corev1.Pod{
				makePod("p-a1").namespace("ns1").node("node-a").label("foo", "").obj(),
				makePod("p-b1").namespace("ns2").node("node-a").label("foo", "").obj(),
				makePod("p-x1").node("node-x").label("foo", "").obj(),
				makePod("p-y1").node("node-y").label("foo", "").obj()},
			want: map[string]framework.Code{"node-a": ok, "node-b": ok, "node-x": unsch, "node-y": unsch}},
		{name: "zones 3/3, all fit", pod: makePod("p").label("foo", "").spread(1, "zone", corev1.DoNotSchedule, fooSelector).obj(), nodes: fourNodes(),
			pods: fooPods(map[string]int{"node-a": 2, "node-b": 1, "node-y": 3}),
			want: map[string]framework.Code{"node-a": ok, "node-b": ok, "node-x": ok, "node-y": ok}},
		{name: "zones 1/2 as node-b lacks the zone label", pod: makePod("p").label("foo", "").spread(1, "zone", corev1.DoNotSchedule, fooSelector).obj(),
			nodes: []*corev1.Node{makeNode("node-a", "zone", "zone1", "node", "node-a"), makeNode("node-b", "zon", "zone1", "node", "node-b"),
				makeNode("node-x", "zone", "zone2", "node", "node-x"), makeNode("node-y", "zone", "zone2", "node", "node-y")},
			pods: fooPods(map[string]int{"node-a": 1, "node-b": 1, "node-x": 1, "node-y": 1}),
			want: map[string]framework.Code{"node-a": ok, "node-b": unres, "node-x": unsch, "node-y": unsch}},
		{name: "no node has the rack label", pod: makePod("p").label("foo", "").spread(1, "rack", corev1.DoNotSchedule, fooSelector).obj(),
			nodes: []*corev1.Node{makeNode("node-a", "zone", "zone1", "node", "node-a"), makeNode("node-x", "zone", "zone2", "node", "node-x")},
			want:  map[string]framework.Code{"node-a": unres, "node-x": unres}},
		{name: "nodes 2/1/0/3, only node-x fits", pod: makePod("p").label("foo", "").spread(1, "node", corev1.DoNotSchedule, fooSelector).obj(), nodes: fourNodes(),
			pods: fooPods(map[string]int{"node-a": 2, "node-b": 1, "node-y": 3}),
			want: map[string]framework.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": unsch}},
		{name: "nodes 2/1/0/3, maxSkew 2", pod: makePod("p").label("foo", "").spread(2, "node", corev1.DoNotSchedule, fooSelector).obj(), nodes: fourNodes(),
			pods: fooPods(map[string]int{"node-a": 2, "node-b": 1, "node-y": 3}),
			want: map[string]framework.Code{"node-a": unsch, "node-b": ok, "node-x": ok, "node-y": unsch}},
		{name: "nodes 2/1/0/3, pod doesn't match itself", pod: makePod("p").label("bar", "").spread(1, "node", corev1.DoNotSchedule, fooSelector).obj(), nodes: fourNodes(),
			pods: fooPods(map[string]int{"node-a": 2, "node-b": 1, "node-y": 3}),
			want: map[string]framework.Code{"node-a": unsch, "node-b": ok, "node-x": ok, "node-y": unsch}},
		{name: "node affinity: 2/~1~/~0~/3, node-a fits", pod: makePod("p").label("foo", "").nodeAffinityIn("node", "node-a", "node-y").spread(1, "node", corev1.DoNotSchedule, fooSelector).obj(),
			nodes: fourNodes(), pods: fooPods(map[string]int{"node-a": 2, "node-b": 1, "node-y": 3}),
			want: map[string]framework.Code{"node-a": ok, "node-b": ok, "node-x": ok, "node-y": unsch}},
		{name: "terminating pods are excluded", pod: makePod("p").label("foo", "").spread(1, "node", corev1.DoNotSchedule, fooSelector).obj(),
			nodes: []*corev1.Node{makeNode("node-a", "node", "node-a"), makeNode("node-b", "node", "node-b")},
			pods:  []*corev1.Pod{makePod("p-a").node("node-a").label("foo", "").terminating().obj(), makePod("p-b").node("node-b").label("foo", "").obj()},
			want:  map[string]framework.Code{"node-a": ok, "node-b": unsch}},
		{name: "zone and node constraints, [3/3, 2/1/0/3]: node-x",
			pod:   makePod("p").label("foo", "").spread(1, "zone", corev1.DoNotSchedule, fooSelector).spread(1, "node", corev1.DoNotSchedule, fooSelector).obj(),
			nodes: fourNodes(), pods: fooPods(map[string]int{"node-a": 2, "node-b": 1, "node-y": 3}),
			want: map[string]framework.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": unsch}},
		{name: "zone and node constraints, [3/4, 2/1/0/4]: none",
			pod:   makePod("p").label("foo", "").spread(1, "zone", corev1.DoNotSchedule, fooSelector).spread(1, "node", corev1.DoNotSchedule, fooSelector).obj(),
			nodes: fourNodes(), pods: fooPods(map[string]int{"node-a": 2, "node-b": 1, "node-y": 4}),
			want: map[string]framework.Code{"node-a": unsch, "node-b": unsch, "node-x": unsch, "node-y": unsch}},
		{name: "minDomains 3 with 2 zones: global minimum 0",
			pod:   makePod("p").label("foo", "").spread(1, "zone", corev1.DoNotSchedule, fooSelector, spreadOpts{minDomains: ptrTo[int32](3)}).obj(),
			nodes: fourNodes(), pods: fooPods(map[string]int{"node-a": 1, "node-x": 1}),
			want: map[string]framework.Code{"node-a": unsch, "node-b": unsch, "node-x": unsch, "node-y": unsch}},
		{name: "minDomains 2 with 2 zones: the real minimum",
			pod:   makePod("p").label("foo", "").spread(1, "zone", corev1.DoNotSchedule, fooSelector, spreadOpts{minDomains: ptrTo[int32](2)}).obj(),
			nodes: fourNodes(), pods: fooPods(map[string]int{"node-a": 1, "node-x": 1}),
			want: map[string]framework.Code{"node-a": ok, "node-b": ok, "node-x": ok, "node-y": ok}},
		{name: "nodeAffinityPolicy Ignore counts nodes outside the affinity",
			pod: makePod("p").label("foo", "").nodeAffinityIn("node", "node-a", "node-b").
				spread(1, "node", corev1.DoNotSchedule, fooSelector, spreadOpts{nodeAffinityPolicy: &ignore}).obj(),
			nodes: fourNodes(), pods: fooPods(map[string]int{"node-a": 1, "node-b": 1, "node-y": 1}),
			want: map[string]framework.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": unsch}},
		{name: "nodeTaintsPolicy Honor skips tainted nodes",
			pod:   makePod("p").label("foo", "").spread(1, "node", corev1.DoNotSchedule, fooSelector, spreadOpts{nodeTaintsPolicy: &honor}).obj(),
			nodes: []*corev1.Node{makeNode("node-a", "node", "node-a"), makeNode("node-b", "node", "node-b"), tainted(makeNode("node-x", "node", "node-x"), "t")},
			pods:  fooPods(map[string]int{"node-a": 1, "node-b": 1}),
			want:  map[string]framework.Code{"node-a": ok, "node-b": ok, "node-x": ok}},
		{name: "nodeTaintsPolicy Ignore counts tainted nodes",
			pod:   makePod("p").label("foo", "").spread(1, "node", corev1.DoNotSchedule, fooSelector).obj(),
			nodes: []*corev1.Node{makeNode("node-a", "node", "node-a"), makeNode("node-b", "node", "node-b"), tainted(makeNode("node-x", "node", "node-x"), "t")},
			pods:  fooPods(map[string]int{"node-a": 1, "node-b": 1}),
			want:  map[string]framework.Code{"node-a": unsch, "node-b": unsch, "node-x": ok}},
		{name: "matchLabelKeys narrow the selector",
			pod: makePod("p").label("foo", "").label("rev", "2").
				spread(1, "node", corev1.DoNotSchedule, fooSelector, spreadOpts{matchLabelKeys: []string{"rev"}}).obj(),
			nodes: []*corev1.Node{makeNode("node-a", "node", "node-a"), makeNode("node-b", "node", "node-b")},
			pods: []*corev1.Pod{makePod("old-1").node("node-a").label("foo", "").label("rev", "1").obj(),
				makePod("old-2").node("node-a").label("foo", "").label("rev", "1").obj(),
				makePod("new-1").node("node-b").label("foo", "").label("rev", "2").obj()},
			want: map[string]framework.Code{"node-a": ok, "node-b": unsch}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, snap := newPlugin(t, listArgs, tc.pods, tc.nodes)
			nodes, _ := snap.NodeInfos().List()
			state := framework.NewCycleState()
			if _, st := p.PreFilter(context.Background(), state, tc.pod, nodes); !st.IsSuccess() {
				t.Fatalf("PreFilter: %v", st)
			}
			for _, n := range tc.nodes {
				ni, _ := snap.NodeInfos().Get(n.Name)
				st := p.Filter(context.Background(), state, tc.pod, ni)
				if st.Code() != tc.want[n.Name] {
					t.Errorf("%s: code %v (%v), want %v", n.Name, st.Code(), st, tc.want[n.Name])
				}
				switch st.Code() {
				case unsch:
					if st.Message() != ErrReasonConstraintsNotMatch {
						t.Errorf("%s: reason %q", n.Name, st.Message())
					}
				case unres:
					if st.Message() != ErrReasonNodeLabelNotMatch {
						t.Errorf("%s: reason %q", n.Name, st.Message())
					}
				}
			}
		})
	}
}

func TestPreFilterSkipAndState(t *testing.T) {
	nodes := fourNodes()
	p, snap := newPlugin(t, listArgs, fooPods(map[string]int{"node-a": 2, "node-b": 1, "node-y": 3}), nodes)
	all, _ := snap.NodeInfos().List()
	state := framework.NewCycleState()
	if _, st := p.PreFilter(context.Background(), state, makePod("p").label("foo", "").obj(), all); !st.IsSkip() {
		t.Errorf("pod without constraints: %v, want Skip", st)
	}
	if _, st := p.PreFilter(context.Background(), state, makePod("p").spread(1, "zone", corev1.ScheduleAnyway, fooSelector).obj(), all); !st.IsSkip() {
		t.Errorf("pod with only soft constraints: %v, want Skip", st)
	}
	pod := makePod("p").label("foo", "").spread(1, "zone", corev1.DoNotSchedule, fooSelector).spread(1, "node", corev1.DoNotSchedule, fooSelector).obj()
	if _, st := p.PreFilter(context.Background(), state, pod, all); !st.IsSuccess() {
		t.Fatal(st)
	}
	s, err := getPreFilterState(state)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.TpValueToMatchNum[0]; got["zone1"] != 3 || got["zone2"] != 3 || len(got) != 2 {
		t.Errorf("zone counts %v", got)
	}
	if got := s.TpValueToMatchNum[1]; got["node-a"] != 2 || got["node-b"] != 1 || got["node-x"] != 0 || got["node-y"] != 3 {
		t.Errorf("node counts %v", got)
	}
	if cp := s.CriticalPaths[1]; cp[0].TopologyValue != "node-x" || cp[0].MatchNum != 0 || cp[1].MatchNum != 1 {
		t.Errorf("critical paths %+v", cp)
	}
	// A clone is independent.
	c := s.Clone().(*preFilterState)
	c.TpValueToMatchNum[1]["node-x"] = 7
	c.CriticalPaths[1].update("node-x", 7)
	if s.TpValueToMatchNum[1]["node-x"] != 0 || s.CriticalPaths[1][0].TopologyValue != "node-x" {
		t.Error("Clone shares counts with the original")
	}
}

// Cases from upstream's TestPreFilterStateAddPod/RemovePod: adding and
// removing pods updates counts and critical paths.
func TestAddRemovePod(t *testing.T) {
	nodes := []*corev1.Node{makeNode("node-a", "zone", "zone1", "node", "node-a"), makeNode("node-b", "zone", "zone1", "node", "node-b"),
		makeNode("node-x", "zone", "zone2", "node", "node-x")}
	existing := []*corev1.Pod{makePod("p-a1").node("node-a").label("foo", "").obj(), makePod("p-x1").node("node-x").label("foo", "").obj(),
		makePod("p-x2").node("node-x").label("foo", "").obj()}
	pod := makePod("p").label("foo", "").spread(1, "node", corev1.DoNotSchedule, fooSelector).obj()
	p, snap := newPlugin(t, listArgs, existing, nodes)
	all, _ := snap.NodeInfos().List()
	state := framework.NewCycleState()
	if _, st := p.PreFilter(context.Background(), state, pod, all); !st.IsSuccess() {
		t.Fatal(st)
	}
	nb, _ := snap.NodeInfos().Get("node-b")
	nx, _ := snap.NodeInfos().Get("node-x")
	if st := p.Filter(context.Background(), state, pod, nx); st.Code() != unsch {
		t.Fatalf("node-x before removal: %v", st)
	}
	// Preemption removes a victim from node-x on a clone.
	clone := state.Clone()
	if st := p.RemovePod(context.Background(), clone, pod, framework.NewPodInfo(existing[1]), nx); !st.IsSuccess() {
		t.Fatal(st)
	}
	if st := p.Filter(context.Background(), clone, pod, nx); st.Code() != unsch {
		t.Errorf("node-x after removing one of two (1 vs min 0): %v", st)
	}
	if st := p.RemovePod(context.Background(), clone, pod, framework.NewPodInfo(existing[2]), nx); !st.IsSuccess() {
		t.Fatal(st)
	}
	if st := p.Filter(context.Background(), clone, pod, nx); !st.IsSuccess() {
		t.Errorf("node-x after removing both: %v", st)
	}
	if st := p.Filter(context.Background(), state, pod, nx); st.Code() != unsch {
		t.Errorf("the original state changed: %v", st)
	}
	// A nominated pod on node-b raises its count: node-b no longer the minimum.
	if st := p.AddPod(context.Background(), state, pod, framework.NewPodInfo(makePod("nom").node("node-b").label("foo", "").obj()), nb); !st.IsSuccess() {
		t.Fatal(st)
	}
	s, _ := getPreFilterState(state)
	if got := s.TpValueToMatchNum[0]["node-b"]; got != 1 {
		t.Errorf("node-b count %d, want 1", got)
	}
	if cp := s.CriticalPaths[0]; cp[0].MatchNum != 1 {
		t.Errorf("critical paths %+v, want minimum 1", cp)
	}
	// Pods of another namespace or not matching are ignored.
	p.AddPod(context.Background(), state, pod, framework.NewPodInfo(makePod("o").namespace("other").node("node-b").label("foo", "").obj()), nb)
	p.AddPod(context.Background(), state, pod, framework.NewPodInfo(makePod("q").node("node-b").label("bar", "").obj()), nb)
	if got := s.TpValueToMatchNum[0]["node-b"]; got != 1 {
		t.Errorf("node-b count %d after unrelated pods, want 1", got)
	}
}

func TestCriticalPathsUpdate(t *testing.T) {
	p := newCriticalPaths()
	for _, u := range []struct {
		v string
		n int
	}{{"a", 3}, {"b", 1}, {"c", 2}, {"b", 5}, {"a", 0}} {
		p.update(u.v, u.n)
	}
	// After b:5, paths held c:2, a:3 → a:0 makes a the minimum.
	if p[0].TopologyValue != "a" || p[0].MatchNum != 0 || p[1].TopologyValue != "c" || p[1].MatchNum != 2 {
		t.Errorf("paths %+v", p)
	}
}
