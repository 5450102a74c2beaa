package volume

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
)

// setUpClaim follows a persistentVolumeClaim volume to its bound PV
// (upstream's desired-state populator: the PVC must be bound and its PV
// must point back at it) and sets up the PV: hostPath (with its type
// check) or local (the path must exist; ownership by fsGroup unless
// read-only). The pod's containers mount the PV's path directly.
func (m *Manager) setUpClaim(ctx context.Context, pod *corev1.Pod, v *corev1.Volume) (*volState, error) {
	src := v.PersistentVolumeClaim
	wrap := func(err error) error {
		return processError{fmt.Errorf("error processing PVC %s/%s: %v", pod.Namespace, src.ClaimName, err)}
	}
	pvc, err := client.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](m.cfg.Client).
		Namespace(pod.Namespace).Get(ctx, src.ClaimName, metav1.GetOptions{})
	if err != nil {
		return nil, wrap(fmt.Errorf("failed to fetch PVC from API server: %v", err))
	}
	// A claim being deleted that the pvc-protection finalizer does not
	// hold back must not get new pods.
	if pvc.DeletionTimestamp != nil && !slices.Contains(pvc.Finalizers, "kubernetes.io/pvc-protection") {
		return nil, wrap(errors.New("PVC is being deleted"))
	}
	if pvc.Status.Phase != corev1.ClaimBound {
		return nil, wrap(errors.New("PVC is not bound"))
	}
	if pvc.Spec.VolumeName == "" {
		return nil, wrap(fmt.Errorf("PVC has empty pvc.Spec.VolumeName"))
	}
	pv, err := client.For[*corev1.PersistentVolume, *corev1.PersistentVolumeList](m.cfg.Client).Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return nil, wrap(fmt.Errorf("failed to fetch PV %s from API server: %v", pvc.Spec.VolumeName, err))
	}
	if pv.Spec.ClaimRef == nil {
		return nil, wrap(fmt.Errorf("found PV object %s but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim", pv.Name))
	}
	if pv.Spec.ClaimRef.UID != pvc.UID {
		return nil, wrap(fmt.Errorf("found PV object %s but its pv.Spec.ClaimRef.UID %s does not point to claim.UID %s", pv.Name, pv.Spec.ClaimRef.UID, pvc.UID))
	}
	readOnly := src.ReadOnly
	switch {
	case pv.Spec.HostPath != nil:
		if err := checkHostPathType(pv.Spec.HostPath.Path, pv.Spec.HostPath.Type); err != nil {
			return nil, err
		}
		return &volState{plugin: PluginHostPath, path: pv.Spec.HostPath.Path, readOnly: readOnly}, nil
	case pv.Spec.Local != nil:
		path := pv.Spec.Local.Path
		fi, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("local volume %s: %s is not a directory (block local volumes are not supported)", pv.Name, path)
		}
		if sc := pod.Spec.SecurityContext; sc != nil && !readOnly {
			if err := setVolumeOwnership(path, sc.FSGroup, sc.FSGroupChangePolicy, false); err != nil {
				return nil, err
			}
		}
		return &volState{plugin: PluginLocal, path: path, readOnly: readOnly}, nil
	}
	return nil, fmt.Errorf("persistent volume %s: only hostPath and local volumes are supported by skiff's kubelet", pv.Name)
}
