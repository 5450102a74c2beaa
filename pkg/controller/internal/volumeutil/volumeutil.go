package volumeutil

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/skiff-sh/skiff/pkg/client/cache"
)

// Upstream's annotations and finalizers.
const (
	// AnnBindCompleted on a claim: the binder finished binding it.
	AnnBindCompleted = "pv.kubernetes.io/bind-completed"
	// AnnBoundByController on a claim or volume: the binder (not the user)
	// set the binding, so it may undo it.
	AnnBoundByController = "pv.kubernetes.io/bound-by-controller"
	// AnnSelectedNode on a claim: the node the scheduler picked for the
	// first pod using it (WaitForFirstConsumer).
	AnnSelectedNode = "volume.kubernetes.io/selected-node"
	// AnnStorageProvisioner (and its beta) on a claim: the provisioner the
	// binder asks to provision it.
	AnnStorageProvisioner     = "volume.kubernetes.io/storage-provisioner"
	AnnBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner"
	// AnnDynamicallyProvisioned on a volume: the provisioner that made it.
	AnnDynamicallyProvisioned = "pv.kubernetes.io/provisioned-by"
	// AnnBetaStorageClass: the class before spec.storageClassName (it wins).
	AnnBetaStorageClass = "volume.beta.kubernetes.io/storage-class"
	// AnnDefaultClass (and its beta) marks the default StorageClass.
	AnnDefaultClass     = "storageclass.kubernetes.io/is-default-class"
	AnnBetaDefaultClass = "storageclass.beta.kubernetes.io/is-default-class"

	// PVCProtectionFinalizer holds a claim a pod still uses;
	// PVProtectionFinalizer a volume still bound to a claim.
	PVCProtectionFinalizer = "kubernetes.io/pvc-protection"
	PVProtectionFinalizer  = "kubernetes.io/pv-protection"

	// PodPVCIndex indexes pods by the "namespace/claim" keys they use.
	PodPVCIndex = "pod-pvc-index"
)

// ClaimClass is the class a claim asks for: the beta annotation, else
// spec.storageClassName, else "" (upstream's GetPersistentVolumeClaimClass).
func ClaimClass(claim *corev1.PersistentVolumeClaim) string {
	if c, ok := claim.Annotations[AnnBetaStorageClass]; ok {
		return c
	}
	if claim.Spec.StorageClassName != nil {
		return *claim.Spec.StorageClassName
	}
	return ""
}

// ClaimHasClass reports whether the claim names a class at all ("" counts).
func ClaimHasClass(claim *corev1.PersistentVolumeClaim) bool {
	_, ok := claim.Annotations[AnnBetaStorageClass]
	return ok || claim.Spec.StorageClassName != nil
}

// VolumeClass is a volume's class: the beta annotation, else
// spec.storageClassName.
func VolumeClass(pv *corev1.PersistentVolume) string {
	if c, ok := pv.Annotations[AnnBetaStorageClass]; ok {
		return c
	}
	return pv.Spec.StorageClassName
}

// IsDefaultClass reports whether sc carries the GA or beta default annotation.
func IsDefaultClass(sc *storagev1.StorageClass) bool {
	return sc.Annotations[AnnDefaultClass] == "true" || sc.Annotations[AnnBetaDefaultClass] == "true"
}

// DefaultClass is the default StorageClass (nil: none); of several, the
// newest (then the first by name), as upstream.
func DefaultClass(classes cache.Lister[*storagev1.StorageClass]) (*storagev1.StorageClass, error) {
	all, err := classes.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var defaults []*storagev1.StorageClass
	for _, sc := range all {
		if IsDefaultClass(sc) {
			defaults = append(defaults, sc)
		}
	}
	if len(defaults) == 0 {
		return nil, nil
	}
	sort.Slice(defaults, func(i, j int) bool {
		ti, tj := defaults[i].CreationTimestamp, defaults[j].CreationTimestamp
		if !ti.Equal(&tj) {
			return tj.Before(&ti)
		}
		return defaults[i].Name < defaults[j].Name
	})
	return defaults[0], nil
}

// IsDelayBindingMode reports whether the claim's class binds
// WaitForFirstConsumer. A claim without a class, or whose class does not
// exist, binds immediately.
func IsDelayBindingMode(claim *corev1.PersistentVolumeClaim, classes cache.Lister[*storagev1.StorageClass]) (bool, error) {
	name := ClaimClass(claim)
	if name == "" {
		return false, nil
	}
	sc, err := classes.Get(name)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if sc.VolumeBindingMode == nil {
		return false, fmt.Errorf("VolumeBindingMode not set for StorageClass %q", sc.Name)
	}
	return *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer, nil
}

// IsVolumeBoundToClaim reports whether the volume's claimRef names the
// claim (an empty UID: pre-bound by name).
func IsVolumeBoundToClaim(pv *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) bool {
	ref := pv.Spec.ClaimRef
	if ref == nil || ref.Name != claim.Name || ref.Namespace != claim.Namespace {
		return false
	}
	return ref.UID == "" || ref.UID == claim.UID
}

// VolumeModeMismatch reports whether the claim's and the volume's
// volumeMode differ (unset means Filesystem).
func VolumeModeMismatch(claim *corev1.PersistentVolumeClaimSpec, pv *corev1.PersistentVolumeSpec) bool {
	c, v := corev1.PersistentVolumeFilesystem, corev1.PersistentVolumeFilesystem
	if claim.VolumeMode != nil {
		c = *claim.VolumeMode
	}
	if pv.VolumeMode != nil {
		v = *pv.VolumeMode
	}
	return c != v
}

// AccessModesContain reports whether have holds every mode of want.
func AccessModesContain(have, want []corev1.PersistentVolumeAccessMode) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			if h == w {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// ClaimKey is "namespace/name".
func ClaimKey(ns, name string) string { return ns + "/" + name }

// PodPVCIndexFunc indexes a pod by the claims it uses (persistentVolumeClaim
// volumes, and generic ephemeral volumes' "<pod>-<volume>" claims).
func PodPVCIndexFunc(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	var keys []string
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			keys = append(keys, ClaimKey(pod.Namespace, v.PersistentVolumeClaim.ClaimName))
		case v.Ephemeral != nil:
			keys = append(keys, ClaimKey(pod.Namespace, pod.Name+"-"+v.Name))
		}
	}
	return keys, nil
}

// IsPodTerminated: the pod has succeeded or failed (or is being deleted
// with no container running: upstream's notRunning, true without
// statuses), so it no longer uses its volumes.
func IsPodTerminated(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return true
	}
	if pod.DeletionTimestamp == nil {
		return false
	}
	for _, s := range pod.Status.ContainerStatuses {
		if s.State.Terminated == nil && s.State.Waiting == nil {
			return false
		}
	}
	return true
}

// PodsUsingClaim lists the pods of the index that use the claim.
func PodsUsingClaim(pods cache.Indexer, ns, name string) ([]*corev1.Pod, error) {
	objs, err := pods.ByIndex(PodPVCIndex, ClaimKey(ns, name))
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// AddPodPVCIndex adds PodPVCIndex to a (shared) pod informer unless a
// controller sharing it already did.
func AddPodPVCIndex(pods cache.SharedIndexInformer) error {
	if _, ok := pods.GetIndexer().GetIndexers()[PodPVCIndex]; ok {
		return nil
	}
	return pods.AddIndexers(cache.Indexers{PodPVCIndex: PodPVCIndexFunc})
}
