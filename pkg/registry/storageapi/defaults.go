package storageapi

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// DefaultStorageClass fills the storage.k8s.io/v1 defaults: volumes it
// provisions are deleted with their claim (reclaimPolicy Delete), and they are
// provisioned and bound as soon as a claim appears (volumeBindingMode
// Immediate), rather than when the first pod using the claim is scheduled.
func DefaultStorageClass(sc *storagev1.StorageClass) {
	if sc.ReclaimPolicy == nil {
		sc.ReclaimPolicy = new(corev1.PersistentVolumeReclaimDelete)
	}
	if sc.VolumeBindingMode == nil {
		sc.VolumeBindingMode = new(storagev1.VolumeBindingImmediate)
	}
}

// DefaultCSIDriver fills the storage.k8s.io/v1 defaults of a CSIDriver: the
// driver needs attaching (attachRequired true), gets no pod information on
// mount, publishes no capacity, applies fsGroup to ReadWriteOnce volumes
// with a filesystem type, serves persistent volumes only, is not called
// again to republish, and gets no SELinux mount option.
func DefaultCSIDriver(d *storagev1.CSIDriver) {
	s := &d.Spec
	if s.AttachRequired == nil {
		s.AttachRequired = new(true)
	}
	if s.PodInfoOnMount == nil {
		s.PodInfoOnMount = new(false)
	}
	if s.StorageCapacity == nil {
		s.StorageCapacity = new(false)
	}
	if s.FSGroupPolicy == nil {
		s.FSGroupPolicy = new(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy)
	}
	if len(s.VolumeLifecycleModes) == 0 {
		s.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}
	}
	if s.RequiresRepublish == nil {
		s.RequiresRepublish = new(false)
	}
	if s.SELinuxMount == nil {
		s.SELinuxMount = new(false)
	}
}
