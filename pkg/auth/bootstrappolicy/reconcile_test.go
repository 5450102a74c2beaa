package bootstrappolicy

import (
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func pr(verbs, groups, resources []string, names ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources, ResourceNames: names}
}

func urlRule(verbs []string, urls ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, NonResourceURLs: urls}
}

func l(s ...string) []string { return s }

func TestUncovered(t *testing.T) {
	tests := []struct {
		name       string
		have, want []rbacv1.PolicyRule
		missing    []rbacv1.PolicyRule
	}{
		{"exact", []rbacv1.PolicyRule{pr(l("get", "list"), l(""), l("pods"))}, []rbacv1.PolicyRule{pr(l("list", "get"), l(""), l("pods"))}, nil},
		{"one verb missing", []rbacv1.PolicyRule{pr(l("get"), l(""), l("pods"))}, []rbacv1.PolicyRule{pr(l("get", "list"), l(""), l("pods"))},
			[]rbacv1.PolicyRule{pr(l("list"), l(""), l("pods"))}},
		{"stars", []rbacv1.PolicyRule{pr(l("*"), l("*"), l("*"))}, []rbacv1.PolicyRule{pr(l("get"), l("apps"), l("deployments/scale"), "x")}, nil},
		{"subresource star", []rbacv1.PolicyRule{pr(l("get"), l("*"), l("*/scale"))},
			[]rbacv1.PolicyRule{pr(l("get"), l("apps"), l("deployments/scale", "deployments"))},
			[]rbacv1.PolicyRule{pr(l("get"), l("apps"), l("deployments"))}},
		{"names restrict", []rbacv1.PolicyRule{pr(l("get"), l(""), l("configmaps"), "a")},
			[]rbacv1.PolicyRule{pr(l("get"), l(""), l("configmaps"), "a", "b"), pr(l("get"), l(""), l("configmaps"))},
			[]rbacv1.PolicyRule{pr(l("get"), l(""), l("configmaps"), "b"), pr(l("get"), l(""), l("configmaps"))}},
		{"url prefix", []rbacv1.PolicyRule{urlRule(l("get"), "/apis/*")},
			[]rbacv1.PolicyRule{urlRule(l("get"), "/apis/apps", "/api")},
			[]rbacv1.PolicyRule{urlRule(l("get"), "/api")}},
		{"resource rule does not cover url", []rbacv1.PolicyRule{pr(l("*"), l("*"), l("*"))},
			[]rbacv1.PolicyRule{urlRule(l("get"), "/healthz")}, []rbacv1.PolicyRule{urlRule(l("get"), "/healthz")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := uncovered(tc.have, tc.want); !reflect.DeepEqual(got, tc.missing) {
				t.Fatalf("uncovered = %v, want %v", got, tc.missing)
			}
		})
	}
}

func TestReconcileClusterRole(t *testing.T) {
	expected := clusterRole("r", rule("get", "list").groups("").resources("pods"))
	tests := []struct {
		name      string
		existing  func(r *rbacv1.ClusterRole)
		changed   bool
		protected bool
		wantRules []rbacv1.PolicyRule
	}{
		{"up to date", func(*rbacv1.ClusterRole) {}, false, false, []rbacv1.PolicyRule{pr(l("get", "list"), l(""), l("pods"))}},
		{"user rule kept, missing verb added", func(r *rbacv1.ClusterRole) {
			r.Rules = []rbacv1.PolicyRule{pr(l("get"), l(""), l("pods")), pr(l("get"), l(""), l("secrets"))}
		}, true, false, []rbacv1.PolicyRule{pr(l("get"), l(""), l("pods")), pr(l("get"), l(""), l("secrets")), pr(l("list"), l(""), l("pods"))}},
		{"protected", func(r *rbacv1.ClusterRole) {
			r.Annotations[rbacv1.AutoUpdateAnnotationKey] = "false"
			r.Rules = nil
		}, true, true, []rbacv1.PolicyRule{pr(l("get"), l(""), l("pods")), pr(l("list"), l(""), l("pods"))}},
		{"label restored, user label kept", func(r *rbacv1.ClusterRole) {
			r.Labels = map[string]string{"mine": "x"}
		}, true, false, []rbacv1.PolicyRule{pr(l("get", "list"), l(""), l("pods"))}},
		{"unexpected aggregation dropped", func(r *rbacv1.ClusterRole) {
			r.AggregationRule = &rbacv1.AggregationRule{}
		}, true, false, []rbacv1.PolicyRule{pr(l("get", "list"), l(""), l("pods"))}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			existing := expected.DeepCopy()
			tc.existing(existing)
			before := existing.DeepCopy()
			out, res := ReconcileClusterRole(existing, &expected)
			if res.Changed != tc.changed || res.Protected != tc.protected {
				t.Fatalf("result %+v, want changed=%v protected=%v", res, tc.changed, tc.protected)
			}
			if !reflect.DeepEqual(existing, before) {
				t.Fatal("existing modified")
			}
			if !reflect.DeepEqual(out.Rules, tc.wantRules) {
				t.Fatalf("rules = %v, want %v", out.Rules, tc.wantRules)
			}
			if out.AggregationRule != nil {
				t.Fatalf("aggregation rule kept: %v", out.AggregationRule)
			}
			if out.Labels[BootstrappingLabel] != BootstrappingValue || (before.Labels["mine"] != "" && out.Labels["mine"] != "x") {
				t.Fatalf("labels = %v", out.Labels)
			}
		})
	}
}

func TestReconcileAggregatedRole(t *testing.T) {
	var admin rbacv1.ClusterRole
	for _, r := range ClusterRoles() {
		if r.Name == "admin" {
			admin = r
		}
	}
	// As the aggregation controller leaves it: rules filled in; a user
	// added a selector of their own.
	existing := admin.DeepCopy()
	existing.Rules = []rbacv1.PolicyRule{pr(l("get"), l(""), l("pods"))}
	mine := metav1.LabelSelector{MatchLabels: map[string]string{"mine": "true"}}
	existing.AggregationRule.ClusterRoleSelectors = []metav1.LabelSelector{mine}
	out, res := ReconcileClusterRole(existing, &admin)
	if !res.Changed || len(out.Rules) != 1 {
		t.Fatalf("res %+v rules %v", res, out.Rules)
	}
	want := []metav1.LabelSelector{mine, admin.AggregationRule.ClusterRoleSelectors[0]}
	if !reflect.DeepEqual(out.AggregationRule.ClusterRoleSelectors, want) {
		t.Fatalf("selectors = %v, want %v", out.AggregationRule.ClusterRoleSelectors, want)
	}
	if _, res := ReconcileClusterRole(out, &admin); res.Changed {
		t.Fatal("second reconcile changes again")
	}
}

func TestReconcileBindings(t *testing.T) {
	expected := clusterRoleBinding("system:kube-scheduler", user("system:kube-scheduler"))
	tests := []struct {
		name     string
		existing func(b *rbacv1.ClusterRoleBinding)
		res      BindingResult
		subjects []rbacv1.Subject
	}{
		{"up to date", func(*rbacv1.ClusterRoleBinding) {}, BindingResult{}, []rbacv1.Subject{user("system:kube-scheduler")}},
		{"user subject kept, ours added", func(b *rbacv1.ClusterRoleBinding) { b.Subjects = []rbacv1.Subject{group("g")} },
			BindingResult{Changed: true, MissingSubjects: []rbacv1.Subject{user("system:kube-scheduler")}},
			[]rbacv1.Subject{group("g"), user("system:kube-scheduler")}},
		{"roleRef differs", func(b *rbacv1.ClusterRoleBinding) { b.RoleRef.Name = "other"; b.Subjects = nil },
			BindingResult{Recreate: true}, []rbacv1.Subject{user("system:kube-scheduler")}},
		{"protected", func(b *rbacv1.ClusterRoleBinding) {
			b.Annotations[rbacv1.AutoUpdateAnnotationKey] = "false"
			b.Subjects = nil
		}, BindingResult{Changed: true, Protected: true, MissingSubjects: []rbacv1.Subject{user("system:kube-scheduler")}},
			[]rbacv1.Subject{user("system:kube-scheduler")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			existing := expected.DeepCopy()
			tc.existing(existing)
			out, res := ReconcileClusterRoleBinding(existing, &expected)
			if !reflect.DeepEqual(res, tc.res) {
				t.Fatalf("result %+v, want %+v", res, tc.res)
			}
			if !reflect.DeepEqual(out.Subjects, tc.subjects) {
				t.Fatalf("subjects = %v, want %v", out.Subjects, tc.subjects)
			}
		})
	}
}
