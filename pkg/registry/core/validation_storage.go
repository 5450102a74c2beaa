package core

// Validation of PersistentVolumes and PersistentVolumeClaims.

import (
	"fmt"
	"path"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validateAccessModes(modes []corev1.PersistentVolumeAccessMode, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	valid := []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOnce, corev1.ReadWriteOncePod}
	rwop, other := false, false
	for _, m := range modes {
		switch m {
		case corev1.ReadWriteOncePod:
			rwop = true
		case corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOnce:
			other = true
		default:
			allErrs = append(allErrs, field.NotSupported(fldPath, m, valid))
		}
	}
	if rwop && other {
		allErrs = append(allErrs, field.Forbidden(fldPath, "may not use ReadWriteOncePod with other access modes"))
	}
	return allErrs
}

func validateVolumeMode(mode *corev1.PersistentVolumeMode, fldPath *field.Path) field.ErrorList {
	if mode == nil {
		return nil
	}
	return validateEnumAllowEmpty(fldPath, *mode, corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem)
}

// ValidatePersistentVolume validates a PersistentVolume being created.
func ValidatePersistentVolume(pv *corev1.PersistentVolume) field.ErrorList {
	allErrs := ValidateObjectMeta(&pv.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validatePersistentVolumeSpec(&pv.Spec, field.NewPath("spec"))...)
}

func validatePersistentVolumeSpec(spec *corev1.PersistentVolumeSpec, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(spec.AccessModes) == 0 {
		allErrs = append(allErrs, field.Required(p.Child("accessModes"), ""))
	}
	allErrs = append(allErrs, validateAccessModes(spec.AccessModes, p.Child("accessModes"))...)

	capPath := p.Child("capacity")
	if len(spec.Capacity) == 0 {
		allErrs = append(allErrs, field.Required(capPath, ""))
	}
	if _, ok := spec.Capacity[corev1.ResourceStorage]; !ok || len(spec.Capacity) > 1 {
		allErrs = append(allErrs, field.NotSupported(capPath, spec.Capacity, []corev1.ResourceName{corev1.ResourceStorage}))
	}
	for name, q := range spec.Capacity {
		allErrs = append(allErrs, validatePositiveQuantity(q, capPath.Key(string(name)))...)
	}
	if spec.PersistentVolumeReclaimPolicy != "" {
		allErrs = append(allErrs, validateEnum(p.Child("persistentVolumeReclaimPolicy"), spec.PersistentVolumeReclaimPolicy,
			corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRecycle, corev1.PersistentVolumeReclaimRetain)...)
	}
	hasNodeAffinity := false
	if na := spec.NodeAffinity; na != nil {
		hasNodeAffinity = true
		if na.Required == nil {
			allErrs = append(allErrs, field.Required(p.Child("nodeAffinity", "required"), "must specify required node constraints"))
		} else {
			allErrs = append(allErrs, validateNodeSelector(na.Required, false, p.Child("nodeAffinity", "required"))...)
		}
	}

	// Exactly one volume source. Simplified: only hostPath, nfs, local and
	// csi sources have their fields checked.
	set := setVolumeSources(&spec.PersistentVolumeSource)
	if len(set) == 0 {
		allErrs = append(allErrs, field.Required(p, "must specify a volume type"))
	}
	for i, name := range set {
		if i > 0 {
			allErrs = append(allErrs, field.Forbidden(p.Child(name), "may not specify more than 1 volume type"))
		}
	}
	if len(set) == 1 {
		src := &spec.PersistentVolumeSource
		switch {
		case src.HostPath != nil:
			allErrs = append(allErrs, validateHostPath(src.HostPath, p.Child("hostPath"))...)
		case src.NFS != nil:
			np := p.Child("nfs")
			if src.NFS.Server == "" {
				allErrs = append(allErrs, field.Required(np.Child("server"), ""))
			}
			if src.NFS.Path == "" {
				allErrs = append(allErrs, field.Required(np.Child("path"), ""))
			}
			if !path.IsAbs(src.NFS.Path) {
				allErrs = append(allErrs, field.Invalid(np.Child("path"), src.NFS.Path, "must be an absolute path"))
			}
		case src.Local != nil:
			lp := p.Child("local")
			if src.Local.Path == "" {
				allErrs = append(allErrs, field.Required(lp.Child("path"), ""))
			} else {
				allErrs = append(allErrs, validatePathNoBacksteps(src.Local.Path, lp.Child("path"))...)
			}
			if !hasNodeAffinity {
				allErrs = append(allErrs, field.Required(p.Child("nodeAffinity"), "Local volume requires node affinity"))
			}
		case src.CSI != nil:
			cp := p.Child("csi")
			allErrs = append(allErrs, validateCSIDriverName(src.CSI.Driver, cp.Child("driver"))...)
			if src.CSI.VolumeHandle == "" {
				allErrs = append(allErrs, field.Required(cp.Child("volumeHandle"), ""))
			}
			for _, ref := range []struct {
				name string
				ref  *corev1.SecretReference
			}{{"controllerPublishSecretRef", src.CSI.ControllerPublishSecretRef}, {"controllerExpandSecretRef", src.CSI.ControllerExpandSecretRef},
				{"nodePublishSecretRef", src.CSI.NodePublishSecretRef}, {"nodeExpandSecretRef", src.CSI.NodeExpandSecretRef}} {
				if ref.ref != nil {
					allErrs = append(allErrs, validateSecretReference(ref.ref, cp.Child(ref.name))...)
				}
			}
		}
	}
	if spec.HostPath != nil && path.Clean(spec.HostPath.Path) == "/" && spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRecycle {
		allErrs = append(allErrs, field.Forbidden(p.Child("persistentVolumeReclaimPolicy"), "may not be 'recycle' for a hostPath mount of '/'"))
	}
	if spec.StorageClassName != "" {
		allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, spec.StorageClassName, p.Child("storageClassName"))...)
	}
	allErrs = append(allErrs, validateVolumeMode(spec.VolumeMode, p.Child("volumeMode"))...)
	if vac := spec.VolumeAttributesClassName; vac != nil {
		if *vac == "" {
			allErrs = append(allErrs, field.Required(p.Child("volumeAttributesClassName"), "an empty string is disallowed"))
		} else {
			allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, *vac, p.Child("volumeAttributesClassName"))...)
		}
		if spec.CSI == nil {
			allErrs = append(allErrs, field.Required(p.Child("csi"), "has to be specified when using volumeAttributesClassName"))
		}
	}
	return allErrs
}

func validateSecretReference(ref *corev1.SecretReference, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if ref.Name == "" {
		allErrs = append(allErrs, field.Required(p.Child("name"), ""))
	} else {
		allErrs = append(allErrs, validateDNS1123Subdomain(ref.Name, p.Child("name"))...)
	}
	if ref.Namespace == "" {
		allErrs = append(allErrs, field.Required(p.Child("namespace"), ""))
	} else {
		allErrs = append(allErrs, validateDNS1123Label(ref.Namespace, p.Child("namespace"))...)
	}
	return allErrs
}

// ValidatePersistentVolumeUpdate validates an update of a PersistentVolume:
// the volume source, volume mode and (once set) node affinity are immutable.
func ValidatePersistentVolumeUpdate(pv, old *corev1.PersistentVolume) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&pv.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, ValidatePersistentVolume(pv)...)

	newSrc := pv.Spec.PersistentVolumeSource.DeepCopy()
	// A CSI volume may gain a controllerExpandSecretRef.
	if old.Spec.CSI != nil && old.Spec.CSI.ControllerExpandSecretRef == nil && newSrc.CSI != nil {
		newSrc.CSI.ControllerExpandSecretRef = nil
	}
	if !apiequality.Semantic.DeepEqual(*newSrc, old.Spec.PersistentVolumeSource) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "persistentvolumesource"),
			fmt.Sprintf("spec.persistentvolumesource is immutable after creation\n%v", diff.Diff(old.Spec.PersistentVolumeSource, *newSrc))))
	}
	// Upstream reports these two without the "spec." prefix.
	allErrs = append(allErrs, validateImmutable(pv.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	if old.Spec.NodeAffinity != nil && !apiequality.Semantic.DeepEqual(pv.Spec.NodeAffinity, old.Spec.NodeAffinity) {
		// Simplified: upstream allows replacing beta topology labels by their
		// GA names here.
		allErrs = append(allErrs, field.Invalid(field.NewPath("nodeAffinity"), pv.Spec.NodeAffinity, fieldImmutableErrorMsg+", except for updating from beta label to GA"))
	}
	if old.Spec.VolumeAttributesClassName != nil && pv.Spec.VolumeAttributesClassName == nil {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "volumeAttributesClassName"), "update from non-nil value to nil is forbidden"))
	}
	return allErrs
}

// ValidatePersistentVolumeStatusUpdate validates an update through
// persistentvolumes/status.
func ValidatePersistentVolumeStatusUpdate(pv, old *corev1.PersistentVolume) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&pv.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	if pv.ResourceVersion == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("resourceVersion"), ""))
	}
	return allErrs
}

// ValidatePersistentVolumeClaim validates a PersistentVolumeClaim being
// created.
func ValidatePersistentVolumeClaim(pvc *corev1.PersistentVolumeClaim) field.ErrorList {
	allErrs := ValidateObjectMeta(&pvc.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validatePersistentVolumeClaimSpec(&pvc.Spec, field.NewPath("spec"))...)
}

func validatePersistentVolumeClaimSpec(spec *corev1.PersistentVolumeClaimSpec, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(spec.AccessModes) == 0 {
		allErrs = append(allErrs, field.Required(p.Child("accessModes"), "at least 1 access mode is required"))
	}
	if spec.Selector != nil {
		allErrs = append(allErrs, validateLabelSelector(spec.Selector, p.Child("selector"))...)
	}
	allErrs = append(allErrs, validateAccessModes(spec.AccessModes, p.Child("accessModes"))...)
	// Upstream's path is "spec.resources[storage]".
	storagePath := p.Child("resources").Key(string(corev1.ResourceStorage))
	if q, ok := spec.Resources.Requests[corev1.ResourceStorage]; !ok {
		allErrs = append(allErrs, field.Required(storagePath, ""))
	} else if errs := validatePositiveQuantity(q, storagePath); len(errs) > 0 {
		allErrs = append(allErrs, errs...)
	} else {
		allErrs = append(allErrs, validateResourceQuantityValue(corev1.ResourceStorage, q, storagePath)...)
	}
	if sc := spec.StorageClassName; sc != nil && *sc != "" {
		allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, *sc, p.Child("storageClassName"))...)
	}
	allErrs = append(allErrs, validateVolumeMode(spec.VolumeMode, p.Child("volumeMode"))...)
	if ds := spec.DataSource; ds != nil {
		allErrs = append(allErrs, validateDataSource(ds.Name, ds.Kind, ds.APIGroup, p.Child("dataSource"))...)
	}
	if ref := spec.DataSourceRef; ref != nil {
		rp := p.Child("dataSourceRef")
		allErrs = append(allErrs, validateDataSource(ref.Name, ref.Kind, ref.APIGroup, rp)...)
		if ref.Namespace != nil && *ref.Namespace != "" {
			allErrs = append(allErrs, validateName(apivalidation.ValidateNamespaceName, *ref.Namespace, rp.Child("namespace"))...)
		}
	}
	if ref := spec.DataSourceRef; ref != nil && ref.Namespace != nil && *ref.Namespace != "" {
		if spec.DataSource != nil {
			allErrs = append(allErrs, field.Invalid(p, p.Child("dataSource"), "may not be specified when dataSourceRef.namespace is specified"))
		}
	} else if ds := spec.DataSource; ds != nil && ref != nil {
		if !apiequality.Semantic.DeepEqual(ds.APIGroup, ref.APIGroup) || ds.Kind != ref.Kind || ds.Name != ref.Name {
			allErrs = append(allErrs, field.Invalid(p, p.Child("dataSource"), "must match dataSourceRef"))
		}
	}
	if vac := spec.VolumeAttributesClassName; vac != nil && *vac != "" {
		allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, *vac, p.Child("volumeAttributesClassName"))...)
	}
	return allErrs
}

func validateDataSource(name, kind string, apiGroup *string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if name == "" {
		allErrs = append(allErrs, field.Required(p.Child("name"), ""))
	}
	if kind == "" {
		allErrs = append(allErrs, field.Required(p.Child("kind"), ""))
	}
	group := ""
	if apiGroup != nil {
		group = *apiGroup
	}
	if group == "" && kind != "PersistentVolumeClaim" {
		allErrs = append(allErrs, field.Invalid(p, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"))
	}
	if group != "" {
		allErrs = append(allErrs, validateDNS1123Subdomain(group, p.Child("apiGroup"))...)
	}
	return allErrs
}

// ValidatePersistentVolumeClaimUpdate validates an update of a claim. The
// spec is immutable, except that: volumeName may be set once (binding),
// storageClassName may go from unset to set, and a bound claim may grow its
// storage request or change its volume attributes class.
func ValidatePersistentVolumeClaimUpdate(pvc, old *corev1.PersistentVolumeClaim) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&pvc.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, ValidatePersistentVolumeClaim(pvc)...)

	newSpec, oldSpec := pvc.Spec.DeepCopy(), old.Spec.DeepCopy()
	if oldSpec.VolumeName == "" {
		oldSpec.VolumeName = newSpec.VolumeName
	}
	// Simplified: upstream also allows moving the storage class from the
	// legacy volume.beta.kubernetes.io/storage-class annotation to the field.
	annotationClass, hasAnnotation := old.Annotations[corev1.BetaStorageClassAnnotation]
	allErrs = append(allErrs, validateImmutable(pvc.Annotations[corev1.BetaStorageClassAnnotation], annotationClass,
		field.NewPath("metadata", "annotations", corev1.BetaStorageClassAnnotation))...)
	if newSpec.StorageClassName != nil && oldSpec.StorageClassName == nil && (!hasAnnotation || *newSpec.StorageClassName == annotationClass) {
		newSpec.StorageClassName = nil
	}
	if pvc.Status.Phase == corev1.ClaimBound {
		if newSpec.Resources.Requests != nil {
			if q, ok := oldSpec.Resources.Requests[corev1.ResourceStorage]; ok {
				newSpec.Resources.Requests[corev1.ResourceStorage] = q
			} else {
				delete(newSpec.Resources.Requests, corev1.ResourceStorage)
			}
		}
		if newSpec.VolumeAttributesClassName != nil {
			newSpec.VolumeAttributesClassName = oldSpec.VolumeAttributesClassName
		}
	}
	if !apiequality.Semantic.DeepEqual(*newSpec, *oldSpec) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec"),
			fmt.Sprintf("spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n%v", diff.Diff(*oldSpec, *newSpec))))
	}
	// Shrinking is only allowed back down to (above) the actual capacity, to
	// recover from a failed expansion.
	newSize, oldSize := pvc.Spec.Resources.Requests[corev1.ResourceStorage], old.Spec.Resources.Requests[corev1.ResourceStorage]
	if newSize.Cmp(oldSize) < 0 {
		statusSize := old.Status.Capacity[corev1.ResourceStorage]
		if newSize.Cmp(statusSize) <= 0 {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "resources", "requests", "storage"), "field can not be less than status.capacity"))
		}
	}
	allErrs = append(allErrs, validateImmutable(pvc.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	if o := old.Spec.VolumeAttributesClassName; o != nil {
		switch n := pvc.Spec.VolumeAttributesClassName; {
		case n == nil:
			allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "volumeAttributesClassName"), "update from non-nil value to nil is forbidden"))
		case *n == "":
			allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "volumeAttributesClassName"), "update from non-nil value to an empty string is forbidden"))
		}
	}
	return allErrs
}

// ValidatePersistentVolumeClaimStatusUpdate validates an update through
// persistentvolumeclaims/status.
func ValidatePersistentVolumeClaimStatusUpdate(pvc, old *corev1.PersistentVolumeClaim) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&pvc.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	if pvc.ResourceVersion == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("resourceVersion"), ""))
	}
	if len(pvc.Spec.AccessModes) == 0 {
		allErrs = append(allErrs, field.Required(field.NewPath("Spec", "accessModes"), ""))
	}
	capPath := field.NewPath("status", "capacity")
	for name, q := range pvc.Status.Capacity {
		allErrs = append(allErrs, validateNonnegativeQuantity(q, capPath.Key(string(name)))...)
	}
	allocPath := field.NewPath("status", "allocatedResources")
	for name, q := range pvc.Status.AllocatedResources {
		allErrs = append(allErrs, validateNonnegativeQuantity(q, allocPath.Key(string(name)))...)
	}
	return allErrs
}
