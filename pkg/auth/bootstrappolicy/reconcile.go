package bootstrappolicy

import (
	"reflect"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/auth/rbac"
)

// Reconciliation, as upstream's API server does it at start for its
// bootstrap policy (the rbac/bootstrap-roles post-start hook): a stored
// object whose rbac.authorization.kubernetes.io/autoupdate annotation is
// "false" is protected and left alone; otherwise the stored object gains
// what it lacks — labels and annotations (stored values win), the rules
// not covered by its rules (added one verb/resource/name at a time),
// aggregation selectors, binding subjects — and nothing a user added is
// removed. An aggregationRule on a role upstream does not aggregate is
// dropped; a binding whose roleRef differs is replaced (roleRef cannot be
// updated).

// Protected reports whether a stored bootstrap object opted out of
// reconciliation.
func Protected(m metav1.Object) bool {
	return m.GetAnnotations()[rbacv1.AutoUpdateAnnotationKey] == "false"
}

// RoleResult is the outcome of reconciling one role.
type RoleResult struct {
	// Changed: the stored object must be updated (unless Protected).
	Changed bool
	// Protected: the stored object opted out; nothing is written.
	Protected bool
	// MissingRules are the expected rules the stored role did not cover.
	MissingRules []rbacv1.PolicyRule
}

// ReconcileClusterRole returns the stored role existing completed with
// expected's labels, annotations, rules and aggregation rule, and what
// changed. existing is not modified.
func ReconcileClusterRole(existing, expected *rbacv1.ClusterRole) (*rbacv1.ClusterRole, RoleResult) {
	out := existing.DeepCopy()
	res := RoleResult{Protected: Protected(existing)}
	res.Changed = mergeMeta(&out.ObjectMeta, &expected.ObjectMeta)
	if res.MissingRules = uncovered(existing.Rules, expected.Rules); len(res.MissingRules) > 0 {
		out.Rules = append(out.Rules, res.MissingRules...)
		res.Changed = true
	}
	switch {
	case expected.AggregationRule == nil && existing.AggregationRule != nil:
		out.AggregationRule = nil
		res.Changed = true
	case expected.AggregationRule != nil:
		var have []metav1.LabelSelector
		if existing.AggregationRule != nil {
			have = existing.AggregationRule.ClusterRoleSelectors
		}
		var missing []metav1.LabelSelector
		for _, sel := range expected.AggregationRule.ClusterRoleSelectors {
			if !containsSelector(have, sel) {
				missing = append(missing, sel)
			}
		}
		if len(missing) > 0 {
			if out.AggregationRule == nil {
				out.AggregationRule = &rbacv1.AggregationRule{}
			}
			out.AggregationRule.ClusterRoleSelectors = append(out.AggregationRule.ClusterRoleSelectors, missing...)
			res.Changed = true
		}
	}
	return out, res
}

// ReconcileRole is ReconcileClusterRole for a namespaced Role.
func ReconcileRole(existing, expected *rbacv1.Role) (*rbacv1.Role, RoleResult) {
	out := existing.DeepCopy()
	res := RoleResult{Protected: Protected(existing)}
	res.Changed = mergeMeta(&out.ObjectMeta, &expected.ObjectMeta)
	if res.MissingRules = uncovered(existing.Rules, expected.Rules); len(res.MissingRules) > 0 {
		out.Rules = append(out.Rules, res.MissingRules...)
		res.Changed = true
	}
	return out, res
}

// BindingResult is the outcome of reconciling one binding.
type BindingResult struct {
	// Changed: the stored object must be updated (unless Protected).
	Changed bool
	// Recreate: the roleRef differs; the stored binding must be deleted
	// and the expected one created (unless Protected).
	Recreate bool
	// Protected: the stored object opted out; nothing is written.
	Protected bool
	// MissingSubjects are the expected subjects the stored binding lacked.
	MissingSubjects []rbacv1.Subject
}

// ReconcileClusterRoleBinding returns the stored binding existing with
// expected's labels, annotations and subjects added. existing is not
// modified.
func ReconcileClusterRoleBinding(existing, expected *rbacv1.ClusterRoleBinding) (*rbacv1.ClusterRoleBinding, BindingResult) {
	if existing.RoleRef != expected.RoleRef {
		return expected.DeepCopy(), BindingResult{Protected: Protected(existing), Recreate: true}
	}
	out := existing.DeepCopy()
	return out, mergeBinding(&out.ObjectMeta, &out.Subjects, &expected.ObjectMeta, expected.Subjects, Protected(existing))
}

// ReconcileRoleBinding is ReconcileClusterRoleBinding for a RoleBinding.
func ReconcileRoleBinding(existing, expected *rbacv1.RoleBinding) (*rbacv1.RoleBinding, BindingResult) {
	if existing.RoleRef != expected.RoleRef {
		return expected.DeepCopy(), BindingResult{Protected: Protected(existing), Recreate: true}
	}
	out := existing.DeepCopy()
	return out, mergeBinding(&out.ObjectMeta, &out.Subjects, &expected.ObjectMeta, expected.Subjects, Protected(existing))
}

// mergeBinding adds expected's labels, annotations and subjects to a copy
// of a stored binding (meta, subjects).
func mergeBinding(meta *metav1.ObjectMeta, subjects *[]rbacv1.Subject, expectedMeta *metav1.ObjectMeta, expectedSubjects []rbacv1.Subject, protected bool) BindingResult {
	res := BindingResult{Protected: protected}
	res.Changed = mergeMeta(meta, expectedMeta)
	if res.MissingSubjects = missingSubjects(*subjects, expectedSubjects); len(res.MissingSubjects) > 0 {
		*subjects = append(*subjects, res.MissingSubjects...)
		res.Changed = true
	}
	return res
}

// mergeMeta adds expected's labels and annotations that out lacks (out's
// values win) and reports whether out changed.
func mergeMeta(out, expected *metav1.ObjectMeta) bool {
	changed := false
	merge := func(have *map[string]string, want map[string]string) {
		for k, v := range want {
			if _, ok := (*have)[k]; ok {
				continue
			}
			if *have == nil {
				*have = map[string]string{}
			}
			(*have)[k] = v
			changed = true
		}
	}
	merge(&out.Labels, expected.Labels)
	merge(&out.Annotations, expected.Annotations)
	return changed
}

func containsSelector(have []metav1.LabelSelector, sel metav1.LabelSelector) bool {
	for _, h := range have {
		if reflect.DeepEqual(h, sel) {
			return true
		}
	}
	return false
}

func missingSubjects(have, want []rbacv1.Subject) []rbacv1.Subject {
	var missing []rbacv1.Subject
next:
	for _, w := range want {
		for _, h := range have {
			if h == w {
				continue next
			}
		}
		missing = append(missing, w)
	}
	return missing
}

// uncovered returns the parts of want (broken down to one verb, group,
// resource and resource name, or one verb and URL, per rule) that no rule
// of have grants, in want's order: upstream's coverage check, shared with
// the RBAC escalation check.
func uncovered(have, want []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	_, missing := rbac.Covers(have, want)
	return missing
}
