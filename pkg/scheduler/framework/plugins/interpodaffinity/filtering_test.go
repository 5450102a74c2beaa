package interpodaffinity

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

const defaultNamespace = ""

func statusEq(t *testing.T, what string, got, want *framework.Status) {
	t.Helper()
	if !got.Equal(want) {
		t.Errorf("%s: status %v, want %v", what, got, want)
	}
}

// Upstream's TestRequiredAffinitySingleNode cases.
func TestRequiredAffinitySingleNode(t *testing.T) {
	podLabel := map[string]string{"service": "securityscan"}
	pod := mkPod().Labels(podLabel).Node("node1").Obj()
	labels1 := map[string]string{"region": "r1", "zone": "z11"}
	podLabel2 := map[string]string{"security": "S1"}
	node1 := mkNode("node1", labels1)
	inTeam1 := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"team1"}}}}
	svcIn := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "service", Operator: metav1.LabelSelectorOpIn, Values: []string{"securityscan", "value2"}}}}

	tests := []struct {
		name                string
		pod                 *corev1.Pod
		pods                []*corev1.Pod
		wantPreFilterStatus *framework.Status
		wantFilterStatus    *framework.Status
	}{
		{
			name:                "A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
			pod:                 new(corev1.Pod),
			wantPreFilterStatus: framework.NewStatus(framework.Skip),
		},
		{
			name: "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the existing pod",
			pod:  mkPod().Namespace(defaultNamespace).Labels(podLabel2).PodAffinityIn("service", "region", []string{"securityscan", "value2"}, required).Obj(),
			pods: []*corev1.Pod{pod},
		},
		{
			name: "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in labelSelector that matches the existing pod",
			pod:  mkPod().Namespace(defaultNamespace).Labels(podLabel2).PodAffinityNotIn("service", "region", []string{"securityscan3", "value3"}, required).Obj(),
			pods: []*corev1.Pod{pod},
		},
		{
			name: "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
			pod: createPodWithAffinityTerms(defaultNamespace, "", podLabel2,
				[]corev1.PodAffinityTerm{{LabelSelector: svcIn, Namespaces: []string{"DiffNameSpace"}}}, nil),
			pods:             []*corev1.Pod{mkPod().Namespace("ns").Label("service", "securityscan").Node("node1").Obj()},
			wantFilterStatus: framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch),
		},
		{
			name:             "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
			pod:              mkPod().Namespace(defaultNamespace).Labels(podLabel).PodAffinityIn("service", "", []string{"antivirusscan", "value2"}, required).Obj(),
			pods:             []*corev1.Pod{pod},
			wantFilterStatus: framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch),
		},
		{
			name: "satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution ",
			pod: createPodWithAffinityTerms(defaultNamespace, "", podLabel2, []corev1.PodAffinityTerm{
				{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "service", Operator: metav1.LabelSelectorOpExists}, {Key: "wrongkey", Operator: metav1.LabelSelectorOpDoesNotExist}}}, TopologyKey: "region"},
				{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "service", Operator: metav1.LabelSelectorOpIn, Values: []string{"securityscan"}}, {Key: "service", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"WrongValue"}}}}, TopologyKey: "region"},
			}, nil),
			pods: []*corev1.Pod{pod},
		},
		{
			name: "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node because one of the matchExpression item don't match.",
			pod: createPodWithAffinityTerms(defaultNamespace, "", podLabel2, []corev1.PodAffinityTerm{
				{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "service", Operator: metav1.LabelSelectorOpExists}, {Key: "wrongkey", Operator: metav1.LabelSelectorOpDoesNotExist}}}, TopologyKey: "region"},
				{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "service", Operator: metav1.LabelSelectorOpIn, Values: []string{"securityscan2"}}, {Key: "service", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"WrongValue"}}}}, TopologyKey: "region"},
			}, nil),
			pods:             []*corev1.Pod{pod},
			wantFilterStatus: framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch),
		},
		{
			name: "satisfies the PodAffinity and PodAntiAffinity with the existing pod",
			pod: mkPod().Namespace(defaultNamespace).Labels(podLabel2).
				PodAffinityIn("service", "region", []string{"securityscan", "value2"}, required).
				PodAntiAffinityIn("service", "node", []string{"antivirusscan", "value2"}, required).Obj(),
			pods: []*corev1.Pod{pod},
		},
		{
			name: "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
			pod: mkPod().Namespace(defaultNamespace).Labels(podLabel2).
				PodAffinityIn("service", "region", []string{"securityscan", "value2"}, required).
				PodAntiAffinityIn("service", "node", []string{"antivirusscan", "value2"}, required).Obj(),
			pods: []*corev1.Pod{mkPod().Namespace(defaultNamespace).Node("node1").Labels(podLabel).
				PodAntiAffinityIn("service", "node", []string{"antivirusscan", "value2"}, required).Obj()},
		},
		{
			name: "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
			pod: mkPod().Namespace(defaultNamespace).Labels(podLabel2).
				PodAffinityIn("service", "region", []string{"securityscan", "value2"}, required).
				PodAntiAffinityIn("service", "zone", []string{"securityscan", "value2"}, required).Obj(),
			pods:             []*corev1.Pod{pod},
			wantFilterStatus: framework.NewStatus(framework.Unschedulable, ErrReasonAntiAffinityRulesNotMatch),
		},
		{
			name: "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
			pod: mkPod().Namespace(defaultNamespace).Labels(podLabel).
				PodAffinityIn("service", "region", []string{"securityscan", "value2"}, required).
				PodAntiAffinityIn("service", "node", []string{"antivirusscan", "value2"}, required).Obj(),
			pods: []*corev1.Pod{mkPod().Namespace(defaultNamespace).Labels(podLabel).Node("node1").
				PodAntiAffinityIn("service", "zone", []string{"securityscan", "value2"}, required).Obj()},
			wantFilterStatus: framework.NewStatus(framework.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch),
		},
		{
			name: "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
			pod: mkPod().Namespace(defaultNamespace).Labels(podLabel).
				PodAffinityNotIn("service", "region", []string{"securityscan", "value2"}, required).Obj(),
			pods:             []*corev1.Pod{mkPod().Label("service", "securityscan").Node("node2").Obj()},
			wantFilterStatus: framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch),
		},
		{
			name: "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
			pod:  mkPod().Labels(podLabel).Obj(),
			pods: []*corev1.Pod{mkPod().Namespace(defaultNamespace).Node("node1").Labels(podLabel).
				PodAntiAffinityIn("service", "zone", []string{"securityscan", "value2"}, required).Obj()},
			wantFilterStatus: framework.NewStatus(framework.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch),
		},
		{
			name: "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod",
			pod:  mkPod().Labels(podLabel).Obj(),
			pods: []*corev1.Pod{mkPod().Namespace(defaultNamespace).Node("node1").Labels(podLabel).
				PodAntiAffinityNotIn("service", "zone", []string{"securityscan", "value2"}, required).Obj()},
			wantPreFilterStatus: framework.NewStatus(framework.Skip),
		},
		{
			name: "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
			pod: mkPod().Namespace(defaultNamespace).Labels(podLabel).
				PodAntiAffinityExists("service", "region", required).
				PodAntiAffinityExists("security", "region", required).Obj(),
			pods: []*corev1.Pod{mkPod().Namespace(defaultNamespace).Node("node1").Labels(podLabel2).
				PodAntiAffinityExists("security", "zone", required).Obj()},
			wantFilterStatus: framework.NewStatus(framework.Unschedulable, ErrReasonAntiAffinityRulesNotMatch),
		},
		{
			name: "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
			pod: mkPod().Namespace(defaultNamespace).Labels(podLabel).
				PodAntiAffinityExists("service", "zone", required).
				PodAntiAffinityExists("security", "zone", required).Obj(),
			pods: []*corev1.Pod{mkPod().Namespace(defaultNamespace).Node("node1").Labels(podLabel2).
				PodAntiAffinityExists("security", "zone", required).Obj()},
			wantFilterStatus: framework.NewStatus(framework.Unschedulable, ErrReasonAntiAffinityRulesNotMatch),
		},
		{
			name: "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
			pod: mkPod().Namespace(defaultNamespace).Labels(podLabel2).
				PodAntiAffinityExists("security", "zone", required).Obj(),
			pods: []*corev1.Pod{mkPod().Namespace(defaultNamespace).Node("node1").Labels(podLabel).
				PodAntiAffinityExists("service", "zone", required).
				PodAntiAffinityExists("security", "zone", required).Obj()},
			wantFilterStatus: framework.NewStatus(framework.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch),
		},
		{
			name: "PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
			pod: mkPod().Namespace(defaultNamespace).Labels(map[string]string{"abc": "", "xyz": ""}).
				PodAntiAffinityExists("abc", "zone", required).
				PodAntiAffinityExists("def", "zone", required).Obj(),
			pods: []*corev1.Pod{mkPod().Namespace(defaultNamespace).Node("node1").Labels(map[string]string{"def": "", "xyz": ""}).
				PodAntiAffinityExists("abc", "zone", required).
				PodAntiAffinityExists("def", "zone", required).Obj()},
			wantFilterStatus: framework.NewStatus(framework.Unschedulable, ErrReasonAntiAffinityRulesNotMatch),
		},
		{
			name: "PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
			pod: mkPod().Namespace(defaultNamespace).Labels(map[string]string{"def": "", "xyz": ""}).
				PodAntiAffinityExists("abc", "zone", required).
				PodAntiAffinityExists("def", "zone", required).Obj(),
			pods: []*corev1.Pod{mkPod().Namespace(defaultNamespace).Node("node1").Labels(map[string]string{"abc": "", "xyz": ""}).
				PodAntiAffinityExists("abc", "zone", required).
				PodAntiAffinityExists("def", "zone", required).Obj()},
			wantFilterStatus: framework.NewStatus(framework.Unschedulable, ErrReasonAntiAffinityRulesNotMatch),
		},
		{
			name: "PodAffinity fails PreFilter with an invalid affinity label syntax",
			pod: mkPod().Namespace(defaultNamespace).Labels(podLabel).
				PodAffinityIn("service", "region", []string{"{{.bad-value.}}"}, required).
				PodAffinityIn("service", "node", []string{"antivirusscan", "value2"}, required).Obj(),
			wantPreFilterStatus: framework.NewStatus(framework.UnschedulableAndUnresolvable,
				`parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: "{{.bad-value.}}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`),
		},
		{
			name: "PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
			pod: mkPod().Namespace(defaultNamespace).Labels(podLabel).
				PodAffinityIn("service", "region", []string{"foo"}, required).
				PodAffinityIn("service", "node", []string{"{{.bad-value.}}"}, required).Obj(),
			wantPreFilterStatus: framework.NewStatus(framework.UnschedulableAndUnresolvable,
				`parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: "{{.bad-value.}}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`),
		},
		{
			name: "affinity with NamespaceSelector",
			pod: createPodWithAffinityTerms(defaultNamespace, "", podLabel2,
				[]corev1.PodAffinityTerm{{LabelSelector: svcIn, NamespaceSelector: inTeam1, TopologyKey: "region"}}, nil),
			pods: []*corev1.Pod{{Spec: corev1.PodSpec{NodeName: "node1"}, ObjectMeta: metav1.ObjectMeta{Namespace: "subteam1.team1", Labels: podLabel}}},
		},
		{
			name: "affinity with non-matching NamespaceSelector",
			pod: createPodWithAffinityTerms(defaultNamespace, "", podLabel2,
				[]corev1.PodAffinityTerm{{LabelSelector: svcIn, NamespaceSelector: inTeam1, TopologyKey: "region"}}, nil),
			pods:             []*corev1.Pod{{Spec: corev1.PodSpec{NodeName: "node1"}, ObjectMeta: metav1.ObjectMeta{Namespace: "subteam1.team2", Labels: podLabel}}},
			wantFilterStatus: framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch),
		},
		{
			name: "anti-affinity with matching NamespaceSelector",
			pod: createPodWithAffinityTerms("subteam1.team1", "", podLabel2, nil,
				[]corev1.PodAffinityTerm{{LabelSelector: svcIn, NamespaceSelector: inTeam1, TopologyKey: "zone"}}),
			pods:             []*corev1.Pod{{Spec: corev1.PodSpec{NodeName: "node1"}, ObjectMeta: metav1.ObjectMeta{Namespace: "subteam2.team1", Labels: podLabel}}},
			wantFilterStatus: framework.NewStatus(framework.Unschedulable, ErrReasonAntiAffinityRulesNotMatch),
		},
		{
			name: "anti-affinity with matching all NamespaceSelector",
			pod: createPodWithAffinityTerms("subteam1.team1", "", podLabel2, nil,
				[]corev1.PodAffinityTerm{{LabelSelector: svcIn, NamespaceSelector: &metav1.LabelSelector{}, TopologyKey: "zone"}}),
			pods:             []*corev1.Pod{{Spec: corev1.PodSpec{NodeName: "node1"}, ObjectMeta: metav1.ObjectMeta{Namespace: "subteam2.team1", Labels: podLabel}}},
			wantFilterStatus: framework.NewStatus(framework.Unschedulable, ErrReasonAntiAffinityRulesNotMatch),
		},
		{
			name: "anti-affinity with non-matching NamespaceSelector",
			pod: createPodWithAffinityTerms("subteam1.team1", "", podLabel2, nil,
				[]corev1.PodAffinityTerm{{LabelSelector: svcIn, NamespaceSelector: inTeam1, TopologyKey: "zone"}}),
			pods: []*corev1.Pod{{Spec: corev1.PodSpec{NodeName: "node1"}, ObjectMeta: metav1.ObjectMeta{Namespace: "subteam1.team2", Labels: podLabel}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl, snap := newPlugin(t, nil, tc.pods, []*corev1.Node{node1}, namespaces)
			state := framework.NewCycleState()
			_, st := pl.PreFilter(context.Background(), state, tc.pod, mustList(t, snap))
			statusEq(t, "PreFilter", st, tc.wantPreFilterStatus)
			if !st.IsSuccess() {
				return
			}
			statusEq(t, "Filter", pl.Filter(context.Background(), state, tc.pod, mustNodeInfo(t, snap, "node1")), tc.wantFilterStatus)
		})
	}
}

func mustList(t *testing.T, l interface {
	NodeInfos() framework.NodeInfoLister
}) []*framework.NodeInfo {
	t.Helper()
	nis, err := l.NodeInfos().List()
	if err != nil {
		t.Fatal(err)
	}
	return nis
}

// Upstream's TestRequiredAffinityMultipleNodes cases.
func TestRequiredAffinityMultipleNodes(t *testing.T) {
	podLabelA := map[string]string{"foo": "bar"}
	labelRgChina := map[string]string{"region": "China"}
	labelRgChinaAzAz1 := map[string]string{"region": "China", "az": "az1"}
	labelRgIndia := map[string]string{"region": "India"}
	hostLabels := func(region, zone, host string) map[string]string {
		return map[string]string{"region": region, "zone": zone, "hostname": host}
	}
	aff := framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch)
	anti := framework.NewStatus(framework.Unschedulable, ErrReasonAntiAffinityRulesNotMatch)
	existing := framework.NewStatus(framework.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch)

	tests := []struct {
		name                string
		pod                 *corev1.Pod
		pods                []*corev1.Pod
		nodes               []*corev1.Node
		wantFilterStatuses  []*framework.Status
		wantPreFilterStatus *framework.Status
	}{
		{
			name: "A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has an existing pod that matches the affinity rules",
			pod:  mkPod().Namespace(defaultNamespace).PodAffinityIn("foo", "region", []string{"bar"}, required).Obj(),
			pods: []*corev1.Pod{mkPod().Name("p1").Node("node1").Labels(podLabelA).Obj()},
			nodes: []*corev1.Node{
				mkNode("node1", labelRgChina), mkNode("node2", labelRgChinaAzAz1), mkNode("node3", labelRgIndia),
			},
			wantFilterStatuses: []*framework.Status{nil, nil, aff},
		},
		{
			name: "The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the collection " +
				"should not be blocked from being scheduled onto any node, even there's no existing pod that matches the rule anywhere.",
			pod: mkPod().Namespace(defaultNamespace).Labels(map[string]string{"foo": "bar", "service": "securityscan"}).
				PodAffinityIn("foo", "zone", []string{"bar"}, required).
				PodAffinityIn("service", "zone", []string{"securityscan"}, required).Obj(),
			pods: []*corev1.Pod{mkPod().Name("p1").Node("nodeA").Labels(map[string]string{"foo": "bar"}).Obj()},
			nodes: []*corev1.Node{
				mkNode("nodeA", map[string]string{"zone": "az1", "hostname": "h1"}),
				mkNode("nodeB", map[string]string{"zone": "az2", "hostname": "h2"}),
			},
			wantFilterStatuses: []*framework.Status{nil, nil},
		},
		{
			name: "The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
			pod: mkPod().Namespace(defaultNamespace).Labels(map[string]string{"foo": "bar", "service": "securityscan"}).
				PodAffinityIn("foo", "zone", []string{"bar"}, required).
				PodAffinityIn("service", "zone", []string{"securityscan"}, required).Obj(),
			pods: []*corev1.Pod{mkPod().Name("p1").Node("nodeA").Labels(map[string]string{"foo": "bar"}).Obj()},
			nodes: []*corev1.Node{
				mkNode("nodeA", map[string]string{"zoneLabel": "az1", "hostname": "h1"}),
				mkNode("nodeB", map[string]string{"zoneLabel": "az2", "hostname": "h2"}),
			},
			wantFilterStatuses: []*framework.Status{aff, aff},
		},
		{
			name: "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
			pod:  mkPod().Namespace(defaultNamespace).PodAntiAffinityIn("foo", "region", []string{"abc"}, required).Obj(),
			pods: []*corev1.Pod{mkPod().Node("nodeA").Labels(map[string]string{"foo": "abc"}).Obj()},
			nodes: []*corev1.Node{
				mkNode("nodeA", map[string]string{"region": "r1", "hostname": "nodeA"}),
				mkNode("nodeB", map[string]string{"region": "r1", "hostname": "nodeB"}),
			},
			wantFilterStatuses: []*framework.Status{anti, anti},
		},
		{
			name: "This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
			pod: mkPod().Namespace(defaultNamespace).PodAntiAffinityIn("foo", "region", []string{"abc"}, required).
				PodAntiAffinityIn("service", "zone", []string{"securityscan"}, required).Obj(),
			pods: []*corev1.Pod{mkPod().Node("nodeA").Labels(map[string]string{"foo": "abc", "service": "securityscan"}).Obj()},
			nodes: []*corev1.Node{
				mkNode("nodeA", hostLabels("r1", "z1", "nodeA")), mkNode("nodeB", hostLabels("r1", "z2", "nodeB")),
			},
			wantFilterStatuses: []*framework.Status{anti, anti},
		},
		{
			name: "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
			pod:  mkPod().Namespace(defaultNamespace).PodAntiAffinityIn("foo", "region", []string{"abc"}, required).Obj(),
			pods: []*corev1.Pod{mkPod().Node("nodeA").Labels(map[string]string{"foo": "abc"}).Obj()},
			nodes: []*corev1.Node{
				mkNode("nodeA", labelRgChina), mkNode("nodeB", labelRgChinaAzAz1), mkNode("nodeC", labelRgIndia),
			},
			wantFilterStatuses: []*framework.Status{anti, anti, nil},
		},
		{
			name: "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod affinity rule but in different namespace)",
			pod:  mkPod().Namespace("NS1").Labels(map[string]string{"foo": "123"}).PodAntiAffinityIn("foo", "region", []string{"bar"}, required).Obj(),
			pods: []*corev1.Pod{
				mkPod().Node("nodeA").Namespace("NS1").Labels(map[string]string{"foo": "bar"}).Obj(),
				mkPod().Node("nodeC").Namespace("NS2").PodAntiAffinityIn("foo", "region", []string{"123"}, required).Obj(),
			},
			nodes: []*corev1.Node{
				mkNode("nodeA", labelRgChina), mkNode("nodeB", labelRgChinaAzAz1), mkNode("nodeC", labelRgIndia),
			},
			wantFilterStatuses: []*framework.Status{anti, anti, nil},
		},
		{
			name: "Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the term is also checked",
			pod:  mkPod().Label("foo", "").Obj(),
			pods: []*corev1.Pod{mkPod().Node("nodeA").Namespace(defaultNamespace).PodAntiAffinityExists("foo", "invalid-node-label", required).Obj()},
			nodes: []*corev1.Node{
				mkNode("nodeA", hostLabels("r1", "z1", "nodeA")), mkNode("nodeB", hostLabels("r1", "z1", "nodeB")),
			},
			wantPreFilterStatus: framework.NewStatus(framework.Skip),
		},
		{
			name: "Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
			pod:  mkPod().Node("nodeA").Namespace(defaultNamespace).PodAntiAffinityExists("foo", "invalid-node-label", required).Obj(),
			pods: []*corev1.Pod{mkPod().Node("nodeA").Labels(map[string]string{"foo": ""}).Obj()},
			nodes: []*corev1.Node{
				mkNode("nodeA", hostLabels("r1", "z1", "nodeA")), mkNode("nodeB", hostLabels("r1", "z1", "nodeB")),
			},
			wantFilterStatuses: []*framework.Status{nil, nil},
		},
		{
			name: "Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's terms on all nodes",
			pod:  mkPod().Label("foo", "").Label("bar", "").Obj(),
			pods: []*corev1.Pod{
				mkPod().Node("nodeA").Namespace(defaultNamespace).PodAntiAffinityExists("foo", "zone", required).Obj(),
				mkPod().Node("nodeA").Namespace(defaultNamespace).PodAntiAffinityExists("bar", "region", required).Obj(),
			},
			nodes: []*corev1.Node{
				mkNode("nodeA", hostLabels("r1", "z1", "nodeA")), mkNode("nodeB", hostLabels("r1", "z2", "nodeB")),
			},
			wantFilterStatuses: []*framework.Status{existing, existing},
		},
		{
			name: "Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one anti-affinity rule of existingPod",
			pod: mkPod().Namespace(defaultNamespace).PodAntiAffinityExists("foo", "zone", required).
				PodAntiAffinityExists("bar", "region", required).Obj(),
			pods: []*corev1.Pod{
				mkPod().Node("nodeA").Labels(map[string]string{"foo": ""}).Obj(),
				mkPod().Node("nodeB").Labels(map[string]string{"bar": ""}).Obj(),
			},
			nodes: []*corev1.Node{
				mkNode("nodeA", hostLabels("r1", "z1", "nodeA")), mkNode("nodeB", hostLabels("r1", "z2", "nodeB")),
			},
			wantFilterStatuses: []*framework.Status{anti, anti},
		},
		{
			name: "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
			pod:  mkPod().Label("foo", "").Label("bar", "").Obj(),
			pods: []*corev1.Pod{mkPod().Node("nodeA").Namespace(defaultNamespace).PodAntiAffinityExists("foo", "invalid-node-label", required).
				PodAntiAffinityExists("bar", "zone", required).Obj()},
			nodes: []*corev1.Node{
				mkNode("nodeA", hostLabels("r1", "z1", "nodeA")), mkNode("nodeB", hostLabels("r1", "z2", "nodeB")),
			},
			wantFilterStatuses: []*framework.Status{existing, nil},
		},
		{
			name: "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
			pod: mkPod().Namespace(defaultNamespace).PodAntiAffinityExists("foo", "invalid-node-label", required).
				PodAntiAffinityExists("bar", "zone", required).Obj(),
			pods: []*corev1.Pod{mkPod().Name("podA").Node("nodeA").Labels(map[string]string{"foo": "", "bar": ""}).Obj()},
			nodes: []*corev1.Node{
				mkNode("nodeA", hostLabels("r1", "z1", "nodeA")), mkNode("nodeB", hostLabels("r1", "z2", "nodeB")),
			},
			wantFilterStatuses: []*framework.Status{anti, nil},
		},
		{
			name: "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
			pod:  mkPod().Label("foo", "").Label("bar", "").Obj(),
			pods: []*corev1.Pod{mkPod().Namespace(defaultNamespace).Node("nodeA").PodAntiAffinityExists("foo", "region", required).
				PodAntiAffinityExists("bar", "zone", required).Obj()},
			nodes: []*corev1.Node{
				mkNode("nodeA", hostLabels("r1", "z1", "nodeA")), mkNode("nodeB", hostLabels("r1", "z2", "nodeB")),
			},
			wantFilterStatuses: []*framework.Status{existing, existing},
		},
		{
			name: "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
			pod: mkPod().Namespace(defaultNamespace).PodAntiAffinityExists("foo", "region", required).
				PodAntiAffinityExists("bar", "zone", required).Obj(),
			pods: []*corev1.Pod{mkPod().Node("nodeA").Labels(map[string]string{"foo": "", "bar": ""}).Obj()},
			nodes: []*corev1.Node{
				mkNode("nodeA", hostLabels("r1", "z1", "nodeA")), mkNode("nodeB", hostLabels("r1", "z2", "nodeB")),
			},
			wantFilterStatuses: []*framework.Status{anti, anti},
		},
		{
			name: "Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC",
			pod:  mkPod().Label("foo", "").Label("bar", "").Obj(),
			pods: []*corev1.Pod{
				mkPod().Node("nodeA").Namespace(defaultNamespace).PodAntiAffinityExists("foo", "zone", required).
					PodAntiAffinityExists("labelA", "zone", required).Obj(),
				mkPod().Node("nodeB").Namespace(defaultNamespace).PodAntiAffinityExists("bar", "zone", required).
					PodAntiAffinityExists("labelB", "zone", required).Obj(),
			},
			nodes: []*corev1.Node{
				mkNode("nodeA", hostLabels("r1", "z1", "nodeA")), mkNode("nodeB", hostLabels("r1", "z2", "nodeB")), mkNode("nodeC", hostLabels("r1", "z3", "nodeC")),
			},
			wantFilterStatuses: []*framework.Status{existing, existing, nil},
		},
		{
			name: "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match",
			pod: mkPod().Namespace(defaultNamespace).PodAffinityExists("foo", "region", required).
				PodAffinityExists("bar", "zone", required).Obj(),
			pods: []*corev1.Pod{mkPod().Name("pod1").Labels(map[string]string{"foo": "", "bar": ""}).Node("nodeA").Obj()},
			nodes: []*corev1.Node{
				mkNode("nodeA", hostLabels("r1", "z1", "nodeA")), mkNode("nodeB", hostLabels("r1", "z1", "nodeB")),
			},
			wantFilterStatuses: []*framework.Status{nil, nil},
		},
		{
			name: "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match, and the match logic should be satisfied on the same pod",
			pod: mkPod().Namespace(defaultNamespace).PodAffinityExists("foo", "region", required).
				PodAffinityExists("bar", "zone", required).Obj(),
			pods: []*corev1.Pod{
				mkPod().Node("nodeA").Name("pod1").Namespace(defaultNamespace).Labels(map[string]string{"foo": ""}).Obj(),
				mkPod().Node("nodeB").Name("pod2").Namespace(defaultNamespace).Labels(map[string]string{"bar": ""}).Obj(),
			},
			nodes: []*corev1.Node{
				mkNode("nodeA", hostLabels("r1", "z1", "nodeA")), mkNode("nodeB", hostLabels("r1", "z2", "nodeB")),
			},
			wantFilterStatuses: []*framework.Status{aff, aff},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl, snap := newPlugin(t, nil, tc.pods, tc.nodes, []*corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "NS1"}}})
			state := framework.NewCycleState()
			_, st := pl.PreFilter(context.Background(), state, tc.pod, mustList(t, snap))
			statusEq(t, "PreFilter", st, tc.wantPreFilterStatus)
			if st.IsSkip() {
				return
			}
			for i, n := range tc.nodes {
				statusEq(t, "Filter "+n.Name, pl.Filter(context.Background(), state, tc.pod, mustNodeInfo(t, snap, n.Name)), tc.wantFilterStatuses[i])
			}
		})
	}
}

func TestPreFilterDisabled(t *testing.T) {
	pl, _ := newPlugin(t, nil, nil, nil, nil)
	ni := framework.NewNodeInfo()
	ni.SetNode(&corev1.Node{})
	got := pl.Filter(context.Background(), framework.NewCycleState(), &corev1.Pod{}, ni)
	want := framework.AsStatus(fmt.Errorf(`error reading "PreFilterInterPodAffinity" from cycleState: %w`, framework.ErrNotFound))
	statusEq(t, "Filter", got, want)
}

// Upstream's TestPreFilterStateAddRemovePod: AddPod then RemovePod
// leaves the counts as PreFilter computed them; AddPod alone gives the
// counts of the cluster with the pod.
func TestPreFilterStateAddRemovePod(t *testing.T) {
	label1 := map[string]string{"region": "r1", "zone": "z11"}
	label2 := map[string]string{"region": "r1", "zone": "z12"}
	label3 := map[string]string{"region": "r2", "zone": "z21"}
	selector1 := map[string]string{"foo": "bar"}
	antiAffinityFooBar := &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
		{LabelSelector: expr("foo", metav1.LabelSelectorOpIn, "bar"), TopologyKey: "region"},
	}}
	antiAffinityComplex := &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
		{LabelSelector: expr("foo", metav1.LabelSelectorOpIn, "bar", "buzz"), TopologyKey: "region"},
		{LabelSelector: expr("service", metav1.LabelSelectorOpNotIn, "bar", "security", "test"), TopologyKey: "zone"},
	}}
	affinityComplex := &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
		{LabelSelector: expr("foo", metav1.LabelSelectorOpIn, "bar", "buzz"), TopologyKey: "region"},
		{LabelSelector: expr("service", metav1.LabelSelectorOpNotIn, "bar", "security", "test"), TopologyKey: "zone"},
	}}
	nodes := []*corev1.Node{mkNode("nodeA", label1), mkNode("nodeB", label2), mkNode("nodeC", label3)}
	pod := func(name, node string, labels map[string]string, a *corev1.Affinity) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Labels: labels}, Spec: corev1.PodSpec{NodeName: node, Affinity: a}}
	}
	tests := []struct {
		name                                string
		pendingPod, addedPod                *corev1.Pod
		existingPods                        []*corev1.Pod
		wantExistingAnti, wantAff, wantAnti topologyCounts
		wantExistingAntiAfterAdd            topologyCounts
		wantAffAfterAdd, wantAntiAfterAdd   topologyCounts
	}{
		{
			name:       "preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
			pendingPod: pod("pending", "", selector1, &corev1.Affinity{PodAntiAffinity: antiAffinityFooBar}),
			existingPods: []*corev1.Pod{
				pod("p1", "nodeA", selector1, nil),
				pod("p2", "nodeC", nil, &corev1.Affinity{PodAntiAffinity: antiAffinityFooBar}),
			},
			addedPod:                 pod("addedPod", "nodeB", selector1, &corev1.Affinity{PodAntiAffinity: antiAffinityFooBar}),
			wantExistingAnti:         topologyCounts{{"region", "r2"}: 1},
			wantAff:                  topologyCounts{},
			wantAnti:                 topologyCounts{{"region", "r1"}: 1},
			wantExistingAntiAfterAdd: topologyCounts{{"region", "r1"}: 1, {"region", "r2"}: 1},
			wantAffAfterAdd:          topologyCounts{},
			wantAntiAfterAdd:         topologyCounts{{"region", "r1"}: 2},
		},
		{
			name:       "preFilterState anti-affinity terms are updated correctly after adding and removing a pod (complex)",
			pendingPod: pod("pending", "", selector1, &corev1.Affinity{PodAntiAffinity: antiAffinityComplex}),
			existingPods: []*corev1.Pod{
				pod("p1", "nodeA", selector1, nil),
				pod("p2", "nodeC", nil, &corev1.Affinity{PodAntiAffinity: antiAffinityFooBar}),
			},
			addedPod:                 pod("addedPod", "nodeA", selector1, &corev1.Affinity{PodAntiAffinity: antiAffinityComplex}),
			wantExistingAnti:         topologyCounts{{"region", "r2"}: 1},
			wantAff:                  topologyCounts{},
			wantAnti:                 topologyCounts{{"region", "r1"}: 1, {"zone", "z11"}: 1, {"zone", "z21"}: 1},
			wantExistingAntiAfterAdd: topologyCounts{{"region", "r1"}: 1, {"zone", "z11"}: 1, {"region", "r2"}: 1},
			wantAffAfterAdd:          topologyCounts{},
			wantAntiAfterAdd:         topologyCounts{{"region", "r1"}: 2, {"zone", "z11"}: 2, {"zone", "z21"}: 1},
		},
		{
			name:       "preFilterState matching pod affinity and anti-affinity are updated correctly after adding and removing a pod",
			pendingPod: pod("pending", "", selector1, &corev1.Affinity{PodAffinity: affinityComplex}),
			existingPods: []*corev1.Pod{
				pod("p1", "nodeA", selector1, nil),
				pod("p2", "nodeC", nil, &corev1.Affinity{PodAntiAffinity: antiAffinityFooBar}),
			},
			addedPod:                 pod("addedPod", "nodeA", selector1, &corev1.Affinity{PodAffinity: affinityComplex}),
			wantExistingAnti:         topologyCounts{{"region", "r2"}: 1},
			wantAff:                  topologyCounts{{"region", "r1"}: 1, {"zone", "z11"}: 1},
			wantAnti:                 topologyCounts{},
			wantExistingAntiAfterAdd: topologyCounts{{"region", "r2"}: 1},
			wantAffAfterAdd:          topologyCounts{{"region", "r1"}: 2, {"zone", "z11"}: 2},
			wantAntiAfterAdd:         topologyCounts{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl, snap := newPlugin(t, nil, tc.existingPods, nodes, nil)
			state := framework.NewCycleState()
			if _, st := pl.PreFilter(context.Background(), state, tc.pendingPod, mustList(t, snap)); !st.IsSuccess() {
				t.Fatalf("PreFilter: %v", st)
			}
			check := func(what string, wantExisting, wantAff, wantAnti topologyCounts) {
				t.Helper()
				s, err := getPreFilterState(state)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(s.existingAntiAffinityCounts, wantExisting) {
					t.Errorf("%s: existingAntiAffinityCounts %v, want %v", what, s.existingAntiAffinityCounts, wantExisting)
				}
				if !reflect.DeepEqual(s.affinityCounts, wantAff) {
					t.Errorf("%s: affinityCounts %v, want %v", what, s.affinityCounts, wantAff)
				}
				if !reflect.DeepEqual(s.antiAffinityCounts, wantAnti) {
					t.Errorf("%s: antiAffinityCounts %v, want %v", what, s.antiAffinityCounts, wantAnti)
				}
			}
			check("PreFilter", tc.wantExistingAnti, tc.wantAff, tc.wantAnti)
			ni := mustNodeInfo(t, snap, tc.addedPod.Spec.NodeName)
			before := state.Clone()
			if st := pl.AddPod(context.Background(), state, tc.pendingPod, framework.NewPodInfo(tc.addedPod), ni); !st.IsSuccess() {
				t.Fatal(st)
			}
			check("AddPod", tc.wantExistingAntiAfterAdd, tc.wantAffAfterAdd, tc.wantAntiAfterAdd)
			// The clone taken before is not affected.
			s0, _ := before.Read(preFilterStateKey)
			if got := s0.(*preFilterState).existingAntiAffinityCounts; !reflect.DeepEqual(got, tc.wantExistingAnti) {
				t.Errorf("clone changed by AddPod: %v", got)
			}
			if st := pl.RemovePod(context.Background(), state, tc.pendingPod, framework.NewPodInfo(tc.addedPod), ni); !st.IsSuccess() {
				t.Fatal(st)
			}
			check("RemovePod", tc.wantExistingAnti, tc.wantAff, tc.wantAnti)
		})
	}
}

// The PreFilter counts do not depend on how nodes split into blocks:
// many nodes, each with pods in one of a few zones.
func TestPreFilterManyNodes(t *testing.T) {
	var nodes []*corev1.Node
	var pods []*corev1.Pod
	for i := 0; i < 500; i++ {
		zone := fmt.Sprintf("z%d", i%5)
		name := fmt.Sprintf("n%03d", i)
		nodes = append(nodes, mkNode(name, map[string]string{"zone": zone, "hostname": name}))
		if i%3 == 0 {
			pods = append(pods, mkPod().Name("a"+name).UID("a"+name).Node(name).Label("app", "web").Obj())
		}
		if i%7 == 0 {
			pods = append(pods, mkPod().Name("b"+name).UID("b"+name).Node(name).Label("app", "db").
				PodAntiAffinityIn("app", "hostname", []string{"web"}, required).Obj())
		}
	}
	pl, snap := newPlugin(t, nil, pods, nodes, nil)
	incoming := mkPod().Name("in").Label("app", "web").
		PodAffinityIn("app", "zone", []string{"web"}, required).
		PodAntiAffinityIn("app", "hostname", []string{"web"}, required).Obj()
	state := framework.NewCycleState()
	if _, st := pl.PreFilter(context.Background(), state, incoming, mustList(t, snap)); !st.IsSuccess() {
		t.Fatal(st)
	}
	s, _ := getPreFilterState(state)
	// web pods on every third node: zone zK holds those i%3==0 && i%5==K.
	wantAff := topologyCounts{}
	wantAnti := topologyCounts{}
	wantExisting := topologyCounts{}
	for i := 0; i < 500; i++ {
		name := fmt.Sprintf("n%03d", i)
		if i%3 == 0 {
			wantAff[topologyPair{"zone", fmt.Sprintf("z%d", i%5)}]++
			wantAnti[topologyPair{"hostname", name}]++
		}
		if i%7 == 0 {
			wantExisting[topologyPair{"hostname", name}]++
		}
	}
	if !reflect.DeepEqual(s.affinityCounts, wantAff) || !reflect.DeepEqual(s.antiAffinityCounts, wantAnti) || !reflect.DeepEqual(s.existingAntiAffinityCounts, wantExisting) {
		t.Fatalf("counts differ:\naff %v\nanti %v\nexisting %v", s.affinityCounts, s.antiAffinityCounts, s.existingAntiAffinityCounts)
	}
	feasible := 0
	for _, n := range nodes {
		if pl.Filter(context.Background(), state, incoming, mustNodeInfo(t, snap, n.Name)).IsSuccess() {
			feasible++
		}
	}
	// Feasible: no web pod and no db pod on the node (every zone has web pods).
	want := 0
	for i := 0; i < 500; i++ {
		if i%3 != 0 && i%7 != 0 {
			want++
		}
	}
	if feasible != want {
		t.Errorf("feasible nodes %d, want %d", feasible, want)
	}
}
