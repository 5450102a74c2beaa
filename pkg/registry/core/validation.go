package core

// Validation shared by the core/v1 kinds (and reused by apps and batch):
// object metadata, names, quantities and resource names.
//
// The rules and the error messages follow upstream
// k8s.io/kubernetes/pkg/apis/core/validation, so that `kubectl` shows the
// same "<field path>: <error type>: <detail>" lines as against a real
// cluster. Upstream validates its internal types; here we validate the
// versioned k8s.io/api types directly, which is equivalent for everything a
// user can send.

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	isNegativeErrorMsg     = apivalidation.IsNegativeErrorMsg // "must be greater than or equal to 0"
	fieldImmutableErrorMsg = apivalidation.FieldImmutableErrorMsg
	isNotIntegerErrorMsg   = "must be an integer"
	isNotPositiveErrorMsg  = "must be greater than zero"
	fileModeErrorMsg       = "must be a number between 0 and 0777 (octal), both inclusive"
)

// ValidateObjectMeta validates the metadata of an object being created:
// name (with the kind's name rule), namespace (required for namespaced kinds,
// forbidden otherwise), labels, annotations, owner references and
// finalizers. It adds to apimachinery's checks the Kubernetes rule that a
// finalizer without a "/" must be one of the built-in ones.
func ValidateObjectMeta(meta *metav1.ObjectMeta, namespaced bool, nameFn apivalidation.ValidateNameFunc, fldPath *field.Path) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(meta, namespaced, nameFn, fldPath)
	for i, f := range meta.Finalizers {
		allErrs = append(allErrs, validateKubeFinalizerName(f, fldPath.Child("finalizers").Index(i))...)
	}
	return allErrs
}

// ValidateObjectMetaUpdate validates the metadata of an update: name,
// namespace, uid and creationTimestamp are immutable, resourceVersion must be
// set, and the new labels/annotations/finalizers must be valid.
func ValidateObjectMetaUpdate(newMeta, oldMeta *metav1.ObjectMeta, fldPath *field.Path) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(newMeta, oldMeta, fldPath)
	for i, f := range newMeta.Finalizers {
		allErrs = append(allErrs, validateKubeFinalizerName(f, fldPath.Child("finalizers").Index(i))...)
	}
	return allErrs
}

// validateKubeFinalizerName: a finalizer that is not domain-qualified must be
// one of the standard ones.
func validateKubeFinalizerName(name string, fldPath *field.Path) field.ErrorList {
	if strings.Contains(name, "/") {
		return nil
	}
	switch name {
	case string(corev1.FinalizerKubernetes), metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents:
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath, name, "name is neither a standard finalizer name nor is it fully qualified")}
}

// ValidateQualifiedName checks a "qualified name" ([prefix/]name, the syntax
// of label keys).
func ValidateQualifiedName(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range content.IsLabelKey(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

func validateDNS1123Label(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range content.IsDNS1123Label(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

func validateDNS1123Subdomain(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range content.IsDNS1123Subdomain(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

// validateName applies a kind's name rule to a reference to an object of that
// kind (e.g. spec.serviceAccountName).
func validateName(nameFn apivalidation.ValidateNameFunc, value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range nameFn(value, false) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

func validateNonnegative(value int64, fldPath *field.Path) field.ErrorList {
	return apivalidation.ValidateNonnegativeField(value, fldPath)
}

func validateNonnegativeQuantity(q resource.Quantity, fldPath *field.Path) field.ErrorList {
	if q.Sign() < 0 {
		return field.ErrorList{field.Invalid(fldPath, q.String(), isNegativeErrorMsg)}
	}
	return nil
}

func validatePositiveQuantity(q resource.Quantity, fldPath *field.Path) field.ErrorList {
	if q.Sign() <= 0 {
		return field.ErrorList{field.Invalid(fldPath, q.String(), isNotPositiveErrorMsg)}
	}
	return nil
}

// validateResourceQuantityValue: quantities are never negative, and counted
// resources (pods, services, extended resources, ...) must be whole numbers.
func validateResourceQuantityValue(name corev1.ResourceName, q resource.Quantity, fldPath *field.Path) field.ErrorList {
	allErrs := validateNonnegativeQuantity(q, fldPath)
	if isIntegerResourceName(name) && q.MilliValue()%1000 != 0 {
		allErrs = append(allErrs, field.Invalid(fldPath, q.String(), isNotIntegerErrorMsg))
	}
	return allErrs
}

// Resource names.
//
// Unprefixed names (and names under kubernetes.io/) are "native" and must be
// ones Kubernetes knows; other domain-prefixed names are extended resources
// (e.g. nvidia.com/gpu) that the scheduler counts but cannot overcommit.

func isHugePageResourceName(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

func isNativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

func isExtendedResourceName(name corev1.ResourceName) bool {
	if isNativeResource(name) || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(content.IsLabelKey(corev1.DefaultResourceRequestsPrefix+string(name))) == 0
}

// isOvercommitAllowed: requests may be lower than limits for native
// resources except hugepages; extended resources must have request == limit.
func isOvercommitAllowed(name corev1.ResourceName) bool {
	return isNativeResource(name) && !isHugePageResourceName(name)
}

func isIntegerResourceName(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices,
		corev1.ResourceReplicationControllers, corev1.ResourceSecrets, corev1.ResourceConfigMaps,
		corev1.ResourcePersistentVolumeClaims, corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers:
		return true
	}
	return isExtendedResourceName(name)
}

// isStandardQuotaResourceName lists what a ResourceQuota can limit without a
// domain prefix (count/<resource> has a "/" and is accepted as qualified).
func isStandardQuotaResourceName(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsStorage,
		corev1.ResourceRequestsEphemeralStorage, corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory,
		corev1.ResourceLimitsEphemeralStorage, corev1.ResourcePods, corev1.ResourceQuotas,
		corev1.ResourceServices, corev1.ResourceReplicationControllers, corev1.ResourceSecrets,
		corev1.ResourcePersistentVolumeClaims, corev1.ResourceConfigMaps,
		corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers:
		return true
	}
	return isHugePageResourceName(name) || strings.HasPrefix(string(name), corev1.ResourceRequestsHugePagesPrefix)
}

// isStandardResourceName is isStandardQuotaResourceName plus "storage".
func isStandardResourceName(name corev1.ResourceName) bool {
	return name == corev1.ResourceStorage || isStandardQuotaResourceName(name)
}

// validateResourceName checks a resource name in any resource list.
func validateResourceName(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	allErrs := ValidateQualifiedName(string(name), fldPath)
	if len(allErrs) != 0 {
		return allErrs
	}
	if !strings.Contains(string(name), "/") && !isStandardResourceName(name) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, "must be a standard resource type or fully qualified"))
	}
	return allErrs
}

// validateContainerResourceName checks a resource name in a container's
// requests or limits.
func validateContainerResourceName(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	allErrs := validateResourceName(name, fldPath)
	if !strings.Contains(string(name), "/") {
		switch {
		case name == corev1.ResourceCPU, name == corev1.ResourceMemory, name == corev1.ResourceEphemeralStorage,
			isHugePageResourceName(name):
		default:
			allErrs = append(allErrs, field.Invalid(fldPath, name, "must be a standard resource for containers"))
		}
	} else if !isNativeResource(name) && !isExtendedResourceName(name) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, "doesn't follow extended resource name standard"))
	}
	return allErrs
}

// validateQuotaResourceName checks a resource name in a ResourceQuota.
func validateQuotaResourceName(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	allErrs := validateResourceName(name, fldPath)
	if !strings.Contains(string(name), "/") && !isStandardQuotaResourceName(name) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, "must be a standard resource for quota"))
	}
	return allErrs
}

// validateLabelSelector validates a metav1.LabelSelector strictly (label
// values in the selector must be valid label values).
func validateLabelSelector(sel *metav1.LabelSelector, fldPath *field.Path) field.ErrorList {
	return metavalidation.ValidateLabelSelector(sel, metavalidation.LabelSelectorValidationOptions{}, fldPath)
}

// validateImmutable reports "field is immutable" when a field changed.
func validateImmutable(newVal, oldVal any, fldPath *field.Path) field.ErrorList {
	return apivalidation.ValidateImmutableField(newVal, oldVal, fldPath)
}

// inclusiveRangeError mirrors the upstream message for numeric ranges.
func inclusiveRangeError(lo, hi int) string {
	return fmt.Sprintf(`must be between %d and %d, inclusive`, lo, hi)
}
