package nodeaffinity

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

func req(key string, op corev1.NodeSelectorOperator, vals ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: vals}
}

func exprTerm(rs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchExpressions: rs}
}

func fieldTerm(rs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchFields: rs}
}

func requiredPod(sel map[string]string, terms ...corev1.NodeSelectorTerm) *corev1.Pod {
	p := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: sel}}
	if terms != nil {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
	}
	return p
}

func nodeInfo(name string, labels map[string]string) *framework.NodeInfo {
	ni := framework.NewNodeInfo()
	ni.SetNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}})
	return ni
}

func newPlugin(t *testing.T, args *config.NodeAffinityArgs) *NodeAffinity {
	t.Helper()
	var obj runtime.Object // nil args: the plugin's defaults
	if args != nil {
		obj = args
	}
	p, err := New(context.Background(), obj, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p.(*NodeAffinity)
}

// Cases from upstream's TestNodeAffinity.
func TestFilter(t *testing.T) {
	unresolvable := framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonPod)
	zoneBar := &config.NodeAffinityArgs{AddedAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{exprTerm(req("zone", corev1.NodeSelectorOpIn, "bar"))}}}}
	cases := []struct {
		name            string
		pod             *corev1.Pod
		labels          map[string]string
		nodeName        string
		args            *config.NodeAffinityArgs
		skipPreFilter   bool
		wantPreStatus   *framework.Status
		wantPreResult   *framework.PreFilterResult
		wantFilterState *framework.Status
	}{
		{name: "missing labels", pod: requiredPod(map[string]string{"foo": "bar"}), wantFilterState: unresolvable},
		{name: "same labels", pod: requiredPod(map[string]string{"foo": "bar"}), labels: map[string]string{"foo": "bar"}},
		{name: "node labels are superset", pod: requiredPod(map[string]string{"foo": "bar"}), labels: map[string]string{"foo": "bar", "baz": "blah"}},
		{name: "node labels are subset", pod: requiredPod(map[string]string{"foo": "bar", "baz": "blah"}), labels: map[string]string{"foo": "bar"}, wantFilterState: unresolvable},
		{name: "In matches", pod: requiredPod(nil, exprTerm(req("foo", corev1.NodeSelectorOpIn, "bar", "value2"))), labels: map[string]string{"foo": "bar"}},
		{name: "Gt matches", pod: requiredPod(nil, exprTerm(req("kernel-version", corev1.NodeSelectorOpGt, "0204"))), labels: map[string]string{"kernel-version": "0206"}},
		{name: "NotIn matches", pod: requiredPod(nil, exprTerm(req("mem-type", corev1.NodeSelectorOpNotIn, "DDR", "DDR2"))), labels: map[string]string{"mem-type": "DDR3"}},
		{name: "Exists matches", pod: requiredPod(nil, exprTerm(req("GPU", corev1.NodeSelectorOpExists))), labels: map[string]string{"GPU": "NVIDIA-GRID-K1"}},
		{name: "In does not match", pod: requiredPod(nil, exprTerm(req("foo", corev1.NodeSelectorOpIn, "value1", "value2"))), labels: map[string]string{"foo": "bar"}, wantFilterState: unresolvable},
		{name: "empty matchExpressions match nothing", pod: requiredPod(nil, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{}}), labels: map[string]string{"foo": "bar"}, wantFilterState: unresolvable},
		{name: "no affinity: Skip", pod: &corev1.Pod{}, labels: map[string]string{"foo": "bar"}, wantPreStatus: framework.NewStatus(framework.Skip)},
		{name: "nil required node selector: Skip", pod: &corev1.Pod{Spec: corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}}}, wantPreStatus: framework.NewStatus(framework.Skip)},
		{name: "expressions ANDed match", pod: requiredPod(nil, exprTerm(req("GPU", corev1.NodeSelectorOpExists), req("GPU", corev1.NodeSelectorOpNotIn, "AMD", "INTER"))), labels: map[string]string{"GPU": "NVIDIA-GRID-K1"}},
		{name: "expressions ANDed do not match", pod: requiredPod(nil, exprTerm(req("GPU", corev1.NodeSelectorOpExists), req("GPU", corev1.NodeSelectorOpIn, "AMD", "INTER"))), labels: map[string]string{"GPU": "NVIDIA-GRID-K1"}, wantFilterState: unresolvable},
		{name: "terms ORed", pod: requiredPod(nil, exprTerm(req("foo", corev1.NodeSelectorOpIn, "bar", "value2")), exprTerm(req("diffkey", corev1.NodeSelectorOpIn, "wrong", "value2"))), labels: map[string]string{"foo": "bar"}},
		{name: "affinity and nodeSelector both satisfied", pod: requiredPod(map[string]string{"foo": "bar"}, exprTerm(req("foo", corev1.NodeSelectorOpExists))), labels: map[string]string{"foo": "bar"}},
		{name: "affinity satisfied, nodeSelector not", pod: requiredPod(map[string]string{"foo": "bar"}, exprTerm(req("foo", corev1.NodeSelectorOpExists))), labels: map[string]string{"foo": "barrrrrr"}, wantFilterState: unresolvable},
		{name: "invalid value never matches", pod: requiredPod(nil, exprTerm(req("foo", corev1.NodeSelectorOpNotIn, "invalid value: ___@#$%^"))), labels: map[string]string{"foo": "bar"}, wantFilterState: unresolvable},
		{name: "matchFields In matches", pod: requiredPod(nil, fieldTerm(req(metav1.ObjectNameField, corev1.NodeSelectorOpIn, "node1"))), nodeName: "node1",
			wantPreResult: &framework.PreFilterResult{NodeNames: sets.New("node1")}},
		{name: "matchFields In does not match", pod: requiredPod(nil, fieldTerm(req(metav1.ObjectNameField, corev1.NodeSelectorOpIn, "node1"))), nodeName: "node2",
			wantPreResult: &framework.PreFilterResult{NodeNames: sets.New("node1")}, wantFilterState: unresolvable},
		{name: "two terms: fields do not match, expressions do", nodeName: "node2", labels: map[string]string{"foo": "bar"},
			pod: requiredPod(nil, fieldTerm(req(metav1.ObjectNameField, corev1.NodeSelectorOpIn, "node1"), req(metav1.ObjectNameField, corev1.NodeSelectorOpIn, "node2")),
				exprTerm(req("foo", corev1.NodeSelectorOpIn, "bar")))},
		{name: "one term: fields do not match, expressions do", nodeName: "node2", labels: map[string]string{"foo": "bar"},
			pod: requiredPod(nil, corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{req(metav1.ObjectNameField, corev1.NodeSelectorOpIn, "node1")},
				MatchExpressions: []corev1.NodeSelectorRequirement{req("foo", corev1.NodeSelectorOpIn, "bar")}}),
			wantPreResult: &framework.PreFilterResult{NodeNames: sets.New("node1")}, wantFilterState: unresolvable},
		{name: "one term: both match", nodeName: "node1", labels: map[string]string{"foo": "bar"},
			pod: requiredPod(nil, corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{req(metav1.ObjectNameField, corev1.NodeSelectorOpIn, "node1")},
				MatchExpressions: []corev1.NodeSelectorRequirement{req("foo", corev1.NodeSelectorOpIn, "bar")}}),
			wantPreResult: &framework.PreFilterResult{NodeNames: sets.New("node1")}},
		{name: "two terms: both name nodes, union", nodeName: "node1", labels: map[string]string{"foo": "bar"},
			pod:           requiredPod(nil, fieldTerm(req(metav1.ObjectNameField, corev1.NodeSelectorOpIn, "node1")), fieldTerm(req(metav1.ObjectNameField, corev1.NodeSelectorOpIn, "node2"))),
			wantPreResult: &framework.PreFilterResult{NodeNames: sets.New("node1", "node2")}},
		{name: "one term: conflicting names", nodeName: "node1",
			pod:           requiredPod(nil, fieldTerm(req(metav1.ObjectNameField, corev1.NodeSelectorOpIn, "node1"), req(metav1.ObjectNameField, corev1.NodeSelectorOpIn, "node2"))),
			wantPreStatus: framework.NewStatus(framework.UnschedulableAndUnresolvable, errReasonConflict), wantFilterState: unresolvable},
		{name: "one term: names intersect", nodeName: "node2",
			pod:           requiredPod(nil, fieldTerm(req(metav1.ObjectNameField, corev1.NodeSelectorOpIn, "node1", "node2"), req(metav1.ObjectNameField, corev1.NodeSelectorOpIn, "node2", "node3"))),
			wantPreResult: &framework.PreFilterResult{NodeNames: sets.New("node2")}, wantFilterState: unresolvable},
		{name: "matches added affinity and pod's", pod: requiredPod(nil, exprTerm(req("zone", corev1.NodeSelectorOpIn, "bar"))), labels: map[string]string{"zone": "bar"}, args: zoneBar},
		{name: "matches added affinity but not pod's", pod: requiredPod(nil, exprTerm(req("zone", corev1.NodeSelectorOpIn, "foo"))), labels: map[string]string{"zone": "bar"}, args: zoneBar, wantFilterState: unresolvable},
		{name: "does not match added affinity", pod: &corev1.Pod{}, nodeName: "node2", labels: map[string]string{"zone": "foo"}, args: zoneBar,
			wantFilterState: framework.NewStatus(framework.UnschedulableAndUnresolvable, errReasonEnforced)},
		{name: "nodeSelector without PreFilter", pod: requiredPod(map[string]string{"foo": "bar"}), labels: map[string]string{"foo": "bar", "baz": "blah"}, skipPreFilter: true},
		{name: "affinity without PreFilter", pod: requiredPod(nil, exprTerm(req("GPU", corev1.NodeSelectorOpExists), req("GPU", corev1.NodeSelectorOpNotIn, "AMD", "INTER"))), labels: map[string]string{"GPU": "NVIDIA-GRID-K1"}, skipPreFilter: true},
		{name: "affinity mismatch without PreFilter", pod: requiredPod(nil, exprTerm(req("GPU", corev1.NodeSelectorOpDoesNotExist))), labels: map[string]string{"GPU": "x"}, skipPreFilter: true, wantFilterState: unresolvable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlugin(t, tc.args)
			state := framework.NewCycleState()
			if !tc.skipPreFilter {
				res, st := p.PreFilter(context.Background(), state, tc.pod, nil)
				if !st.Equal(tc.wantPreStatus) {
					t.Errorf("PreFilter status %v, want %v", st, tc.wantPreStatus)
				}
				if !reflect.DeepEqual(res, tc.wantPreResult) {
					t.Errorf("PreFilter result %v, want %v", res, tc.wantPreResult)
				}
			}
			if st := p.Filter(context.Background(), state, tc.pod, nodeInfo(tc.nodeName, tc.labels)); !st.Equal(tc.wantFilterState) {
				t.Errorf("Filter status %v, want %v", st, tc.wantFilterState)
			}
		})
	}
}

// Cases from upstream's TestNodeAffinityPriority.
func TestScore(t *testing.T) {
	label1 := map[string]string{"foo": "bar"}
	label2 := map[string]string{"key": "value"}
	label3 := map[string]string{"az": "az1"}
	label4 := map[string]string{"abc": "az11", "def": "az22"}
	label5 := map[string]string{"foo": "bar", "key": "value", "az": "az1"}
	affinity1 := &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
		{Weight: 2, Preference: exprTerm(req("foo", corev1.NodeSelectorOpIn, "bar"))}}}
	affinity2 := &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
		{Weight: 2, Preference: exprTerm(req("foo", corev1.NodeSelectorOpIn, "bar"))},
		{Weight: 4, Preference: exprTerm(req("key", corev1.NodeSelectorOpIn, "value"))},
		{Weight: 5, Preference: exprTerm(req("foo", corev1.NodeSelectorOpIn, "bar"), req("key", corev1.NodeSelectorOpIn, "value"), req("az", corev1.NodeSelectorOpIn, "az1"))},
	}}
	withAffinity := func(a *corev1.NodeAffinity) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: a}}}
	}
	type node struct {
		name   string
		labels map[string]string
	}
	cases := []struct {
		name         string
		pod          *corev1.Pod
		nodes        []node
		args         *config.NodeAffinityArgs
		skipPreScore bool
		wantSkip     bool
		want         []int64
	}{
		{name: "no affinity: Skip, all 0", pod: &corev1.Pod{}, nodes: []node{{"node1", label1}, {"node2", label2}, {"node3", label3}}, wantSkip: true, want: []int64{0, 0, 0}},
		{name: "no node matches", pod: withAffinity(affinity1), nodes: []node{{"node1", label4}, {"node2", label2}, {"node3", label3}}, want: []int64{0, 0, 0}},
		{name: "only node1 matches", pod: withAffinity(affinity1), nodes: []node{{"node1", label1}, {"node2", label2}, {"node3", label3}}, want: []int64{100, 0, 0}},
		{name: "different priorities", pod: withAffinity(affinity2), nodes: []node{{"node1", label1}, {"node5", label5}, {"node2", label2}}, want: []int64{18, 100, 36}},
		{name: "added affinity", pod: &corev1.Pod{}, nodes: []node{{"node1", label1}, {"node2", label2}}, args: &config.NodeAffinityArgs{AddedAffinity: affinity1}, want: []int64{100, 0}},
		{name: "added affinity and pod's", pod: withAffinity(affinity1), nodes: []node{{"node1", label1}, {"node2", label2}, {"node3", label5}},
			args: &config.NodeAffinityArgs{AddedAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
				{Weight: 3, Preference: exprTerm(req("key", corev1.NodeSelectorOpIn, "value"))}}}},
			want: []int64{40, 60, 100}},
		{name: "without PreScore", pod: withAffinity(affinity2), nodes: []node{{"node1", label1}, {"node5", label5}, {"node2", label2}}, skipPreScore: true, want: []int64{18, 100, 36}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlugin(t, tc.args)
			state := framework.NewCycleState()
			if !tc.skipPreScore {
				st := p.PreScore(context.Background(), state, tc.pod, nil)
				if st.IsSkip() != tc.wantSkip || (!st.IsSuccess() && !st.IsSkip()) {
					t.Fatalf("PreScore = %v, want skip=%v", st, tc.wantSkip)
				}
				if tc.wantSkip {
					state.Delete(preScoreStateKey)
				}
			}
			var scores framework.NodeScoreList
			for _, n := range tc.nodes {
				s, st := p.Score(context.Background(), state, tc.pod, nodeInfo(n.name, n.labels))
				if !st.IsSuccess() {
					t.Fatalf("Score: %v", st)
				}
				scores = append(scores, framework.NodeScore{Name: n.name, Score: s})
			}
			if st := p.NormalizeScore(context.Background(), state, tc.pod, scores); !st.IsSuccess() {
				t.Fatal(st)
			}
			for i, s := range scores {
				if s.Score != tc.want[i] {
					t.Errorf("%s: score %d, want %d", s.Name, s.Score, tc.want[i])
				}
			}
		})
	}
}

// Cases from upstream's Test_isSchedulableAfterNodeChange.
func TestIsSchedulableAfterNodeChange(t *testing.T) {
	pod := requiredPod(nil, exprTerm(req("foo", corev1.NodeSelectorOpIn, "bar")))
	n := func(labels map[string]string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels}}
	}
	enforced := &config.NodeAffinityArgs{AddedAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{exprTerm(req("foo", corev1.NodeSelectorOpIn, "bar"))}}}}
	cases := []struct {
		name           string
		args           *config.NodeAffinityArgs
		oldObj, newObj any
		want           framework.QueueingHint
		wantErr        bool
	}{
		{name: "wrong new object", newObj: "not-a-node", want: framework.Queue, wantErr: true},
		{name: "wrong old object", oldObj: "not-a-node", newObj: n(nil), want: framework.Queue, wantErr: true},
		{name: "skip on add", newObj: n(nil), want: framework.QueueSkip},
		{name: "queue on add", newObj: n(map[string]string{"foo": "bar"}), want: framework.Queue},
		{name: "skip unrelated changes", oldObj: n(nil), newObj: n(nil), want: framework.QueueSkip},
		{name: "skip unrelated label change", oldObj: n(nil), newObj: n(map[string]string{"k": "v"}), want: framework.QueueSkip},
		{name: "skip label change on a suitable node", oldObj: n(map[string]string{"foo": "bar"}), newObj: n(map[string]string{"foo": "bar", "k": "v"}), want: framework.QueueSkip},
		{name: "skip suitable to unsuitable", oldObj: n(map[string]string{"foo": "bar"}), newObj: n(map[string]string{"k": "v"}), want: framework.QueueSkip},
		{name: "queue unsuitable to suitable", oldObj: n(nil), newObj: n(map[string]string{"foo": "bar"}), want: framework.Queue},
		{name: "skip add not matching enforced affinity", args: enforced, newObj: n(nil), want: framework.QueueSkip},
		{name: "queue add matching enforced affinity", args: enforced, newObj: n(map[string]string{"foo": "bar"}), want: framework.Queue},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := newPlugin(t, tc.args).isSchedulableAfterNodeChange(nil, pod, tc.oldObj, tc.newObj)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("got %v, %v; want %v, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestNewRejectsBadArgs(t *testing.T) {
	bad := &config.NodeAffinityArgs{AddedAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{fieldTerm(req(metav1.ObjectNameField, corev1.NodeSelectorOpExists))}}}}
	if _, err := New(context.Background(), bad, nil); err == nil {
		t.Error("invalid addedAffinity: want an error")
	}
	if _, err := New(context.Background(), &config.InterPodAffinityArgs{}, nil); err == nil {
		t.Error("args of another plugin: want an error")
	}
}

func TestEventsToRegister(t *testing.T) {
	evs, err := newPlugin(t, nil).EventsToRegister(context.Background())
	if err != nil || len(evs) != 1 || evs[0].Event.Resource != framework.Node || evs[0].Event.ActionType != framework.Add|framework.UpdateNodeLabel {
		t.Errorf("EventsToRegister = %+v, %v", evs, err)
	}
}
