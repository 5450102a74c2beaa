package flowcontrol

import (
	"fmt"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The API server keeps upstream's bootstrap configuration in storage:
// mandatory objects (always present, specs fixed) and suggested ones
// (created when missing and kept up to date while their autoupdate
// annotation is "true"). The specs are upstream's, in v1 form with the
// defaults already applied.

// Well-known users and groups the bootstrap schemas match.
const (
	groupMasters         = "system:masters"
	groupAuthenticated   = "system:authenticated"
	groupUnauthenticated = "system:unauthenticated"
	groupNodes           = "system:nodes"
	groupServiceAccounts = "system:serviceaccounts"
	userControllerMgr    = "system:kube-controller-manager"
	userScheduler        = "system:kube-scheduler"
)

// MandatoryPriorityLevelConfigurations are exempt and catch-all.
func MandatoryPriorityLevelConfigurations() []*flowcontrolv1.PriorityLevelConfiguration {
	return []*flowcontrolv1.PriorityLevelConfiguration{
		newPL(flowcontrolv1.PriorityLevelConfigurationNameCatchAll, limited(5, 0, nil)),
		newPL(flowcontrolv1.PriorityLevelConfigurationNameExempt, flowcontrolv1.PriorityLevelConfigurationSpec{
			Type:   flowcontrolv1.PriorityLevelEnablementExempt,
			Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{NominalConcurrencyShares: new(int32(0)), LendablePercent: new(int32(0))},
		}),
	}
}

// SuggestedPriorityLevelConfigurations are upstream's suggested levels.
func SuggestedPriorityLevelConfigurations() []*flowcontrolv1.PriorityLevelConfiguration {
	return []*flowcontrolv1.PriorityLevelConfiguration{
		newPL("system", limited(30, 33, queuing(64, 6))),
		newPL("node-high", limited(40, 25, queuing(64, 6))),
		newPL("leader-election", limited(10, 0, queuing(16, 4))),
		newPL("workload-high", limited(40, 50, queuing(128, 6))),
		newPL("workload-low", limited(100, 90, queuing(128, 6))),
		newPL("global-default", limited(20, 50, queuing(128, 6))),
	}
}

// MandatoryFlowSchemas are exempt and catch-all.
func MandatoryFlowSchemas() []*flowcontrolv1.FlowSchema {
	return []*flowcontrolv1.FlowSchema{
		newFS("exempt", "exempt", 1, "", groups(groupMasters), allResources(), allNonResources()),
		newFS("catch-all", "catch-all", 10000, flowcontrolv1.FlowDistinguisherMethodByUserType,
			groups(groupUnauthenticated, groupAuthenticated), allResources(), allNonResources()),
	}
}

// SuggestedFlowSchemas are upstream's suggested schemas.
func SuggestedFlowSchemas() []*flowcontrolv1.FlowSchema {
	byUser, byNS := flowcontrolv1.FlowDistinguisherMethodByUserType, flowcontrolv1.FlowDistinguisherMethodByNamespaceType
	every := []string{flowcontrolv1.NamespaceEvery}
	gcu := []string{"get", "create", "update"}
	leases := flowcontrolv1.ResourcePolicyRule{Verbs: gcu, APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Namespaces: every}
	return []*flowcontrolv1.FlowSchema{
		newFS("system-nodes", "system", 500, byUser, groups(groupNodes), allResources(), allNonResources()),
		newFS("system-node-high", "node-high", 400, byUser, groups(groupNodes), []flowcontrolv1.ResourcePolicyRule{
			{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"nodes", "nodes/status"}, Namespaces: every, ClusterScope: true},
			{Verbs: []string{"*"}, APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Namespaces: every},
		}, nil),
		newFS("probes", "exempt", 2, "", groups(groupUnauthenticated, groupAuthenticated), nil,
			[]flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/readyz", "/livez"}}}),
		newFS("system-leader-election", "leader-election", 100, byUser,
			append(users(userControllerMgr, userScheduler), kubeSystemSAs("*")...), []flowcontrolv1.ResourcePolicyRule{leases}, nil),
		newFS("workload-leader-election", "leader-election", 200, byUser, kubeSystemSAs("*"), []flowcontrolv1.ResourcePolicyRule{
			{Verbs: gcu, APIGroups: []string{""}, Resources: []string{"endpoints", "configmaps"}, Namespaces: every},
			leases,
		}, nil),
		newFS("endpoint-controller", "workload-high", 150, byUser,
			append(users(userControllerMgr), kubeSystemSAs("endpoint-controller", "endpointslicemirroring-controller")...),
			[]flowcontrolv1.ResourcePolicyRule{{Verbs: gcu, APIGroups: []string{""}, Resources: []string{"endpoints"}, Namespaces: every}}, nil),
		newFS("kube-controller-manager", "workload-high", 800, byNS, users(userControllerMgr), allResources(), allNonResources()),
		newFS("kube-scheduler", "workload-high", 800, byNS, users(userScheduler), allResources(), allNonResources()),
		newFS("kube-system-service-accounts", "workload-high", 900, byNS, kubeSystemSAs("*"), allResources(), allNonResources()),
		newFS("service-accounts", "workload-low", 9000, byUser, groups(groupServiceAccounts), allResources(), allNonResources()),
		newFS("global-default", "global-default", 9900, byUser, groups(groupUnauthenticated, groupAuthenticated), allResources(), allNonResources()),
	}
}

// IsAutoUpdate reports whether an object's autoupdate annotation lets the
// API server rewrite its spec.
func IsAutoUpdate(m metav1.Object) bool {
	return m.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey] == "true"
}

// UpdateFlowSchema returns cur brought to want's spec (and annotation), or
// nil when nothing is to change: mandatory objects always follow want,
// suggested ones only while their autoupdate annotation is "true".
func UpdateFlowSchema(cur, want *flowcontrolv1.FlowSchema, mandatory bool) *flowcontrolv1.FlowSchema {
	if !mandatory && !IsAutoUpdate(cur) {
		return nil
	}
	if equality.Semantic.DeepEqual(cur.Spec, want.Spec) && IsAutoUpdate(cur) {
		return nil
	}
	out := cur.DeepCopy()
	out.Spec = *want.Spec.DeepCopy()
	setAutoUpdate(out)
	return out
}

// UpdatePriorityLevelConfiguration is UpdateFlowSchema for priority levels;
// the exempt level keeps its spec.exempt, which administrators may tune.
func UpdatePriorityLevelConfiguration(cur, want *flowcontrolv1.PriorityLevelConfiguration, mandatory bool) *flowcontrolv1.PriorityLevelConfiguration {
	if !mandatory && !IsAutoUpdate(cur) {
		return nil
	}
	spec := *want.Spec.DeepCopy()
	if cur.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt && cur.Spec.Exempt != nil {
		spec.Exempt = cur.Spec.Exempt.DeepCopy()
	}
	if equality.Semantic.DeepEqual(cur.Spec, spec) && IsAutoUpdate(cur) {
		return nil
	}
	out := cur.DeepCopy()
	out.Spec = spec
	setAutoUpdate(out)
	return out
}

func setAutoUpdate(m metav1.Object) {
	a := m.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[flowcontrolv1.AutoUpdateAnnotationKey] = "true"
	m.SetAnnotations(a)
}

func newPL(name string, spec flowcontrolv1.PriorityLevelConfigurationSpec) *flowcontrolv1.PriorityLevelConfiguration {
	return &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{flowcontrolv1.AutoUpdateAnnotationKey: "true"}},
		Spec:       spec,
	}
}

func limited(shares, lendable int32, q *flowcontrolv1.QueuingConfiguration) flowcontrolv1.PriorityLevelConfigurationSpec {
	lr := flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}
	if q != nil {
		lr = flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: q}
	}
	return flowcontrolv1.PriorityLevelConfigurationSpec{
		Type:    flowcontrolv1.PriorityLevelEnablementLimited,
		Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: new(shares), LendablePercent: new(lendable), LimitResponse: lr},
	}
}

func queuing(queues, handSize int32) *flowcontrolv1.QueuingConfiguration {
	return &flowcontrolv1.QueuingConfiguration{Queues: queues, HandSize: handSize, QueueLengthLimit: 50}
}

func newFS(name, pl string, precedence int32, dm flowcontrolv1.FlowDistinguisherMethodType, subjects []flowcontrolv1.Subject,
	rules []flowcontrolv1.ResourcePolicyRule, nonResource []flowcontrolv1.NonResourcePolicyRule) *flowcontrolv1.FlowSchema {
	fs := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{flowcontrolv1.AutoUpdateAnnotationKey: "true"}},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: pl},
			MatchingPrecedence:         precedence,
			Rules:                      []flowcontrolv1.PolicyRulesWithSubjects{{Subjects: subjects, ResourceRules: rules, NonResourceRules: nonResource}},
		},
	}
	if dm != "" {
		fs.Spec.DistinguisherMethod = &flowcontrolv1.FlowDistinguisherMethod{Type: dm}
	}
	return fs
}

func allResources() []flowcontrolv1.ResourcePolicyRule {
	return []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
		Namespaces: []string{flowcontrolv1.NamespaceEvery}, ClusterScope: true}}
}

func allNonResources() []flowcontrolv1.NonResourcePolicyRule {
	return []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}
}

func groups(names ...string) []flowcontrolv1.Subject {
	out := make([]flowcontrolv1.Subject, len(names))
	for i, n := range names {
		out[i] = flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: n}}
	}
	return out
}

func users(names ...string) []flowcontrolv1.Subject {
	out := make([]flowcontrolv1.Subject, len(names))
	for i, n := range names {
		out[i] = flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: n}}
	}
	return out
}

func kubeSystemSAs(names ...string) []flowcontrolv1.Subject {
	out := make([]flowcontrolv1.Subject, len(names))
	for i, n := range names {
		out[i] = flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindServiceAccount,
			ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Name: n, Namespace: metav1.NamespaceSystem}}
	}
	return out
}

// SetDangling records in fs's status whether the priority level it
// references exists, as upstream's APF configuration controller does (the
// Dangling condition kubectl shows as MissingPL). It reports whether the
// status changed; an unchanged condition keeps its transition time.
func SetDangling(fs *flowcontrolv1.FlowSchema, levelExists bool, now metav1.Time) bool {
	name := fs.Spec.PriorityLevelConfiguration.Name
	want := flowcontrolv1.FlowSchemaCondition{Type: flowcontrolv1.FlowSchemaConditionDangling, LastTransitionTime: now}
	if levelExists {
		want.Status, want.Reason = flowcontrolv1.ConditionFalse, "Found"
		want.Message = fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q and it exists", name)
	} else {
		want.Status, want.Reason = flowcontrolv1.ConditionTrue, "NotFound"
		want.Message = fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q but there is no such object", name)
	}
	for i, c := range fs.Status.Conditions {
		if c.Type != want.Type {
			continue
		}
		if c.Status == want.Status && c.Reason == want.Reason && c.Message == want.Message {
			return false
		}
		if c.Status == want.Status {
			want.LastTransitionTime = c.LastTransitionTime
		}
		fs.Status.Conditions[i] = want
		return true
	}
	fs.Status.Conditions = append(fs.Status.Conditions, want)
	return true
}
