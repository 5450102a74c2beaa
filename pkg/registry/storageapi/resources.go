package storageapi

import (
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/registry"
)

const group = "storage.k8s.io"

// Definitions are the storage.k8s.io/v1 resources.
func Definitions() []*registry.Definition {
	sc := registry.NewDefinition(group, "v1", "storageclasses", "StorageClass", false,
		func() runtime.Object { return &storagev1.StorageClass{} }, func() runtime.Object { return &storagev1.StorageClassList{} },
		&registry.Strategy{Default: registry.Default(DefaultStorageClass), Validate: registry.Validate(ValidateStorageClass),
			ValidateUpdate: registry.ValidateUpdate(ValidateStorageClassUpdate), ReturnDeletedObject: true})
	sc.ShortNames = []string{"sc"}

	driver := registry.NewDefinition(group, "v1", "csidrivers", "CSIDriver", false,
		func() runtime.Object { return &storagev1.CSIDriver{} }, func() runtime.Object { return &storagev1.CSIDriverList{} },
		&registry.Strategy{Default: registry.Default(DefaultCSIDriver), Validate: registry.Validate(ValidateCSIDriver),
			ValidateUpdate: registry.ValidateUpdate(ValidateCSIDriverUpdate), ReturnDeletedObject: true})

	// CSINode's status (storage health) belongs to the CSIVolumeHealth
	// feature gate, off by default: it is dropped as upstream drops
	// disabled fields, and there is no status subresource.
	node := registry.NewDefinition(group, "v1", "csinodes", "CSINode", false,
		func() runtime.Object { return &storagev1.CSINode{} }, func() runtime.Object { return &storagev1.CSINodeList{} },
		&registry.Strategy{Validate: registry.Validate(ValidateCSINode), ValidateUpdate: registry.ValidateUpdate(ValidateCSINodeUpdate),
			PrepareForCreate: registry.Prepare(func(n *storagev1.CSINode) { n.Status = storagev1.CSINodeStatus{} }),
			PrepareForUpdate: registry.PrepareUpdate(func(n, old *storagev1.CSINode) {
				if len(old.Status.StorageHealth) == 0 {
					n.Status = storagev1.CSINodeStatus{}
				}
			}),
			ReturnDeletedObject: true})

	capacity := registry.NewDefinition(group, "v1", "csistoragecapacities", "CSIStorageCapacity", true,
		func() runtime.Object { return &storagev1.CSIStorageCapacity{} }, func() runtime.Object { return &storagev1.CSIStorageCapacityList{} },
		&registry.Strategy{Validate: registry.Validate(ValidateCSIStorageCapacity),
			ValidateUpdate: registry.ValidateUpdate(ValidateCSIStorageCapacityUpdate)})

	// A VolumeAttachment's spec is written by the attach/detach controller,
	// its status by the CSI external-attacher through volumeattachments/status.
	attach := registry.NewDefinition(group, "v1", "volumeattachments", "VolumeAttachment", false,
		func() runtime.Object { return &storagev1.VolumeAttachment{} }, func() runtime.Object { return &storagev1.VolumeAttachmentList{} },
		&registry.Strategy{Validate: registry.Validate(ValidateVolumeAttachment),
			ValidateUpdate: registry.ValidateUpdate(ValidateVolumeAttachmentUpdate), HasStatus: true, ReturnDeletedObject: true})
	attach.ValidateStatus = registry.ValidateUpdate(ValidateVolumeAttachmentUpdate)

	vac := registry.NewDefinition(group, "v1", "volumeattributesclasses", "VolumeAttributesClass", false,
		func() runtime.Object { return &storagev1.VolumeAttributesClass{} }, func() runtime.Object { return &storagev1.VolumeAttributesClassList{} },
		&registry.Strategy{Validate: registry.Validate(ValidateVolumeAttributesClass),
			ValidateUpdate: registry.ValidateUpdate(ValidateVolumeAttributesClassUpdate), ReturnDeletedObject: true})
	vac.ShortNames = []string{"vac"}

	return []*registry.Definition{sc, driver, node, capacity, attach, vac}
}
