package rbac

import (
	"context"
	"errors"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/auth/authorizer"
	authrbac "github.com/skiff-sh/skiff/pkg/auth/rbac"
	"github.com/skiff-sh/skiff/pkg/registry"
)

// Privilege-escalation prevention, as upstream's policy-based RBAC storage:
// a user may create or update a Role or ClusterRole only with rules it
// holds itself (or with the escalate verb on that role resource), and a
// RoleBinding or ClusterRoleBinding only to a role whose rules it holds (or
// with the bind verb on that role). Members of system:masters, and the
// server's own writes (no user), are never checked; with authorization off
// (no Authorizer) nothing is.

var (
	grRoles               = schema.GroupResource{Group: group, Resource: "roles"}
	grClusterRoles        = schema.GroupResource{Group: group, Resource: "clusterroles"}
	grRoleBindings        = schema.GroupResource{Group: group, Resource: "rolebindings"}
	grClusterRoleBindings = schema.GroupResource{Group: group, Resource: "clusterrolebindings"}
)

// unchecked reports whether the request needs no escalation check.
func unchecked(env *registry.HookEnv, u *authenticationv1.UserInfo) bool {
	if env.Authorizer == nil || env.RBACRules == nil || u == nil {
		return true
	}
	for _, g := range u.Groups {
		if g == authorizer.SystemPrivilegedGroup {
			return true
		}
	}
	return false
}

// allowedTo asks the authorizer whether u may verb the named role resource.
func allowedTo(ctx context.Context, env *registry.HookEnv, u *authenticationv1.UserInfo, verb string, gr schema.GroupResource, ns, name string) bool {
	d, _, _ := env.Authorizer.Authorize(ctx, authorizer.Attributes{User: u, Verb: verb, APIGroup: gr.Group, APIVersion: "*",
		Resource: gr.Resource, Namespace: ns, Name: name, ResourceRequest: true})
	return d == authorizer.DecisionAllow
}

// confirm checks that u holds rules in ns.
func confirm(ctx context.Context, env *registry.HookEnv, u *authenticationv1.UserInfo, ns string, rules []rbacv1.PolicyRule) error {
	owner, err := env.RBACRules.PolicyRulesFor(ctx, u, ns)
	return authrbac.ConfirmNoEscalation(u, owner, err, rules)
}

// onlyGCFields reports whether obj differs from old only in the fields the
// garbage collector writes (owner references, finalizers), which upstream
// lets through unchecked.
func onlyGCFields(obj, old runtime.Object) bool {
	c := obj.DeepCopyObject()
	cm, err1 := meta.Accessor(c)
	om, err2 := meta.Accessor(old)
	if err1 != nil || err2 != nil {
		return false
	}
	cm.SetOwnerReferences(om.GetOwnerReferences())
	cm.SetFinalizers(om.GetFinalizers())
	cm.SetManagedFields(om.GetManagedFields())
	cm.SetResourceVersion(om.GetResourceVersion())
	return equality.Semantic.DeepEqual(c, old)
}

func hasAggregationRule(r *rbacv1.ClusterRole) bool {
	return r != nil && r.AggregationRule != nil && len(r.AggregationRule.ClusterRoleSelectors) > 0
}

// roleHooks checks Role and ClusterRole writes.
func roleHooks(gr schema.GroupResource) func(env *registry.HookEnv) (*registry.Hooks, error) {
	return func(env *registry.HookEnv) (*registry.Hooks, error) {
		check := func(ctx context.Context, obj, old runtime.Object, name string) error {
			u := registry.UserFrom(ctx)
			if unchecked(env, u) {
				return nil
			}
			m, _ := meta.Accessor(obj)
			if allowedTo(ctx, env, u, "escalate", gr, m.GetNamespace(), name) {
				return nil
			}
			if old != nil && onlyGCFields(obj, old) {
				return nil
			}
			var rules []rbacv1.PolicyRule
			var aggregated bool
			switch o := obj.(type) {
			case *rbacv1.Role:
				rules = o.Rules
			case *rbacv1.ClusterRole:
				rules = o.Rules
				oldRole, _ := old.(*rbacv1.ClusterRole)
				aggregated = hasAggregationRule(o) || hasAggregationRule(oldRole)
			}
			if err := confirm(ctx, env, u, m.GetNamespace(), rules); err != nil {
				return apierrors.NewForbidden(gr, m.GetName(), err)
			}
			if aggregated {
				if err := confirm(ctx, env, u, m.GetNamespace(), authrbac.FullAuthority); err != nil {
					return apierrors.NewForbidden(gr, m.GetName(), errors.New("must have cluster-admin privileges to use the aggregationRule"))
				}
			}
			return nil
		}
		return &registry.Hooks{
			// A create asks for escalate on the collection (no name), as
			// upstream's request info has none.
			BeforeCreate: func(ctx context.Context, obj runtime.Object, _ bool) (func(), error) {
				return nil, check(ctx, obj, nil, "")
			},
			BeforeUpdate: func(ctx context.Context, obj, old runtime.Object, _ bool) (func(), error) {
				m, _ := meta.Accessor(obj)
				return nil, check(ctx, obj, old, m.GetName())
			},
		}, nil
	}
}

// bindingHooks checks RoleBinding and ClusterRoleBinding writes.
func bindingHooks(gr schema.GroupResource) func(env *registry.HookEnv) (*registry.Hooks, error) {
	return func(env *registry.HookEnv) (*registry.Hooks, error) {
		check := func(ctx context.Context, obj, old runtime.Object) error {
			u := registry.UserFrom(ctx)
			if unchecked(env, u) {
				return nil
			}
			m, _ := meta.Accessor(obj)
			if old != nil && onlyGCFields(obj, old) {
				return nil
			}
			var ref rbacv1.RoleRef
			switch o := obj.(type) {
			case *rbacv1.RoleBinding:
				ref = o.RoleRef
			case *rbacv1.ClusterRoleBinding:
				ref = o.RoleRef
			}
			ns := m.GetNamespace()
			roleGR := grClusterRoles
			if ref.Kind == "Role" {
				roleGR = grRoles
			}
			if (ref.Kind == "Role" || ref.Kind == "ClusterRole") && allowedTo(ctx, env, u, "bind", schema.GroupResource{Group: ref.APIGroup, Resource: roleGR.Resource}, ns, ref.Name) {
				return nil
			}
			rules, err := env.RBACRules.GetRoleReferenceRules(ctx, ref, ns)
			if err != nil {
				if apierrors.IsNotFound(err) {
					return apierrors.NewNotFound(roleGR, ref.Name)
				}
				return err
			}
			if err := confirm(ctx, env, u, ns, rules); err != nil {
				return apierrors.NewForbidden(gr, m.GetName(), err)
			}
			return nil
		}
		return &registry.Hooks{
			BeforeCreate: func(ctx context.Context, obj runtime.Object, _ bool) (func(), error) {
				return nil, check(ctx, obj, nil)
			},
			BeforeUpdate: func(ctx context.Context, obj, old runtime.Object, _ bool) (func(), error) {
				return nil, check(ctx, obj, old)
			},
		}, nil
	}
}
