package apiserver

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/registry/admissionregistration"
	"github.com/skiff-sh/skiff/pkg/storage"
)

var grValidatingPolicies = schema.GroupResource{Group: admissionregistration.Group, Resource: "validatingadmissionpolicies"}

// syncPolicyStatus type-checks every ValidatingAdmissionPolicy generation
// not checked yet against the schemas of the kinds it matches and records
// the warnings in its status (see admissionregistration.MarkTypeChecked
// and policy.TypeChecker), as upstream's type-checking controller does.
func (s *Server) syncPolicyStatus(ctx context.Context) error {
	st := s.stores[grValidatingPolicies]
	var status *registry.Store
	for _, e := range s.endpoints {
		if e.qualified == grValidatingPolicies && e.version == nil {
			status = e.status
		}
	}
	if st == nil || status == nil {
		return nil
	}
	objs, _, err := st.List(ctx, "", registry.ListOptions{})
	if err != nil {
		return err
	}
	for _, o := range objs {
		p := storage.Unwrap(o).(*admissionregistrationv1.ValidatingAdmissionPolicy).DeepCopy()
		if !admissionregistration.MarkTypeChecked(p, s.policyTypes.Check) {
			continue
		}
		_, _, err := status.Update(ctx, "", p.Name, &objInfo{update: func(_ context.Context, old runtime.Object) (runtime.Object, error) {
			cur := storage.Unwrap(old).(*admissionregistrationv1.ValidatingAdmissionPolicy).DeepCopy()
			if cur.Generation == p.Generation {
				cur.Status = p.Status
			} else {
				admissionregistration.MarkTypeChecked(cur, s.policyTypes.Check)
			}
			return cur, nil
		}}, nil, nil, registry.UpdateOptions{NoCreate: true})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
}
