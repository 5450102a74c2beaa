package admission

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/quota"
)

var grPVs = schema.GroupResource{Resource: "persistentvolumes"}

// --- StorageObjectInUseProtection ------------------------------------------

// The finalizers the protection controllers remove once nothing uses the
// object (pkg/controller/volume/pvcprotection, pvprotection).
const (
	pvcProtectionFinalizer = "kubernetes.io/pvc-protection"
	pvProtectionFinalizer  = "kubernetes.io/pv-protection"
)

// storageObjectInUseProtection adds the protection finalizer to every new
// claim and volume, as upstream's plugin: a claim a pod uses, or a volume
// a claim is bound to, is then only removed once it is free. (Upstream
// also protects VolumeAttributesClasses; skiff has no controller to
// release that finalizer yet, so it adds none: a class would never go.)
type storageObjectInUseProtection struct{}

func (storageObjectInUseProtection) Name() string              { return "StorageObjectInUseProtection" }
func (storageObjectInUseProtection) Handles(op Operation) bool { return op == Create }

func (storageObjectInUseProtection) Admit(_ context.Context, a *Attributes) error {
	if a.Subresource != "" {
		return nil
	}
	switch obj := a.Object.(type) {
	case *corev1.PersistentVolumeClaim:
		if a.Resource == grPVCs && !slices.Contains(obj.Finalizers, pvcProtectionFinalizer) {
			obj.Finalizers = append(obj.Finalizers, pvcProtectionFinalizer)
		}
	case *corev1.PersistentVolume:
		if a.Resource == grPVs && !slices.Contains(obj.Finalizers, pvProtectionFinalizer) {
			obj.Finalizers = append(obj.Finalizers, pvProtectionFinalizer)
		}
	}
	return nil
}

// --- PersistentVolumeClaimResize -------------------------------------------

// persistentVolumeClaimResize refuses growing a claim unless it is bound
// and its StorageClass (the same before and after) allows volume
// expansion, with upstream's messages. Shrinking is left to validation.
type persistentVolumeClaimResize struct{ d Deps }

func (*persistentVolumeClaimResize) Name() string              { return "PersistentVolumeClaimResize" }
func (*persistentVolumeClaimResize) Handles(op Operation) bool { return op == Update }

func (p *persistentVolumeClaimResize) Validate(ctx context.Context, a *Attributes) error {
	if a.Resource != grPVCs || a.Subresource != "" {
		return nil
	}
	pvc, ok := a.Object.(*corev1.PersistentVolumeClaim)
	if !ok {
		return nil
	}
	old, ok := a.OldObject.(*corev1.PersistentVolumeClaim)
	if !ok {
		return nil
	}
	newSize, oldSize := pvc.Spec.Resources.Requests[corev1.ResourceStorage], old.Spec.Resources.Requests[corev1.ResourceStorage]
	if newSize.Cmp(oldSize) <= 0 {
		return nil
	}
	if old.Status.Phase != corev1.ClaimBound {
		return forbidden(a, errorf("Only bound persistent volume claims can be expanded"))
	}
	if !p.allowResize(ctx, pvc, old) {
		return forbidden(a, errorf("only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"))
	}
	return nil
}

func (p *persistentVolumeClaimResize) allowResize(ctx context.Context, pvc, old *corev1.PersistentVolumeClaim) bool {
	class, oldClass := quota.ClaimClass(pvc), quota.ClaimClass(old)
	if class == "" || oldClass == "" || class != oldClass {
		return false
	}
	obj, err := p.d.Getter.Get(ctx, grStorageClasses, "", class)
	if err != nil {
		return false
	}
	sc, ok := obj.(*storagev1.StorageClass)
	return ok && sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion
}
