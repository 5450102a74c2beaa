package rbac

import (
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// RBAC object names only need to be usable as a URL path segment, so
// "system:controller:deployment-controller" is a valid ClusterRole name.
func rbacName(name string, prefix bool) []string {
	if prefix {
		return content.IsPathSegmentPrefix(name)
	}
	return content.IsPathSegmentName(name)
}

// ValidateRole validates a Role.
func ValidateRole(role *rbacv1.Role) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&role.ObjectMeta, true, rbacName, field.NewPath("metadata"))
	for i, rule := range role.Rules {
		allErrs = append(allErrs, validatePolicyRule(rule, true, field.NewPath("rules").Index(i))...)
	}
	return allErrs
}

// ValidateRoleUpdate validates an update of a Role; its rules may change.
func ValidateRoleUpdate(role, old *rbacv1.Role) field.ErrorList {
	allErrs := ValidateRole(role)
	return append(allErrs, apimachineryvalidation.ValidateObjectMetaUpdate(&role.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
}

// ValidateClusterRole validates a ClusterRole, including its aggregationRule.
func ValidateClusterRole(role *rbacv1.ClusterRole) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&role.ObjectMeta, false, rbacName, field.NewPath("metadata"))
	for i, rule := range role.Rules {
		allErrs = append(allErrs, validatePolicyRule(rule, false, field.NewPath("rules").Index(i))...)
	}
	if role.AggregationRule != nil {
		selectorsPath := field.NewPath("aggregationRule", "clusterRoleSelectors")
		if len(role.AggregationRule.ClusterRoleSelectors) == 0 {
			allErrs = append(allErrs, field.Required(selectorsPath, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
		}
		for i := range role.AggregationRule.ClusterRoleSelectors {
			selector := &role.AggregationRule.ClusterRoleSelectors[i]
			allErrs = append(allErrs, metav1validation.ValidateLabelSelector(selector, metav1validation.LabelSelectorValidationOptions{}, selectorsPath.Index(i))...)
			if _, err := metav1.LabelSelectorAsSelector(selector); err != nil {
				allErrs = append(allErrs, field.Invalid(selectorsPath.Index(i), selector, "invalid label selector."))
			}
		}
	}
	return allErrs
}

// ValidateClusterRoleUpdate validates an update of a ClusterRole.
func ValidateClusterRoleUpdate(role, old *rbacv1.ClusterRole) field.ErrorList {
	allErrs := ValidateClusterRole(role)
	return append(allErrs, apimachineryvalidation.ValidateObjectMetaUpdate(&role.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
}

// validatePolicyRule: a rule grants verbs either on resources (apiGroups +
// resources, optionally narrowed to resourceNames) or on non-resource URLs
// such as /healthz, never both. Non-resource URLs are not namespaced, so only
// ClusterRoles may name them.
func validatePolicyRule(rule rbacv1.PolicyRule, isNamespaced bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(rule.Verbs) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("verbs"), "verbs must contain at least one value"))
	}

	if len(rule.NonResourceURLs) > 0 {
		if isNamespaced {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("nonResourceURLs"), rule.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
		}
		if len(rule.APIGroups) > 0 || len(rule.Resources) > 0 || len(rule.ResourceNames) > 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("nonResourceURLs"), rule.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
		}
		return allErrs
	}

	if len(rule.APIGroups) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("apiGroups"), "resource rules must supply at least one api group"))
	}
	if len(rule.Resources) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("resources"), "resource rules must supply at least one resource"))
	}
	return allErrs
}

// ValidateRoleBinding validates a RoleBinding. It may reference a Role in its
// namespace or a ClusterRole (whose rules then apply in this namespace only).
func ValidateRoleBinding(binding *rbacv1.RoleBinding) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&binding.ObjectMeta, true, rbacName, field.NewPath("metadata"))
	allErrs = append(allErrs, validateRoleRef(binding.RoleRef, []string{"Role", "ClusterRole"})...)
	for i, subject := range binding.Subjects {
		allErrs = append(allErrs, validateSubject(subject, true, field.NewPath("subjects").Index(i))...)
	}
	return allErrs
}

// ValidateRoleBindingUpdate validates an update of a RoleBinding. The roleRef
// is immutable: to point a binding elsewhere, delete and recreate it (which
// makes the grant change explicit to the authorizer and auditors).
func ValidateRoleBindingUpdate(binding, old *rbacv1.RoleBinding) field.ErrorList {
	allErrs := ValidateRoleBinding(binding)
	allErrs = append(allErrs, apimachineryvalidation.ValidateObjectMetaUpdate(&binding.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
	if binding.RoleRef != old.RoleRef {
		allErrs = append(allErrs, field.Invalid(field.NewPath("roleRef"), binding.RoleRef, "cannot change roleRef"))
	}
	return allErrs
}

// ValidateClusterRoleBinding validates a ClusterRoleBinding; it can only
// reference a ClusterRole.
func ValidateClusterRoleBinding(binding *rbacv1.ClusterRoleBinding) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&binding.ObjectMeta, false, rbacName, field.NewPath("metadata"))
	allErrs = append(allErrs, validateRoleRef(binding.RoleRef, []string{"ClusterRole"})...)
	for i, subject := range binding.Subjects {
		allErrs = append(allErrs, validateSubject(subject, false, field.NewPath("subjects").Index(i))...)
	}
	return allErrs
}

// ValidateClusterRoleBindingUpdate validates an update of a
// ClusterRoleBinding; roleRef is immutable.
func ValidateClusterRoleBindingUpdate(binding, old *rbacv1.ClusterRoleBinding) field.ErrorList {
	allErrs := ValidateClusterRoleBinding(binding)
	allErrs = append(allErrs, apimachineryvalidation.ValidateObjectMetaUpdate(&binding.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
	if binding.RoleRef != old.RoleRef {
		allErrs = append(allErrs, field.Invalid(field.NewPath("roleRef"), binding.RoleRef, "cannot change roleRef"))
	}
	return allErrs
}

func validateRoleRef(ref rbacv1.RoleRef, kinds []string) field.ErrorList {
	var allErrs field.ErrorList
	path := field.NewPath("roleRef")
	if ref.APIGroup != rbacv1.GroupName {
		allErrs = append(allErrs, field.NotSupported(path.Child("apiGroup"), ref.APIGroup, []string{rbacv1.GroupName}))
	}
	kindOK := false
	for _, k := range kinds {
		kindOK = kindOK || ref.Kind == k
	}
	if !kindOK {
		allErrs = append(allErrs, field.NotSupported(path.Child("kind"), ref.Kind, kinds))
	}
	if ref.Name == "" {
		allErrs = append(allErrs, field.Required(path.Child("name"), ""))
	} else {
		for _, msg := range rbacName(ref.Name, false) {
			allErrs = append(allErrs, field.Invalid(path.Child("name"), ref.Name, msg))
		}
	}
	return allErrs
}

// validateSubject checks who a binding grants to. A ServiceAccount subject
// in a ClusterRoleBinding must say which namespace it lives in; in a
// RoleBinding it defaults to the binding's namespace.
func validateSubject(subject rbacv1.Subject, isNamespaced bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if subject.Name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	}

	switch subject.Kind {
	case rbacv1.ServiceAccountKind:
		if subject.Name != "" {
			for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(subject.Name, false) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), subject.Name, msg))
			}
		}
		if subject.APIGroup != "" {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("apiGroup"), subject.APIGroup, []string{""}))
		}
		if !isNamespaced && subject.Namespace == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("namespace"), ""))
		}
	case rbacv1.UserKind, rbacv1.GroupKind:
		// Any non-empty string names a user or group: they come from the
		// authenticator, not from API objects. (Upstream reports an empty
		// name twice, as Required and as this Invalid.)
		if subject.Name == "" {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), subject.Name, strings.ToLower(subject.Kind)+" name cannot be empty"))
		}
		if subject.APIGroup != rbacv1.GroupName {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("apiGroup"), subject.APIGroup, []string{rbacv1.GroupName}))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("kind"), subject.Kind,
			[]string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}))
	}
	return allErrs
}
