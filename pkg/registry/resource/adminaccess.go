package resource

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/registry"
)

// AdminNamespaceLabel must be "true" on the namespace of a claim (or
// claim template) that asks for admin access to devices.
const AdminNamespaceLabel = resourcev1.DRAAdminNamespaceLabelKey

// adminAccessPath is the first request asking for admin access, or nil.
// Admin access can only be asked for by an exact request.
func adminAccessPath(reqs []resourcev1.DeviceRequest) *field.Path {
	for i, r := range reqs {
		if r.Exactly != nil && r.Exactly.AdminAccess != nil && *r.Exactly.AdminAccess {
			return field.NewPath("spec", "devices", "requests").Index(i).Child("adminAccess")
		}
	}
	return nil
}

// adminAccessHooks refuse, as upstream's strategies do, a new claim or
// claim template asking for admin access in a namespace without the
// admin label (the spec is immutable, so creation is the only check).
func adminAccessHooks(kind string, requests func(runtime.Object) (*metav1.ObjectMeta, []resourcev1.DeviceRequest)) func(env *registry.HookEnv) (*registry.Hooks, error) {
	gk := schema.GroupKind{Group: group, Kind: kind}
	return func(env *registry.HookEnv) (*registry.Hooks, error) {
		return &registry.Hooks{BeforeCreate: func(ctx context.Context, obj runtime.Object, _ bool) (func(), error) {
			meta, reqs := requests(obj)
			p := adminAccessPath(reqs)
			if p == nil {
				return nil, nil
			}
			var errs field.ErrorList
			namespaces := env.Store(schema.GroupResource{Resource: "namespaces"})
			if namespaces == nil {
				errs = append(errs, field.InternalError(p, fmt.Errorf("could not retrieve namespace to verify admin access: namespaces are not served")))
			} else if o, err := namespaces.Get(ctx, "", meta.Namespace, metav1.GetOptions{}); err != nil {
				errs = append(errs, field.InternalError(p, fmt.Errorf("could not retrieve namespace to verify admin access: %w", err)))
			} else if ns, _ := o.(*corev1.Namespace); ns == nil || ns.Labels[AdminNamespaceLabel] != "true" {
				errs = append(errs, field.Forbidden(p, fmt.Sprintf("admin access to devices requires the `%s: true` label on the containing namespace", AdminNamespaceLabel)))
			}
			if len(errs) > 0 {
				return nil, apierrors.NewInvalid(gk, meta.Name, errs)
			}
			return nil, nil
		}}, nil
	}
}
