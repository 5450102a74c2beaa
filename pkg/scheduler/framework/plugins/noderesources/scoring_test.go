package noderesources

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

type scoreCase struct {
	name      string
	pod       *corev1.Pod
	nodes     []*corev1.Node
	existing  []*corev1.Pod
	resources []config.ResourceSpec
	want      []int64
	wantCode  framework.Code
}

func runStrategy(t *testing.T, typ config.ScoringStrategyType, shape []config.UtilizationShapePoint, cases []scoreCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			s := &config.ScoringStrategy{Type: typ, Resources: tt.resources}
			if shape != nil {
				s.RequestedToCapacityRatio = &config.RequestedToCapacityRatioParam{Shape: shape}
			}
			p := newFit(t, &config.NodeResourcesFitArgs{ScoringStrategy: s})
			if got := scoreNodes(t, p, tt.pod, tt.existing, tt.nodes, true, tt.wantCode); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("scores = %v, want %v", got, tt.want)
			}
		})
	}
}

func twoNodes(c1, c2 rl) []*corev1.Node {
	return []*corev1.Node{stNode("node1", c1), stNode("node2", c2)}
}

func TestLeastAllocatedScoringStrategy(t *testing.T) {
	twoContainers := podReq(rl{"cpu": "1000", "memory": "2000"}, rl{"cpu": "2000", "memory": "3000"})
	runStrategy(t, config.LeastAllocated, nil, []scoreCase{
		{name: "nothing scheduled, nothing requested", pod: &corev1.Pod{}, nodes: twoNodes(rl{"cpu": "4000", "memory": "10000"}, rl{"cpu": "4000", "memory": "10000"}),
			resources: defaultResources, want: []int64{100, 100}},
		{name: "nothing scheduled, resources requested, differently sized nodes", pod: twoContainers,
			nodes: twoNodes(rl{"cpu": "4000", "memory": "10000"}, rl{"cpu": "6000", "memory": "10000"}), resources: defaultResources, want: []int64{37, 50}},
		{name: "Resources not set, pods scheduled with error", pod: twoContainers,
			nodes: twoNodes(rl{"cpu": "4000", "memory": "10000"}, rl{"cpu": "6000", "memory": "10000"}), resources: nil, want: []int64{0, 0}, wantCode: framework.Error},
		{name: "no resources requested, pods scheduled", pod: &corev1.Pod{}, nodes: twoNodes(rl{"cpu": "4000", "memory": "10000"}, rl{"cpu": "4000", "memory": "10000"}),
			existing:  []*corev1.Pod{onNode(&corev1.Pod{}, "node1"), onNode(&corev1.Pod{}, "node1"), onNode(&corev1.Pod{}, "node2"), onNode(&corev1.Pod{}, "node2")},
			resources: defaultResources, want: []int64{100, 100}},
		{name: "no resources requested, pods scheduled with resources", pod: &corev1.Pod{},
			nodes: twoNodes(rl{"cpu": "10000", "memory": "20000"}, rl{"cpu": "10000", "memory": "20000"}),
			existing: []*corev1.Pod{onNode(podReq(rl{"cpu": "3000", "memory": "0"}), "node1"), onNode(podReq(rl{"cpu": "3000", "memory": "0"}), "node1"),
				onNode(podReq(rl{"cpu": "3000", "memory": "0"}), "node2"), onNode(podReq(rl{"cpu": "3000", "memory": "5000"}), "node2")},
			resources: defaultResources, want: []int64{70, 57}},
		{name: "resources requested, pods scheduled with resources", pod: twoContainers,
			nodes:     twoNodes(rl{"cpu": "10000", "memory": "20000"}, rl{"cpu": "10000", "memory": "20000"}),
			existing:  []*corev1.Pod{onNode(podReq(rl{"cpu": "3000", "memory": "0"}), "node1"), onNode(podReq(rl{"cpu": "3000", "memory": "5000"}), "node2")},
			resources: defaultResources, want: []int64{57, 45}},
		{name: "resources requested, pods scheduled with resources, differently sized nodes", pod: twoContainers,
			nodes:     twoNodes(rl{"cpu": "10000", "memory": "20000"}, rl{"cpu": "10000", "memory": "50000"}),
			existing:  []*corev1.Pod{onNode(podReq(rl{"cpu": "3000", "memory": "0"}), "node1"), onNode(podReq(rl{"cpu": "3000", "memory": "5000"}), "node2")},
			resources: defaultResources, want: []int64{57, 60}},
		{name: "requested resources exceed node capacity", pod: podReq(rl{"cpu": "3000", "memory": "0"}),
			nodes:     twoNodes(rl{"cpu": "4000", "memory": "10000"}, rl{"cpu": "4000", "memory": "10000"}),
			existing:  []*corev1.Pod{onNode(podReq(rl{"cpu": "3000", "memory": "0"}), "node1"), onNode(podReq(rl{"cpu": "3000", "memory": "5000"}), "node2")},
			resources: defaultResources, want: []int64{50, 25}},
		{name: "zero node resources, pods scheduled with resources", pod: &corev1.Pod{}, nodes: twoNodes(nil, nil),
			existing:  []*corev1.Pod{onNode(podReq(rl{"cpu": "3000", "memory": "0"}), "node1"), onNode(podReq(rl{"cpu": "3000", "memory": "5000"}), "node2")},
			resources: defaultResources, want: []int64{0, 0}},
		{name: "nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes", pod: twoContainers,
			nodes:     twoNodes(rl{"cpu": "4000", "memory": "10000"}, rl{"cpu": "6000", "memory": "10000"}),
			resources: []config.ResourceSpec{{Name: "memory", Weight: 2}, {Name: "cpu", Weight: 1}}, want: []int64{41, 50}},
		{name: "bypass extended resource if the pod does not request", pod: twoContainers,
			nodes:     twoNodes(rl{"cpu": "6000", "memory": "10000"}, rl{"cpu": "6000", "memory": "10000", corev1.ResourceName(extendedRes): "4"}),
			resources: extendedResSet, want: []int64{50, 50}},
		{name: "honor extended resource if the pod requests", pod: podReq(rl{"cpu": "3000", "memory": "5000", corev1.ResourceName(extendedRes): "2"}),
			nodes:     twoNodes(rl{"cpu": "6000", "memory": "10000", corev1.ResourceName(extendedRes): "4"}, rl{"cpu": "6000", "memory": "10000", corev1.ResourceName(extendedRes): "10"}),
			resources: extendedResSet, want: []int64{50, 60}},
		{name: "if the node doesn't have a resource", pod: podReq(rl{"cpu": "3000", "memory": "4000"}),
			nodes:     twoNodes(rl{"cpu": "6000", "memory": "10000"}, rl{"cpu": "6000", "memory": "10000", corev1.ResourceName(extendedRes): "4"}),
			resources: []config.ResourceSpec{{Name: extendedRes, Weight: 2}, {Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}}, want: []int64{55, 55}},
	})
}

func TestMostAllocatedScoringStrategy(t *testing.T) {
	twoContainers := podReq(rl{"cpu": "1000", "memory": "2000"}, rl{"cpu": "2000", "memory": "3000"})
	// A container without requests: the non-zero defaults (100m, 200Mi).
	emptyContainer := func() *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "container"}}}}
	}
	runStrategy(t, config.MostAllocated, nil, []scoreCase{
		{name: "nothing scheduled, nothing requested", pod: &corev1.Pod{}, nodes: twoNodes(rl{"cpu": "4000", "memory": "10000"}, rl{"cpu": "4000", "memory": "10000"}),
			resources: defaultResources, want: []int64{0, 0}},
		{name: "nothing scheduled, resources requested, differently sized nodes", pod: twoContainers,
			nodes: twoNodes(rl{"cpu": "4000", "memory": "10000"}, rl{"cpu": "6000", "memory": "10000"}), resources: defaultResources, want: []int64{62, 50}},
		{name: "Resources not set, pods scheduled with error", pod: twoContainers,
			nodes: twoNodes(rl{"cpu": "4000", "memory": "10000"}, rl{"cpu": "6000", "memory": "10000"}), resources: nil, want: []int64{0, 0}, wantCode: framework.Error},
		{name: "no resources requested, pods scheduled with resources", pod: &corev1.Pod{},
			nodes: twoNodes(rl{"cpu": "10000", "memory": "20000"}, rl{"cpu": "10000", "memory": "20000"}),
			existing: []*corev1.Pod{onNode(podReq(rl{"cpu": "3000", "memory": "0"}), "node1"), onNode(podReq(rl{"cpu": "3000", "memory": "0"}), "node1"),
				onNode(podReq(rl{"cpu": "3000", "memory": "0"}), "node2"), onNode(podReq(rl{"cpu": "3000", "memory": "5000"}), "node2")},
			resources: defaultResources, want: []int64{30, 42}},
		{name: "resources requested, pods scheduled with resources", pod: twoContainers,
			nodes:     twoNodes(rl{"cpu": "10000", "memory": "20000"}, rl{"cpu": "10000", "memory": "20000"}),
			existing:  []*corev1.Pod{onNode(podReq(rl{"cpu": "3000", "memory": "0"}), "node1"), onNode(podReq(rl{"cpu": "3000", "memory": "5000"}), "node2")},
			resources: defaultResources, want: []int64{42, 55}},
		{name: "resources requested equal node capacity", pod: podReq(rl{"cpu": "2000", "memory": "4000"}, rl{"cpu": "3000", "memory": "5000"}),
			nodes: twoNodes(rl{"cpu": "5000", "memory": "10000"}, rl{"cpu": "10000", "memory": "9000"}), resources: defaultResources, want: []int64{95, 75}},
		{name: "nothing scheduled, resources requested, differently sized nodes, weights", pod: twoContainers,
			nodes:     twoNodes(rl{"cpu": "4000", "memory": "10000"}, rl{"cpu": "6000", "memory": "10000"}),
			resources: []config.ResourceSpec{{Name: "memory", Weight: 2}, {Name: "cpu", Weight: 1}}, want: []int64{58, 50}},
		{name: "no resources requested, pods scheduled, nonzero request for resource", pod: emptyContainer(),
			nodes:     twoNodes(rl{"cpu": "250m", "memory": "1000Mi"}, rl{"cpu": "250m", "memory": "1000Mi"}),
			existing:  []*corev1.Pod{onNode(emptyContainer(), "node1"), onNode(emptyContainer(), "node1")},
			resources: defaultResources, want: []int64{80, 30}},
		{name: "bypass extended resource if the pod does not request", pod: twoContainers,
			nodes:     twoNodes(rl{"cpu": "6000", "memory": "10000"}, rl{"cpu": "6000", "memory": "10000", corev1.ResourceName(extendedRes): "4"}),
			resources: extendedResSet, want: []int64{50, 50}},
		{name: "honor extended resource if the pod request", pod: podReq(rl{"cpu": "3000", "memory": "5000", corev1.ResourceName(extendedRes): "2"}),
			nodes:     twoNodes(rl{"cpu": "6000", "memory": "10000", corev1.ResourceName(extendedRes): "4"}, rl{"cpu": "6000", "memory": "10000", corev1.ResourceName(extendedRes): "10"}),
			resources: extendedResSet, want: []int64{50, 40}},
		{name: "if the node doesn't have a resource", pod: podReq(rl{"cpu": "3000", "memory": "4000"}),
			nodes:     twoNodes(rl{"cpu": "6000", "memory": "10000"}, rl{"cpu": "6000", "memory": "10000", corev1.ResourceName(extendedRes): "4"}),
			resources: []config.ResourceSpec{{Name: extendedRes, Weight: 2}, {Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}}, want: []int64{45, 45}},
	})
}

func TestRequestedToCapacityRatioScoringStrategy(t *testing.T) {
	shape := []config.UtilizationShapePoint{{Utilization: 0, Score: 10}, {Utilization: 100, Score: 0}}
	runStrategy(t, config.RequestedToCapacityRatio, shape, []scoreCase{
		{name: "nothing scheduled, nothing requested (default - least requested nodes have priority)", pod: &corev1.Pod{},
			nodes:     twoNodes(rl{"cpu": "4000", "memory": "10000"}, rl{"cpu": "4000", "memory": "10000"}),
			existing:  []*corev1.Pod{onNode(&corev1.Pod{}, "node1"), onNode(&corev1.Pod{}, "node1")},
			resources: defaultResources, want: []int64{100, 100}},
		{name: "nothing scheduled, resources requested, differently sized nodes (default - least requested nodes have priority)",
			pod:       podReq(rl{"cpu": "1000", "memory": "2000"}, rl{"cpu": "2000", "memory": "3000"}),
			nodes:     twoNodes(rl{"cpu": "4000", "memory": "10000"}, rl{"cpu": "6000", "memory": "10000"}),
			existing:  []*corev1.Pod{onNode(&corev1.Pod{}, "node1"), onNode(&corev1.Pod{}, "node1")},
			resources: defaultResources, want: []int64{38, 50}},
		{name: "no resources requested, pods scheduled with resources (default - least requested nodes have priority)", pod: &corev1.Pod{},
			nodes:     twoNodes(rl{"cpu": "4000", "memory": "10000"}, rl{"cpu": "6000", "memory": "10000"}),
			existing:  []*corev1.Pod{onNode(podReq(rl{"cpu": "3000", "memory": "5000"}), "node1"), onNode(podReq(rl{"cpu": "3000", "memory": "5000"}), "node2")},
			resources: defaultResources, want: []int64{38, 50}},
	})
}

func TestResourceBinPackingSingleExtended(t *testing.T) {
	shape := []config.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 1}}
	nodes := []*corev1.Node{makeNode("node1", 4000, 10000*1024*1024, map[string]int64{"intel.com/foo": 8}), makeNode("node2", 4000, 10000*1024*1024, map[string]int64{"intel.com/foo": 4})}
	res := []config.ResourceSpec{{Name: "intel.com/foo", Weight: 1}}
	runStrategy(t, config.RequestedToCapacityRatio, shape, []scoreCase{
		{name: "nothing scheduled, nothing requested", pod: &corev1.Pod{}, nodes: nodes, resources: res, want: []int64{0, 0}},
		{name: "resources requested, pods scheduled with less resources", pod: podReq(rl{"intel.com/foo": "2"}), nodes: nodes,
			existing: []*corev1.Pod{{}}, resources: res, want: []int64{2, 5}},
		{name: "resources requested, pods scheduled with resources, on node with existing pod running", pod: podReq(rl{"intel.com/foo": "2"}), nodes: nodes,
			existing: []*corev1.Pod{onNode(podReq(rl{"intel.com/foo": "2"}), "node2")}, resources: res, want: []int64{2, 10}},
		{name: "resources requested, pods scheduled with more resources", pod: podReq(rl{"intel.com/foo": "4"}), nodes: nodes,
			existing: []*corev1.Pod{{}}, resources: res, want: []int64{5, 10}},
	})
}

func TestResourceBinPackingMultipleExtended(t *testing.T) {
	shape := []config.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 1}}
	nodes := []*corev1.Node{
		makeNode("node1", 4000, 10000*1024*1024, map[string]int64{"intel.com/foo": 8, "intel.com/bar": 4}),
		makeNode("node2", 4000, 10000*1024*1024, map[string]int64{"intel.com/foo": 4, "intel.com/bar": 8}),
	}
	res := []config.ResourceSpec{{Name: "intel.com/foo", Weight: 3}, {Name: "intel.com/bar", Weight: 5}}
	pod1 := func() *corev1.Pod { return podReq(rl{"intel.com/foo": "2", "intel.com/bar": "2"}) }
	pod2 := func() *corev1.Pod { return podReq(rl{"intel.com/foo": "4", "intel.com/bar": "2"}) }
	runStrategy(t, config.RequestedToCapacityRatio, shape, []scoreCase{
		{name: "nothing scheduled, nothing requested", pod: &corev1.Pod{}, nodes: nodes, resources: res, want: []int64{0, 0}},
		{name: "resources requested, pods scheduled with less resources", pod: pod1(), nodes: nodes, existing: []*corev1.Pod{{}}, resources: res, want: []int64{4, 3}},
		{name: "resources requested, pods scheduled with resources, on node with existing pod running", pod: pod1(), nodes: nodes,
			existing: []*corev1.Pod{onNode(pod2(), "node2")}, resources: res, want: []int64{4, 7}},
		{name: "resources requested, pods scheduled with more resources", pod: pod2(), nodes: nodes, existing: []*corev1.Pod{{}}, resources: res, want: []int64{5, 5}},
	})
}

func TestNodeResourcesBalancedAllocation(t *testing.T) {
	q := resource.MustParse
	containers := func(reqs ...corev1.ResourceList) []corev1.Container {
		var out []corev1.Container
		for _, r := range reqs {
			out = append(out, corev1.Container{Resources: corev1.ResourceRequirements{Requests: r}})
		}
		return out
	}
	cpuAndMemoryAndGPU := corev1.PodSpec{NodeName: "node1", Containers: containers(
		corev1.ResourceList{"cpu": q("1000m"), "memory": q("2000")},
		corev1.ResourceList{"cpu": q("2000m"), "memory": q("3000"), "nvidia.com/gpu": q("3")})}
	cpuOnly := corev1.PodSpec{NodeName: "node1", Containers: containers(
		corev1.ResourceList{"cpu": q("1000m"), "memory": q("0")},
		corev1.ResourceList{"cpu": q("2000m"), "memory": q("0")})}
	cpuAndMemory := corev1.PodSpec{NodeName: "node2", Containers: containers(
		corev1.ResourceList{"cpu": q("1000m"), "memory": q("2000")},
		corev1.ResourceList{"cpu": q("2000m"), "memory": q("3000")})}
	defaultSet := []config.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}}
	withGPU := []config.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}, {Name: "nvidia.com/gpu", Weight: 1}}
	gpu := map[string]int64{"nvidia.com/gpu": 8}
	for _, tt := range []struct {
		name         string
		pod          *corev1.Pod
		pods         []*corev1.Pod
		nodes        []*corev1.Node
		resources    []config.ResourceSpec
		preScore     bool
		wantSkip     bool
		want         []int64
		wantNoScores bool
	}{
		{name: "nothing scheduled, nothing requested, skip in PreScore", pod: &corev1.Pod{},
			nodes: []*corev1.Node{makeNode("node1", 4000, 10000, nil), makeNode("node2", 4000, 10000, nil)}, resources: defaultSet, preScore: true, wantSkip: true},
		// node1: |0.75-0.5|/2 = 0.125 → 87; node2: 0 → 100.
		{name: "nothing scheduled, resources requested, differently sized nodes", pod: &corev1.Pod{Spec: cpuAndMemory},
			nodes: []*corev1.Node{makeNode("node1", 4000, 10000, nil), makeNode("node2", 6000, 10000, nil)}, resources: defaultSet, preScore: true, want: []int64{87, 100}},
		{name: "resources requested, pods scheduled with resources", pod: &corev1.Pod{Spec: cpuAndMemory},
			nodes: []*corev1.Node{makeNode("node1", 10000, 20000, nil), makeNode("node2", 10000, 20000, nil)},
			pods:  []*corev1.Pod{{Spec: cpuOnly}, {Spec: cpuAndMemory}}, resources: defaultSet, preScore: true, want: []int64{82, 95}},
		{name: "resources requested, pods scheduled with resources, differently sized nodes", pod: &corev1.Pod{Spec: cpuAndMemory},
			nodes: []*corev1.Node{makeNode("node1", 10000, 20000, nil), makeNode("node2", 10000, 50000, nil)},
			pods:  []*corev1.Pod{{Spec: cpuOnly}, {Spec: cpuAndMemory}}, resources: defaultSet, preScore: true, want: []int64{82, 80}},
		{name: "requested resources at node capacity", pod: &corev1.Pod{Spec: cpuOnly},
			nodes: []*corev1.Node{makeNode("node1", 6000, 10000, nil), makeNode("node2", 6000, 10000, nil)},
			pods:  []*corev1.Pod{{Spec: cpuOnly}, {Spec: cpuAndMemory}}, resources: defaultSet, preScore: true, want: []int64{50, 75}},
		{name: "include scalar resource on a node for balanced resource allocation", pod: podReq(rl{"memory": "0", "nvidia.com/gpu": "1"}),
			nodes: []*corev1.Node{makeNode("node1", 3500, 40000, gpu), makeNode("node2", 3500, 40000, gpu)},
			pods:  []*corev1.Pod{{Spec: cpuAndMemory}, {Spec: cpuAndMemoryAndGPU}}, resources: withGPU, preScore: true, want: []int64{70, 65}},
		{name: "node without the scalar resource should skip the scalar resource", pod: &corev1.Pod{Spec: cpuAndMemory},
			nodes:     []*corev1.Node{makeNode("node1", 3500, 40000, gpu), makeNode("node2", 3500, 40000, nil)},
			resources: withGPU, preScore: true, want: []int64{63, 63}},
		{name: "resources requested, pods scheduled with resources if PreScore not called", pod: &corev1.Pod{Spec: cpuAndMemory},
			nodes: []*corev1.Node{makeNode("node1", 10000, 20000, nil), makeNode("node2", 10000, 20000, nil)},
			pods:  []*corev1.Pod{{Spec: cpuOnly}, {Spec: cpuAndMemory}}, resources: defaultSet, want: []int64{82, 95}},
		{name: "best-effort pod without PreScore scores 0", pod: &corev1.Pod{},
			nodes: []*corev1.Node{makeNode("node1", 4000, 10000, nil)}, resources: defaultSet, want: []int64{0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			pl, err := NewBalancedAllocation(ctx, &config.NodeResourcesBalancedAllocationArgs{Resources: tt.resources}, nil)
			if err != nil {
				t.Fatal(err)
			}
			ba := pl.(*BalancedAllocation)
			if tt.wantSkip {
				st := ba.PreScore(ctx, framework.NewCycleState(), tt.pod, nil)
				if !st.IsSkip() {
					t.Errorf("PreScore() = %v, want Skip", st)
				}
				return
			}
			if got := scoreNodes(t, ba, tt.pod, tt.pods, tt.nodes, tt.preScore, framework.Success); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("scores = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBalancedAllocationArgs(t *testing.T) {
	pl, err := NewBalancedAllocation(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ba := pl.(*BalancedAllocation)
	if ba.Name() != "NodeResourcesBalancedAllocation" || len(ba.resources) != 2 || ba.resources[0].name != "cpu" || ba.resources[1].name != "memory" || !ba.useRequested {
		t.Errorf("default BalancedAllocation = %+v", ba)
	}
	if _, err := NewBalancedAllocation(context.Background(), &config.NodeResourcesBalancedAllocationArgs{Resources: []config.ResourceSpec{{Name: "cpu", Weight: 2}}}, nil); err == nil {
		t.Error("weight 2 accepted; upstream requires 1")
	}
	if _, err := NewBalancedAllocation(context.Background(), &config.NodeResourcesFitArgs{}, nil); err == nil {
		t.Error("wrong args type accepted")
	}
}

// TestScoreDoesNotAllocate: Filter and Score on the success path make
// no allocation per node.
func TestScoreDoesNotAllocate(t *testing.T) {
	ctx := context.Background()
	node := stNode("node1", rl{"cpu": "4", "memory": "8Gi", "example.com/gpu": "2"})
	ni := framework.NewNodeInfo(onNode(podReq(rl{"cpu": "1", "memory": "1Gi"}), "node1"))
	ni.SetNode(node)
	pod := podReq(rl{"cpu": "1", "memory": "1Gi", "example.com/gpu": "1"})
	fit := newFit(t, nil)
	ba, _ := NewBalancedAllocation(ctx, nil, nil)
	state := framework.NewCycleState()
	fit.PreFilter(ctx, state, pod, nil)
	fit.PreScore(ctx, state, pod, nil)
	ba.(*BalancedAllocation).PreScore(ctx, state, pod, nil)
	if n := testing.AllocsPerRun(100, func() {
		if st := fit.Filter(ctx, state, pod, ni); !st.IsSuccess() {
			t.Fatal(st)
		}
		fit.Score(ctx, state, pod, ni)
		ba.(*BalancedAllocation).Score(ctx, state, pod, ni)
	}); n != 0 {
		t.Errorf("Filter+Score allocate %v times per node", n)
	}
}

// TestPodLevelRequestsInScores: as upstream 1.34, NodeResourcesFit scores
// a pod by its containers' requests alone (its scorer is built without
// the PodLevelResources flag), while BalancedAllocation counts the
// pod-level requests; a pod already on the node counts its pod-level
// requests in both.
func TestPodLevelRequestsInScores(t *testing.T) {
	podLevel := func(p *corev1.Pod, r rl) *corev1.Pod {
		p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{}}
		for n, v := range r {
			p.Spec.Resources.Requests[n] = resource.MustParse(v)
		}
		return p
	}
	nodes := twoNodes(rl{"cpu": "4000m", "memory": "8Gi"}, rl{"cpu": "8000m", "memory": "8Gi"})
	tests := []struct {
		name              string
		pod               *corev1.Pod
		existing          []*corev1.Pod
		wantFit, wantMost []int64
		wantBalanced      []int64
	}{
		{
			// Fit: cpu 500m, memory 1Gi → (87+87)/2, (93+87)/2; the
			// pod-level 3500m would give (12+75)/2, (56+75)/2.
			name:    "pod-level cpu and memory on the pod to place",
			pod:     podLevel(podReq(rl{"cpu": "500m", "memory": "1Gi"}), rl{"cpu": "3500m", "memory": "2Gi"}),
			wantFit: []int64{87, 90}, wantMost: []int64{12, 9}, wantBalanced: []int64{68, 90},
		},
		{
			// No container requests: the non-zero defaults (100m, 200Mi).
			name:    "pod-level memory only",
			pod:     podLevel(podReq(rl{}), rl{"memory": "5Gi"}),
			wantFit: []int64{97, 97}, wantMost: []int64{2, 1}, wantBalanced: []int64{68, 68},
		},
		{
			// The existing pod's pod-level cpu (3 cpus) counts on node1; as
			// it names cpu, its container gets only the memory default.
			name:     "pod-level requests of a pod on the node",
			pod:      podReq(rl{"cpu": "500m", "memory": "1Gi"}),
			existing: []*corev1.Pod{onNode(podLevel(podReq(rl{}), rl{"cpu": "3"}), "node1")},
			wantFit:  []int64{48, 90}, wantMost: []int64{50, 9}, wantBalanced: []int64{62, 96},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range []struct {
				typ  config.ScoringStrategyType
				want []int64
			}{{config.LeastAllocated, tt.wantFit}, {config.MostAllocated, tt.wantMost}} {
				p := newFit(t, &config.NodeResourcesFitArgs{ScoringStrategy: &config.ScoringStrategy{Type: c.typ, Resources: defaultResources}})
				for _, preScore := range []bool{true, false} {
					if got := scoreNodes(t, p, tt.pod, tt.existing, nodes, preScore, framework.Success); !reflect.DeepEqual(got, c.want) {
						t.Errorf("%s (PreScore %v): scores = %v, want %v", c.typ, preScore, got, c.want)
					}
				}
			}
			pl, err := NewBalancedAllocation(context.Background(), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := scoreNodes(t, pl.(*BalancedAllocation), tt.pod, tt.existing, nodes, true, framework.Success); !reflect.DeepEqual(got, tt.wantBalanced) {
				t.Errorf("BalancedAllocation: scores = %v, want %v", got, tt.wantBalanced)
			}
		})
	}
}
