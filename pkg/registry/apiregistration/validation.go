package apiregistration

import (
	"fmt"
	"strings"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	apiregistrationv1 "github.com/skiff-sh/skiff/pkg/apis/apiregistration/v1"
)

// ValidateAPIService: named version.group, a DNS group (empty only for
// v1), a DNS-1035 version, priorities in range, and a service reference
// or none (local: no CA bundle, no insecureSkipTLSVerify).
func ValidateAPIService(a *apiregistrationv1.APIService) field.ErrorList {
	required := a.Spec.Version + "." + a.Spec.Group
	allErrs := apimachineryvalidation.ValidateObjectMeta(&a.ObjectMeta, false, func(name string, _ bool) []string {
		if errs := path.IsValidPathSegmentName(name); len(errs) > 0 {
			return errs
		}
		if name != required {
			return []string{fmt.Sprintf("must be `spec.version+\".\"+spec.group`: %q", required)}
		}
		return nil
	}, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	if a.Spec.Group == "" && a.Spec.Version != "v1" {
		allErrs = append(allErrs, field.Required(spec.Child("group"), "only v1 may have an empty group and it better be legacy kube"))
	}
	if a.Spec.Group != "" {
		for _, msg := range validation.IsDNS1123Subdomain(a.Spec.Group) {
			allErrs = append(allErrs, field.Invalid(spec.Child("group"), a.Spec.Group, msg))
		}
	}
	for _, msg := range validation.IsDNS1035Label(a.Spec.Version) {
		allErrs = append(allErrs, field.Invalid(spec.Child("version"), a.Spec.Version, msg))
	}
	if p := a.Spec.GroupPriorityMinimum; p <= 0 || p > 20000 {
		allErrs = append(allErrs, field.Invalid(spec.Child("groupPriorityMinimum"), p, "must be positive and less than 20000"))
	}
	if p := a.Spec.VersionPriority; p <= 0 || p > 1000 {
		allErrs = append(allErrs, field.Invalid(spec.Child("versionPriority"), p, "must be positive and less than 1000"))
	}
	svc := a.Spec.Service
	if svc == nil {
		if len(a.Spec.CABundle) != 0 {
			allErrs = append(allErrs, field.Invalid(spec.Child("caBundle"), fmt.Sprintf("%d bytes", len(a.Spec.CABundle)), "local APIServices may not have a caBundle"))
		}
		if a.Spec.InsecureSkipTLSVerify {
			allErrs = append(allErrs, field.Invalid(spec.Child("insecureSkipTLSVerify"), a.Spec.InsecureSkipTLSVerify, "local APIServices may not have insecureSkipTLSVerify"))
		}
		return allErrs
	}
	if svc.Namespace == "" {
		allErrs = append(allErrs, field.Required(spec.Child("service", "namespace"), ""))
	}
	if svc.Name == "" {
		allErrs = append(allErrs, field.Required(spec.Child("service", "name"), ""))
	}
	port := int32(443)
	if svc.Port != nil {
		port = *svc.Port
	}
	if errs := validation.IsValidPortNum(int(port)); errs != nil {
		allErrs = append(allErrs, field.Invalid(spec.Child("service", "port"), port, "port is not valid: "+strings.Join(errs, ", ")))
	}
	if a.Spec.InsecureSkipTLSVerify && len(a.Spec.CABundle) > 0 {
		allErrs = append(allErrs, field.Invalid(spec.Child("insecureSkipTLSVerify"), a.Spec.InsecureSkipTLSVerify, "may not be true if caBundle is present"))
	}
	return allErrs
}

// ValidateAPIServiceUpdate validates the new object as a new one.
func ValidateAPIServiceUpdate(a, old *apiregistrationv1.APIService) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&a.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidateAPIService(a)...)
}

// ValidateAPIServiceStatusUpdate: condition statuses are True, False or
// Unknown.
func ValidateAPIServiceStatusUpdate(a, old *apiregistrationv1.APIService) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&a.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	for i, c := range a.Status.Conditions {
		switch c.Status {
		case apiregistrationv1.ConditionTrue, apiregistrationv1.ConditionFalse, apiregistrationv1.ConditionUnknown:
		default:
			allErrs = append(allErrs, field.NotSupported(field.NewPath("status", "conditions").Index(i).Child("status"), c.Status,
				[]string{string(apiregistrationv1.ConditionTrue), string(apiregistrationv1.ConditionFalse), string(apiregistrationv1.ConditionUnknown)}))
		}
	}
	return allErrs
}
