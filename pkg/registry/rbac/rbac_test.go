package rbac

import (
	"github.com/skiff-sh/skiff/pkg/registry/registrytest"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// check runs one table case: path "" means the object must be valid.
func check(t *testing.T, errs field.ErrorList, path string, typ field.ErrorType) {
	t.Helper()
	if path == "" {
		if len(errs) != 0 {
			t.Fatalf("unexpected errors: %v", errs)
		}
		return
	}
	if !registrytest.FindError(errs, path, typ) {
		t.Fatalf("want %s at %s, got %v", typ, path, errs)
	}
}

func TestDefaultBindings(t *testing.T) {
	rb := &rbacv1.RoleBinding{
		RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "r"},
		Subjects: []rbacv1.Subject{
			{Kind: "User", Name: "alice"},
			{Kind: "Group", Name: "devs"},
			{Kind: "ServiceAccount", Name: "default", Namespace: "ns"},
			{Kind: "User", Name: "bob", APIGroup: "example.com"},
		},
	}
	DefaultRoleBinding(rb)
	want := []string{rbacv1.GroupName, rbacv1.GroupName, "", "example.com"}
	for i, s := range rb.Subjects {
		if s.APIGroup != want[i] {
			t.Errorf("subjects[%d].apiGroup = %q, want %q", i, s.APIGroup, want[i])
		}
	}
	if rb.RoleRef.APIGroup != rbacv1.GroupName {
		t.Errorf("roleRef.apiGroup = %q", rb.RoleRef.APIGroup)
	}

	crb := &rbacv1.ClusterRoleBinding{RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "r"}, Subjects: []rbacv1.Subject{{Kind: "Group", Name: "g"}}}
	DefaultClusterRoleBinding(crb)
	if crb.RoleRef.APIGroup != rbacv1.GroupName || crb.Subjects[0].APIGroup != rbacv1.GroupName {
		t.Errorf("got %+v", crb)
	}
}

func TestValidateRole(t *testing.T) {
	tests := []struct {
		name string
		rule rbacv1.PolicyRule
		path string
		typ  field.ErrorType
	}{
		{"valid", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}, "", ""},
		{"valid resourceNames", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a"}}, "", ""},
		{"no verbs", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}}, "rules[0].verbs", field.ErrorTypeRequired},
		{"no apiGroups", rbacv1.PolicyRule{Verbs: []string{"get"}, Resources: []string{"pods"}}, "rules[0].apiGroups", field.ErrorTypeRequired},
		{"no resources", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}}, "rules[0].resources", field.ErrorTypeRequired},
		{"nonResourceURLs in a Role", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}, "rules[0].nonResourceURLs", field.ErrorTypeInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader", Namespace: "default"}, Rules: []rbacv1.PolicyRule{tc.rule}}
			check(t, ValidateRole(role), tc.path, tc.typ)
		})
	}

	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: ""}}
	check(t, ValidateRole(role), "metadata.namespace", field.ErrorTypeRequired)
}

func TestValidateClusterRole(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*rbacv1.ClusterRole)
		path   string
		typ    field.ErrorType
	}{
		{"valid", func(*rbacv1.ClusterRole) {}, "", ""},
		{"colons in name are fine", func(r *rbacv1.ClusterRole) { r.Name = "system:controller:foo" }, "", ""},
		{"name with slash", func(r *rbacv1.ClusterRole) { r.Name = "a/b" }, "metadata.name", field.ErrorTypeInvalid},
		{"name ..", func(r *rbacv1.ClusterRole) { r.Name = ".." }, "metadata.name", field.ErrorTypeInvalid},
		{"namespace set", func(r *rbacv1.ClusterRole) { r.Namespace = "default" }, "metadata.namespace", field.ErrorTypeForbidden},
		{"both resources and URLs", func(r *rbacv1.ClusterRole) {
			r.Rules[1].Resources = []string{"pods"}
		}, "rules[1].nonResourceURLs", field.ErrorTypeInvalid},
		{"valid aggregation", func(r *rbacv1.ClusterRole) {
			r.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"rbac.example.com/aggregate-to-view": "true"}}}}
		}, "", ""},
		{"empty aggregation", func(r *rbacv1.ClusterRole) {
			r.AggregationRule = &rbacv1.AggregationRule{}
		}, "aggregationRule.clusterRoleSelectors", field.ErrorTypeRequired},
		{"bad aggregation selector", func(r *rbacv1.ClusterRole) {
			r.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"a": "b c"}}}}
		}, "aggregationRule.clusterRoleSelectors[0].matchLabels", field.ErrorTypeInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			role := &rbacv1.ClusterRole{
				ObjectMeta: metav1.ObjectMeta{Name: "view"},
				Rules: []rbacv1.PolicyRule{
					{Verbs: []string{"get", "list"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
					{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/version"}},
				},
			}
			tc.mutate(role)
			check(t, ValidateClusterRole(role), tc.path, tc.typ)
		})
	}

	old := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "view", ResourceVersion: "1"}}
	updated := old.DeepCopy()
	updated.Rules = []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}
	check(t, ValidateClusterRoleUpdate(updated, old), "", "")
}

func TestValidateRoleBinding(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*rbacv1.RoleBinding)
		path   string
		typ    field.ErrorType
	}{
		{"valid", func(*rbacv1.RoleBinding) {}, "", ""},
		{"ClusterRole ref", func(b *rbacv1.RoleBinding) { b.RoleRef.Kind = "ClusterRole" }, "", ""},
		{"service account without namespace", func(b *rbacv1.RoleBinding) { b.Subjects[2].Namespace = "" }, "", ""},
		{"bad roleRef kind", func(b *rbacv1.RoleBinding) { b.RoleRef.Kind = "Pod" }, "roleRef.kind", field.ErrorTypeNotSupported},
		{"bad roleRef group", func(b *rbacv1.RoleBinding) { b.RoleRef.APIGroup = "" }, "roleRef.apiGroup", field.ErrorTypeNotSupported},
		{"no roleRef name", func(b *rbacv1.RoleBinding) { b.RoleRef.Name = "" }, "roleRef.name", field.ErrorTypeRequired},
		{"bad subject kind", func(b *rbacv1.RoleBinding) { b.Subjects[0].Kind = "Robot" }, "subjects[0].kind", field.ErrorTypeNotSupported},
		{"user without apiGroup", func(b *rbacv1.RoleBinding) { b.Subjects[0].APIGroup = "" }, "subjects[0].apiGroup", field.ErrorTypeNotSupported},
		{"user without name", func(b *rbacv1.RoleBinding) { b.Subjects[0].Name = "" }, "subjects[0].name", field.ErrorTypeRequired},
		{"service account with apiGroup", func(b *rbacv1.RoleBinding) { b.Subjects[2].APIGroup = rbacv1.GroupName }, "subjects[2].apiGroup", field.ErrorTypeNotSupported},
		{"bad service account name", func(b *rbacv1.RoleBinding) { b.Subjects[2].Name = "Default" }, "subjects[2].name", field.ErrorTypeInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "read-pods", Namespace: "default"},
				RoleRef:    rbacv1.RoleRef{Kind: "Role", Name: "pod-reader"},
				Subjects: []rbacv1.Subject{
					{Kind: "User", Name: "jane"},
					{Kind: "Group", Name: "system:authenticated"},
					{Kind: "ServiceAccount", Name: "default", Namespace: "kube-system"},
				},
			}
			DefaultRoleBinding(b)
			tc.mutate(b)
			check(t, ValidateRoleBinding(b), tc.path, tc.typ)
		})
	}
}

func TestValidateClusterRoleBinding(t *testing.T) {
	valid := func() *rbacv1.ClusterRoleBinding {
		b := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "admins", ResourceVersion: "1"},
			RoleRef:    rbacv1.RoleRef{Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "ctrl", Namespace: "ops"}},
		}
		DefaultClusterRoleBinding(b)
		return b
	}
	check(t, ValidateClusterRoleBinding(valid()), "", "")

	b := valid()
	b.RoleRef.Kind = "Role"
	check(t, ValidateClusterRoleBinding(b), "roleRef.kind", field.ErrorTypeNotSupported)

	b = valid()
	b.Subjects[0].Namespace = ""
	check(t, ValidateClusterRoleBinding(b), "subjects[0].namespace", field.ErrorTypeRequired)

	b = valid()
	b.RoleRef.Name = "view"
	errs := ValidateClusterRoleBindingUpdate(b, valid())
	check(t, errs, "roleRef", field.ErrorTypeInvalid)
	want := `roleRef: Invalid value: {"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"view"}: cannot change roleRef`
	if errs[0].Error() != want {
		t.Errorf("got %q\nwant %q", errs[0].Error(), want)
	}

	b = valid()
	b.Subjects = append(b.Subjects, rbacv1.Subject{Kind: "User", Name: "root", APIGroup: rbacv1.GroupName})
	check(t, ValidateClusterRoleBindingUpdate(b, valid()), "", "")

	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns", ResourceVersion: "1"}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "a"}}
	rb2 := rb.DeepCopy()
	rb2.RoleRef.Name = "b"
	check(t, ValidateRoleBindingUpdate(rb2, rb), "roleRef", field.ErrorTypeInvalid)
}
