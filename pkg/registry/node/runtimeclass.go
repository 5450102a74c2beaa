package node

import (
	nodev1 "k8s.io/api/node/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/registry/core"
)

// Definitions are the node.k8s.io/v1 resources.
func Definitions() []*registry.Definition {
	rc := registry.NewDefinition("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", false,
		func() runtime.Object { return &nodev1.RuntimeClass{} }, func() runtime.Object { return &nodev1.RuntimeClassList{} },
		&registry.Strategy{Validate: registry.Validate(ValidateRuntimeClass), ValidateUpdate: registry.ValidateUpdate(ValidateRuntimeClassUpdate)})
	return []*registry.Definition{rc}
}

// ValidateRuntimeClass validates a RuntimeClass: the handler is a DNS label
// (what the CRI runtime is configured with), the overhead valid resource
// quantities, the scheduling node selector valid labels and its
// tolerations valid and distinct.
func ValidateRuntimeClass(rc *nodev1.RuntimeClass) field.ErrorList {
	allErrs := core.ValidateObjectMeta(&rc.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	for _, msg := range apivalidation.NameIsDNSLabel(rc.Handler, false) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("handler"), rc.Handler, msg))
	}
	if rc.Overhead != nil {
		allErrs = append(allErrs, core.ValidateOverhead(rc.Overhead.PodFixed, field.NewPath("overhead"))...)
	}
	if s := rc.Scheduling; s != nil {
		p := field.NewPath("scheduling")
		if s.NodeSelector != nil {
			allErrs = append(allErrs, metav1validation.ValidateLabels(s.NodeSelector, p.Child("nodeSelector"))...)
		}
		tp := p.Child("tolerations")
		allErrs = append(allErrs, core.ValidateTolerations(s.Tolerations, tp)...)
		type key struct{ k, op, v, effect string }
		seen := map[key]bool{}
		for i, t := range s.Tolerations {
			k := key{t.Key, string(t.Operator), t.Value, string(t.Effect)}
			if seen[k] {
				allErrs = append(allErrs, field.Duplicate(tp.Index(i), t))
			}
			seen[k] = true
		}
	}
	return allErrs
}

// ValidateRuntimeClassUpdate validates an update: the handler is
// immutable; as upstream, the update is not otherwise re-validated.
func ValidateRuntimeClassUpdate(rc, old *nodev1.RuntimeClass) field.ErrorList {
	allErrs := core.ValidateObjectMetaUpdate(&rc.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, apivalidation.ValidateImmutableField(rc.Handler, old.Handler, field.NewPath("handler"))...)
}
