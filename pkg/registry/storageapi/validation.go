package storageapi

import (
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Limits on parameters: at most 512 entries and 256 kB in total.
const (
	maxProvisionerParameterSize = 256 * (1 << 10)
	maxProvisionerParameterLen  = 512
)

// ValidateStorageClass validates a new StorageClass (after defaulting).
func ValidateStorageClass(sc *storagev1.StorageClass) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&sc.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	allErrs = append(allErrs, validateProvisioner(sc.Provisioner, field.NewPath("provisioner"))...)
	allErrs = append(allErrs, validateParameters(sc.Parameters, field.NewPath("parameters"))...)
	allErrs = append(allErrs, validateReclaimPolicy(sc, field.NewPath("reclaimPolicy"))...)
	allErrs = append(allErrs, validateVolumeBindingMode(sc, field.NewPath("volumeBindingMode"))...)
	allErrs = append(allErrs, validateAllowedTopologies(sc.AllowedTopologies, field.NewPath("allowedTopologies"))...)
	return allErrs
}

// ValidateStorageClassUpdate validates an update. What a class provisions is
// fixed at creation, since existing volumes were made from it: provisioner,
// parameters, reclaimPolicy and volumeBindingMode are immutable. Labels,
// annotations (including the default-class annotation), mountOptions,
// allowVolumeExpansion and allowedTopologies may change.
func ValidateStorageClassUpdate(sc, old *storagev1.StorageClass) field.ErrorList {
	allErrs := ValidateStorageClass(sc)
	allErrs = append(allErrs, apimachineryvalidation.ValidateObjectMetaUpdate(&sc.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
	// An empty map and no map are the same parameters.
	if !(len(sc.Parameters) == 0 && len(old.Parameters) == 0) && !reflect.DeepEqual(sc.Parameters, old.Parameters) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
	}
	if sc.Provisioner != old.Provisioner {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("provisioner"), "updates to provisioner are forbidden."))
	}
	if !reflect.DeepEqual(sc.ReclaimPolicy, old.ReclaimPolicy) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("reclaimPolicy"), "updates to reclaimPolicy are forbidden."))
	}
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(sc.VolumeBindingMode, old.VolumeBindingMode, field.NewPath("volumeBindingMode"))...)
	return allErrs
}

// validateProvisioner: the provisioner names the CSI driver or in-tree
// plugin, e.g. "ebs.csi.aws.com" or "kubernetes.io/no-provisioner"; it must
// be a qualified name (case ignored).
func validateProvisioner(provisioner string, fldPath *field.Path) field.ErrorList {
	if provisioner == "" {
		return field.ErrorList{field.Required(fldPath, provisioner)}
	}
	var allErrs field.ErrorList
	lower := strings.ToLower(provisioner)
	for _, msg := range content.IsQualifiedName(lower) {
		allErrs = append(allErrs, field.Invalid(fldPath, lower, msg))
	}
	return allErrs
}

// validateParameters: parameters are opaque to Kubernetes (the provisioner
// reads them), so only their count and size are limited.
func validateParameters(params map[string]string, fldPath *field.Path) field.ErrorList {
	if len(params) > maxProvisionerParameterLen {
		return field.ErrorList{field.TooLong(fldPath, "Provisioner Parameters exceeded max allowed", maxProvisionerParameterLen)}
	}
	var allErrs field.ErrorList
	totalSize := 0
	for k, v := range params {
		if k == "" {
			allErrs = append(allErrs, field.Invalid(fldPath, k, "field can not be empty."))
		}
		totalSize += len(k) + len(v)
	}
	if totalSize > maxProvisionerParameterSize {
		allErrs = append(allErrs, field.TooLong(fldPath, "", maxProvisionerParameterSize))
	}
	return allErrs
}

func validateReclaimPolicy(sc *storagev1.StorageClass, fldPath *field.Path) field.ErrorList {
	// Unset only happens without defaulting; upstream would crash, we accept.
	if sc.ReclaimPolicy == nil || *sc.ReclaimPolicy == "" {
		return nil
	}
	switch *sc.ReclaimPolicy {
	case "Delete", "Retain":
		return nil
	}
	// "Recycle" is a valid policy for a PersistentVolume, not for a class.
	return field.ErrorList{field.NotSupported(fldPath, sc.ReclaimPolicy, []string{"Delete", "Retain"})}
}

func validateVolumeBindingMode(sc *storagev1.StorageClass, fldPath *field.Path) field.ErrorList {
	switch {
	case sc.VolumeBindingMode == nil:
		return field.ErrorList{field.Required(fldPath, "")}
	case *sc.VolumeBindingMode == storagev1.VolumeBindingImmediate, *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer:
		return nil
	default:
		return field.ErrorList{field.NotSupported(fldPath, sc.VolumeBindingMode, []string{"Immediate", "WaitForFirstConsumer"})}
	}
}

// validateAllowedTopologies checks the topology terms (e.g. zones) volumes
// may be provisioned in: label keys valid, each key once per term with at
// least one distinct value, and no two identical terms.
func validateAllowedTopologies(terms []corev1.TopologySelectorTerm, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	var seen []map[string]map[string]bool
	for i, term := range terms {
		termPath := fldPath.Index(i)
		exprPath := termPath.Child("matchLabelExpressions")
		expressions := map[string]map[string]bool{}
		for j, req := range term.MatchLabelExpressions {
			reqPath := exprPath.Index(j)
			values := map[string]bool{}
			if len(req.Values) == 0 {
				allErrs = append(allErrs, field.Required(reqPath.Child("values"), ""))
			}
			for k, v := range req.Values {
				if values[v] {
					allErrs = append(allErrs, field.Duplicate(reqPath.Child("values").Index(k), v))
				}
				values[v] = true
			}
			allErrs = append(allErrs, metav1validation.ValidateLabelName(req.Key, reqPath.Child("key"))...)
			if _, dup := expressions[req.Key]; dup {
				allErrs = append(allErrs, field.Duplicate(reqPath.Child("key"), req.Key))
			}
			expressions[req.Key] = values
		}
		for _, other := range seen {
			if reflect.DeepEqual(other, expressions) {
				allErrs = append(allErrs, field.Duplicate(exprPath, ""))
			}
		}
		seen = append(seen, expressions)
	}
	return allErrs
}
