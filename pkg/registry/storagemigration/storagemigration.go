package storagemigration

import (
	"fmt"
	"strconv"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/registry/core"
)

// Definitions are the storagemigration.k8s.io/v1 resources.
func Definitions() []*registry.Definition {
	d := registry.NewDefinition("storagemigration.k8s.io", "v1", "storageversionmigrations", "StorageVersionMigration", false,
		func() runtime.Object { return &storagemigrationv1.StorageVersionMigration{} },
		func() runtime.Object { return &storagemigrationv1.StorageVersionMigrationList{} },
		&registry.Strategy{Validate: registry.Validate(Validate), ValidateUpdate: registry.ValidateUpdate(ValidateUpdate), HasStatus: true})
	// Upstream requires a resourceVersion on every update of a migration.
	d.Strategy.AllowUnconditionalUpdate = false
	d.ValidateStatus = registry.ValidateUpdate(ValidateStatusUpdate)
	return []*registry.Definition{d}
}

// Validate validates a new StorageVersionMigration: it names the resource
// to migrate.
func Validate(svm *storagemigrationv1.StorageVersionMigration) field.ErrorList {
	allErrs := core.ValidateObjectMeta(&svm.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	if svm.Spec.Resource.Resource == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("spec", "resource", "resource"), "resource is required"))
	}
	return allErrs
}

// ValidateUpdate: the resource to migrate never changes (upstream reports
// it at the bare paths "group" and "resource").
func ValidateUpdate(svm, old *storagemigrationv1.StorageVersionMigration) field.ErrorList {
	allErrs := Validate(svm)
	allErrs = append(allErrs, core.ValidateObjectMetaUpdate(&svm.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
	if svm.Spec.Resource.Group != old.Spec.Resource.Group {
		allErrs = append(allErrs, field.Invalid(field.NewPath("group"), svm.Spec.Resource.Group, "field is immutable"))
	}
	if svm.Spec.Resource.Resource != old.Spec.Resource.Resource {
		allErrs = append(allErrs, field.Invalid(field.NewPath("resource"), svm.Spec.Resource.Resource, "field is immutable"))
	}
	return allErrs
}

// ValidateStatusUpdate validates what the migrator reports.
func ValidateStatusUpdate(svm, old *storagemigrationv1.StorageVersionMigration) field.ErrorList {
	allErrs := core.ValidateObjectMetaUpdate(&svm.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	p := field.NewPath("status")
	rv := svm.Status.ResourceVersion
	if rv != "" {
		n, err := strconv.ParseInt(rv, 10, 64)
		switch {
		case err != nil:
			allErrs = append(allErrs, field.Invalid(p.Child("resourceVersion"), rv, fmt.Sprintf("failed to parse resource version %q: %v", rv, err)))
		case n < 0:
			allErrs = append(allErrs, field.Invalid(p.Child("resourceVersion"), n, "must be greater than or equal to 0"))
		}
	}
	if old.Status.ResourceVersion != "" && old.Status.ResourceVersion != rv {
		allErrs = append(allErrs, field.Invalid(p.Child("resourceVersion"), rv, "field is immutable"))
	}
	cp := p.Child("conditions")
	allErrs = append(allErrs, metav1validation.ValidateConditions(svm.Status.Conditions, cp)...)
	succeeded, failed, running := isTrue(svm, storagemigrationv1.MigrationSucceeded), isTrue(svm, storagemigrationv1.MigrationFailed), isTrue(svm, storagemigrationv1.MigrationRunning)
	conds := svm.Status.Conditions
	if succeeded && failed {
		allErrs = append(allErrs, field.Invalid(cp, conds, "Both success and failed conditions cannot be true at the same time"))
	}
	if succeeded && running {
		allErrs = append(allErrs, field.Invalid(cp, conds, "Running condition cannot be true when success condition is true"))
	}
	if failed && running {
		allErrs = append(allErrs, field.Invalid(cp, conds, "Running condition cannot be true when failed condition is true"))
	}
	if isTrue(old, storagemigrationv1.MigrationSucceeded) && !succeeded {
		allErrs = append(allErrs, field.Invalid(cp, conds, "Success condition cannot be set to false once it is true"))
	}
	if isTrue(old, storagemigrationv1.MigrationFailed) && !failed {
		allErrs = append(allErrs, field.Invalid(cp, conds, "Failed condition cannot be set to false once it is true"))
	}
	return allErrs
}

func isTrue(svm *storagemigrationv1.StorageVersionMigration, t storagemigrationv1.MigrationConditionType) bool {
	for _, c := range svm.Status.Conditions {
		if c.Type == string(t) {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}
