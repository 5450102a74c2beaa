package storageapi

import (
	"fmt"
	"math"
	"reflect"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/registry/core"
)

// Limits from upstream's storage validation.
const (
	maxAttachedVolumeMetadataSize = 256 * (1 << 10)
	maxVolumeErrorMessageSize     = 1024
	// A CSI node ID may be 256 characters (192 before 1.28; upstream
	// now always allows the longer form).
	csiNodeIDMaxLength = 256
)

func metaPath() *field.Path { return field.NewPath("metadata") }

// ----- CSIDriver -----

// ValidateCSIDriver validates a CSIDriver after defaulting. The booleans
// kubelet and the attach/detach controller read (attachRequired,
// podInfoOnMount, storageCapacity, seLinuxMount) are required; defaulting
// fills them.
func ValidateCSIDriver(d *storagev1.CSIDriver) field.ErrorList {
	allErrs := core.ValidateObjectMeta(&d.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metaPath())
	return append(allErrs, validateCSIDriverSpec(&d.Spec, field.NewPath("spec"))...)
}

// ValidateCSIDriverUpdate validates an update: attachRequired and
// volumeLifecycleModes are immutable (upstream reports the former at
// "spec.attachedRequired", sic).
func ValidateCSIDriverUpdate(d, old *storagev1.CSIDriver) field.ErrorList {
	allErrs := core.ValidateObjectMetaUpdate(&d.ObjectMeta, &old.ObjectMeta, metaPath())
	allErrs = append(allErrs, validateCSIDriverSpec(&d.Spec, field.NewPath("spec"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(d.Spec.AttachRequired, old.Spec.AttachRequired, field.NewPath("spec", "attachedRequired"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(d.Spec.VolumeLifecycleModes, old.Spec.VolumeLifecycleModes, field.NewPath("spec", "volumeLifecycleModes"))...)
	return allErrs
}

func validateCSIDriverSpec(spec *storagev1.CSIDriverSpec, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	required := func(v *bool, name string) {
		if v == nil {
			allErrs = append(allErrs, field.Required(p.Child(name), ""))
		}
	}
	required(spec.AttachRequired, "attachedRequired")
	required(spec.PodInfoOnMount, "podInfoOnMount")
	required(spec.StorageCapacity, "storageCapacity")
	if spec.FSGroupPolicy != nil {
		switch *spec.FSGroupPolicy {
		case storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy, storagev1.FileFSGroupPolicy, storagev1.NoneFSGroupPolicy:
		default:
			allErrs = append(allErrs, field.NotSupported(p.Child("fsGroupPolicy"), *spec.FSGroupPolicy,
				[]string{string(storagev1.FileFSGroupPolicy), string(storagev1.NoneFSGroupPolicy), string(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy)}))
		}
	}
	allErrs = append(allErrs, validateTokenRequests(spec.TokenRequests, p.Child("tokenRequests"))...)
	for _, mode := range spec.VolumeLifecycleModes {
		switch mode {
		case storagev1.VolumeLifecyclePersistent, storagev1.VolumeLifecycleEphemeral:
		default:
			allErrs = append(allErrs, field.NotSupported(p.Child("volumeLifecycleModes"), mode,
				[]string{string(storagev1.VolumeLifecyclePersistent), string(storagev1.VolumeLifecycleEphemeral)}))
		}
	}
	required(spec.SELinuxMount, "seLinuxMount")
	if n := spec.NodeAllocatableUpdatePeriodSeconds; n != nil && *n < 10 {
		allErrs = append(allErrs, field.Invalid(p.Child("nodeAllocatableUpdatePeriodSeconds"), *n, "must be greater than or equal to 10 seconds"))
	}
	if v := spec.ServiceAccountTokenInSecrets; v != nil && *v && len(spec.TokenRequests) == 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("serviceAccountTokenInSecrets"), *v, "serviceAccountTokenInSecrets can only be set to true when tokenRequests is configured"))
	}
	return allErrs
}

// validateTokenRequests: audiences are distinct, and a token lives between
// 10 minutes and 2^32 seconds.
func validateTokenRequests(reqs []storagev1.TokenRequest, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[string]bool{}
	for i, r := range reqs {
		ip := p.Index(i)
		if seen[r.Audience] {
			allErrs = append(allErrs, field.Duplicate(ip.Child("audience"), r.Audience))
			continue
		}
		seen[r.Audience] = true
		if r.ExpirationSeconds == nil {
			continue
		}
		if *r.ExpirationSeconds < 600 {
			allErrs = append(allErrs, field.Invalid(ip.Child("expirationSeconds"), *r.ExpirationSeconds, "may not specify a duration less than 10 minutes"))
		}
		if *r.ExpirationSeconds > 1<<32 {
			allErrs = append(allErrs, field.Invalid(ip.Child("expirationSeconds"), *r.ExpirationSeconds, "may not specify a duration larger than 2^32 seconds"))
		}
	}
	return allErrs
}

// ----- CSINode -----

// ValidateCSINode validates a CSINode: its name is a node name, each driver
// appears once with a valid name, a node ID and qualified topology keys.
func ValidateCSINode(n *storagev1.CSINode) field.ErrorList {
	allErrs := core.ValidateObjectMeta(&n.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metaPath())
	p := field.NewPath("spec", "drivers")
	names := map[string]bool{}
	for i, d := range n.Spec.Drivers {
		ip := p.Index(i)
		allErrs = append(allErrs, core.ValidateCSIDriverName(d.Name, ip.Child("name"))...)
		if d.NodeID == "" {
			allErrs = append(allErrs, field.Required(ip.Child("nodeID"), d.NodeID))
		}
		if len(d.NodeID) > csiNodeIDMaxLength {
			allErrs = append(allErrs, field.Invalid(ip.Child("nodeID"), d.NodeID, fmt.Sprintf("must be %d characters or less", csiNodeIDMaxLength)))
		}
		if a := d.Allocatable; a != nil && a.Count != nil && *a.Count < 0 {
			allErrs = append(allErrs, field.Invalid(ip.Child("allocatable", "count"), int64(*a.Count), "must be greater than or equal to 0"))
		}
		if names[d.Name] {
			allErrs = append(allErrs, field.Duplicate(ip.Child("name"), d.Name))
		}
		names[d.Name] = true
		keys := map[string]bool{}
		for _, key := range d.TopologyKeys {
			if key == "" {
				allErrs = append(allErrs, field.Required(ip, key))
			}
			if keys[key] {
				allErrs = append(allErrs, field.Duplicate(ip, key))
			}
			keys[key] = true
			allErrs = append(allErrs, core.ValidateQualifiedName(key, ip)...)
		}
	}
	return allErrs
}

// ValidateCSINodeUpdate validates an update: a driver's entry (other than
// its allocatable count, which the kubelet refreshes) cannot change while
// the driver stays registered; drivers may come and go.
func ValidateCSINodeUpdate(n, old *storagev1.CSINode) field.ErrorList {
	allErrs := ValidateCSINode(n)
	allErrs = append(allErrs, core.ValidateObjectMetaUpdate(&n.ObjectMeta, &old.ObjectMeta, metaPath())...)
	for _, od := range old.Spec.Drivers {
		for _, nd := range n.Spec.Drivers {
			if od.Name != nd.Name {
				continue
			}
			a, b := nd.DeepCopy(), od.DeepCopy()
			a.Allocatable, b.Allocatable = nil, nil
			allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(*a, *b, field.NewPath("spec", "drivers"))...)
		}
	}
	return allErrs
}

// ----- CSIStorageCapacity -----

// ValidateCSIStorageCapacity validates a CSIStorageCapacity: a valid node
// topology selector, a storage class name and a non-negative capacity.
func ValidateCSIStorageCapacity(c *storagev1.CSIStorageCapacity) field.ErrorList {
	return validateCSIStorageCapacity(c, false)
}

func validateCSIStorageCapacity(c *storagev1.CSIStorageCapacity, allowInvalidLabelValue bool) field.ErrorList {
	allErrs := core.ValidateObjectMeta(&c.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metaPath())
	allErrs = append(allErrs, metav1validation.ValidateLabelSelector(c.NodeTopology,
		metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabelValue}, field.NewPath("nodeTopology"))...)
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(c.StorageClassName, false) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("storageClassName"), c.StorageClassName, msg))
	}
	if c.Capacity != nil && c.Capacity.Sign() < 0 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("capacity"), c.Capacity.String(), "must be greater than or equal to 0"))
	}
	return allErrs
}

// ValidateCSIStorageCapacityUpdate validates an update: nodeTopology and
// storageClassName are what the capacity was measured for, so immutable.
// As upstream, a selector stored with a label value no longer valid stays
// acceptable.
func ValidateCSIStorageCapacityUpdate(c, old *storagev1.CSIStorageCapacity) field.ErrorList {
	allErrs := validateCSIStorageCapacity(c, hasInvalidLabelValue(old))
	allErrs = append(allErrs, core.ValidateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, metaPath())...)
	if !equality.Semantic.DeepEqual(c.NodeTopology, old.NodeTopology) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("nodeTopology"), c.NodeTopology, "field is immutable"))
	}
	if c.StorageClassName != old.StorageClassName {
		allErrs = append(allErrs, field.Invalid(field.NewPath("storageClassName"), c.StorageClassName, "field is immutable"))
	}
	return allErrs
}

func hasInvalidLabelValue(c *storagev1.CSIStorageCapacity) bool {
	return len(metav1validation.ValidateLabelSelector(c.NodeTopology, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0
}

// ----- VolumeAttachment -----

// ValidateVolumeAttachment validates a VolumeAttachment: the attacher is a
// CSI driver name, the source is exactly one of a PersistentVolume name and
// an inline (CSI) volume spec, the node name is valid, and the status's
// metadata and error messages stay within their limits.
func ValidateVolumeAttachment(va *storagev1.VolumeAttachment) field.ErrorList {
	allErrs := core.ValidateObjectMeta(&va.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metaPath())
	sp := field.NewPath("spec")
	if va.Spec.Attacher == "" {
		allErrs = append(allErrs, field.Required(sp.Child("attacher"), ""))
	}
	allErrs = append(allErrs, validateVolumeAttachmentSource(&va.Spec.Source, sp.Child("source"))...)
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(va.Spec.NodeName, false) {
		allErrs = append(allErrs, field.Invalid(sp.Child("nodeName"), va.Spec.NodeName, msg))
	}
	st := field.NewPath("status")
	size := 0
	for k, v := range va.Status.AttachmentMetadata {
		size += len(k) + len(v)
	}
	if size > maxAttachedVolumeMetadataSize {
		allErrs = append(allErrs, field.TooLong(st.Child("attachmentMetadata"), "", maxAttachedVolumeMetadataSize))
	}
	allErrs = append(allErrs, validateVolumeError(va.Status.AttachError, st.Child("attachError"))...)
	allErrs = append(allErrs, validateVolumeError(va.Status.DetachError, st.Child("detachError"))...)
	// storage.k8s.io/v1 only: the attacher is a CSI driver name, the
	// volume name a PersistentVolume name.
	if va.Spec.Attacher != "" {
		allErrs = append(allErrs, core.ValidateCSIDriverName(va.Spec.Attacher, sp.Child("attacher"))...)
	}
	if pv := va.Spec.Source.PersistentVolumeName; pv != nil && *pv != "" {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(*pv, false) {
			allErrs = append(allErrs, field.Invalid(sp.Child("source", "persistentVolumeName"), *pv, msg))
		}
	}
	return allErrs
}

const exactlyOneSource = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"

func validateVolumeAttachmentSource(src *storagev1.VolumeAttachmentSource, p *field.Path) field.ErrorList {
	switch {
	case src.InlineVolumeSpec == nil && src.PersistentVolumeName == nil:
		return field.ErrorList{field.Required(p, exactlyOneSource)}
	case src.InlineVolumeSpec != nil && src.PersistentVolumeName != nil:
		return field.ErrorList{field.Forbidden(p, exactlyOneSource)}
	case src.PersistentVolumeName != nil:
		if *src.PersistentVolumeName == "" {
			return field.ErrorList{field.Required(p.Child("persistentVolumeName"), "must specify non empty persistentVolumeName")}
		}
		return nil
	default:
		return validateInlineVolumeSpec(src.InlineVolumeSpec, p.Child("inlineVolumeSpec"))
	}
}

// validateInlineVolumeSpec checks a PersistentVolumeSpec migrated from an
// inline pod volume: only a CSI source, access modes, no claim reference
// and no capacity.
func validateInlineVolumeSpec(spec *corev1.PersistentVolumeSpec, p *field.Path) field.ErrorList {
	const inline = "may not be specified in the context of inline volumes"
	var allErrs field.ErrorList
	if len(spec.AccessModes) == 0 {
		allErrs = append(allErrs, field.Required(p.Child("accessModes"), ""))
	}
	for _, m := range spec.AccessModes {
		switch m {
		case corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOncePod:
		default:
			allErrs = append(allErrs, field.NotSupported(p.Child("accessModes"), m,
				[]string{string(corev1.ReadOnlyMany), string(corev1.ReadWriteMany), string(corev1.ReadWriteOnce), string(corev1.ReadWriteOncePod)}))
		}
	}
	if spec.ClaimRef != nil {
		allErrs = append(allErrs, field.Forbidden(p.Child("claimRef"), inline))
	}
	if len(spec.Capacity) != 0 {
		allErrs = append(allErrs, field.Forbidden(p.Child("capacity"), inline))
	}
	if spec.CSI == nil {
		allErrs = append(allErrs, field.Required(p.Child("csi"), "has to be specified in the context of inline volumes"))
	} else {
		allErrs = append(allErrs, core.ValidateCSIDriverName(spec.CSI.Driver, p.Child("csi", "driver"))...)
		if spec.CSI.VolumeHandle == "" {
			allErrs = append(allErrs, field.Required(p.Child("csi", "volumeHandle"), ""))
		}
	}
	return allErrs
}

func validateVolumeError(e *storagev1.VolumeError, p *field.Path) field.ErrorList {
	if e == nil {
		return nil
	}
	var allErrs field.ErrorList
	if len(e.Message) > maxVolumeErrorMessageSize {
		// upstream reports the metadata limit here
		allErrs = append(allErrs, field.TooLong(p.Child("message"), "", maxAttachedVolumeMetadataSize))
	}
	if e.ErrorCode != nil && *e.ErrorCode < 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("errorCode"), *e.ErrorCode, "must be between 0 and "+strconv.Itoa(math.MaxInt32)+", inclusive"))
	}
	return allErrs
}

// ValidateVolumeAttachmentUpdate validates an update: the spec is
// read-only once created.
func ValidateVolumeAttachmentUpdate(va, old *storagev1.VolumeAttachment) field.ErrorList {
	allErrs := ValidateVolumeAttachment(va)
	allErrs = append(allErrs, core.ValidateObjectMetaUpdate(&va.ObjectMeta, &old.ObjectMeta, metaPath())...)
	if !equality.Semantic.DeepEqual(va.Spec, old.Spec) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec"), va.Spec, "field is immutable"))
	}
	return allErrs
}

// ----- VolumeAttributesClass -----

// ValidateVolumeAttributesClass validates a VolumeAttributesClass: a
// qualified driver name and at least one parameter.
func ValidateVolumeAttributesClass(c *storagev1.VolumeAttributesClass) field.ErrorList {
	allErrs := core.ValidateObjectMeta(&c.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metaPath())
	allErrs = append(allErrs, validateProvisioner(c.DriverName, field.NewPath("driverName"))...)
	allErrs = append(allErrs, validateParameters(c.Parameters, field.NewPath("parameters"))...)
	if len(c.Parameters) == 0 {
		allErrs = append(allErrs, field.Required(field.NewPath("parameters"), "must contain at least one key/value pair"))
	}
	return allErrs
}

// ValidateVolumeAttributesClassUpdate validates an update: driverName and
// parameters are fixed, since volumes were modified to match them.
func ValidateVolumeAttributesClassUpdate(c, old *storagev1.VolumeAttributesClass) field.ErrorList {
	allErrs := core.ValidateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, metaPath())
	if c.DriverName != old.DriverName {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("driverName"), "updates to driverName are forbidden."))
	}
	if !reflect.DeepEqual(c.Parameters, old.Parameters) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
	}
	return append(allErrs, ValidateVolumeAttributesClass(c)...)
}
