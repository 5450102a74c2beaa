package storageapi

import (
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/registry/core"
)

const group = "storage.k8s.io"

// Definitions are the storage.k8s.io/v1 resources.
func Definitions() []*registry.Definition {
	sc := registry.NewDefinition(group, "v1", "storageclasses", "StorageClass", false,
		func() runtime.Object { return &storagev1.StorageClass{} }, func() runtime.Object { return &storagev1.StorageClassList{} },
		&registry.Strategy{Default: registry.Default(DefaultStorageClass), Validate: registry.Validate(ValidateStorageClass),
			ValidateUpdate: registry.ValidateUpdate(ValidateStorageClassUpdate), ReturnDeletedObject: true})
	sc.ShortNames = []string{"sc"}

	// Upstream's CSIDriver, CSINode, CSIStorageCapacity and
	// VolumeAttachment strategies refuse an update without
	// metadata.resourceVersion.
	driver := registry.NewDefinition(group, "v1", "csidrivers", "CSIDriver", false,
		func() runtime.Object { return &storagev1.CSIDriver{} }, func() runtime.Object { return &storagev1.CSIDriverList{} },
		&registry.Strategy{Default: registry.Default(DefaultCSIDriver), Validate: registry.Validate(ValidateCSIDriver),
			ValidateUpdate: registry.ValidateUpdate(ValidateCSIDriverUpdate), ReturnDeletedObject: true,
			// a spec change increments metadata.generation (not set at creation, as upstream)
			PrepareForUpdate: registry.PrepareUpdate(func(d, old *storagev1.CSIDriver) {
				if !equality.Semantic.DeepEqual(d.Spec, old.Spec) {
					d.Generation = old.Generation + 1
				}
			})})
	driver.Strategy.AllowUnconditionalUpdate = false

	// CSINode's status (storage health) belongs to the CSIVolumeHealth
	// feature gate, off by default: it is dropped as upstream drops
	// disabled fields (nothing can have set it), on the main resource and
	// on csinodes/status alike.
	node := registry.NewDefinition(group, "v1", "csinodes", "CSINode", false,
		func() runtime.Object { return &storagev1.CSINode{} }, func() runtime.Object { return &storagev1.CSINodeList{} },
		&registry.Strategy{Validate: registry.Validate(ValidateCSINode), ValidateUpdate: registry.ValidateUpdate(ValidateCSINodeUpdate),
			HasStatus:           true,
			Canonicalize:        registry.Prepare(func(n *storagev1.CSINode) { n.Status = storagev1.CSINodeStatus{} }),
			ReturnDeletedObject: true})
	node.Strategy.AllowUnconditionalUpdate = false
	node.ValidateStatus = registry.ValidateUpdate(func(n, old *storagev1.CSINode) field.ErrorList {
		return core.ValidateObjectMetaUpdate(&n.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	})

	capacity := registry.NewDefinition(group, "v1", "csistoragecapacities", "CSIStorageCapacity", true,
		func() runtime.Object { return &storagev1.CSIStorageCapacity{} }, func() runtime.Object { return &storagev1.CSIStorageCapacityList{} },
		&registry.Strategy{Validate: registry.Validate(ValidateCSIStorageCapacity),
			ValidateUpdate: registry.ValidateUpdate(ValidateCSIStorageCapacityUpdate)})
	capacity.Strategy.AllowUnconditionalUpdate = false

	// A VolumeAttachment's spec is written by the attach/detach controller,
	// its status by the CSI external-attacher through volumeattachments/status.
	attach := registry.NewDefinition(group, "v1", "volumeattachments", "VolumeAttachment", false,
		func() runtime.Object { return &storagev1.VolumeAttachment{} }, func() runtime.Object { return &storagev1.VolumeAttachmentList{} },
		&registry.Strategy{Validate: registry.Validate(ValidateVolumeAttachment),
			ValidateUpdate: registry.ValidateUpdate(ValidateVolumeAttachmentUpdate), HasStatus: true, ReturnDeletedObject: true})
	attach.ValidateStatus = registry.ValidateUpdate(ValidateVolumeAttachmentUpdate)
	attach.Strategy.AllowUnconditionalUpdate = false

	vac := registry.NewDefinition(group, "v1", "volumeattributesclasses", "VolumeAttributesClass", false,
		func() runtime.Object { return &storagev1.VolumeAttributesClass{} }, func() runtime.Object { return &storagev1.VolumeAttributesClassList{} },
		&registry.Strategy{Validate: registry.Validate(ValidateVolumeAttributesClass),
			ValidateUpdate: registry.ValidateUpdate(ValidateVolumeAttributesClassUpdate), ReturnDeletedObject: true})
	vac.ShortNames = []string{"vac"}

	return []*registry.Definition{sc, driver, node, capacity, attach, vac}
}
