package matching

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
)

func TestRuleMatches(t *testing.T) {
	ns := admissionregistrationv1.NamespacedScope
	cluster := admissionregistrationv1.ClusterScope
	rule := func(ops []admissionregistrationv1.OperationType, groups, versions, resources []string, scope *admissionregistrationv1.ScopeType) admissionregistrationv1.RuleWithOperations {
		return admissionregistrationv1.RuleWithOperations{Operations: ops,
			Rule: admissionregistrationv1.Rule{APIGroups: groups, APIVersions: versions, Resources: resources, Scope: scope}}
	}
	create := []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
	all := []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll}
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	deploys := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	tests := []struct {
		name string
		rule admissionregistrationv1.RuleWithOperations
		op   admission.Operation
		gvr  schema.GroupVersionResource
		sub  string
		ns   string
		want bool
	}{
		{"exact", rule(create, []string{""}, []string{"v1"}, []string{"pods"}, nil), admission.Create, pods, "", "ns", true},
		{"other operation", rule(create, []string{""}, []string{"v1"}, []string{"pods"}, nil), admission.Update, pods, "", "ns", false},
		{"all operations", rule(all, []string{""}, []string{"v1"}, []string{"pods"}, nil), admission.Delete, pods, "", "ns", true},
		{"other group", rule(create, []string{"apps"}, []string{"v1"}, []string{"pods"}, nil), admission.Create, pods, "", "ns", false},
		{"wildcard group and version", rule(create, []string{"*"}, []string{"*"}, []string{"deployments"}, nil), admission.Create, deploys, "", "ns", true},
		{"subresource not matched by resource", rule(create, []string{""}, []string{"v1"}, []string{"pods"}, nil), admission.Create, pods, "binding", "ns", false},
		{"subresource", rule(create, []string{""}, []string{"v1"}, []string{"pods/binding"}, nil), admission.Create, pods, "binding", "ns", true},
		{"*", rule(create, []string{""}, []string{"v1"}, []string{"*"}, nil), admission.Create, pods, "", "ns", true},
		{"* without subresources", rule(create, []string{""}, []string{"v1"}, []string{"*"}, nil), admission.Create, pods, "status", "ns", false},
		{"*/*", rule(create, []string{""}, []string{"v1"}, []string{"*/*"}, nil), admission.Create, pods, "status", "ns", true},
		{"pods/*", rule(create, []string{""}, []string{"v1"}, []string{"pods/*"}, nil), admission.Create, pods, "status", "ns", true},
		{"pods/* matches the pod too (as upstream's matcher)", rule(create, []string{""}, []string{"v1"}, []string{"pods/*"}, nil), admission.Create, pods, "", "ns", true},
		{"namespaced scope", rule(create, []string{"*"}, []string{"*"}, []string{"*"}, &ns), admission.Create, pods, "", "ns", true},
		{"namespaced scope, namespace", rule(create, []string{"*"}, []string{"*"}, []string{"*"}, &ns), admission.Create, namespacesV1, "", "ns", false},
		{"cluster scope, namespace", rule(create, []string{"*"}, []string{"*"}, []string{"*"}, &cluster), admission.Create, namespacesV1, "", "ns", true},
		{"cluster scope, namespaced", rule(create, []string{"*"}, []string{"*"}, []string{"*"}, &cluster), admission.Create, pods, "", "ns", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &admission.Attributes{Operation: tt.op, Subresource: tt.sub, Namespace: tt.ns}
			if got := RuleMatches(tt.rule, a, tt.gvr); got != tt.want {
				t.Errorf("RuleMatches = %v, want %v", got, tt.want)
			}
		})
	}
}
