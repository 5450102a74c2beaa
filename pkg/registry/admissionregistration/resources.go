package admissionregistration

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/registry"
)

// Group is the API group of the package's resources.
const Group = "admissionregistration.k8s.io"

// Definitions are the admissionregistration.k8s.io/v1 resources.
func Definitions() []*registry.Definition {
	mwc := registry.NewDefinition(Group, "v1", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", false,
		func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfiguration{} },
		func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfigurationList{} },
		&registry.Strategy{Default: registry.Default(DefaultMutatingWebhookConfiguration), Generation: true,
			Validate:       registry.Validate(ValidateMutatingWebhookConfiguration),
			ValidateUpdate: registry.ValidateUpdate(ValidateMutatingWebhookConfigurationUpdate)})
	mwc.Categories = []string{"api-extensions"}
	vwc := registry.NewDefinition(Group, "v1", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", false,
		func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfiguration{} },
		func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfigurationList{} },
		&registry.Strategy{Default: registry.Default(DefaultValidatingWebhookConfiguration), Generation: true,
			Validate:       registry.Validate(ValidateValidatingWebhookConfiguration),
			ValidateUpdate: registry.ValidateUpdate(ValidateValidatingWebhookConfigurationUpdate)})
	vwc.Categories = []string{"api-extensions"}
	vap := registry.NewDefinition(Group, "v1", "validatingadmissionpolicies", "ValidatingAdmissionPolicy", false,
		func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicy{} },
		func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyList{} },
		&registry.Strategy{Default: registry.Default(DefaultValidatingAdmissionPolicy), Generation: true, HasStatus: true,
			Validate:       registry.Validate(ValidateValidatingAdmissionPolicy),
			ValidateUpdate: registry.ValidateUpdate(ValidateValidatingAdmissionPolicyUpdate)})
	vap.Categories = []string{"api-extensions"}
	vap.ValidateStatus = registry.ValidateUpdate(ValidateValidatingAdmissionPolicyStatusUpdate)
	vapb := registry.NewDefinition(Group, "v1", "validatingadmissionpolicybindings", "ValidatingAdmissionPolicyBinding", false,
		func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{} },
		func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyBindingList{} },
		&registry.Strategy{Default: registry.Default(DefaultValidatingAdmissionPolicyBinding), Generation: true,
			Validate:       registry.Validate(ValidateValidatingAdmissionPolicyBinding),
			ValidateUpdate: registry.ValidateUpdate(ValidateValidatingAdmissionPolicyBindingUpdate)})
	vapb.Categories = []string{"api-extensions"}
	map_ := registry.NewDefinition(Group, "v1", "mutatingadmissionpolicies", "MutatingAdmissionPolicy", false,
		func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicy{} },
		func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyList{} },
		&registry.Strategy{Default: registry.Default(DefaultMutatingAdmissionPolicy), Generation: true,
			Validate:       registry.Validate(ValidateMutatingAdmissionPolicy),
			ValidateUpdate: registry.ValidateUpdate(ValidateMutatingAdmissionPolicyUpdate)})
	map_.Categories = []string{"api-extensions"}
	mapb := registry.NewDefinition(Group, "v1", "mutatingadmissionpolicybindings", "MutatingAdmissionPolicyBinding", false,
		func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyBinding{} },
		func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyBindingList{} },
		&registry.Strategy{Default: registry.Default(DefaultMutatingAdmissionPolicyBinding), Generation: true,
			Validate:       registry.Validate(ValidateMutatingAdmissionPolicyBinding),
			ValidateUpdate: registry.ValidateUpdate(ValidateMutatingAdmissionPolicyBindingUpdate)})
	mapb.Categories = []string{"api-extensions"}
	return []*registry.Definition{mwc, vwc, vap, vapb, map_, mapb}
}

// MarkTypeChecked records that the policy's current generation has been
// type-checked, as upstream's type-checking controller does (clients wait
// for a non-nil status.typeChecking): status.observedGeneration and
// status.typeChecking with the expression warnings check returns (called
// only when the generation was not checked yet, as upstream checks each
// generation once). It reports whether the status changed.
func MarkTypeChecked(p *admissionregistrationv1.ValidatingAdmissionPolicy, check func(*admissionregistrationv1.ValidatingAdmissionPolicy) []admissionregistrationv1.ExpressionWarning) bool {
	if p.Status.ObservedGeneration == p.Generation && p.Status.TypeChecking != nil {
		return false
	}
	p.Status.ObservedGeneration = p.Generation
	p.Status.TypeChecking = &admissionregistrationv1.TypeChecking{}
	if check != nil {
		p.Status.TypeChecking.ExpressionWarnings = check(p)
	}
	return true
}
