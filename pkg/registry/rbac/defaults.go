package rbac

import rbacv1 "k8s.io/api/rbac/v1"

// DefaultRole applies rbac/v1 defaults to a Role: none upstream.
func DefaultRole(role *rbacv1.Role) {}

// DefaultClusterRole applies rbac/v1 defaults to a ClusterRole: none upstream.
func DefaultClusterRole(role *rbacv1.ClusterRole) {}

// DefaultRoleBinding fills roleRef.apiGroup and the subjects' apiGroup.
func DefaultRoleBinding(binding *rbacv1.RoleBinding) {
	defaultRoleRef(&binding.RoleRef)
	defaultSubjects(binding.Subjects)
}

// DefaultClusterRoleBinding fills roleRef.apiGroup and the subjects' apiGroup.
func DefaultClusterRoleBinding(binding *rbacv1.ClusterRoleBinding) {
	defaultRoleRef(&binding.RoleRef)
	defaultSubjects(binding.Subjects)
}

// Roles only exist in the rbac group, so an empty roleRef.apiGroup means it.
func defaultRoleRef(ref *rbacv1.RoleRef) {
	if ref.APIGroup == "" {
		ref.APIGroup = rbacv1.GroupName
	}
}

// Users and groups are RBAC concepts (apiGroup rbac.authorization.k8s.io);
// a ServiceAccount is a core object (apiGroup "").
func defaultSubjects(subjects []rbacv1.Subject) {
	for i := range subjects {
		s := &subjects[i]
		if s.APIGroup != "" {
			continue
		}
		switch s.Kind {
		case rbacv1.UserKind, rbacv1.GroupKind:
			s.APIGroup = rbacv1.GroupName
		}
	}
}
