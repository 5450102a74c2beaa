package apiserver

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/auth/bootstrappolicy"
	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/storage"
)

var (
	grClusterRoles        = schema.GroupResource{Group: rbacv1.GroupName, Resource: "clusterroles"}
	grClusterRoleBindings = schema.GroupResource{Group: rbacv1.GroupName, Resource: "clusterrolebindings"}
	grRoles               = schema.GroupResource{Group: rbacv1.GroupName, Resource: "roles"}
	grRoleBindings        = schema.GroupResource{Group: rbacv1.GroupName, Resource: "rolebindings"}
)

// ensureRBACPolicy creates upstream's bootstrap RBAC policy and reconciles
// what is stored with it, as upstream's rbac/bootstrap-roles post-start
// hook does at every start: missing objects are created; stored ones not
// annotated rbac.authorization.kubernetes.io/autoupdate=false gain the
// labels, annotations, rules, aggregation selectors and subjects they lack
// (nothing is removed); a binding whose roleRef differs is replaced.
// Upstream's one-time migrations for clusters older than 1.9/1.14 (copying
// admin/edit/view rules to system:aggregate-to-*, splitting
// system:discovery) have nothing to migrate in skiff and are not done.
func (s *Server) ensureRBACPolicy(ctx context.Context) error {
	if s.stores[grClusterRoles] == nil || s.stores[grClusterRoleBindings] == nil || s.stores[grRoles] == nil || s.stores[grRoleBindings] == nil {
		return nil
	}
	// Upstream's policy, then skiff's additions for its own controllers.
	roles := append(bootstrappolicy.ClusterRoles(), bootstrappolicy.ControllerRoles()...)
	for _, r := range append(roles, bootstrappolicy.SkiffClusterRoles()...) {
		want := r
		err := s.reconcileRBAC(ctx, grClusterRoles, &want, func(cur runtime.Object) (runtime.Object, rbacOutcome) {
			out, res := bootstrappolicy.ReconcileClusterRole(cur.(*rbacv1.ClusterRole), &want)
			return out, rbacOutcome{changed: res.Changed, protected: res.Protected, missing: len(res.MissingRules)}
		})
		if err != nil {
			return err
		}
	}
	bindings := append(bootstrappolicy.ClusterRoleBindings(), bootstrappolicy.ControllerRoleBindings()...)
	for _, b := range append(bindings, bootstrappolicy.SkiffClusterRoleBindings()...) {
		want := b
		err := s.reconcileRBAC(ctx, grClusterRoleBindings, &want, func(cur runtime.Object) (runtime.Object, rbacOutcome) {
			out, res := bootstrappolicy.ReconcileClusterRoleBinding(cur.(*rbacv1.ClusterRoleBinding), &want)
			return out, rbacOutcome{changed: res.Changed, recreate: res.Recreate, protected: res.Protected, missing: len(res.MissingSubjects)}
		})
		if err != nil {
			return err
		}
	}
	for _, roles := range bootstrappolicy.NamespaceRoles() {
		for _, r := range roles {
			want := r
			if err := s.ensure(ctx, grNamespaces, namespaceObject(want.Namespace)); err != nil {
				return err
			}
			err := s.reconcileRBAC(ctx, grRoles, &want, func(cur runtime.Object) (runtime.Object, rbacOutcome) {
				out, res := bootstrappolicy.ReconcileRole(cur.(*rbacv1.Role), &want)
				return out, rbacOutcome{changed: res.Changed, protected: res.Protected, missing: len(res.MissingRules)}
			})
			if err != nil {
				return err
			}
		}
	}
	for _, bindings := range bootstrappolicy.NamespaceRoleBindings() {
		for _, b := range bindings {
			want := b
			if err := s.ensure(ctx, grNamespaces, namespaceObject(want.Namespace)); err != nil {
				return err
			}
			err := s.reconcileRBAC(ctx, grRoleBindings, &want, func(cur runtime.Object) (runtime.Object, rbacOutcome) {
				out, res := bootstrappolicy.ReconcileRoleBinding(cur.(*rbacv1.RoleBinding), &want)
				return out, rbacOutcome{changed: res.Changed, recreate: res.Recreate, protected: res.Protected, missing: len(res.MissingSubjects)}
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

type rbacOutcome struct {
	changed, recreate, protected bool
	missing                      int // rules or subjects the stored object lacked
}

// reconcileRBAC creates want if it is not stored, else writes what
// reconcile makes of the stored object (recomputed on the latest version
// if the update conflicts).
func (s *Server) reconcileRBAC(ctx context.Context, gr schema.GroupResource, want runtime.Object,
	reconcile func(cur runtime.Object) (runtime.Object, rbacOutcome)) error {
	st := s.stores[gr]
	ns, name := objectName(want)
	// From the watch cache (filled before bootstrap, no other writer yet):
	// a start reads ~120 objects; the update below works on the stored one.
	cur, err := st.Get(ctx, ns, name, metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		return s.ensure(ctx, gr, want.DeepCopyObject())
	}
	if err != nil {
		return err
	}
	_, res := reconcile(storage.Unwrap(cur))
	switch {
	case res.protected && (res.changed || res.recreate):
		if res.missing > 0 {
			s.cfg.Logger.Warn("skipped reconcile-protected bootstrap RBAC object with missing permissions",
				"resource", gr.String(), "namespace", ns, "name", name, "missing", res.missing)
		}
		return nil
	case res.recreate:
		s.cfg.Logger.Info("recreating bootstrap RBAC object with a different roleRef", "resource", gr.String(), "namespace", ns, "name", name)
		if _, err := st.Delete(ctx, ns, name, nil, nil); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s %s/%s: %w", gr, ns, name, err)
		}
		return s.ensure(ctx, gr, want.DeepCopyObject())
	case !res.changed:
		return nil
	}
	s.cfg.Logger.Info("reconciling bootstrap RBAC object", "resource", gr.String(), "namespace", ns, "name", name, "missing", res.missing)
	var e *endpoint
	for _, ep := range s.endpoints {
		if ep.qualified == gr && ep.version == nil {
			e = ep
		}
	}
	_, _, err = st.Update(ctx, ns, name, &objInfo{update: func(_ context.Context, old runtime.Object) (runtime.Object, error) {
		live := storage.Unwrap(old)
		out, res := reconcile(live)
		if res.protected || res.recreate || !res.changed {
			return live.DeepCopyObject(), nil
		}
		return s.trackUpdate(e, "", live, out, "kube-apiserver"), nil
	}}, nil, nil, registry.UpdateOptions{NoCreate: true})
	if err != nil {
		return fmt.Errorf("reconciling %s %s/%s: %w", gr, ns, name, err)
	}
	return nil
}

func namespaceObject(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}
