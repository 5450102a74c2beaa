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
