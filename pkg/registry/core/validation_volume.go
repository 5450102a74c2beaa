package core

// Validation of pod volumes.

import (
	"fmt"
	"path"
	"path/filepath"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateVolumes checks the pod's volumes and returns the valid ones by
// name (containers' volumeMounts are checked against it).
func validateVolumes(volumes []corev1.Volume, fldPath *field.Path, ctx podSpecContext) (map[string]corev1.VolumeSource, field.ErrorList) {
	var allErrs field.ErrorList
	// PVCs that generic ephemeral volumes will create ("<pod>-<volume>").
	created := map[string]bool{}
	if ctx.podMeta != nil && ctx.podMeta.Name != "" {
		for _, v := range volumes {
			if v.Ephemeral != nil {
				created[ctx.podMeta.Name+"-"+v.Name] = true
			}
		}
	}
	vols := map[string]corev1.VolumeSource{}
	for i, v := range volumes {
		p := fldPath.Index(i)
		errs := validateVolumeSource(&v.VolumeSource, p, v.Name, ctx)
		if v.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else {
			errs = append(errs, validateDNS1123Label(v.Name, p.Child("name"))...)
		}
		if _, dup := vols[v.Name]; dup {
			errs = append(errs, field.Duplicate(p.Child("name"), v.Name))
		}
		if len(errs) == 0 {
			vols[v.Name] = v.VolumeSource
		}
		allErrs = append(allErrs, errs...)
		if v.PersistentVolumeClaim != nil && created[v.PersistentVolumeClaim.ClaimName] {
			allErrs = append(allErrs, field.Invalid(p.Child("persistentVolumeClaim", "claimName"), v.PersistentVolumeClaim.ClaimName,
				"must not reference a PVC that gets created for an ephemeral volume"))
		}
	}
	return vols, allErrs
}

// validateVolumeSource checks that exactly one source is set and validates
// the common ones. Simplified: the legacy in-tree cloud and network volume
// plugins (gcePersistentDisk, rbd, cinder, ...) are accepted without checking
// their fields.
func validateVolumeSource(src *corev1.VolumeSource, p *field.Path, volName string, ctx podSpecContext) field.ErrorList {
	var allErrs field.ErrorList
	set := setVolumeSources(src)
	if len(set) == 0 {
		return field.ErrorList{field.Required(p, "must specify a volume type")}
	}
	for _, extra := range set[1:] {
		allErrs = append(allErrs, field.Forbidden(p.Child(extra), "may not specify more than 1 volume type"))
	}
	if len(set) > 1 {
		return allErrs
	}
	switch {
	case src.EmptyDir != nil:
		if sl := src.EmptyDir.SizeLimit; sl != nil && sl.Sign() < 0 {
			allErrs = append(allErrs, field.Forbidden(p.Child("emptyDir", "sizeLimit"), "SizeLimit field must be a valid resource quantity"))
		}
	case src.HostPath != nil:
		allErrs = append(allErrs, validateHostPath(src.HostPath, p.Child("hostPath"))...)
	case src.Secret != nil:
		sp := p.Child("secret")
		if src.Secret.SecretName == "" {
			allErrs = append(allErrs, field.Required(sp.Child("secretName"), ""))
		}
		allErrs = append(allErrs, validateFileMode(src.Secret.DefaultMode, sp.Child("defaultMode"))...)
		for i, kp := range src.Secret.Items {
			allErrs = append(allErrs, validateKeyToPath(kp, sp.Child("items").Index(i))...)
		}
	case src.ConfigMap != nil:
		cp := p.Child("configMap")
		if src.ConfigMap.Name == "" {
			allErrs = append(allErrs, field.Required(cp.Child("name"), ""))
		}
		allErrs = append(allErrs, validateFileMode(src.ConfigMap.DefaultMode, cp.Child("defaultMode"))...)
		for i, kp := range src.ConfigMap.Items {
			allErrs = append(allErrs, validateKeyToPath(kp, cp.Child("items").Index(i))...)
		}
	case src.PersistentVolumeClaim != nil:
		if src.PersistentVolumeClaim.ClaimName == "" {
			allErrs = append(allErrs, field.Required(p.Child("persistentVolumeClaim", "claimName"), ""))
		}
	case src.DownwardAPI != nil:
		dp := p.Child("downwardAPI")
		allErrs = append(allErrs, validateFileMode(src.DownwardAPI.DefaultMode, dp.Child("defaultMode"))...)
		for _, f := range src.DownwardAPI.Items {
			allErrs = append(allErrs, validateDownwardAPIVolumeFile(f, dp)...)
		}
	case src.Projected != nil:
		allErrs = append(allErrs, validateProjectedVolume(src.Projected, p.Child("projected"))...)
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
	case src.CSI != nil:
		cp := p.Child("csi")
		allErrs = append(allErrs, validateCSIDriverName(src.CSI.Driver, cp.Child("driver"))...)
		if ref := src.CSI.NodePublishSecretRef; ref != nil {
			if ref.Name == "" {
				allErrs = append(allErrs, field.Required(cp.Child("nodePublishSecretRef", "name"), ""))
			} else {
				allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, ref.Name, cp.Child("name"))...)
			}
		}
	case src.Ephemeral != nil:
		ep := p.Child("ephemeral")
		if src.Ephemeral.VolumeClaimTemplate == nil {
			allErrs = append(allErrs, field.Required(ep.Child("volumeClaimTemplate"), ""))
		} else {
			t := src.Ephemeral.VolumeClaimTemplate
			tp := ep.Child("volumeClaimTemplate")
			allErrs = append(allErrs, validateTemplateObjectMeta(&t.ObjectMeta, tp.Child("metadata"))...)
			allErrs = append(allErrs, validatePersistentVolumeClaimSpec(&t.Spec, tp.Child("spec"))...)
			// The PVC will be named "<pod>-<volume>", which must be a valid name.
			if ctx.podMeta != nil && ctx.podMeta.Name != "" && volName != "" {
				pvcName := ctx.podMeta.Name + "-" + volName
				for _, msg := range apivalidation.NameIsDNSSubdomain(pvcName, false) {
					allErrs = append(allErrs, field.Invalid(p.Child("name"), volName, fmt.Sprintf("PVC name %q: %v", pvcName, msg)))
				}
			}
		}
	case src.Image != nil:
		ip := p.Child("image")
		if ctx.isPod && src.Image.Reference == "" {
			allErrs = append(allErrs, field.Required(ip.Child("reference"), ""))
		}
		allErrs = append(allErrs, validateEnum(ip.Child("pullPolicy"), src.Image.PullPolicy, corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever)...)
	}
	return allErrs
}

func validateHostPath(hp *corev1.HostPathVolumeSource, p *field.Path) field.ErrorList {
	if hp.Path == "" {
		return field.ErrorList{field.Required(p.Child("path"), "")}
	}
	allErrs := validatePathNoBacksteps(hp.Path, p.Child("path"))
	if hp.Type != nil {
		allErrs = append(allErrs, validateEnumAllowEmpty(p.Child("type"), *hp.Type,
			corev1.HostPathUnset, corev1.HostPathBlockDev, corev1.HostPathCharDev, corev1.HostPathDirectory,
			corev1.HostPathDirectoryOrCreate, corev1.HostPathFile, corev1.HostPathFileOrCreate, corev1.HostPathSocket)...)
	}
	return allErrs
}

// validateEnumAllowEmpty is validateEnum for enums whose empty value is one
// of the valid values.
func validateEnumAllowEmpty[T ~string](fldPath *field.Path, value T, valid ...T) field.ErrorList {
	for _, v := range valid {
		if value == v {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(fldPath, value, valid)}
}

func validateFileMode(mode *int32, p *field.Path) field.ErrorList {
	if mode != nil && (*mode > 0777 || *mode < 0) {
		return field.ErrorList{field.Invalid(p, *mode, fileModeErrorMsg)}
	}
	return nil
}

func validateKeyToPath(kp corev1.KeyToPath, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if kp.Key == "" {
		allErrs = append(allErrs, field.Required(p.Child("key"), ""))
	}
	if kp.Path == "" {
		allErrs = append(allErrs, field.Required(p.Child("path"), ""))
	}
	allErrs = append(allErrs, validateLocalNonReservedPath(kp.Path, p.Child("path"))...)
	return append(allErrs, validateFileMode(kp.Mode, p.Child("mode"))...)
}

func validateDownwardAPIVolumeFile(f corev1.DownwardAPIVolumeFile, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if f.Path == "" {
		allErrs = append(allErrs, field.Required(p.Child("path"), ""))
	}
	allErrs = append(allErrs, validateLocalNonReservedPath(f.Path, p.Child("path"))...)
	switch {
	case f.FieldRef != nil:
		allErrs = append(allErrs, validateObjectFieldSelector(f.FieldRef, volumeFieldPaths(), p.Child("fieldRef"))...)
		if f.ResourceFieldRef != nil {
			allErrs = append(allErrs, field.Invalid(p, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
		}
	case f.ResourceFieldRef != nil:
		allErrs = append(allErrs, validateResourceFieldSelector(f.ResourceFieldRef, true, p.Child("resourceFieldRef"))...)
	default:
		allErrs = append(allErrs, field.Required(p, "one of fieldRef and resourceFieldRef is required"))
	}
	return append(allErrs, validateFileMode(f.Mode, p.Child("mode"))...)
}

func validateProjectedVolume(pv *corev1.ProjectedVolumeSource, p *field.Path) field.ErrorList {
	allErrs := validateFileMode(pv.DefaultMode, p.Child("defaultMode"))
	paths := map[string]bool{}
	addPath := func(fp, name string) {
		if fp == "" {
			return
		}
		if paths[fp] {
			allErrs = append(allErrs, field.Invalid(p, name, "conflicting duplicate paths"))
		}
		paths[fp] = true
	}
	for i, s := range pv.Sources {
		sp := p.Child("sources").Index(i)
		n := 0
		if s.Secret != nil {
			n++
			if s.Secret.Name == "" {
				allErrs = append(allErrs, field.Required(sp.Child("secret", "name"), ""))
			}
			for j, kp := range s.Secret.Items {
				allErrs = append(allErrs, validateKeyToPath(kp, sp.Child("secret", "items").Index(j))...)
				addPath(kp.Path, s.Secret.Name)
			}
		}
		if s.ConfigMap != nil {
			n++
			if s.ConfigMap.Name == "" {
				allErrs = append(allErrs, field.Required(sp.Child("configMap", "name"), ""))
			}
			for j, kp := range s.ConfigMap.Items {
				allErrs = append(allErrs, validateKeyToPath(kp, sp.Child("configMap", "items").Index(j))...)
				addPath(kp.Path, s.ConfigMap.Name)
			}
		}
		if s.DownwardAPI != nil {
			n++
			for _, f := range s.DownwardAPI.Items {
				allErrs = append(allErrs, validateDownwardAPIVolumeFile(f, sp.Child("downwardAPI"))...)
				addPath(f.Path, f.Path)
			}
		}
		if t := s.ServiceAccountToken; t != nil {
			n++
			tp := sp.Child("serviceAccountToken")
			if t.ExpirationSeconds != nil {
				if *t.ExpirationSeconds < 10*60 {
					allErrs = append(allErrs, field.Invalid(tp.Child("expirationSeconds"), *t.ExpirationSeconds, "may not specify a duration less than 10 minutes"))
				}
				if *t.ExpirationSeconds > 1<<32 {
					allErrs = append(allErrs, field.Invalid(tp.Child("expirationSeconds"), *t.ExpirationSeconds, "may not specify a duration larger than 2^32 seconds"))
				}
			}
			if t.Path == "" {
				allErrs = append(allErrs, field.Required(p.Child("path"), ""))
			} else {
				allErrs = append(allErrs, validateLocalNonReservedPath(t.Path, p.Child("path"))...)
			}
		}
		if s.ClusterTrustBundle != nil {
			n++
			if s.ClusterTrustBundle.Path == "" {
				allErrs = append(allErrs, field.Required(sp.Child("clusterTrustBundle", "path"), ""))
			}
			addPath(s.ClusterTrustBundle.Path, s.ClusterTrustBundle.Path)
		}
		if s.PodCertificate != nil {
			n++
		}
		if n > 1 {
			allErrs = append(allErrs, field.Forbidden(sp, "may not specify more than 1 volume type per source"))
		}
	}
	return allErrs
}

// validateTemplateObjectMeta: embedded object templates (ephemeral volume
// claims) may only carry labels and annotations.
func validateTemplateObjectMeta(meta *metav1.ObjectMeta, p *field.Path) field.ErrorList {
	allErrs := apivalidation.ValidateAnnotations(meta.Annotations, p.Child("annotations"))
	allErrs = append(allErrs, metavalidation.ValidateLabels(meta.Labels, p.Child("labels"))...)
	v := reflect.ValueOf(*meta)
	for i := 0; i < v.NumField(); i++ {
		name := v.Type().Field(i).Name
		if name != "Labels" && name != "Annotations" && !v.Field(i).IsZero() {
			allErrs = append(allErrs, field.Forbidden(p.Child(strings.ToLower(name[:1])+name[1:]), "cannot be set"))
		}
	}
	return allErrs
}

// ValidateCSIDriverName checks the name of a CSI driver (a CSIDriver, a
// CSINode's driver entry, a VolumeAttachment's attacher): a DNS subdomain
// of at most 63 characters, case ignored.
func ValidateCSIDriverName(name string, p *field.Path) field.ErrorList {
	return validateCSIDriverName(name, p)
}

func validateCSIDriverName(name string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if name == "" {
		allErrs = append(allErrs, field.Required(p, ""))
	}
	if len(name) > 63 {
		allErrs = append(allErrs, field.TooLong(p, "", 63))
	}
	return append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, strings.ToLower(name), p)...)
}

// validateLocalDescendingPath: a relative path without "..".
func validateLocalDescendingPath(target string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if path.IsAbs(target) {
		allErrs = append(allErrs, field.Invalid(p, target, "must be a relative path"))
	}
	return append(allErrs, validatePathNoBacksteps(target, p)...)
}

func hasBacksteps(target string) bool {
	for _, part := range strings.Split(filepath.ToSlash(target), "/") {
		if part == ".." {
			return true
		}
	}
	return false
}

func validatePathNoBacksteps(target string, p *field.Path) field.ErrorList {
	if hasBacksteps(target) {
		return field.ErrorList{field.Invalid(p, target, "must not contain '..'")}
	}
	return nil
}

// validateLocalNonReservedPath: a relative path without ".." that does not
// start with ".." either (the kubelet's atomic writer uses "..data").
func validateLocalNonReservedPath(target string, p *field.Path) field.ErrorList {
	allErrs := validateLocalDescendingPath(target, p)
	if strings.HasPrefix(target, "..") && !strings.HasPrefix(target, "../") {
		allErrs = append(allErrs, field.Invalid(p, target, "must not start with '..'"))
	}
	return allErrs
}
