package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// fakePlugin implements every extension point; its behaviour per node
// and per point is data.
type fakePlugin struct {
	name            string
	reject          map[string]framework.Code // Filter: node → code
	score           map[string]int64
	normalize       bool // scale scores to max 100
	preFilter       *framework.PreFilterResult
	preFilterStatus *framework.Status
	bind            *framework.Status
	permit          *framework.Status
	permitFor       time.Duration
	calls           *[]string
}

func (p *fakePlugin) Name() string { return p.name }
func (p *fakePlugin) record(s string) {
	if p.calls != nil {
		*p.calls = append(*p.calls, p.name+"."+s)
	}
}
func (p *fakePlugin) Less(a, b *framework.QueuedPodInfo) bool { return false }
func (p *fakePlugin) PreFilter(ctx context.Context, s *framework.CycleState, pod *corev1.Pod, nodes []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	p.record("PreFilter")
	return p.preFilter, p.preFilterStatus
}
func (p *fakePlugin) PreFilterExtensions() framework.PreFilterExtensions { return nil }
func (p *fakePlugin) Filter(ctx context.Context, s *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	if c, ok := p.reject[ni.Node().Name]; ok {
		return framework.NewStatus(c, p.name+" says no")
	}
	return nil
}
func (p *fakePlugin) Score(ctx context.Context, s *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	return p.score[ni.Node().Name], nil
}
func (p *fakePlugin) ScoreExtensions() framework.ScoreExtensions {
	if p.normalize {
		return p
	}
	return nil
}
func (p *fakePlugin) NormalizeScore(ctx context.Context, s *framework.CycleState, pod *corev1.Pod, scores framework.NodeScoreList) *framework.Status {
	var m int64
	for _, s := range scores {
		m = max(m, s.Score)
	}
	for i := range scores {
		if m > 0 {
			scores[i].Score = scores[i].Score * framework.MaxNodeScore / m
		}
	}
	return nil
}
func (p *fakePlugin) Reserve(ctx context.Context, s *framework.CycleState, pod *corev1.Pod, n string) *framework.Status {
	p.record("Reserve")
	return nil
}
func (p *fakePlugin) Unreserve(ctx context.Context, s *framework.CycleState, pod *corev1.Pod, n string) {
	p.record("Unreserve")
}
func (p *fakePlugin) Permit(ctx context.Context, s *framework.CycleState, pod *corev1.Pod, n string) (*framework.Status, time.Duration) {
	return p.permit, p.permitFor
}
func (p *fakePlugin) Bind(ctx context.Context, s *framework.CycleState, pod *corev1.Pod, n string) *framework.Status {
	p.record("Bind")
	return p.bind
}

// filterOnly implements Filter only.
type filterOnly struct{ name string }

func (p *filterOnly) Name() string { return p.name }
func (p *filterOnly) Filter(ctx context.Context, s *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	return nil
}

type lister struct{ nodes []*framework.NodeInfo }

func (l *lister) NodeInfos() framework.NodeInfoLister       { return l }
func (l *lister) StorageInfos() framework.StorageInfoLister { return nil }
func (l *lister) List() ([]*framework.NodeInfo, error)      { return l.nodes, nil }
func (l *lister) HavePodsWithAffinityList() ([]*framework.NodeInfo, error) {
	return nil, nil
}
func (l *lister) HavePodsWithRequiredAntiAffinityList() ([]*framework.NodeInfo, error) {
	return nil, nil
}
func (l *lister) Get(name string) (*framework.NodeInfo, error) {
	for _, n := range l.nodes {
		if n.Node().Name == name {
			return n, nil
		}
	}
	return nil, fmt.Errorf("nodeinfo not found for node name %q", name)
}

func nodes(names ...string) []*framework.NodeInfo {
	var out []*framework.NodeInfo
	for _, n := range names {
		ni := framework.NewNodeInfo()
		ni.SetNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}})
		out = append(out, ni)
	}
	return out
}

func registryOf(ps ...framework.Plugin) framework.Registry {
	r := framework.Registry{}
	for _, p := range ps {
		p := p
		r[p.Name()] = func(context.Context, runtime.Object, framework.Handle) (framework.Plugin, error) { return p, nil }
	}
	return r
}

func refs(names ...string) []config.Plugin {
	out := make([]config.Plugin, len(names))
	for i, n := range names {
		out[i] = config.Plugin{Name: n}
	}
	return out
}

func w(name string, weight int32) config.Plugin { return config.Plugin{Name: name, Weight: &weight} }

func profile(p config.Plugins) *config.KubeSchedulerProfile {
	name := "default-scheduler"
	return &config.KubeSchedulerProfile{SchedulerName: &name, Plugins: &p}
}

func newFW(t *testing.T, r framework.Registry, p config.Plugins, ns []*framework.NodeInfo) *Framework {
	t.Helper()
	f, err := NewFramework(context.Background(), r, profile(p), Options{Snapshot: &lister{ns}, Clock: clock.NewFake(time.Unix(0, 0))})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestExpandMultiPoint(t *testing.T) {
	r := registryOf(&fakePlugin{name: "A"}, &fakePlugin{name: "B"}, &filterOnly{name: "F"}, &fakePlugin{name: "C"})
	tests := []struct {
		name    string
		plugins config.Plugins
		filter  []string
		score   []config.WeightedPlugin
		wantErr string
	}{
		{name: "multi point in order, only where implemented",
			plugins: config.Plugins{MultiPoint: config.PluginSet{Enabled: []config.Plugin{w("A", 2), {Name: "F"}, {Name: "B"}}}},
			filter:  []string{"A", "F", "B"}, score: []config.WeightedPlugin{{Name: "A", Weight: 2}, {Name: "B", Weight: 1}}},
		{name: "disabled at one point",
			plugins: config.Plugins{MultiPoint: config.PluginSet{Enabled: refs("A", "B")}, Score: config.PluginSet{Disabled: refs("A")}},
			filter:  []string{"A", "B"}, score: []config.WeightedPlugin{{Name: "B", Weight: 1}}},
		{name: "star disables every multi point plugin there; explicit ones stay",
			plugins: config.Plugins{MultiPoint: config.PluginSet{Enabled: refs("A", "B")}, Filter: config.PluginSet{Enabled: refs("C"), Disabled: refs("*")}},
			filter:  []string{"C"}, score: []config.WeightedPlugin{{Name: "A", Weight: 1}, {Name: "B", Weight: 1}}},
		{name: "explicit overrides come first, then multi point, then explicit only",
			plugins: config.Plugins{MultiPoint: config.PluginSet{Enabled: []config.Plugin{{Name: "A"}, w("B", 3)}}, Score: config.PluginSet{Enabled: []config.Plugin{w("C", 5), {Name: "B"}}}},
			filter:  []string{"A", "B"}, score: []config.WeightedPlugin{{Name: "B", Weight: 1}, {Name: "A", Weight: 1}, {Name: "C", Weight: 5}}}, // the score point's unset weight (1) wins over MultiPoint's, as upstream
		{name: "plugin not extending the point", plugins: config.Plugins{MultiPoint: config.PluginSet{Enabled: refs("A")}, Score: config.PluginSet{Enabled: refs("F")}},
			wantErr: `plugin "F" does not extend ScorePlugin plugin`},
		{name: "unknown plugin", plugins: config.Plugins{MultiPoint: config.PluginSet{Enabled: refs("A", "nope")}}, wantErr: `"nope" does not exist`},
		{name: "no bind plugin", plugins: config.Plugins{QueueSort: config.PluginSet{Enabled: refs("A")}, Filter: config.PluginSet{Enabled: refs("F")}}, wantErr: "at least one bind plugin is needed"},
		{name: "two queue sort", plugins: withQueueSort(config.Plugins{MultiPoint: config.PluginSet{Enabled: refs("A", "B")}}, "A", "B"), wantErr: "only one queue sort plugin required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.plugins
			if p.QueueSort.Enabled == nil && len(p.MultiPoint.Enabled) > 0 && tt.wantErr == "" {
				// one queue sort for the valid cases
				p.QueueSort = config.PluginSet{Enabled: refs("A"), Disabled: refs("*")}
			}
			f, err := NewFramework(context.Background(), r, profile(p), Options{Snapshot: &lister{}})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := f.ListPlugins()
			var gotFilter []string
			for _, r := range got["Filter"] {
				gotFilter = append(gotFilter, r.Name)
			}
			if !reflect.DeepEqual(gotFilter, tt.filter) || !reflect.DeepEqual(got["Score"], tt.score) {
				t.Errorf("filter %v score %v; want %v %v", gotFilter, got["Score"], tt.filter, tt.score)
			}
		})
	}
}

func withQueueSort(p config.Plugins, names ...string) config.Plugins {
	p.QueueSort = config.PluginSet{Enabled: refs(names...)}
	return p
}

func TestRunFilterAndScore(t *testing.T) {
	ns := nodes("n1", "n2", "n3")
	a := &fakePlugin{name: "A", reject: map[string]framework.Code{"n1": framework.Unschedulable}, score: map[string]int64{"n1": 10, "n2": 20, "n3": 40}, normalize: true}
	b := &fakePlugin{name: "B", reject: map[string]framework.Code{"n1": framework.UnschedulableAndUnresolvable, "n2": framework.Error}, score: map[string]int64{"n2": 100, "n3": 50}}
	f := newFW(t, registryOf(a, b), config.Plugins{MultiPoint: config.PluginSet{Enabled: []config.Plugin{w("A", 2), {Name: "B"}}}, QueueSort: config.PluginSet{Enabled: refs("A"), Disabled: refs("*")}}, ns)
	state := framework.NewCycleState()
	pod := &corev1.Pod{}
	if s := f.RunFilterPlugins(context.Background(), state, pod, ns[0]); s.Code() != framework.Unschedulable || s.Plugin() != "A" || s.Message() != "A says no" {
		t.Errorf("n1: %v (first rejection wins)", s)
	}
	if s := f.RunFilterPlugins(context.Background(), state, pod, ns[1]); s.Code() != framework.Error || s.Plugin() != "B" || !strings.Contains(s.Message(), `running "B" filter plugin`) {
		t.Errorf("n2: %v", s)
	}
	if s := f.RunFilterPlugins(context.Background(), state, pod, ns[2]); !s.IsSuccess() {
		t.Errorf("n3: %v", s)
	}
	state.SkipFilterPlugins = sets.New("A")
	if s := f.RunFilterPlugins(context.Background(), state, pod, ns[0]); s.Plugin() != "B" {
		t.Errorf("skipped A still ran: %v", s)
	}
	scores, s := f.RunScorePlugins(context.Background(), state, pod, ns[1:])
	if !s.IsSuccess() {
		t.Fatal(s)
	}
	// A normalized: n2 50, n3 100, weight 2 → 100, 200; B: 100, 50.
	if scores[0].TotalScore != 200 || scores[1].TotalScore != 250 || scores[0].Name != "n2" {
		t.Errorf("scores %+v", scores)
	}
	bad := &fakePlugin{name: "Bad", score: map[string]int64{"n2": 101}}
	f = newFW(t, registryOf(a, bad), config.Plugins{MultiPoint: config.PluginSet{Enabled: refs("A", "Bad")}, QueueSort: config.PluginSet{Enabled: refs("A"), Disabled: refs("*")}}, ns)
	if _, s := f.RunScorePlugins(context.Background(), framework.NewCycleState(), pod, ns[1:]); s.Code() != framework.Error || !strings.Contains(s.Message(), "invalid score 101") {
		t.Errorf("out-of-range score: %v", s)
	}
}

func TestRunPreFilterMergesResults(t *testing.T) {
	ns := nodes("n1", "n2")
	a := &fakePlugin{name: "A", preFilter: &framework.PreFilterResult{NodeNames: sets.New("n1")}}
	b := &fakePlugin{name: "B", preFilter: &framework.PreFilterResult{NodeNames: sets.New("n2")}}
	c := &fakePlugin{name: "C", preFilterStatus: framework.NewStatus(framework.Skip)}
	f := newFW(t, registryOf(a, b, c), config.Plugins{MultiPoint: config.PluginSet{Enabled: refs("C", "A", "B")}, QueueSort: config.PluginSet{Enabled: refs("A"), Disabled: refs("*")}}, ns)
	state := framework.NewCycleState()
	_, s, rejectors := f.RunPreFilterPlugins(context.Background(), state, &corev1.Pod{})
	if s.Code() != framework.UnschedulableAndUnresolvable || s.Message() != "node(s) didn't satisfy plugin(s) [A B] simultaneously" || !rejectors.Equal(sets.New("A", "B")) {
		t.Errorf("status %v rejectors %v", s, rejectors)
	}
	f = newFW(t, registryOf(a, c), config.Plugins{MultiPoint: config.PluginSet{Enabled: refs("C", "A")}, QueueSort: config.PluginSet{Enabled: refs("A"), Disabled: refs("*")}}, ns)
	state = framework.NewCycleState()
	res, s, _ := f.RunPreFilterPlugins(context.Background(), state, &corev1.Pod{})
	if !s.IsSuccess() || !res.NodeNames.Equal(sets.New("n1")) || !state.SkipFilterPlugins.Has("C") {
		t.Errorf("result %v status %v skip %v", res, s, state.SkipFilterPlugins)
	}
}

func TestPermitWaitAllowRejectTimeout(t *testing.T) {
	for _, tc := range []string{"allow", "reject", "timeout"} {
		t.Run(tc, func(t *testing.T) {
			clk := clock.NewFake(time.Unix(0, 0))
			w := &fakePlugin{name: "W", permit: framework.NewStatus(framework.Wait), permitFor: 10 * time.Second}
			f, err := NewFramework(context.Background(), registryOf(w), profile(config.Plugins{MultiPoint: config.PluginSet{Enabled: refs("W")}}), Options{Snapshot: &lister{}, Clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: types.UID("u1")}}
			if s := f.RunPermitPlugins(context.Background(), framework.NewCycleState(), pod, "n1"); !s.IsWait() {
				t.Fatalf("permit: %v", s)
			}
			wp := f.GetWaitingPod("u1")
			if wp == nil || !reflect.DeepEqual(wp.GetPendingPlugins(), []string{"W"}) {
				t.Fatalf("waiting pod %v", wp)
			}
			switch tc {
			case "allow":
				wp.Allow("W")
			case "reject":
				wp.Reject("W", "no way")
			case "timeout":
				deadline := time.Now().Add(10 * time.Second)
				for clk.Waiters() == 0 && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
				clk.Step(10 * time.Second)
			}
			s := f.WaitOnPermit(context.Background(), pod)
			want := map[string]string{"allow": "Success", "reject": "Unschedulable (W): no way",
				"timeout": "Unschedulable (W): rejected due to timeout after waiting 10s at plugin W"}[tc]
			if s.String() != want {
				t.Errorf("got %q want %q", s, want)
			}
			if f.GetWaitingPod("u1") != nil {
				t.Error("waiting pod not removed")
			}
		})
	}
}

func TestBindSkipsToNextAndUnreserveReverse(t *testing.T) {
	var calls []string
	a := &fakePlugin{name: "A", bind: framework.NewStatus(framework.Skip), calls: &calls}
	b := &fakePlugin{name: "B", calls: &calls}
	f, err := NewFramework(context.Background(), registryOf(a, b), profile(config.Plugins{MultiPoint: config.PluginSet{Enabled: refs("A", "B")}, QueueSort: config.PluginSet{Enabled: refs("A"), Disabled: refs("*")}}), Options{Snapshot: &lister{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, st, pod := context.Background(), framework.NewCycleState(), &corev1.Pod{}
	if s := f.RunBindPlugins(ctx, st, pod, "n"); !s.IsSuccess() {
		t.Fatal(s)
	}
	f.RunReservePluginsReserve(ctx, st, pod, "n")
	f.RunReservePluginsUnreserve(ctx, st, pod, "n")
	want := []string{"A.Bind", "B.Bind", "A.Reserve", "B.Reserve", "B.Unreserve", "A.Unreserve"}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("calls %v want %v", calls, want)
	}
}

type nominator struct {
	pods map[string][]*framework.PodInfo
}

func (n *nominator) AddNominatedPod(*slog.Logger, *framework.PodInfo, *framework.NominatingInfo) {}
func (n *nominator) DeleteNominatedPodIfExists(*corev1.Pod)                                      {}
func (n *nominator) UpdateNominatedPod(*slog.Logger, *corev1.Pod, *framework.PodInfo)            {}
func (n *nominator) NominatedPodsForNode(name string) []*framework.PodInfo                       { return n.pods[name] }

// maxPods rejects a node holding more than limit pods.
type maxPods struct{ limit int }

func (p *maxPods) Name() string { return "MaxPods" }
func (p *maxPods) Filter(ctx context.Context, s *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	if len(ni.Pods) >= p.limit {
		return framework.NewStatus(framework.Unschedulable, "Too many pods")
	}
	return nil
}

func TestFilterWithNominatedPods(t *testing.T) {
	prio := func(p int32) *int32 { return &p }
	nominated := framework.NewPodInfo(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "nom", UID: "nom"}, Spec: corev1.PodSpec{Priority: prio(10)}})
	tests := []struct {
		name string
		prio int32
		uid  types.UID
		want framework.Code
	}{
		{"lower priority pod must leave room for the nominated one", 5, "x", framework.Unschedulable},
		{"higher priority pod ignores it", 20, "x", framework.Success},
		{"the nominated pod itself is not counted twice", 10, "nom", framework.Success},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := nodes("n1")
			a := &fakePlugin{name: "A"}
			f, err := NewFramework(context.Background(), registryOf(a, &maxPods{limit: 1}),
				profile(config.Plugins{MultiPoint: config.PluginSet{Enabled: refs("A", "MaxPods")}}),
				Options{Snapshot: &lister{ns}, PodNominator: &nominator{pods: map[string][]*framework.PodInfo{"n1": {nominated}}}})
			if err != nil {
				t.Fatal(err)
			}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: tt.uid}, Spec: corev1.PodSpec{Priority: prio(tt.prio)}}
			if s := f.RunFilterPluginsWithNominatedPods(context.Background(), framework.NewCycleState(), pod, ns[0]); s.Code() != tt.want {
				t.Errorf("got %v want %v", s, tt.want)
			}
			if len(ns[0].Pods) != 0 {
				t.Error("the snapshot node was changed")
			}
		})
	}
}
