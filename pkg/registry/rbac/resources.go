package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/registry"
)

const group = "rbac.authorization.k8s.io"

// Definitions are the rbac.authorization.k8s.io/v1 resources, with
// upstream's privilege-escalation checks (escalation.go).
func Definitions() []*registry.Definition {
	defs := []*registry.Definition{
		registry.NewDefinition(group, "v1", "roles", "Role", true,
			func() runtime.Object { return &rbacv1.Role{} }, func() runtime.Object { return &rbacv1.RoleList{} },
			&registry.Strategy{Default: registry.Default(DefaultRole), Validate: registry.Validate(ValidateRole),
				ValidateUpdate: registry.ValidateUpdate(ValidateRoleUpdate)}),
		registry.NewDefinition(group, "v1", "clusterroles", "ClusterRole", false,
			func() runtime.Object { return &rbacv1.ClusterRole{} }, func() runtime.Object { return &rbacv1.ClusterRoleList{} },
			&registry.Strategy{Default: registry.Default(DefaultClusterRole), Validate: registry.Validate(ValidateClusterRole),
				ValidateUpdate: registry.ValidateUpdate(ValidateClusterRoleUpdate)}),
		registry.NewDefinition(group, "v1", "rolebindings", "RoleBinding", true,
			func() runtime.Object { return &rbacv1.RoleBinding{} }, func() runtime.Object { return &rbacv1.RoleBindingList{} },
			&registry.Strategy{Default: registry.Default(DefaultRoleBinding), Validate: registry.Validate(ValidateRoleBinding),
				ValidateUpdate: registry.ValidateUpdate(ValidateRoleBindingUpdate)}),
		registry.NewDefinition(group, "v1", "clusterrolebindings", "ClusterRoleBinding", false,
			func() runtime.Object { return &rbacv1.ClusterRoleBinding{} }, func() runtime.Object { return &rbacv1.ClusterRoleBindingList{} },
			&registry.Strategy{Default: registry.Default(DefaultClusterRoleBinding), Validate: registry.Validate(ValidateClusterRoleBinding),
				ValidateUpdate: registry.ValidateUpdate(ValidateClusterRoleBindingUpdate)}),
	}
	defs[0].NewHooks = roleHooks(grRoles)
	defs[1].NewHooks = roleHooks(grClusterRoles)
	defs[2].NewHooks = bindingHooks(grRoleBindings)
	defs[3].NewHooks = bindingHooks(grClusterRoleBindings)
	return defs
}
