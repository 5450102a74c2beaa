package podtopologyspread

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

func podsOn(node string, n int, labels ...string) []*corev1.Pod {
	var out []*corev1.Pod
	for i := 0; i < n; i++ {
		b := makePod("p-" + node + "-" + string(rune('a'+i)) + "-" + labels[0]).node(node)
		for _, l := range labels {
			b.label(l, "")
		}
		out = append(out, b.obj())
	}
	return out
}

func concat(ps ...[]*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range ps {
		out = append(out, p...)
	}
	return out
}

func hostNode(name string, kv ...string) *corev1.Node {
	return makeNode(name, append([]string{corev1.LabelHostname, name}, kv...)...)
}

// Cases from upstream's TestPodTopologySpreadScore (legend: X/Y matching
// pods on candidate nodes, ~Y~ on a node that failed filtering, ?Y? on a
// candidate missing a topology key).
func TestScore(t *testing.T) {
	softHost := func(maxSkew int32) *corev1.Pod {
		return makePod("p").label("foo", "").spread(maxSkew, corev1.LabelHostname, corev1.ScheduleAnyway, fooSelector).obj()
	}
	cases := []struct {
		name        string
		args        *config.PodTopologySpreadArgs
		pod         *corev1.Pod
		pods        []*corev1.Pod
		nodes       []*corev1.Node // candidates
		failedNodes []*corev1.Node
		objs        []runtime.Object
		want        []int64
	}{
		{name: "one constraint on node, no existing pods", pod: softHost(1), nodes: []*corev1.Node{hostNode("node-a"), hostNode("node-b")}, want: []int64{100, 100}},
		{name: "only one candidate", pod: softHost(1), pods: concat(podsOn("node-a", 2, "foo"), podsOn("node-b", 1, "foo")),
			nodes: []*corev1.Node{hostNode("node-a")}, failedNodes: []*corev1.Node{hostNode("node-b")}, want: []int64{100}},
		{name: "same number of matching pods", pod: softHost(1), pods: concat(podsOn("node-a", 1, "foo"), podsOn("node-b", 1, "foo")),
			nodes: []*corev1.Node{hostNode("node-a"), hostNode("node-b")}, want: []int64{100, 100}},
		{name: "2/1/0/3", pod: softHost(1), pods: concat(podsOn("node-a", 2, "foo"), podsOn("node-b", 1, "foo"), podsOn("node-d", 3, "foo")),
			nodes: []*corev1.Node{hostNode("node-a"), hostNode("node-b"), hostNode("node-c"), hostNode("node-d")}, want: []int64{20, 60, 100, 0}},
		{name: "null selector", pod: makePod("p").label("foo", "").spread(1, corev1.LabelHostname, corev1.ScheduleAnyway, nil).obj(),
			pods:  concat(podsOn("node-a", 2, "foo"), podsOn("node-b", 1, "foo"), podsOn("node-d", 3, "foo")),
			nodes: []*corev1.Node{hostNode("node-a"), hostNode("node-b"), hostNode("node-c"), hostNode("node-d")}, want: []int64{100, 100, 100, 100}},
		{name: "2/1/0/3, maxSkew 2", pod: softHost(2), pods: concat(podsOn("node-a", 2, "foo"), podsOn("node-b", 1, "foo"), podsOn("node-d", 3, "foo")),
			nodes: []*corev1.Node{hostNode("node-a"), hostNode("node-b"), hostNode("node-c"), hostNode("node-d")}, want: []int64{33, 66, 100, 16}},
		{name: "4/3/2/1, maxSkew 3", pod: softHost(3), pods: concat(podsOn("node-a", 4, "foo"), podsOn("node-b", 3, "foo"), podsOn("node-c", 2, "foo"), podsOn("node-d", 1, "foo")),
			nodes: []*corev1.Node{hostNode("node-a"), hostNode("node-b"), hostNode("node-c"), hostNode("node-d")}, want: []int64{44, 66, 77, 100}},
		{name: "system defaulting, nodes without zone, pods match a service", args: &config.PodTopologySpreadArgs{DefaultingType: config.SystemDefaulting},
			pod:   makePod("p").label("foo", "").obj(),
			pods:  concat(podsOn("node-a", 4, "foo"), podsOn("node-b", 3, "foo"), podsOn("node-c", 2, "foo"), podsOn("node-d", 1, "foo")),
			nodes: []*corev1.Node{hostNode("node-a"), hostNode("node-b"), hostNode("node-c"), hostNode("node-d")},
			objs:  []runtime.Object{&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "s"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"foo": ""}}}},
			want:  []int64{44, 66, 77, 100}},
		{name: "4/2/1/~3~", pod: softHost(1), pods: concat(podsOn("node-a", 4, "foo"), podsOn("node-b", 2, "foo"), podsOn("node-x", 1, "foo"), podsOn("node-y", 3, "foo")),
			nodes: []*corev1.Node{hostNode("node-a"), hostNode("node-b"), hostNode("node-x")}, failedNodes: []*corev1.Node{hostNode("node-y")}, want: []int64{33, 83, 100}},
		{name: "4/?2?/1/~3~", pod: softHost(1), pods: concat(podsOn("node-a", 4, "foo"), podsOn("node-b", 2, "foo"), podsOn("node-x", 1, "foo"), podsOn("node-y", 3, "foo")),
			nodes: []*corev1.Node{hostNode("node-a"), makeNode("node-b", "n", "node-b"), hostNode("node-x")}, failedNodes: []*corev1.Node{hostNode("node-y")}, want: []int64{16, 0, 100}},
		{name: "zone: 4/2/1/~3~", pod: makePod("p").label("foo", "").spread(1, "zone", corev1.ScheduleAnyway, fooSelector).obj(),
			pods:        concat(podsOn("node-a", 4, "foo"), podsOn("node-b", 2, "foo"), podsOn("node-x", 1, "foo"), podsOn("node-y", 3, "foo")),
			nodes:       []*corev1.Node{hostNode("node-a", "zone", "zone1"), hostNode("node-b", "zone", "zone1"), hostNode("node-x", "zone", "zone2")},
			failedNodes: []*corev1.Node{hostNode("node-y", "zone", "zone2")}, want: []int64{75, 75, 100}},
		{name: "zone and node: 2/~1~/2/~4~", pod: makePod("p").label("foo", "").spread(1, "zone", corev1.ScheduleAnyway, fooSelector).spread(1, corev1.LabelHostname, corev1.ScheduleAnyway, fooSelector).obj(),
			pods:        concat(podsOn("node-a", 2, "foo"), podsOn("node-b", 1, "foo"), podsOn("node-x", 2, "foo"), podsOn("node-y", 4, "foo")),
			nodes:       []*corev1.Node{hostNode("node-a", "zone", "zone1"), hostNode("node-x", "zone", "zone2")},
			failedNodes: []*corev1.Node{hostNode("node-b", "zone", "zone1"), hostNode("node-y", "zone", "zone2")}, want: []int64{100, 63}},
		{name: "two zone constraints", pod: makePod("p").label("foo", "").label("bar", "").spread(1, "zone", corev1.ScheduleAnyway, fooSelector).spread(1, "zone", corev1.ScheduleAnyway, barSelector).obj(),
			pods: concat(podsOn("node-a", 1, "foo", "bar"), podsOn("node-a", 1, "foo"), podsOn("node-b", 1, "foo", "bar"),
				podsOn("node-y", 1, "foo"), podsOn("node-y", 1, "foo", "bar"), []*corev1.Pod{makePod("p-y3").node("node-y").label("foo", "").obj()}),
			nodes:       []*corev1.Node{makeNode("node-a", "zone", "zone1"), makeNode("node-x", "zone", "zone2")},
			failedNodes: []*corev1.Node{makeNode("node-b", "zone", "zone1"), makeNode("node-y", "zone", "zone2")}, want: []int64{85, 100}},
		{name: "zone and node with different selectors", pod: makePod("p").label("foo", "").label("bar", "").spread(1, "zone", corev1.ScheduleAnyway, fooSelector).spread(1, corev1.LabelHostname, corev1.ScheduleAnyway, barSelector).obj(),
			pods:  concat(podsOn("node-a", 1, "foo"), podsOn("node-b", 1, "foo", "bar"), podsOn("node-y", 1, "foo"), podsOn("node-y", 1, "bar")),
			nodes: []*corev1.Node{hostNode("node-a", "zone", "zone1"), hostNode("node-b", "zone", "zone1"), hostNode("node-x", "zone", "zone2"), hostNode("node-y", "zone", "zone2")},
			want:  []int64{60, 20, 100, 60}},
		{name: "zone and node with different selectors, some nodes without pods", pod: makePod("p").label("foo", "").label("bar", "").spread(1, "zone", corev1.ScheduleAnyway, fooSelector).spread(1, corev1.LabelHostname, corev1.ScheduleAnyway, barSelector).obj(),
			pods:  concat(podsOn("node-b", 1, "bar"), podsOn("node-x", 1, "foo"), podsOn("node-y", 1, "foo", "bar")),
			nodes: []*corev1.Node{hostNode("node-a", "zone", "zone1"), hostNode("node-b", "zone", "zone1"), hostNode("node-x", "zone", "zone2"), hostNode("node-y", "zone", "zone2")},
			want:  []int64{100, 60, 40, 0}},
		{name: "zone and node with different selectors, 3 of 4 candidates", pod: makePod("p").label("foo", "").label("bar", "").spread(1, "zone", corev1.ScheduleAnyway, fooSelector).spread(1, corev1.LabelHostname, corev1.ScheduleAnyway, barSelector).obj(),
			pods:        concat(podsOn("node-a", 1, "foo"), podsOn("node-b", 1, "foo", "bar"), podsOn("node-y", 1, "foo"), podsOn("node-y", 1, "bar")),
			nodes:       []*corev1.Node{hostNode("node-a", "zone", "zone1"), hostNode("node-b", "zone", "zone1"), hostNode("node-x", "zone", "zone2")},
			failedNodes: []*corev1.Node{hostNode("node-y", "zone", "zone2")}, want: []int64{50, 25, 100}},
		{name: "pods in another namespace do not count", pod: softHost(1),
			pods:  []*corev1.Pod{makePod("p-a1").namespace("ns1").node("node-a").label("foo", "").obj(), makePod("p-b1").node("node-b").label("foo", "").obj()},
			nodes: []*corev1.Node{hostNode("node-a"), hostNode("node-b")}, want: []int64{100, 0}},
		{name: "terminating pods do not count", pod: softHost(1),
			pods:  []*corev1.Pod{makePod("p-a1").node("node-a").label("foo", "").terminating().obj(), makePod("p-b1").node("node-b").label("foo", "").obj()},
			nodes: []*corev1.Node{hostNode("node-a"), hostNode("node-b")}, want: []int64{100, 0}},
		{name: "nodeAffinityPolicy Honor: pods on nodes outside the affinity do not count",
			pod:         makePod("p").label("foo", "").nodeSelector(map[string]string{"foo": ""}).spread(1, "zone", corev1.ScheduleAnyway, fooSelector).obj(),
			pods:        concat(podsOn("node-a", 1, "foo"), podsOn("node-b", 2, "foo"), podsOn("node-x", 3, "foo")),
			nodes:       []*corev1.Node{hostNode("node-a", "zone", "zone1", "foo", ""), hostNode("node-b", "zone", "zone1", "foo", ""), hostNode("node-c", "zone", "zone2", "foo", "")},
			failedNodes: []*corev1.Node{hostNode("node-x", "zone", "zone2")}, want: []int64{0, 0, 100}},
		{name: "nodeAffinityPolicy Ignore: they count",
			pod:         makePod("p").label("foo", "").nodeSelector(map[string]string{"foo": ""}).spread(1, "zone", corev1.ScheduleAnyway, fooSelector, spreadOpts{nodeAffinityPolicy: &ignore}).obj(),
			pods:        concat(podsOn("node-a", 1, "foo"), podsOn("node-b", 2, "foo"), podsOn("node-x", 4, "foo")),
			nodes:       []*corev1.Node{hostNode("node-a", "zone", "zone1", "foo", ""), hostNode("node-b", "zone", "zone1", "foo", ""), hostNode("node-c", "zone", "zone2", "foo", "")},
			failedNodes: []*corev1.Node{hostNode("node-x", "zone", "zone2")}, want: []int64{100, 100, 66}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if args == nil {
				args = listArgs
			}
			allNodes := append(append([]*corev1.Node(nil), tc.nodes...), tc.failedNodes...)
			p, snap := newPlugin(t, args, tc.pods, allNodes, tc.objs...)
			var candidates []*framework.NodeInfo
			for _, n := range tc.nodes {
				ni, _ := snap.NodeInfos().Get(n.Name)
				candidates = append(candidates, ni)
			}
			state := framework.NewCycleState()
			if st := p.PreScore(context.Background(), state, tc.pod, candidates); !st.IsSuccess() {
				t.Fatalf("PreScore: %v", st)
			}
			var scores framework.NodeScoreList
			for _, ni := range candidates {
				s, st := p.Score(context.Background(), state, tc.pod, ni)
				if !st.IsSuccess() {
					t.Fatal(st)
				}
				scores = append(scores, framework.NodeScore{Name: ni.NodeName(), Score: s})
			}
			if st := p.NormalizeScore(context.Background(), state, tc.pod, scores); !st.IsSuccess() {
				t.Fatal(st)
			}
			for i, s := range scores {
				if s.Score != tc.want[i] {
					t.Errorf("scores %v, want %v", scores, tc.want)
					break
				}
			}
		})
	}
}

func TestPreScoreSkip(t *testing.T) {
	nodes := []*corev1.Node{hostNode("node-a")}
	p, snap := newPlugin(t, nil, nil, nodes)
	all, _ := snap.NodeInfos().List()
	// System defaults without a Service or controller: no constraints.
	if st := p.PreScore(context.Background(), framework.NewCycleState(), makePod("p").label("foo", "").obj(), all); !st.IsSkip() {
		t.Errorf("no owner: %v, want Skip", st)
	}
	// Only hard constraints: nothing to score.
	if st := p.PreScore(context.Background(), framework.NewCycleState(), makePod("p").spread(1, "zone", corev1.DoNotSchedule, fooSelector).obj(), all); !st.IsSkip() {
		t.Errorf("only DoNotSchedule: %v, want Skip", st)
	}
	empty, _ := newPlugin(t, listArgs, nil, nil)
	if st := empty.PreScore(context.Background(), framework.NewCycleState(), makePod("p").spread(1, "zone", corev1.ScheduleAnyway, fooSelector).obj(), nil); !st.IsSkip() {
		t.Errorf("no nodes: %v, want Skip", st)
	}
}

// The system default constraints use the selector of the pod's
// ReplicaSet: pods of the ReplicaSet count, others do not.
func TestSystemDefaultsWithReplicaSet(t *testing.T) {
	nodes := []*corev1.Node{hostNode("node-a", corev1.LabelTopologyZone, "z1"), hostNode("node-b", corev1.LabelTopologyZone, "z1"), hostNode("node-c", corev1.LabelTopologyZone, "z2")}
	pods := []*corev1.Pod{
		makePod("w1").node("node-a").label("app", "web").owner("apps/v1", "ReplicaSet", "web").obj(),
		makePod("w2").node("node-a").label("app", "web").owner("apps/v1", "ReplicaSet", "web").obj(),
		makePod("o1").node("node-b").label("app", "other").obj(),
		makePod("o2").node("node-b").label("app", "other").obj(),
	}
	pod := makePod("w3").label("app", "web").owner("apps/v1", "ReplicaSet", "web").obj()
	p, snap := newPlugin(t, nil, pods, nodes, &appsReplicaSet)
	all, _ := snap.NodeInfos().List()
	state := framework.NewCycleState()
	if _, st := p.PreFilter(context.Background(), state, pod, all); !st.IsSkip() {
		t.Errorf("system defaults are ScheduleAnyway: PreFilter %v, want Skip", st)
	}
	if st := p.PreScore(context.Background(), state, pod, all); !st.IsSuccess() {
		t.Fatal(st)
	}
	var scores framework.NodeScoreList
	for _, ni := range all {
		s, _ := p.Score(context.Background(), state, pod, ni)
		scores = append(scores, framework.NodeScore{Name: ni.NodeName(), Score: s})
	}
	p.NormalizeScore(context.Background(), state, pod, scores)
	got := map[string]int64{}
	for _, s := range scores {
		got[s.Name] = s.Score
	}
	// Hostname (maxSkew 3, weight log(3+2)) and zone (maxSkew 5, weight
	// log(2+2)): node-a 2·1.609+2 + 2·1.386+4 = 11.99 → 12, node-b
	// 0+2 + 2·1.386+4 = 8.77 → 9, node-c 2+4 = 6; normalized
	// 100·(12+6−s)/12.
	if got["node-c"] != 100 || got["node-b"] != 75 || got["node-a"] != 50 {
		t.Errorf("scores %v", got)
	}
}
