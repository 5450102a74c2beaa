package defaultpreemption

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/defaultbinder"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/interpodaffinity"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/noderesources"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/podtopologyspread"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/queuesort"
	fwruntime "github.com/skiff-sh/skiff/pkg/scheduler/framework/runtime"
	"github.com/skiff-sh/skiff/pkg/scheduler/internal/cache"
)

// Priorities and requests of upstream's tests.
var (
	negPriority, lowPriority, midPriority, highPriority, veryHighPriority = int32(-100), int32(0), int32(100), int32(1000), int32(10000)

	smallRes     = res("100m", "100", "")
	mediumRes    = res("200m", "200", "")
	largeRes     = res("300m", "300", "")
	veryLargeRes = res("500m", "500", "")
	onePodRes    = res("", "", "1")
	nodeRes      = res("200m", "400", "")

	epoch = func(n int64) *metav1.Time { t := metav1.NewTime(time.Unix(0, n)); return &t }
)

func res(cpu, mem, pods string) corev1.ResourceList {
	rl := corev1.ResourceList{}
	for n, v := range map[corev1.ResourceName]string{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem, corev1.ResourcePods: pods} {
		if v != "" {
			rl[n] = resource.MustParse(v)
		}
	}
	return rl
}

// podW builds pods as upstream's st.MakePod.
type podW struct{ *corev1.Pod }

func mkPod(name string) podW {
	return podW{&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), Namespace: "default"},
		Spec: corev1.PodSpec{SchedulerName: "default-scheduler", Containers: []corev1.Container{{Name: "c", Image: "pause"}}}}}
}
func (p podW) node(n string) podW { p.Spec.NodeName = n; return p }
func (p podW) prio(v int32) podW  { p.Spec.Priority = &v; return p }
func (p podW) req(rl corev1.ResourceList) podW {
	p.Spec.Containers[0].Resources.Requests = rl
	return p
}
func (p podW) label(k, v string) podW {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[k] = v
	return p
}
func (p podW) start(t *metav1.Time) podW { p.Status.StartTime = t; return p }

// antiAffinity: required anti-affinity to pods with label key, over
// topologyKey.
func (p podW) antiAffinity(key, topologyKey string) podW {
	p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
		LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: metav1.LabelSelectorOpExists}}},
		TopologyKey:   topologyKey,
	}}}}
	return p
}

// spread adds a maxSkew 1 DoNotSchedule constraint over topologyKey for
// pods with label foo.
func (p podW) spread(topologyKey string) podW {
	p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, corev1.TopologySpreadConstraint{
		MaxSkew: 1, TopologyKey: topologyKey, WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "foo", Operator: metav1.LabelSelectorOpExists}}},
	})
	return p
}
func (p podW) nominated(n string) podW { p.Status.NominatedNodeName = n; return p }
func (p podW) never() podW {
	n := corev1.PreemptNever
	p.Spec.PreemptionPolicy = &n
	return p
}
func (p podW) terminatingByPreemption() podW {
	p.DeletionTimestamp = epoch(100)
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: corev1.PodReasonPreemptionByScheduler})
	return p
}

// mkNode: capacity rl with 32 pods unless rl says otherwise (as
// upstream's st.MakeNode().Capacity).
func mkNode(name string, rl corev1.ResourceList, labels ...string) *corev1.Node {
	all := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("32")}
	for k, v := range rl {
		all[k] = v
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{Capacity: all, Allocatable: all}}
	for i := 0; i+1 < len(labels); i += 2 {
		n.Labels[labels[i]] = labels[i+1]
	}
	return n
}

func mkPDB(name string, sel map[string]string, allowed int32, disrupted ...string) *policyv1.PodDisruptionBudget {
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:   policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed}}
	for _, d := range disrupted {
		if pdb.Status.DisruptedPods == nil {
			pdb.Status.DisruptedPods = map[string]metav1.Time{}
		}
		pdb.Status.DisruptedPods[d] = *epoch(1)
	}
	return pdb
}

// fitPlugin is a small NodeResourcesFit: pods count, CPU and memory
// requests against allocatable, with upstream's reasons, all
// Unschedulable. It counts Filter calls.
type fitPlugin struct{ calls *int32Counter }

type int32Counter struct {
	mu sync.Mutex
	n  int
}

func (c *int32Counter) inc() { c.mu.Lock(); c.n++; c.mu.Unlock() }

func (*fitPlugin) Name() string { return "Fit" }
func (p *fitPlugin) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	p.calls.inc()
	var reasons []string
	if len(ni.Pods)+1 > ni.Allocatable.AllowedPodNumber {
		reasons = append(reasons, "Too many pods")
	}
	r := framework.PodRequests(pod, false)
	if r.MilliCPU > 0 && r.MilliCPU > ni.Allocatable.MilliCPU-ni.Requested.MilliCPU {
		reasons = append(reasons, "Insufficient cpu")
	}
	if r.Memory > 0 && r.Memory > ni.Allocatable.Memory-ni.Requested.Memory {
		reasons = append(reasons, "Insufficient memory")
	}
	if len(reasons) > 0 {
		return framework.NewStatus(framework.Unschedulable, reasons...)
	}
	return nil
}

// errPlugin is upstream's TestPlugin: a PreFilter whose AddPod and
// RemovePod fail on nodes labelled error=true.
type errPlugin struct{}

func (errPlugin) Name() string { return "test-plugin" }
func (errPlugin) PreFilter(context.Context, *framework.CycleState, *corev1.Pod, []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	return nil, nil
}
func (p errPlugin) PreFilterExtensions() framework.PreFilterExtensions { return p }
func (errPlugin) AddPod(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, _ *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	if ni.Node().Labels["error"] == "true" {
		return framework.AsStatus(fmt.Errorf("failed to add pod: %v", pod.Name))
	}
	return nil
}
func (errPlugin) RemovePod(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, _ *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	if ni.Node().Labels["error"] == "true" {
		return framework.AsStatus(fmt.Errorf("failed to remove pod: %v", pod.Name))
	}
	return nil
}

// fakeNominator serves nominated pods per node.
type fakeNominator struct {
	pods map[string][]*framework.PodInfo
}

func (n *fakeNominator) AddNominatedPod(*slog.Logger, *framework.PodInfo, *framework.NominatingInfo) {
}
func (n *fakeNominator) DeleteNominatedPodIfExists(*corev1.Pod)                           {}
func (n *fakeNominator) UpdateNominatedPod(*slog.Logger, *corev1.Pod, *framework.PodInfo) {}
func (n *fakeNominator) NominatedPodsForNode(node string) []*framework.PodInfo            { return n.pods[node] }

type env struct {
	fw     *fwruntime.Framework
	pl     *DefaultPreemption
	inf    *informers.SharedInformerFactory
	calls  *int32Counter
	events *record.FakeRecorder
	// preempted records the default-less PreemptPod calls: "victim@node".
	mu        sync.Mutex
	preempted []string
}

type envOpts struct {
	args        *config.DefaultPreemptionArgs
	parallelism int
	nominator   framework.PodNominator
	opts        fwruntime.Options // Client etc. (Snapshot/Informers set here)
	realPreempt bool
	// realFit uses the in-tree NodeResourcesFit instead of the fake.
	realFit bool
	// extra in-tree plugins at PreFilter and Filter, after the fit.
	extra []string
}

var extraFactories = map[string]framework.PluginFactory{
	names.InterPodAffinity:  interpodaffinity.New,
	names.PodTopologySpread: podtopologyspread.New,
}

// newEnv builds a profile with PrioritySort, the fit filter, test-plugin,
// DefaultPreemption and DefaultBinder over a snapshot of pods and nodes;
// pod and pdbs go into the informers' stores. PreemptPod only records
// unless realPreempt.
func newEnv(t *testing.T, pods []*corev1.Pod, nodes []*corev1.Node, pdbs []*policyv1.PodDisruptionBudget, o envOpts) *env {
	t.Helper()
	e := &env{calls: &int32Counter{}, events: record.NewFakeRecorder(100)}
	if o.opts.Informers == nil {
		o.opts.Informers = informers.NewSharedInformerFactory(nil, 0)
		for _, p := range pods {
			if err := o.opts.Informers.Pods().Informer().GetIndexer().Add(p); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range pdbs {
			if err := o.opts.Informers.PodDisruptionBudgets().Informer().GetIndexer().Add(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.inf = o.opts.Informers
	var scheduled []*corev1.Pod
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			scheduled = append(scheduled, p)
		}
	}
	if o.opts.Snapshot == nil {
		o.opts.Snapshot = cache.NewSnapshot(scheduled, nodes)
	}
	if o.opts.EventRecorder == nil {
		o.opts.EventRecorder = e.events
	}
	o.opts.Clock = clock.NewFake(time.Unix(1000, 0))
	o.opts.Parallelism = o.parallelism
	o.opts.PodNominator = o.nominator
	fit := &fitPlugin{calls: e.calls}
	r := framework.Registry{
		names.PrioritySort:  queuesort.New,
		names.DefaultBinder: defaultbinder.New,
		"Fit":               func(context.Context, runtime.Object, framework.Handle) (framework.Plugin, error) { return fit, nil },
		"test-plugin": func(context.Context, runtime.Object, framework.Handle) (framework.Plugin, error) {
			return errPlugin{}, nil
		},
		Name: New,
	}
	ref := func(ns ...string) config.PluginSet {
		var s config.PluginSet
		for _, n := range ns {
			s.Enabled = append(s.Enabled, config.Plugin{Name: n})
		}
		return s
	}
	sched := "default-scheduler"
	filter, preFilter := ref("Fit"), ref("test-plugin")
	if o.realFit {
		r[names.NodeResourcesFit] = noderesources.NewFit
		filter, preFilter = ref(names.NodeResourcesFit), ref(names.NodeResourcesFit, "test-plugin")
	}
	for _, n := range o.extra {
		r[n] = extraFactories[n]
		filter.Enabled = append(filter.Enabled, config.Plugin{Name: n})
		preFilter.Enabled = append(preFilter.Enabled, config.Plugin{Name: n})
	}
	prof := &config.KubeSchedulerProfile{SchedulerName: &sched, Plugins: &config.Plugins{
		QueueSort: ref(names.PrioritySort), PreFilter: preFilter, Filter: filter,
		PostFilter: ref(Name), PreEnqueue: ref(Name), Bind: ref(names.DefaultBinder)}}
	if o.args != nil {
		prof.PluginConfig = []config.PluginConfig{{Name: Name, Args: runtime.RawExtension{Object: o.args}}}
	}
	fw, err := fwruntime.NewFramework(context.Background(), r, prof, o.opts)
	if err != nil {
		t.Fatal(err)
	}
	e.fw = fw
	e.pl = fw.Plugin(Name).(*DefaultPreemption)
	e.pl.Async = false
	e.pl.OffsetRand = func(int32) int32 { return 0 }
	if !o.realPreempt {
		e.pl.PreemptPod = func(_ context.Context, node string, _, victim *corev1.Pod) error {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.preempted = append(e.preempted, victim.Name+"@"+node)
			return nil
		}
	}
	return e
}

func unsched(nodes ...string) *framework.NodeToStatus {
	m := map[string]*framework.Status{}
	for _, n := range nodes {
		code := framework.Unschedulable
		if strings.HasSuffix(n, "!") {
			n, code = strings.TrimSuffix(n, "!"), framework.UnschedulableAndUnresolvable
		}
		m[n] = framework.NewStatus(code)
	}
	return framework.NewNodeToStatus(m, framework.NewStatus(framework.UnschedulableAndUnresolvable))
}

func TestPostFilter(t *testing.T) {
	const violating, nonViolating = "violating", "non-violating"
	tests := []struct {
		name          string
		pod           *corev1.Pod
		pods          []*corev1.Pod
		pdbs          []*policyv1.PodDisruptionBudget
		nodes         []*corev1.Node
		statuses      *framework.NodeToStatus
		wantNode      *string // nil: no result
		wantCode      framework.Code
		wantMsg       string
		wantPreempted []string
		nominated     map[string][]*corev1.Pod
	}{
		{
			name:      "a pod of equal priority nominated to the node keeps its room",
			pod:       mkPod("p").prio(highPriority).Pod,
			pods:      []*corev1.Pod{mkPod("p1").node("node1").Pod},
			nodes:     []*corev1.Node{mkNode("node1", onePodRes)},
			statuses:  unsched("node1"),
			nominated: map[string][]*corev1.Pod{"node1": {mkPod("n").prio(highPriority).nominated("node1").Pod}},
			wantNode:  ptr(""), wantCode: framework.Unschedulable,
			wantMsg: "preemption: 0/1 nodes are available: 1 Too many pods.",
		},
		{
			name:      "a lower-priority nominated pod does not count",
			pod:       mkPod("p").prio(highPriority).Pod,
			pods:      []*corev1.Pod{mkPod("p1").node("node1").Pod},
			nodes:     []*corev1.Node{mkNode("node1", onePodRes)},
			statuses:  unsched("node1"),
			nominated: map[string][]*corev1.Pod{"node1": {mkPod("n").prio(midPriority).nominated("node1").Pod}},
			wantNode:  ptr("node1"), wantPreempted: []string{"p1@node1"},
		},
		{
			name:     "pod with higher priority can be made schedulable",
			pod:      mkPod("p").prio(highPriority).Pod,
			pods:     []*corev1.Pod{mkPod("p1").node("node1").Pod},
			nodes:    []*corev1.Node{mkNode("node1", onePodRes)},
			statuses: unsched("node1"),
			wantNode: ptr("node1"), wantPreempted: []string{"p1@node1"},
		},
		{
			name:     "pod with tied priority is still unschedulable",
			pod:      mkPod("p").Pod,
			pods:     []*corev1.Pod{mkPod("p1").node("node1").Pod},
			nodes:    []*corev1.Node{mkNode("node1", onePodRes)},
			statuses: unsched("node1"),
			wantNode: ptr(""), wantCode: framework.Unschedulable,
			wantMsg: "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
		},
		{
			name:     "preemption should respect filteredNodesStatuses",
			pod:      mkPod("p").prio(highPriority).Pod,
			pods:     []*corev1.Pod{mkPod("p1").node("node1").Pod},
			nodes:    []*corev1.Node{mkNode("node1", onePodRes)},
			statuses: unsched("node1!"),
			wantNode: ptr(""), wantCode: framework.Unschedulable,
			wantMsg: "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
		},
		{
			name:     "preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable",
			pod:      mkPod("p").prio(highPriority).Pod,
			pods:     []*corev1.Pod{mkPod("p1").node("node1").Pod},
			nodes:    []*corev1.Node{mkNode("node1", onePodRes)},
			statuses: framework.NewDefaultNodeToStatus(),
			wantNode: ptr(""), wantCode: framework.Unschedulable,
			wantMsg: "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
		},
		{
			name:     "pod can be made schedulable on one node",
			pod:      mkPod("p").prio(midPriority).Pod,
			pods:     []*corev1.Pod{mkPod("p1").prio(highPriority).node("node1").Pod, mkPod("p2").prio(lowPriority).node("node2").Pod},
			nodes:    []*corev1.Node{mkNode("node1", onePodRes), mkNode("node2", onePodRes)},
			statuses: unsched("node1", "node2"),
			wantNode: ptr("node2"), wantPreempted: []string{"p2@node2"},
		},
		{
			name: "pod can be made schedulable on minHighestPriority node",
			pod:  mkPod("p").prio(veryHighPriority).Pod,
			pods: []*corev1.Pod{
				mkPod("p1").label("pdb", nonViolating).prio(highPriority).node("node1").Pod,
				mkPod("p2").label("pdb", violating).prio(lowPriority).node("node1").Pod,
				mkPod("p3").label("pdb", violating).prio(midPriority).node("node2").Pod,
			},
			pdbs: []*policyv1.PodDisruptionBudget{
				mkPDB("violating-pdb", map[string]string{"pdb": violating}, 0),
				mkPDB("non-violating-pdb", map[string]string{"pdb": nonViolating}, math.MaxInt32),
			},
			nodes:    []*corev1.Node{mkNode("node1", onePodRes), mkNode("node2", onePodRes)},
			statuses: unsched("node1", "node2"),
			wantNode: ptr("node2"), wantPreempted: []string{"p3@node2"},
		},
		{
			name:     "no candidate nodes found, no enough resource after removing low priority pods",
			pod:      mkPod("p").prio(highPriority).req(largeRes).Pod,
			pods:     []*corev1.Pod{mkPod("p1").node("node1").Pod, mkPod("p2").node("node2").Pod},
			nodes:    []*corev1.Node{mkNode("node1", nodeRes), mkNode("node2", nodeRes)},
			statuses: unsched("node1", "node2"),
			wantNode: ptr(""), wantCode: framework.Unschedulable,
			wantMsg: "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
		},
		{
			name:     "no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
			pod:      mkPod("p").prio(highPriority).req(largeRes).Pod,
			pods:     []*corev1.Pod{mkPod("p1").node("node1").prio(highPriority).Pod, mkPod("p2").node("node2").Pod, mkPod("p3").node("node3").prio(highPriority).Pod},
			nodes:    []*corev1.Node{mkNode("node1", onePodRes), mkNode("node2", nodeRes), mkNode("node3", onePodRes)},
			statuses: unsched("node1", "node2", "node3"),
			wantNode: ptr(""), wantCode: framework.Unschedulable,
			wantMsg: "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for incoming pod.",
		},
		{
			name:     "no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes don't have enough CPU resource",
			pod:      mkPod("p").prio(highPriority).req(largeRes).Pod,
			pods:     []*corev1.Pod{mkPod("p1").node("node1").Pod, mkPod("p2").node("node2").Pod},
			nodes:    []*corev1.Node{mkNode("node1", nodeRes), mkNode("node2", nodeRes), mkNode("node3", nodeRes), mkNode("node4", nodeRes)},
			statuses: unsched("node1", "node2", "node4!"),
			wantNode: ptr(""), wantCode: framework.Unschedulable,
			wantMsg: "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for scheduling.",
		},
		{
			name:     "only one node but failed with TestPlugin",
			pod:      mkPod("p").prio(highPriority).req(largeRes).Pod,
			pods:     []*corev1.Pod{mkPod("p1").node("node1").Pod},
			nodes:    []*corev1.Node{mkNode("node1", largeRes, "error", "true")},
			statuses: unsched("node1"),
			wantCode: framework.Error,
			wantMsg:  `preemption: running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p`,
		},
		{
			name:     "one failed with TestPlugin and the other pass",
			pod:      mkPod("p").prio(highPriority).req(largeRes).Pod,
			pods:     []*corev1.Pod{mkPod("p1").node("node1").Pod, mkPod("p2").node("node2").req(mediumRes).Pod},
			nodes:    []*corev1.Node{mkNode("node1", largeRes, "error", "true"), mkNode("node2", largeRes)},
			statuses: unsched("node1", "node2"),
			wantNode: ptr("node2"), wantPreempted: []string{"p2@node2"},
		},
		{
			name:     "preemptionPolicy Never",
			pod:      mkPod("p").prio(highPriority).never().Pod,
			pods:     []*corev1.Pod{mkPod("p1").node("node1").Pod},
			nodes:    []*corev1.Node{mkNode("node1", onePodRes)},
			statuses: unsched("node1"),
			wantCode: framework.Unschedulable,
			wantMsg:  "preemption: not eligible due to preemptionPolicy=Never.",
		},
		{
			name: "several victims on the chosen node, most important first",
			pod:  mkPod("p").prio(highPriority).req(largeRes).Pod,
			pods: []*corev1.Pod{
				mkPod("p1.1").node("node1").prio(lowPriority).req(smallRes).Pod,
				mkPod("p1.2").node("node1").prio(midPriority).req(mediumRes).Pod,
			},
			nodes:    []*corev1.Node{mkNode("node1", largeRes)},
			statuses: unsched("node1"),
			wantNode: ptr("node1"), wantPreempted: []string{"p1.2@node1", "p1.1@node1"},
		},
	}
	for _, tt := range tests {
		for _, realFit := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s (in-tree Fit: %v)", tt.name, realFit), func(t *testing.T) {
				nom := &fakeNominator{pods: map[string][]*framework.PodInfo{}}
				for n, ps := range tt.nominated {
					for _, p := range ps {
						nom.pods[n] = append(nom.pods[n], framework.NewPodInfo(p))
					}
				}
				e := newEnv(t, append([]*corev1.Pod{tt.pod}, tt.pods...), tt.nodes, tt.pdbs, envOpts{parallelism: 1, realFit: realFit, nominator: nom})
				state := framework.NewCycleState()
				if _, s, _ := e.fw.RunPreFilterPlugins(context.Background(), state, tt.pod); !s.IsSuccess() {
					t.Fatalf("PreFilter: %v", s)
				}
				got, s := e.pl.PostFilter(context.Background(), state, tt.pod, tt.statuses)
				if s.Code() != tt.wantCode || s.Message() != tt.wantMsg {
					t.Errorf("status = %v %q, want %v %q", s.Code(), s.Message(), tt.wantCode, tt.wantMsg)
				}
				switch {
				case tt.wantNode == nil && got != nil:
					t.Errorf("result = %+v, want nil", got.NominatingInfo)
				case tt.wantNode != nil && (got == nil || got.Mode() != framework.ModeOverride || got.NominatedNodeName != *tt.wantNode):
					t.Errorf("result = %+v, want nominated %q", got, *tt.wantNode)
				}
				if !reflect.DeepEqual(e.preempted, tt.wantPreempted) {
					t.Errorf("preempted %v, want %v", e.preempted, tt.wantPreempted)
				}
			})
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestDryRunPreemption(t *testing.T) {
	type cand struct {
		node       string
		victims    []string
		violations int64
	}
	tests := []struct {
		name        string
		args        *config.DefaultPreemptionArgs
		nodes       []string
		pod         *corev1.Pod
		pods        []*corev1.Pod
		pdbs        []*policyv1.PodDisruptionBudget
		offset      int32
		extra       []string
		want        []cand
		wantFilters int
	}{
		{
			name:  "pod with anti-affinity is preempted",
			extra: []string{names.InterPodAffinity},
			nodes: []string{"node1", "node2"},
			pod:   mkPod("p").label("foo", "").prio(highPriority).req(smallRes).Pod,
			pods: []*corev1.Pod{
				mkPod("p1.1").node("node1").label("foo", "").prio(lowPriority).req(smallRes).antiAffinity("foo", "hostname").Pod,
				mkPod("p1.2").node("node1").prio(midPriority).req(smallRes).Pod,
				mkPod("p1.3").node("node1").prio(highPriority).req(smallRes).Pod,
				mkPod("p2").node("node2").prio(highPriority).req(smallRes).Pod,
			},
			// node2: no lower-priority pod, no filter call.
			want: []cand{{"node1", []string{"p1.1"}, 0}}, wantFilters: 3,
		},
		{
			name:  "preemption to resolve pod topology spread filter failure",
			extra: []string{names.PodTopologySpread},
			nodes: []string{"node-a/zone1", "node-b/zone1", "node-x/zone2"},
			pod:   mkPod("p").label("foo", "").prio(highPriority).spread("zone").spread("hostname").Pod,
			pods: []*corev1.Pod{
				mkPod("pod-a1").node("node-a").label("foo", "").prio(midPriority).Pod,
				mkPod("pod-a2").node("node-a").label("foo", "").prio(lowPriority).Pod,
				mkPod("pod-b1").node("node-b").label("foo", "").prio(lowPriority).Pod,
				mkPod("pod-x1").node("node-x").label("foo", "").prio(highPriority).Pod,
				mkPod("pod-x2").node("node-x").label("foo", "").prio(highPriority).Pod,
			},
			want: []cand{{"node-a", []string{"pod-a2"}, 0}, {"node-b", []string{"pod-b1"}, 0}}, wantFilters: 5,
		},
		{
			name:  "a pod that fits on both nodes when lower priority pods are preempted",
			nodes: []string{"node1", "node2"},
			pod:   mkPod("p").prio(highPriority).req(largeRes).Pod,
			pods:  []*corev1.Pod{mkPod("p1").node("node1").prio(midPriority).req(largeRes).Pod, mkPod("p2").node("node2").prio(midPriority).req(largeRes).Pod},
			want:  []cand{{"node1", []string{"p1"}, 0}, {"node2", []string{"p2"}, 0}}, wantFilters: 4,
		},
		{
			name:  "a pod that would fit on the nodes, but other pods running are higher priority, no preemption would happen",
			nodes: []string{"node1", "node2"},
			pod:   mkPod("p").prio(lowPriority).req(largeRes).Pod,
			pods:  []*corev1.Pod{mkPod("p1").node("node1").prio(midPriority).req(largeRes).Pod, mkPod("p2").node("node2").prio(midPriority).req(largeRes).Pod},
			want:  nil, wantFilters: 0,
		},
		{
			name:  "medium priority pod is preempted, but lower priority one stays as it is small",
			nodes: []string{"node1", "node2"},
			pod:   mkPod("p").prio(highPriority).req(largeRes).Pod,
			pods: []*corev1.Pod{
				mkPod("p1.1").node("node1").prio(lowPriority).req(smallRes).Pod,
				mkPod("p1.2").node("node1").prio(midPriority).req(largeRes).Pod,
				mkPod("p2").node("node2").prio(midPriority).req(largeRes).Pod,
			},
			want: []cand{{"node1", []string{"p1.2"}, 0}, {"node2", []string{"p2"}, 0}}, wantFilters: 5,
		},
		{
			name:  "mixed priority pods are preempted",
			nodes: []string{"node1", "node2"},
			pod:   mkPod("p").prio(highPriority).req(largeRes).Pod,
			pods: []*corev1.Pod{
				mkPod("p1.1").node("node1").prio(midPriority).req(smallRes).Pod,
				mkPod("p1.2").node("node1").prio(lowPriority).req(smallRes).Pod,
				mkPod("p1.3").node("node1").prio(midPriority).req(mediumRes).Pod,
				mkPod("p1.4").node("node1").prio(highPriority).req(smallRes).Pod,
				mkPod("p2").node("node2").prio(highPriority).req(largeRes).Pod,
			},
			want: []cand{{"node1", []string{"p1.3", "p1.2"}, 0}}, wantFilters: 4,
		},
		{
			name:  "mixed priority pods are preempted, pick later StartTime one when priorities are equal",
			nodes: []string{"node1", "node2"},
			pod:   mkPod("p").prio(highPriority).req(largeRes).Pod,
			pods: []*corev1.Pod{
				mkPod("p1.1").node("node1").prio(lowPriority).req(smallRes).start(epoch(5)).Pod,
				mkPod("p1.2").node("node1").prio(lowPriority).req(smallRes).start(epoch(4)).Pod,
				mkPod("p1.3").node("node1").prio(midPriority).req(mediumRes).start(epoch(3)).Pod,
				mkPod("p1.4").node("node1").prio(highPriority).req(smallRes).start(epoch(2)).Pod,
				mkPod("p2").node("node2").prio(highPriority).req(largeRes).start(epoch(1)).Pod,
			},
			want: []cand{{"node1", []string{"p1.3", "p1.1"}, 0}}, wantFilters: 4,
		},
		{
			name:  "preemption with violation of same pdb",
			nodes: []string{"node1"},
			pod:   mkPod("p").prio(highPriority).req(veryLargeRes).Pod,
			pods: []*corev1.Pod{
				mkPod("p1.1").node("node1").label("app", "foo").prio(midPriority).req(mediumRes).Pod,
				mkPod("p1.2").node("node1").label("app", "foo").prio(midPriority).req(mediumRes).Pod,
			},
			pdbs: []*policyv1.PodDisruptionBudget{mkPDB("pdb", map[string]string{"app": "foo"}, 1)},
			want: []cand{{"node1", []string{"p1.2", "p1.1"}, 1}}, wantFilters: 3,
		},
		{
			name:  "preemption with violation of the pdb with pod whose eviction was processed, the victim doesn't belong to DisruptedPods",
			nodes: []string{"node1"},
			pod:   mkPod("p").prio(highPriority).req(veryLargeRes).Pod,
			pods: []*corev1.Pod{
				mkPod("p1.1").node("node1").label("app", "foo").prio(midPriority).req(mediumRes).Pod,
				mkPod("p1.2").node("node1").label("app", "foo").prio(midPriority).req(mediumRes).Pod,
			},
			pdbs: []*policyv1.PodDisruptionBudget{mkPDB("pdb", map[string]string{"app": "foo"}, 1, "p2")},
			want: []cand{{"node1", []string{"p1.2", "p1.1"}, 1}}, wantFilters: 3,
		},
		{
			name:  "preemption with violation of the pdb with pod whose eviction was processed, the victim belongs to DisruptedPods",
			nodes: []string{"node1"},
			pod:   mkPod("p").prio(highPriority).req(veryLargeRes).Pod,
			pods: []*corev1.Pod{
				mkPod("p1.1").node("node1").label("app", "foo").prio(midPriority).req(mediumRes).Pod,
				mkPod("p1.2").node("node1").label("app", "foo").prio(midPriority).req(mediumRes).Pod,
			},
			pdbs: []*policyv1.PodDisruptionBudget{mkPDB("pdb", map[string]string{"app": "foo"}, 1, "p1.2")},
			want: []cand{{"node1", []string{"p1.1", "p1.2"}, 0}}, wantFilters: 3,
		},
		{
			name:  "preemption with violation of the pdb with pod whose eviction was processed, the victim which belongs to DisruptedPods is treated as 'nonViolating'",
			nodes: []string{"node1"},
			pod:   mkPod("p").prio(highPriority).req(veryLargeRes).Pod,
			pods: []*corev1.Pod{
				mkPod("p1.1").node("node1").label("app", "foo").prio(midPriority).req(mediumRes).Pod,
				mkPod("p1.2").node("node1").label("app", "foo").prio(midPriority).req(mediumRes).Pod,
				mkPod("p1.3").node("node1").label("app", "foo").prio(midPriority).req(mediumRes).Pod,
			},
			pdbs: []*policyv1.PodDisruptionBudget{mkPDB("pdb", map[string]string{"app": "foo"}, 1, "p1.3")},
			want: []cand{{"node1", []string{"p1.2", "p1.1", "p1.3"}, 1}}, wantFilters: 4,
		},
		{
			name:   "all nodes are possible candidates, but DefaultPreemptionArgs limits to 2",
			args:   &config.DefaultPreemptionArgs{MinCandidateNodesPercentage: ptr[int32](40), MinCandidateNodesAbsolute: ptr[int32](1)},
			nodes:  []string{"node1", "node2", "node3", "node4", "node5"},
			pod:    mkPod("p").prio(highPriority).req(largeRes).Pod,
			offset: 4,
			pods: []*corev1.Pod{
				mkPod("p1").node("node1").prio(midPriority).req(largeRes).Pod, mkPod("p2").node("node2").prio(midPriority).req(largeRes).Pod,
				mkPod("p3").node("node3").prio(midPriority).req(largeRes).Pod, mkPod("p4").node("node4").prio(midPriority).req(largeRes).Pod,
				mkPod("p5").node("node5").prio(midPriority).req(largeRes).Pod,
			},
			// offset 4: node5, then node1; then enough candidates.
			want: []cand{{"node5", []string{"p5"}, 0}, {"node1", []string{"p1"}, 0}}, wantFilters: 4,
		},
		{
			name:   "some nodes are not possible candidates, DefaultPreemptionArgs limits to 2",
			args:   &config.DefaultPreemptionArgs{MinCandidateNodesPercentage: ptr[int32](40), MinCandidateNodesAbsolute: ptr[int32](1)},
			nodes:  []string{"node1", "node2", "node3", "node4", "node5"},
			pod:    mkPod("p").prio(highPriority).req(largeRes).Pod,
			offset: 1,
			pods: []*corev1.Pod{
				mkPod("p1").node("node1").prio(midPriority).req(largeRes).Pod, mkPod("p2").node("node2").prio(veryHighPriority).req(largeRes).Pod,
				mkPod("p3").node("node3").prio(midPriority).req(largeRes).Pod, mkPod("p4").node("node4").prio(midPriority).req(largeRes).Pod,
				mkPod("p5").node("node5").prio(midPriority).req(largeRes).Pod,
			},
			// offset 1: node2 (no victims), node3, node4.
			want: []cand{{"node3", []string{"p3"}, 0}, {"node4", []string{"p4"}, 0}}, wantFilters: 4,
		},
		{
			name:   "preemption offset across multiple scheduling cycles and wrap around",
			args:   &config.DefaultPreemptionArgs{MinCandidateNodesPercentage: ptr[int32](40), MinCandidateNodesAbsolute: ptr[int32](1)},
			nodes:  []string{"node1", "node2", "node3", "node4", "node5"},
			pod:    mkPod("p").prio(highPriority).req(largeRes).Pod,
			offset: 3,
			pods: []*corev1.Pod{
				mkPod("p1").node("node1").prio(midPriority).req(largeRes).Pod, mkPod("p2").node("node2").prio(midPriority).req(largeRes).Pod,
				mkPod("p3").node("node3").prio(midPriority).req(largeRes).Pod, mkPod("p4").node("node4").prio(midPriority).req(largeRes).Pod,
				mkPod("p5").node("node5").prio(midPriority).req(largeRes).Pod,
			},
			want: []cand{{"node4", []string{"p4"}, 0}, {"node5", []string{"p5"}, 0}}, wantFilters: 4,
		},
		{
			name:  "a non-violating candidate is looked for beyond the limit; non-violating ones come first",
			args:  &config.DefaultPreemptionArgs{MinCandidateNodesPercentage: ptr[int32](40), MinCandidateNodesAbsolute: ptr[int32](1)},
			nodes: []string{"node1", "node2", "node3", "node4", "node5"},
			pod:   mkPod("p").prio(highPriority).req(largeRes).Pod,
			pods: []*corev1.Pod{
				mkPod("p1").node("node1").label("app", "foo").prio(midPriority).req(largeRes).Pod,
				mkPod("p2").node("node2").label("app", "foo").prio(midPriority).req(largeRes).Pod,
				mkPod("p3").node("node3").prio(midPriority).req(largeRes).Pod,
				mkPod("p4").node("node4").prio(midPriority).req(largeRes).Pod,
				mkPod("p5").node("node5").prio(midPriority).req(largeRes).Pod,
			},
			pdbs: []*policyv1.PodDisruptionBudget{mkPDB("pdb", map[string]string{"app": "foo"}, 0)},
			want: []cand{{"node3", []string{"p3"}, 0}, {"node1", []string{"p1"}, 1}, {"node2", []string{"p2"}, 1}}, wantFilters: 6,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var nodes []*corev1.Node
			for _, n := range tt.nodes {
				name, zone, _ := strings.Cut(n, "/")
				nd := mkNode(name, veryLargeRes, "hostname", name)
				if zone != "" {
					nd.Labels["zone"] = zone
				}
				nodes = append(nodes, nd)
			}
			e := newEnv(t, append([]*corev1.Pod{tt.pod}, tt.pods...), nodes, tt.pdbs, envOpts{args: tt.args, parallelism: 1, extra: tt.extra})
			state := framework.NewCycleState()
			if _, s, _ := e.fw.RunPreFilterPlugins(context.Background(), state, tt.pod); !s.IsSuccess() {
				t.Fatal(s)
			}
			all, _ := e.fw.SnapshotSharedLister().NodeInfos().List()
			_, num := e.pl.GetOffsetAndNumCandidates(int32(len(all)))
			got, _, err := e.pl.DryRunPreemption(context.Background(), state, tt.pod, all, tt.pdbs, tt.offset, num)
			if err != nil {
				t.Fatal(err)
			}
			var gotC []cand
			for _, c := range got {
				var vs []string
				for _, p := range c.Victims.Pods {
					vs = append(vs, p.Name)
				}
				gotC = append(gotC, cand{c.Name, vs, c.Victims.NumPDBViolations})
			}
			if !reflect.DeepEqual(gotC, tt.want) {
				t.Errorf("candidates = %+v, want %+v", gotC, tt.want)
			}
			if e.calls.n != tt.wantFilters {
				t.Errorf("filter called %d times, want %d", e.calls.n, tt.wantFilters)
			}
		})
	}
}

func TestSelectCandidate(t *testing.T) {
	v := func(violations int64, pods ...*corev1.Pod) *Victims {
		return &Victims{Pods: pods, NumPDBViolations: violations}
	}
	tests := []struct {
		name  string
		cands []*Candidate
		want  string
	}{
		{"fewest PDB violations", []*Candidate{
			{Name: "n1", Victims: v(1, mkPod("a").prio(lowPriority).Pod)},
			{Name: "n2", Victims: v(0, mkPod("b").prio(highPriority).Pod, mkPod("c").prio(highPriority).Pod)},
		}, "n2"},
		{"lowest highest-priority victim", []*Candidate{
			{Name: "n1", Victims: v(0, mkPod("a").prio(midPriority).Pod)},
			{Name: "n2", Victims: v(0, mkPod("b").prio(lowPriority).Pod, mkPod("c").prio(lowPriority).Pod, mkPod("d").prio(negPriority).Pod)},
		}, "n2"},
		{"smallest sum of priorities", []*Candidate{
			{Name: "n1", Victims: v(0, mkPod("a").prio(midPriority).Pod, mkPod("b").prio(lowPriority).Pod)},
			{Name: "n2", Victims: v(0, mkPod("c").prio(midPriority).Pod, mkPod("d").prio(negPriority).Pod)},
		}, "n2"},
		{"sum shifted: fewer negative-priority pods win", []*Candidate{
			{Name: "n1", Victims: v(0, mkPod("a").prio(negPriority).Pod, mkPod("b").prio(negPriority).Pod)},
			{Name: "n2", Victims: v(0, mkPod("c").prio(negPriority).Pod)},
		}, "n2"},
		{"fewest victims on equal sums", []*Candidate{
			{Name: "n1", Victims: v(0, mkPod("a").prio(0).Pod, mkPod("b").prio(-2147483648).Pod)},
			{Name: "n2", Victims: v(0, mkPod("c").prio(0).Pod)},
		}, "n2"},
		{"latest start time of the highest-priority victims", []*Candidate{
			{Name: "n1", Victims: v(0, mkPod("a").prio(midPriority).start(epoch(2)).Pod, mkPod("b").prio(lowPriority).start(epoch(9)).Pod)},
			{Name: "n2", Victims: v(0, mkPod("c").prio(midPriority).start(epoch(3)).Pod, mkPod("d").prio(lowPriority).start(epoch(1)).Pod)},
		}, "n2"},
		{"ties: the first", []*Candidate{
			{Name: "n1", Victims: v(0, mkPod("a").prio(midPriority).start(epoch(2)).Pod)},
			{Name: "n2", Victims: v(0, mkPod("b").prio(midPriority).start(epoch(2)).Pod)},
		}, "n1"},
	}
	e := newEnv(t, nil, nil, nil, envOpts{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := e.pl.SelectCandidate(tt.cands); got.Name != tt.want {
				t.Errorf("SelectCandidate = %s, want %s", got.Name, tt.want)
			}
		})
	}
	if e.pl.SelectCandidate(nil) != nil {
		t.Error("SelectCandidate(nil) != nil")
	}
}

func TestPodEligibleToPreemptOthers(t *testing.T) {
	tests := []struct {
		name      string
		pod       *corev1.Pod
		pods      []*corev1.Pod
		nomStatus *framework.Status
		want      bool
		wantMsg   string
	}{
		{name: "pod with preemptionPolicy Never", pod: mkPod("p").prio(highPriority).never().Pod,
			wantMsg: "not eligible due to preemptionPolicy=Never."},
		{name: "pod without a nominated node", pod: mkPod("p").prio(highPriority).Pod, want: true},
		{name: "lower-priority pod preempted by the scheduler still terminating on the nominated node",
			pod:     mkPod("p").prio(highPriority).nominated("node1").Pod,
			pods:    []*corev1.Pod{mkPod("v").node("node1").prio(lowPriority).terminatingByPreemption().Pod},
			wantMsg: "not eligible due to a terminating pod on the nominated node."},
		{name: "the nominated node is now UnschedulableAndUnresolvable",
			pod:       mkPod("p").prio(highPriority).nominated("node1").Pod,
			pods:      []*corev1.Pod{mkPod("v").node("node1").prio(lowPriority).terminatingByPreemption().Pod},
			nomStatus: framework.NewStatus(framework.UnschedulableAndUnresolvable), want: true},
		{name: "terminating pod not preempted by the scheduler",
			pod: mkPod("p").prio(highPriority).nominated("node1").Pod,
			pods: []*corev1.Pod{func() *corev1.Pod {
				p := mkPod("v").node("node1").prio(lowPriority).Pod
				p.DeletionTimestamp = epoch(1)
				return p
			}()}, want: true},
		{name: "terminating higher-priority pod",
			pod:  mkPod("p").prio(midPriority).nominated("node1").Pod,
			pods: []*corev1.Pod{mkPod("v").node("node1").prio(highPriority).terminatingByPreemption().Pod}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, append([]*corev1.Pod{tt.pod}, tt.pods...), []*corev1.Node{mkNode("node1", onePodRes)}, nil, envOpts{})
			ok, msg := e.pl.PodEligibleToPreemptOthers(tt.pod, tt.nomStatus)
			if ok != tt.want || msg != tt.wantMsg {
				t.Errorf("= %v %q, want %v %q", ok, msg, tt.want, tt.wantMsg)
			}
		})
	}
}

func TestCalculateNumCandidates(t *testing.T) {
	for _, tt := range []struct {
		pct, abs, nodes, want int32
	}{
		{10, 100, 10, 10}, {10, 100, 1000, 100}, {10, 100, 5000, 500}, {40, 1, 5, 2}, {0, 1, 5, 1}, {100, 0, 7, 7},
	} {
		pl := &DefaultPreemption{pct: tt.pct, abs: tt.abs}
		if got := pl.calculateNumCandidates(tt.nodes); got != tt.want {
			t.Errorf("pct %d abs %d nodes %d: %d, want %d", tt.pct, tt.abs, tt.nodes, got, tt.want)
		}
	}
}

func TestNewArgs(t *testing.T) {
	e := newEnv(t, nil, nil, nil, envOpts{})
	if e.pl.pct != 10 || e.pl.abs != 100 {
		t.Errorf("defaults: %d%% / %d, want 10%% / 100", e.pl.pct, e.pl.abs)
	}
	if _, err := NewDefaultPreemption(&config.DefaultPreemptionArgs{MinCandidateNodesPercentage: ptr[int32](0), MinCandidateNodesAbsolute: ptr[int32](0)}, e.fw); err == nil ||
		!strings.Contains(err.Error(), "cannot be zero at the same time as minCandidateNodesAbsolute") {
		t.Errorf("invalid args: %v", err)
	}
	if _, err := NewDefaultPreemption(&config.NodeAffinityArgs{}, e.fw); err == nil {
		t.Error("args of another plugin accepted")
	}
}

// TestAsyncPreemption: the preemptor is held in PreEnqueue until the last
// victim's deletion started; victims but the last go first.
func TestAsyncPreemption(t *testing.T) {
	pod := mkPod("p").prio(highPriority).req(largeRes).Pod
	v1 := mkPod("v1").node("node1").prio(lowPriority).req(mediumRes).Pod
	v2 := mkPod("v2").node("node1").prio(midPriority).req(mediumRes).Pod
	e := newEnv(t, []*corev1.Pod{pod, v1, v2}, []*corev1.Node{mkNode("node1", largeRes)}, nil, envOpts{parallelism: 1})
	e.pl.Async = true
	evs, _ := e.pl.EventsToRegister(context.Background())
	if len(evs) != 1 || evs[0].Event != (framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Delete}) {
		t.Fatalf("EventsToRegister = %+v", evs)
	}
	if h, _ := evs[0].QueueingHintFn(nil, pod, v1, nil); h != framework.QueueSkip {
		t.Errorf("hint = %v, want QueueSkip", h)
	}
	lastCalled, release := make(chan string, 1), make(chan struct{})
	var order []string
	e.pl.PreemptPod = func(_ context.Context, _ string, _, victim *corev1.Pod) error {
		order = append(order, victim.Name)
		if len(order) == 2 {
			lastCalled <- victim.Name
			<-release
		}
		return nil
	}
	state := framework.NewCycleState()
	r, s := e.pl.PostFilter(context.Background(), state, pod, unsched("node1"))
	if !s.IsSuccess() || r.NominatedNodeName != "node1" {
		t.Fatalf("PostFilter = %v %v", r, s)
	}
	last := <-lastCalled
	if !reflect.DeepEqual(order, []string{"v2", "v1"}) || last != "v1" {
		t.Errorf("preempted in order %v (last %s), want [v2 v1]", order, last)
	}
	// The last victim is still in the informer and not terminating: wait.
	if s := e.pl.PreEnqueue(context.Background(), pod); s.Code() != framework.UnschedulableAndUnresolvable || s.Message() != "waiting for the preemption for this pod to be finished" {
		t.Errorf("PreEnqueue during preemption = %v", s)
	}
	// Its deletion started (terminating): the pod may go on.
	term := v1.DeepCopy()
	term.DeletionTimestamp = epoch(5)
	if err := e.inf.Pods().Informer().GetIndexer().Update(term); err != nil {
		t.Fatal(err)
	}
	if s := e.pl.PreEnqueue(context.Background(), pod); !s.IsSuccess() {
		t.Errorf("PreEnqueue once the last victim terminates = %v", s)
	}
	close(release)
	e.pl.Wait()
	if e.pl.IsPodRunningPreemption(pod.UID) {
		t.Error("still running after the goroutine ended")
	}
	if s := e.pl.PreEnqueue(context.Background(), pod); !s.IsSuccess() {
		t.Errorf("PreEnqueue after preemption = %v", s)
	}
}

func TestFilterPodsWithPDBViolation(t *testing.T) {
	pods := []*framework.PodInfo{
		framework.NewPodInfo(mkPod("a").label("app", "x").Pod),
		framework.NewPodInfo(mkPod("b").label("app", "x").Pod),
		framework.NewPodInfo(mkPod("c").Pod), // no labels: no PDB
		framework.NewPodInfo(mkPod("d").label("app", "y").Pod),
	}
	other := mkPDB("other-ns", map[string]string{"app": "y"}, 0)
	other.Namespace = "kube-system"
	empty := mkPDB("empty", nil, 0)
	empty.Spec.Selector = &metav1.LabelSelector{}
	v, nv := filterPodsWithPDBViolation(pods, []*policyv1.PodDisruptionBudget{mkPDB("x", map[string]string{"app": "x"}, 1), other, empty})
	names := func(ps []*framework.PodInfo) (out []string) {
		for _, p := range ps {
			out = append(out, p.Pod.Name)
		}
		return out
	}
	if !reflect.DeepEqual(names(v), []string{"b"}) || !reflect.DeepEqual(names(nv), []string{"a", "c", "d"}) {
		t.Errorf("violating %v, non-violating %v", names(v), names(nv))
	}
}

// TestMetrics: Register exposes upstream's preemption metrics (twice is
// fine); every PostFilter counts an attempt, every preparation observes
// the number of victims.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	if err := Register(reg); err != nil {
		t.Fatal(err)
	}
	if err := Register(reg); err != nil {
		t.Fatalf("second Register: %v", err)
	}
	read := func() (attempts float64, victims uint64) {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			switch mf.GetName() {
			case "scheduler_preemption_attempts_total":
				attempts = mf.Metric[0].GetCounter().GetValue()
			case "scheduler_preemption_victims":
				victims = mf.Metric[0].GetHistogram().GetSampleCount()
			}
		}
		return
	}
	a0, v0 := read()
	pod := mkPod("p").prio(highPriority).Pod
	e := newEnv(t, []*corev1.Pod{pod, mkPod("p1").node("node1").Pod}, []*corev1.Node{mkNode("node1", onePodRes)}, nil, envOpts{})
	if _, s := e.pl.PostFilter(context.Background(), framework.NewCycleState(), pod, unsched("node1")); !s.IsSuccess() {
		t.Fatal(s)
	}
	e.pl.PostFilter(context.Background(), framework.NewCycleState(), pod, framework.NewDefaultNodeToStatus())
	if a, v := read(); a-a0 != 2 || v-v0 != 1 {
		t.Errorf("attempts +%v, victims observations +%v; want +2, +1", a-a0, v-v0)
	}
}

func TestAggregate(t *testing.T) {
	a, b := fmt.Errorf("a"), fmt.Errorf("b")
	for _, tt := range []struct {
		errs []error
		want string
	}{{[]error{a}, "a"}, {[]error{a, b}, "[a, b]"}, {[]error{a, fmt.Errorf("a")}, "a"}} {
		if got := aggregate(tt.errs).Error(); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.errs, got, tt.want)
		}
	}
	if aggregate(nil) != nil {
		t.Error("aggregate(nil) != nil")
	}
}

// waitingHandle serves one waiting pod.
type waitingHandle struct {
	*fwruntime.Framework
	wp *fakeWaitingPod
}

func (h waitingHandle) GetWaitingPod(uid types.UID) framework.WaitingPod {
	if h.wp != nil && h.wp.pod.UID == uid {
		return h.wp
	}
	return nil
}

type fakeWaitingPod struct {
	pod             *corev1.Pod
	rejectedBy, msg string
}

func (w *fakeWaitingPod) GetPod() *corev1.Pod         { return w.pod }
func (w *fakeWaitingPod) GetPendingPlugins() []string { return nil }
func (w *fakeWaitingPod) Allow(string)                {}
func (w *fakeWaitingPod) Reject(plugin, msg string)   { w.rejectedBy, w.msg = plugin, msg }

// TestPreemptWaitingPod: a victim held in Permit is rejected ("preempted")
// instead of deleted (no API client needed), and gets the Preempted event.
func TestPreemptWaitingPod(t *testing.T) {
	e := newEnv(t, nil, nil, nil, envOpts{})
	victim := mkPod("v").node("node1").Pod
	preemptor := mkPod("p").prio(highPriority).Pod
	wp := &fakeWaitingPod{pod: victim}
	pl, err := NewDefaultPreemption(nil, waitingHandle{Framework: e.fw, wp: wp})
	if err != nil {
		t.Fatal(err)
	}
	if err := pl.PreemptPod(context.Background(), "node1", preemptor, victim); err != nil {
		t.Fatal(err)
	}
	if wp.rejectedBy != Name || wp.msg != "preempted" {
		t.Errorf("waiting pod rejected by %q with %q", wp.rejectedBy, wp.msg)
	}
	if ev := <-e.events.Events; ev != "Normal Preempted Preempted by pod p on node node1" {
		t.Errorf("event %q", ev)
	}
	// Not waiting and no client: the deletion path reports the missing
	// client instead of pretending.
	if err := pl.PreemptPod(context.Background(), "node1", preemptor, mkPod("other").node("node1").Pod); err == nil {
		t.Error("no error without an API client")
	}
}
