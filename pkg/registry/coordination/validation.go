package coordination

import (
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateLease validates a new Lease. Leases are used for leader election
// and node heartbeats; holderIdentity is free-form (upstream does not check
// it) and renewTime/acquireTime need no checks.
func ValidateLease(lease *coordinationv1.Lease) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&lease.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validateSpec(&lease.Spec, field.NewPath("spec"))...)
}

// ValidateLeaseUpdate validates an update; the whole spec is mutable (that is
// what renewing and taking over a lease do).
func ValidateLeaseUpdate(lease, old *coordinationv1.Lease) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&lease.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateSpec(&lease.Spec, field.NewPath("spec"))...)
}

func validateSpec(spec *coordinationv1.LeaseSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if d := spec.LeaseDurationSeconds; d != nil && *d <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("leaseDurationSeconds"), d, "must be greater than 0"))
	}
	if n := spec.LeaseTransitions; n != nil && *n < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("leaseTransitions"), n, "must be greater than or equal to 0"))
	}
	if spec.Strategy != nil {
		allErrs = append(allErrs, validateStrategy(*spec.Strategy, fldPath.Child("strategy"))...)
	}
	// preferredHolder is the coordinated-leader-election hint; it only makes
	// sense with a strategy.
	if spec.PreferredHolder != nil && *spec.PreferredHolder != "" && (spec.Strategy == nil || *spec.Strategy == "") {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("preferredHolder"), "may only be specified if `strategy` is defined"))
	}
	return allErrs
}

// validateStrategy: an unprefixed strategy must be one Kubernetes defines
// (OldestEmulationVersion); a prefixed one ("example.com/mine") only has to
// be a qualified name.
//
// The error path repeats "strategy" (spec.strategy.strategy) because upstream
// appends the child twice; kept so messages match.
func validateStrategy(strategy coordinationv1.CoordinatedLeaseStrategy, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if !strings.Contains(string(strategy), "/") {
		if strategy != coordinationv1.OldestEmulationVersion {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("strategy"), strategy, []string{string(coordinationv1.OldestEmulationVersion)}))
		}
		return allErrs
	}
	for _, msg := range content.IsQualifiedName(string(strategy)) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("strategy"), strategy, msg))
	}
	return allErrs
}
