package bootstrappolicy

import (
	"sort"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Label and annotation carried by every bootstrap object.
const (
	BootstrappingLabel = "kubernetes.io/bootstrapping"
	BootstrappingValue = "rbac-defaults"
)

const aggregateLabelPrefix = "rbac.authorization.k8s.io/aggregate-to-"

// Verb sets used throughout the policy.
var (
	read       = []string{"get", "list", "watch"}
	write      = []string{"create", "update", "patch", "delete", "deletecollection"}
	readWrite  = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
	readUpdate = []string{"get", "list", "watch", "update", "patch"}
)

// ruleBuilder accumulates one PolicyRule.
type ruleBuilder struct{ r rbacv1.PolicyRule }

func rule(verbs ...string) *ruleBuilder {
	return &ruleBuilder{r: rbacv1.PolicyRule{Verbs: append([]string(nil), verbs...)}}
}

func (b *ruleBuilder) groups(g ...string) *ruleBuilder {
	b.r.APIGroups = append(b.r.APIGroups, g...)
	return b
}

func (b *ruleBuilder) resources(r ...string) *ruleBuilder {
	b.r.Resources = append(b.r.Resources, r...)
	return b
}

func (b *ruleBuilder) names(n ...string) *ruleBuilder {
	b.r.ResourceNames = append(b.r.ResourceNames, n...)
	return b
}

func (b *ruleBuilder) urls(u ...string) *ruleBuilder {
	b.r.NonResourceURLs = append(b.r.NonResourceURLs, u...)
	return b
}

// build returns the rule with every list sorted. It panics on a rule the
// API server would reject: the policy is static data, a mistake is a bug.
func (b *ruleBuilder) build() rbacv1.PolicyRule {
	r := b.r
	switch {
	case len(r.Verbs) == 0:
		panic("bootstrappolicy: rule without verbs")
	case len(r.NonResourceURLs) > 0 && (len(r.APIGroups) > 0 || len(r.Resources) > 0 || len(r.ResourceNames) > 0):
		panic("bootstrappolicy: non-resource rule with resources")
	case len(r.NonResourceURLs) == 0 && (len(r.Resources) == 0 || len(r.APIGroups) == 0):
		panic("bootstrappolicy: resource rule without resources or API groups")
	}
	for _, l := range [][]string{r.Verbs, r.APIGroups, r.Resources, r.ResourceNames, r.NonResourceURLs} {
		sort.Strings(l)
	}
	return r
}

// eventsRule lets a component record events through either events API.
func eventsRule() *ruleBuilder {
	return rule("create", "update", "patch").groups("", "events.k8s.io").resources("events")
}

func buildRules(rs []*ruleBuilder) []rbacv1.PolicyRule {
	if len(rs) == 0 {
		return nil
	}
	out := make([]rbacv1.PolicyRule, len(rs))
	for i, r := range rs {
		out[i] = r.build()
	}
	return out
}

// objectMeta is the metadata of a bootstrap object; extra are label
// key/value pairs besides the bootstrapping label.
func objectMeta(namespace, name string, extra ...string) metav1.ObjectMeta {
	labels := map[string]string{BootstrappingLabel: BootstrappingValue}
	for i := 0; i+1 < len(extra); i += 2 {
		labels[extra[i]] = extra[i+1]
	}
	return metav1.ObjectMeta{
		Namespace:   namespace,
		Name:        name,
		Labels:      labels,
		Annotations: map[string]string{rbacv1.AutoUpdateAnnotationKey: "true"},
	}
}

func clusterRole(name string, rules ...*ruleBuilder) rbacv1.ClusterRole {
	return rbacv1.ClusterRole{ObjectMeta: objectMeta("", name), Rules: buildRules(rules)}
}

// aggregatesTo labels a role so that its rules are aggregated into the
// role selecting rbac.authorization.k8s.io/aggregate-to-<target>=true.
func aggregatesTo(target string, cr rbacv1.ClusterRole) rbacv1.ClusterRole {
	cr.Labels[aggregateLabelPrefix+target] = "true"
	return cr
}

// aggregatedClusterRole is a role whose rules the clusterrole-aggregation
// controller fills from the roles labelled aggregateLabel=true.
func aggregatedClusterRole(name, aggregateLabel string) rbacv1.ClusterRole {
	aggregateLabel = aggregateLabelPrefix + aggregateLabel
	return rbacv1.ClusterRole{
		ObjectMeta: objectMeta("", name),
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
			{MatchLabels: map[string]string{aggregateLabel: "true"}},
		}},
	}
}

func role(namespace, name string, rules ...*ruleBuilder) rbacv1.Role {
	return rbacv1.Role{ObjectMeta: objectMeta(namespace, name), Rules: buildRules(rules)}
}

func user(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}
}

func group(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: name}
}

func serviceAccount(namespace, name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}
}

// clusterRoleBinding binds the ClusterRole of the same name.
func clusterRoleBinding(name string, subjects ...rbacv1.Subject) rbacv1.ClusterRoleBinding {
	return rbacv1.ClusterRoleBinding{
		ObjectMeta: objectMeta("", name),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   subjects,
	}
}

// roleBinding binds the Role roleName of the same namespace.
func roleBinding(namespace, name, roleName string, subjects ...rbacv1.Subject) rbacv1.RoleBinding {
	return rbacv1.RoleBinding{
		ObjectMeta: objectMeta(namespace, name),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: roleName},
		Subjects:   subjects,
	}
}
