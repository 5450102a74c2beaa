package interpodaffinity

import (
	"context"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

func weighted(w int32, sel *metav1.LabelSelector, tk string) corev1.WeightedPodAffinityTerm {
	return corev1.WeightedPodAffinityTerm{Weight: w, PodAffinityTerm: corev1.PodAffinityTerm{LabelSelector: sel, TopologyKey: tk}}
}

func sel(reqs ...metav1.LabelSelectorRequirement) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: reqs}
}

func req(key string, op metav1.LabelSelectorOperator, values ...string) metav1.LabelSelectorRequirement {
	return metav1.LabelSelectorRequirement{Key: key, Operator: op, Values: values}
}

// runScore runs PreScore, Score on every node and NormalizeScore.
func runScore(t *testing.T, args *config.InterPodAffinityArgs, pod *corev1.Pod, pods []*corev1.Pod, nodes []*corev1.Node) (framework.NodeScoreList, *framework.Status) {
	t.Helper()
	pl, snap := newPlugin(t, args, pods, nodes, namespaces)
	state := framework.NewCycleState()
	nis := mustList(t, snap)
	if st := pl.PreScore(context.Background(), state, pod, nis); !st.IsSuccess() {
		return nil, st
	}
	var list framework.NodeScoreList
	for _, n := range nodes {
		s, st := pl.Score(context.Background(), state, pod, mustNodeInfo(t, snap, n.Name))
		if !st.IsSuccess() {
			t.Fatalf("Score: %v", st)
		}
		list = append(list, framework.NodeScore{Name: n.Name, Score: s})
	}
	if st := pl.ScoreExtensions().NormalizeScore(context.Background(), state, pod, list); !st.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", st)
	}
	return list, nil
}

// Upstream's TestPreferredAffinity cases.
func TestPreferredAffinity(t *testing.T) {
	labelRgChina := map[string]string{"region": "China"}
	labelRgIndia := map[string]string{"region": "India"}
	labelAzAz1 := map[string]string{"az": "az1"}
	labelAzAz2 := map[string]string{"az": "az2"}
	labelRgChinaAzAz1 := map[string]string{"region": "China", "az": "az1"}
	s1 := map[string]string{"security": "S1"}
	s2 := map[string]string{"security": "S2"}

	stayWithS1InRegion := &corev1.Affinity{PodAffinity: &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
		weighted(5, sel(req("security", metav1.LabelSelectorOpIn, "S1")), "region")}}}
	stayWithS2InRegion := &corev1.Affinity{PodAffinity: &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
		weighted(6, sel(req("security", metav1.LabelSelectorOpIn, "S2")), "region")}}}
	affinity3 := &corev1.Affinity{PodAffinity: &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
		weighted(8, sel(req("security", metav1.LabelSelectorOpNotIn, "S1"), req("security", metav1.LabelSelectorOpIn, "S2")), "region"),
		weighted(2, sel(req("security", metav1.LabelSelectorOpExists), req("wrongkey", metav1.LabelSelectorOpDoesNotExist)), "region"),
	}}}
	hardAffinity := &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
		{LabelSelector: sel(req("security", metav1.LabelSelectorOpIn, "S1", "value2")), TopologyKey: "region"},
		{LabelSelector: sel(req("security", metav1.LabelSelectorOpExists), req("wrongkey", metav1.LabelSelectorOpDoesNotExist)), TopologyKey: "region"},
	}}}
	awayFromS1InAz := &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
		weighted(5, sel(req("security", metav1.LabelSelectorOpIn, "S1")), "az")}}}
	awayFromS2InAz := &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
		weighted(5, sel(req("security", metav1.LabelSelectorOpIn, "S2")), "az")}}}
	stayWithS1InRegionAwayFromS2InAz := &corev1.Affinity{
		PodAffinity: &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
			weighted(8, sel(req("security", metav1.LabelSelectorOpIn, "S1")), "region")}},
		PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
			weighted(5, sel(req("security", metav1.LabelSelectorOpIn, "S2")), "az")}},
	}
	nsTerm := func() corev1.WeightedPodAffinityTerm {
		w := weighted(5, sel(req("security", metav1.LabelSelectorOpIn, "S1")), "region")
		w.PodAffinityTerm.Namespaces = []string{"subteam2.team2"}
		w.PodAffinityTerm.NamespaceSelector = sel(req("team", metav1.LabelSelectorOpIn, "team1"))
		return w
	}
	affinityNamespaceSelector := &corev1.Affinity{PodAffinity: &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{nsTerm()}}}
	antiAffinityNamespaceSelector := &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{nsTerm()}}}
	invalidAffinityLabels := &corev1.Affinity{PodAffinity: &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
		weighted(8, sel(req("security", metav1.LabelSelectorOpIn, "{{.bad-value.}}")), "region")}}}
	invalidAntiAffinityLabels := &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
		weighted(5, sel(req("security", metav1.LabelSelectorOpIn, "{{.bad-value.}}")), "az")}}}

	p := func(node, ns string, labels map[string]string, a *corev1.Affinity) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{NodeName: node, Affinity: a}, ObjectMeta: metav1.ObjectMeta{Namespace: ns, Labels: labels}}
	}
	n := mkNode
	const max = framework.MaxNodeScore
	type ns = framework.NodeScore

	tests := []struct {
		name                               string
		pod                                *corev1.Pod
		pods                               []*corev1.Pod
		nodes                              []*corev1.Node
		expectedList                       framework.NodeScoreList
		ignorePreferredTermsOfExistingPods bool
		wantStatus                         *framework.Status
	}{
		{
			name:       "all nodes are same priority as Affinity is nil",
			pod:        p("", "", s1, nil),
			nodes:      []*corev1.Node{n("node1", labelRgChina), n("node2", labelRgIndia), n("node3", labelAzAz1)},
			wantStatus: framework.NewStatus(framework.Skip),
		},
		{
			name:         "Affinity: pod that matches topology key & pods in nodes will get high score comparing to others which doesn't match either pods in nodes or in topology key",
			pod:          p("", "", s1, stayWithS1InRegion),
			pods:         []*corev1.Pod{p("node1", "", s1, nil), p("node2", "", s2, nil), p("node3", "", s1, nil)},
			nodes:        []*corev1.Node{n("node1", labelRgChina), n("node2", labelRgIndia), n("node3", labelAzAz1)},
			expectedList: []ns{{Name: "node1", Score: max}, {Name: "node2", Score: 0}, {Name: "node3", Score: 0}},
		},
		{
			name:         "All the nodes that have the same topology key & label value with one of them has an existing pod that match the affinity rules, have the same score",
			pod:          p("", "", nil, stayWithS1InRegion),
			pods:         []*corev1.Pod{p("node1", "", s1, nil)},
			nodes:        []*corev1.Node{n("node1", labelRgChina), n("node2", labelRgChinaAzAz1), n("node3", labelRgIndia)},
			expectedList: []ns{{Name: "node1", Score: max}, {Name: "node2", Score: max}, {Name: "node3", Score: 0}},
		},
		{
			name:         "Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more matches will get high score",
			pod:          p("", "", s1, stayWithS2InRegion),
			pods:         []*corev1.Pod{p("node1", "", s2, nil), p("node1", "", s2, nil), p("node2", "", s2, nil), p("node3", "", s2, nil), p("node4", "", s2, nil), p("node5", "", s2, nil)},
			nodes:        []*corev1.Node{n("node1", labelRgChina), n("node2", labelRgIndia), n("node3", labelRgChina), n("node4", labelRgChina), n("node5", labelRgIndia)},
			expectedList: []ns{{Name: "node1", Score: max}, {Name: "node2", Score: 0}, {Name: "node3", Score: max}, {Name: "node4", Score: max}, {Name: "node5", Score: 0}},
		},
		{
			name:         "Affinity: different Label operators and values for pod affinity scheduling preference, including some match failures ",
			pod:          p("", "", s1, affinity3),
			pods:         []*corev1.Pod{p("node1", "", s1, nil), p("node2", "", s2, nil), p("node3", "", s1, nil)},
			nodes:        []*corev1.Node{n("node1", labelRgChina), n("node2", labelRgIndia), n("node3", labelAzAz1)},
			expectedList: []ns{{Name: "node1", Score: 20}, {Name: "node2", Score: max}, {Name: "node3", Score: 0}},
		},
		{
			name:         "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
			pod:          p("", "", s2, nil),
			pods:         []*corev1.Pod{p("node1", "", s1, stayWithS1InRegion), p("node2", "", s2, stayWithS2InRegion)},
			nodes:        []*corev1.Node{n("node1", labelRgChina), n("node2", labelRgIndia), n("node3", labelAzAz1)},
			expectedList: []ns{{Name: "node1", Score: 0}, {Name: "node2", Score: max}, {Name: "node3", Score: 0}},
		},
		{
			name:         "Affinity symmetry with namespace selector",
			pod:          p("", "subteam1.team1", s1, nil),
			pods:         []*corev1.Pod{p("node1", "", s1, affinityNamespaceSelector), p("node2", "", s2, stayWithS2InRegion)},
			nodes:        []*corev1.Node{n("node1", labelRgChina), n("node2", labelRgIndia), n("node3", labelAzAz1)},
			expectedList: []ns{{Name: "node1", Score: max}, {Name: "node2", Score: 0}, {Name: "node3", Score: 0}},
		},
		{
			name:         "AntiAffinity symmetry with namespace selector",
			pod:          p("", "subteam1.team1", s1, nil),
			pods:         []*corev1.Pod{p("node1", "", s1, antiAffinityNamespaceSelector), p("node2", "", s2, stayWithS2InRegion)},
			nodes:        []*corev1.Node{n("node1", labelRgChina), n("node2", labelRgIndia), n("node3", labelAzAz1)},
			expectedList: []ns{{Name: "node1", Score: 0}, {Name: "node2", Score: max}, {Name: "node3", Score: max}},
		},
		{
			name:         "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
			pod:          p("", "", s1, nil),
			pods:         []*corev1.Pod{p("node1", "", s1, hardAffinity), p("node2", "", s2, hardAffinity)},
			nodes:        []*corev1.Node{n("node1", labelRgChina), n("node2", labelRgIndia), n("node3", labelAzAz1)},
			expectedList: []ns{{Name: "node1", Score: max}, {Name: "node2", Score: max}, {Name: "node3", Score: 0}},
		},
		{
			name:         "Anti Affinity: pod that does not match existing pods in node will get high score ",
			pod:          p("", "", s1, awayFromS1InAz),
			pods:         []*corev1.Pod{p("node1", "", s1, nil), p("node2", "", s2, nil)},
			nodes:        []*corev1.Node{n("node1", labelAzAz1), n("node2", labelRgChina)},
			expectedList: []ns{{Name: "node1", Score: 0}, {Name: "node2", Score: max}},
		},
		{
			name:         "Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing to others ",
			pod:          p("", "", s1, awayFromS1InAz),
			pods:         []*corev1.Pod{p("node1", "", s1, nil), p("node2", "", s1, nil)},
			nodes:        []*corev1.Node{n("node1", labelAzAz1), n("node2", labelRgChina)},
			expectedList: []ns{{Name: "node1", Score: 0}, {Name: "node2", Score: max}},
		},
		{
			name:         "Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches will get high score",
			pod:          p("", "", s1, awayFromS1InAz),
			pods:         []*corev1.Pod{p("node1", "", s1, nil), p("node1", "", s1, nil), p("node2", "", s2, nil)},
			nodes:        []*corev1.Node{n("node1", labelAzAz1), n("node2", labelRgIndia)},
			expectedList: []ns{{Name: "node1", Score: 0}, {Name: "node2", Score: max}},
		},
		{
			name:         "Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
			pod:          p("", "", s2, nil),
			pods:         []*corev1.Pod{p("node1", "", s1, awayFromS2InAz), p("node2", "", s2, awayFromS1InAz)},
			nodes:        []*corev1.Node{n("node1", labelAzAz1), n("node2", labelAzAz2)},
			expectedList: []ns{{Name: "node1", Score: 0}, {Name: "node2", Score: max}},
		},
		{
			name:         "Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity",
			pod:          p("", "", s1, stayWithS1InRegionAwayFromS2InAz),
			pods:         []*corev1.Pod{p("node1", "", s1, nil), p("node2", "", s1, nil)},
			nodes:        []*corev1.Node{n("node1", labelRgChina), n("node2", labelAzAz1)},
			expectedList: []ns{{Name: "node1", Score: max}, {Name: "node2", Score: 0}},
		},
		{
			name:         "Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods have the same labels",
			pod:          p("", "", s1, stayWithS1InRegionAwayFromS2InAz),
			pods:         []*corev1.Pod{p("node1", "", s1, nil), p("node1", "", s1, nil), p("node2", "", s1, nil), p("node3", "", s1, nil), p("node3", "", s1, nil), p("node4", "", s1, nil), p("node5", "", s1, nil)},
			nodes:        []*corev1.Node{n("node1", labelRgChinaAzAz1), n("node2", labelRgIndia), n("node3", labelRgChina), n("node4", labelRgChina), n("node5", labelRgIndia)},
			expectedList: []ns{{Name: "node1", Score: max}, {Name: "node2", Score: 0}, {Name: "node3", Score: max}, {Name: "node4", Score: max}, {Name: "node5", Score: 0}},
		},
		{
			name:         "Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & symmetry",
			pod:          p("", "", s1, stayWithS1InRegionAwayFromS2InAz),
			pods:         []*corev1.Pod{p("node1", "", s1, nil), p("node2", "", s2, nil), p("node3", "", nil, stayWithS1InRegionAwayFromS2InAz), p("node4", "", nil, awayFromS1InAz)},
			nodes:        []*corev1.Node{n("node1", labelRgChina), n("node2", labelAzAz1), n("node3", labelRgIndia), n("node4", labelAzAz2)},
			expectedList: []ns{{Name: "node1", Score: max}, {Name: "node2", Score: 0}, {Name: "node3", Score: max}, {Name: "node4", Score: 0}},
		},
		{
			name:         "Avoid panic when partial nodes in a topology don't have pods with affinity",
			pod:          p("", "", s1, nil),
			pods:         []*corev1.Pod{p("node1", "", s1, nil), p("node2", "", nil, stayWithS1InRegionAwayFromS2InAz)},
			nodes:        []*corev1.Node{n("node1", labelRgChina), n("node2", labelRgChina)},
			expectedList: []ns{{Name: "node1", Score: 0}, {Name: "node2", Score: 0}},
		},
		{
			name:       "invalid Affinity fails PreScore",
			pod:        p("", "", nil, invalidAffinityLabels),
			nodes:      []*corev1.Node{n("node1", labelRgChina), n("node2", labelRgChina)},
			wantStatus: framework.NewStatus(framework.Error, `Invalid value: "{{.bad-value.}}"`),
		},
		{
			name:       "invalid AntiAffinity fails PreScore",
			pod:        p("", "", nil, invalidAntiAffinityLabels),
			nodes:      []*corev1.Node{n("node1", labelRgChina), n("node2", labelRgChina)},
			wantStatus: framework.NewStatus(framework.Error, `Invalid value: "{{.bad-value.}}"`),
		},
		{
			name:         "Affinity with pods matching NamespaceSelector",
			pod:          p("", "subteam1.team1", s1, affinityNamespaceSelector),
			pods:         []*corev1.Pod{p("node1", "subteam1.team1", s1, nil), p("node1", "subteam1.team1", s1, nil), p("node1", "subteam1.team2", s1, nil), p("node2", "subteam2.team1", s1, nil)},
			nodes:        []*corev1.Node{n("node1", labelRgChina), n("node2", labelRgIndia)},
			expectedList: []ns{{Name: "node1", Score: max}, {Name: "node2", Score: 0}},
		},
		{
			name:         "Affinity with pods matching both NamespaceSelector and Namespaces fields",
			pod:          p("", "subteam1.team1", s1, affinityNamespaceSelector),
			pods:         []*corev1.Pod{p("node1", "subteam1.team1", s1, nil), p("node1", "subteam1.team1", s1, nil), p("node1", "subteam2.team2", s1, nil), p("node2", "subteam2.team1", s1, nil)},
			nodes:        []*corev1.Node{n("node1", labelRgChina), n("node2", labelRgIndia)},
			expectedList: []ns{{Name: "node1", Score: max}, {Name: "node2", Score: 0}},
		},
		{
			name:         "Anti-affinity with pods matching NamespaceSelector",
			pod:          p("", "subteam1.team1", s1, antiAffinityNamespaceSelector),
			pods:         []*corev1.Pod{p("node1", "subteam1.team1", s1, nil), p("node1", "subteam1.team1", s1, nil), p("node1", "subteam1.team2", s1, nil), p("node2", "subteam2.team1", s1, nil)},
			nodes:        []*corev1.Node{n("node1", labelRgChina), n("node2", labelRgIndia)},
			expectedList: []ns{{Name: "node1", Score: 0}, {Name: "node2", Score: max}},
		},
		{
			name:         "Anti-affinity with pods matching both NamespaceSelector and Namespaces fields",
			pod:          p("", "subteam1.team1", s1, antiAffinityNamespaceSelector),
			pods:         []*corev1.Pod{p("node1", "subteam1.team1", s1, nil), p("node1", "subteam1.team1", s1, nil), p("node1", "subteam2.team2", s1, nil), p("node2", "subteam2.team1", s1, nil)},
			nodes:        []*corev1.Node{n("node1", labelRgChina), n("node2", labelRgIndia)},
			expectedList: []ns{{Name: "node1", Score: 0}, {Name: "node2", Score: max}},
		},
		{
			name:                               "Ignore preferred terms of existing pods",
			pod:                                p("", "", s2, nil),
			pods:                               []*corev1.Pod{p("node1", "", s1, stayWithS1InRegionAwayFromS2InAz), p("node2", "", s2, stayWithS2InRegion)},
			nodes:                              []*corev1.Node{n("node1", labelRgChina), n("node2", labelRgIndia)},
			wantStatus:                         framework.NewStatus(framework.Skip),
			ignorePreferredTermsOfExistingPods: true,
		},
		{
			name:         "Do not ignore preferred terms of existing pods",
			pod:          p("", "", s2, nil),
			pods:         []*corev1.Pod{p("node1", "", s1, stayWithS1InRegionAwayFromS2InAz), p("node2", "", s2, stayWithS2InRegion)},
			nodes:        []*corev1.Node{n("node1", labelRgChina), n("node2", labelRgIndia)},
			expectedList: []ns{{Name: "node1", Score: 0}, {Name: "node2", Score: max}},
		},
		{
			name:       "No nodes to score",
			pod:        p("", "", s2, nil),
			wantStatus: framework.NewStatus(framework.Skip),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := int32(1)
			args := &config.InterPodAffinityArgs{HardPodAffinityWeight: &w, IgnorePreferredTermsOfExistingPods: tc.ignorePreferredTermsOfExistingPods}
			got, st := runScore(t, args, tc.pod, tc.pods, tc.nodes)
			if tc.wantStatus != nil || st != nil {
				if st.Code() != tc.wantStatus.Code() || !strings.Contains(st.Message(), tc.wantStatus.Message()) {
					t.Fatalf("PreScore status %v, want %v", st, tc.wantStatus)
				}
				return
			}
			if !reflect.DeepEqual(got, tc.expectedList) {
				t.Errorf("scores %v, want %v", got, tc.expectedList)
			}
		})
	}
}

// Upstream's TestPreferredAffinityWithHardPodAffinitySymmetricWeight.
func TestPreferredAffinityWithHardPodAffinitySymmetricWeight(t *testing.T) {
	podLabelServiceS1 := map[string]string{"service": "S1"}
	labelRgChina := map[string]string{"region": "China"}
	labelRgIndia := map[string]string{"region": "India"}
	labelAzAz1 := map[string]string{"az": "az1"}
	hardPodAffinity := &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
		LabelSelector:     sel(req("service", metav1.LabelSelectorOpIn, "S1")),
		Namespaces:        []string{"", "subteam2.team2"},
		NamespaceSelector: sel(req("team", metav1.LabelSelectorOpIn, "team1")),
		TopologyKey:       "region",
	}}}}
	pods := []*corev1.Pod{
		{Spec: corev1.PodSpec{NodeName: "node1", Affinity: hardPodAffinity}},
		{Spec: corev1.PodSpec{NodeName: "node2", Affinity: hardPodAffinity}},
	}
	nodes := []*corev1.Node{mkNode("node1", labelRgChina), mkNode("node2", labelRgIndia), mkNode("node3", labelAzAz1)}
	both := framework.NodeScoreList{{Name: "node1", Score: framework.MaxNodeScore}, {Name: "node2", Score: framework.MaxNodeScore}, {Name: "node3", Score: 0}}
	tests := []struct {
		name       string
		namespace  string
		weight     int32
		want       framework.NodeScoreList
		wantStatus *framework.Status
	}{
		{name: "with default weight", weight: 1, want: both},
		{name: "with zero weight", weight: 0, wantStatus: framework.NewStatus(framework.Skip)},
		{name: "with no matching namespace", namespace: "subteam1.team2", weight: 1, wantStatus: framework.NewStatus(framework.Skip)},
		{name: "with matching NamespaceSelector", namespace: "subteam1.team1", weight: 1, want: both},
		{name: "with matching Namespaces", namespace: "subteam2.team2", weight: 1, want: both},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: tc.namespace, Labels: podLabelServiceS1}}
			w := tc.weight
			got, st := runScore(t, &config.InterPodAffinityArgs{HardPodAffinityWeight: &w}, pod, pods, nodes)
			if !st.Equal(tc.wantStatus) {
				t.Fatalf("PreScore status %v, want %v", st, tc.wantStatus)
			}
			if st == nil && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("scores %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNormalizeScore(t *testing.T) {
	state := framework.NewCycleState()
	state.Write(preScoreStateKey, &preScoreState{topologyScore: scoreMap{"zone": {"a": 1}}})
	pl := &InterPodAffinity{}
	tests := []struct {
		in, want []int64
	}{
		{[]int64{-5, 0, 5}, []int64{0, 50, 100}},
		{[]int64{3, 3, 3}, []int64{0, 0, 0}},
		{[]int64{-7, -1, -4}, []int64{0, 100, 50}},
		{[]int64{0, 1, 2}, []int64{0, 50, 100}},
		{[]int64{0, 1, 3}, []int64{0, 33, 100}},
	}
	for _, tc := range tests {
		list := make(framework.NodeScoreList, len(tc.in))
		for i, s := range tc.in {
			list[i].Score = s
		}
		if st := pl.NormalizeScore(context.Background(), state, nil, list); !st.IsSuccess() {
			t.Fatal(st)
		}
		for i := range list {
			if list[i].Score != tc.want[i] {
				t.Errorf("%v → %v, want %v", tc.in, list, tc.want)
				break
			}
		}
	}
}
