package policy

import (
	"strconv"
	"strings"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidatePodDisruptionBudget validates a new PDB.
//
// Upstream's PDB validation does not check metadata itself; the generic
// registry does it afterwards, with the lenient path-segment name rule. We do
// the same check here so the registry gets one complete list.
func ValidatePodDisruptionBudget(pdb *policyv1.PodDisruptionBudget) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&pdb.ObjectMeta, true, pathSegmentName, field.NewPath("metadata"))
	return append(allErrs, validateSpec(&pdb.Spec, metav1validation.LabelSelectorValidationOptions{}, field.NewPath("spec"))...)
}

// ValidatePodDisruptionBudgetUpdate validates an update. The spec has been
// mutable since Kubernetes 1.15. A selector that already holds a label value
// that is invalid today is tolerated, so such objects can still be updated.
func ValidatePodDisruptionBudgetUpdate(pdb, old *policyv1.PodDisruptionBudget) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&pdb.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	opts := metav1validation.LabelSelectorValidationOptions{
		AllowInvalidLabelValueInSelector: metav1validation.LabelSelectorHasInvalidLabelValue(old.Spec.Selector),
	}
	return append(allErrs, validateSpec(&pdb.Spec, opts, field.NewPath("spec"))...)
}

// ValidatePodDisruptionBudgetStatusUpdate validates a write to the status
// subresource (done by the disruption controller and by evictions).
func ValidatePodDisruptionBudgetStatusUpdate(pdb, old *policyv1.PodDisruptionBudget) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&pdb.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	status := field.NewPath("status")
	allErrs = append(allErrs, metav1validation.ValidateConditions(pdb.Status.Conditions, status.Child("conditions"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(pdb.Status.DisruptionsAllowed), status.Child("disruptionsAllowed"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(pdb.Status.CurrentHealthy), status.Child("currentHealthy"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(pdb.Status.DesiredHealthy), status.Child("desiredHealthy"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(pdb.Status.ExpectedPods), status.Child("expectedPods"))...)
	return allErrs
}

func validateSpec(spec *policyv1.PodDisruptionBudgetSpec, opts metav1validation.LabelSelectorValidationOptions, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.MinAvailable != nil && spec.MaxUnavailable != nil {
		allErrs = append(allErrs, field.Invalid(fldPath, spec, "minAvailable and maxUnavailable cannot be both set"))
	}
	if spec.MinAvailable != nil {
		allErrs = append(allErrs, validateIntOrPercent(*spec.MinAvailable, fldPath.Child("minAvailable"))...)
	}
	if spec.MaxUnavailable != nil {
		allErrs = append(allErrs, validateIntOrPercent(*spec.MaxUnavailable, fldPath.Child("maxUnavailable"))...)
	}
	allErrs = append(allErrs, metav1validation.ValidateLabelSelector(spec.Selector, opts, fldPath.Child("selector"))...)
	if p := spec.UnhealthyPodEvictionPolicy; p != nil {
		switch *p {
		case policyv1.IfHealthyBudget, policyv1.AlwaysAllow:
		default:
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("unhealthyPodEvictionPolicy"), *p, []string{"AlwaysAllow", "IfHealthyBudget"}))
		}
	}
	return allErrs
}

// validateIntOrPercent accepts a non-negative integer or a percentage
// between 0% and 100%, like "5" or "25%" (apps' ValidatePositiveIntOrPercent
// plus IsNotMoreThan100Percent upstream).
func validateIntOrPercent(v intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	switch v.Type {
	case intstr.Int:
		return apimachineryvalidation.ValidateNonnegativeField(int64(v.IntValue()), fldPath)
	case intstr.String:
		if msgs := utilvalidation.IsValidPercent(v.StrVal); len(msgs) > 0 {
			var allErrs field.ErrorList
			for _, msg := range msgs {
				allErrs = append(allErrs, field.Invalid(fldPath, v, msg))
			}
			return allErrs
		}
		if percent, _ := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%")); percent > 100 {
			return field.ErrorList{field.Invalid(fldPath, v, "must not be greater than 100%")}
		}
		return nil
	default:
		return field.ErrorList{field.Invalid(fldPath, v, "must be an integer or percentage (e.g '5%')")}
	}
}

// pathSegmentName is the generic name rule: the name must be usable as one
// URL path segment.
func pathSegmentName(name string, prefix bool) []string {
	if prefix {
		return content.IsPathSegmentPrefix(name)
	}
	return content.IsPathSegmentName(name)
}
