package persistentvolume

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/controller/internal/volumeutil"
)

// Upstream's event reasons (pkg/controller/volume/events).
const (
	EventFailedBinding        = "FailedBinding"
	EventVolumeMismatch       = "VolumeMismatch"
	EventProvisioningFailed   = "ProvisioningFailed"
	EventExternalProvisioning = "ExternalProvisioning"
	EventWaitForFirstConsumer = "WaitForFirstConsumer"
	EventWaitForPodScheduled  = "WaitForPodScheduled"
	EventVolumeFailedDelete   = "VolumeFailedDelete"
	EventVolumeFailedRecycle  = "VolumeFailedRecycle"
	EventVolumeUnknownReclaim = "VolumeUnknownReclaimPolicy"
	EventClaimLost            = "ClaimLost"
	EventClaimMisbound        = "ClaimMisbound"
)

// syncClaim syncs the claim of key "namespace/name".
func (c *Controller) syncClaim(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	claim, err := c.claims.Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil // deleted: its volume was queued by the delete handler
	}
	if err != nil {
		return err
	}
	if !metav1.HasAnnotation(claim.ObjectMeta, volumeutil.AnnBindCompleted) {
		return c.syncUnboundClaim(ctx, claim)
	}
	return c.syncBoundClaim(ctx, claim)
}

func (c *Controller) syncUnboundClaim(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	if claim.Spec.VolumeName == "" {
		delayBinding, err := volumeutil.IsDelayBindingMode(claim, c.classes)
		if err != nil {
			return err
		}
		volumes, err := c.volumes.List(labels.Everything())
		if err != nil {
			return err
		}
		volume, err := findBestMatch(claim, volumes, delayBinding)
		if err != nil {
			return fmt.Errorf("error finding PV for claim %q: %w", volumeutil.ClaimKey(claim.Namespace, claim.Name), err)
		}
		if volume != nil {
			return c.bind(ctx, volume, claim)
		}
		// No volume: a claim without any class gets the default one
		// (upstream's retroactive default StorageClass); the update
		// brings the claim back.
		if updated, err := c.assignDefaultStorageClass(ctx, claim); err != nil || updated {
			if err != nil {
				return fmt.Errorf("can't update PersistentVolumeClaim[%q]: %w", volumeutil.ClaimKey(claim.Namespace, claim.Name), err)
			}
			return nil
		}
		switch {
		case delayBinding && claim.Annotations[volumeutil.AnnSelectedNode] == "":
			c.emitEventForUnboundDelayBindingClaim(claim)
		case volumeutil.ClaimClass(claim) != "":
			return c.provisionClaim(ctx, claim)
		default:
			c.cfg.Recorder.Event(claim, corev1.EventTypeNormal, EventFailedBinding, "no persistent volumes available for this claim and no storage class is set")
		}
		_, err = c.updateClaimStatus(ctx, claim, corev1.ClaimPending, nil)
		return err
	}
	// The user asked for a specific volume.
	volume, err := c.volumes.Get(claim.Spec.VolumeName)
	if apierrors.IsNotFound(err) {
		_, err = c.updateClaimStatus(ctx, claim, corev1.ClaimPending, nil)
		return err // retried at the next resync
	}
	if err != nil {
		return err
	}
	switch {
	case volume.Spec.ClaimRef == nil:
		if err := checkVolumeSatisfyClaim(volume, claim); err != nil {
			c.cfg.Recorder.Event(claim, corev1.EventTypeWarning, EventVolumeMismatch, fmt.Sprintf("Cannot bind to requested volume %q: %s", volume.Name, err))
			_, err = c.updateClaimStatus(ctx, claim, corev1.ClaimPending, nil)
			return err
		}
		return c.bind(ctx, volume, claim)
	case volumeutil.IsVolumeBoundToClaim(volume, claim):
		return c.bind(ctx, volume, claim) // finish the binding
	default:
		msg := fmt.Sprintf("volume %q already bound to a different claim.", volume.Name)
		c.cfg.Recorder.Event(claim, corev1.EventTypeWarning, EventFailedBinding, msg)
		if metav1.HasAnnotation(claim.ObjectMeta, volumeutil.AnnBoundByController) {
			return fmt.Errorf("invalid binding of claim %q to volume %q: volume already claimed by %q",
				volumeutil.ClaimKey(claim.Namespace, claim.Name), claim.Spec.VolumeName,
				volumeutil.ClaimKey(volume.Spec.ClaimRef.Namespace, volume.Spec.ClaimRef.Name))
		}
		_, err = c.updateClaimStatus(ctx, claim, corev1.ClaimPending, nil)
		return err
	}
}

func (c *Controller) syncBoundClaim(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	if claim.Spec.VolumeName == "" {
		return c.updateClaimStatusWithEvent(ctx, claim, corev1.ClaimLost, EventClaimLost,
			"Bound claim has lost reference to PersistentVolume. Data on the volume is lost!")
	}
	volume, err := c.volumes.Get(claim.Spec.VolumeName)
	if apierrors.IsNotFound(err) {
		return c.updateClaimStatusWithEvent(ctx, claim, corev1.ClaimLost, EventClaimLost,
			"Bound claim has lost its PersistentVolume. Data on the volume is lost!")
	}
	if err != nil {
		return err
	}
	if volume.Spec.ClaimRef == nil || volume.Spec.ClaimRef.UID == claim.UID {
		// Unbound volume (or a cache behind our own write): bind again;
		// all is well otherwise (bind writes nothing then).
		return c.bind(ctx, volume, claim)
	}
	return c.updateClaimStatusWithEvent(ctx, claim, corev1.ClaimLost, EventClaimMisbound,
		"Two claims are bound to the same volume, this one is bound incorrectly")
}

// syncVolume syncs the volume named key.
func (c *Controller) syncVolume(ctx context.Context, key string) error {
	volume, err := c.volumes.Get(key)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	ref := volume.Spec.ClaimRef
	if ref == nil || ref.UID == "" {
		// Unused, or reserved for a claim that the claim sync binds.
		_, err := c.updateVolumePhase(ctx, volume, corev1.VolumeAvailable, "")
		return err
	}
	claim, err := c.claims.Namespace(ref.Namespace).Get(ref.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if apierrors.IsNotFound(err) {
		claim = nil
		if volume.Status.Phase != corev1.VolumeReleased && volume.Status.Phase != corev1.VolumeFailed {
			// Never release a volume on a cache that may be behind (a
			// claim created with the volume by a provisioner): ask the
			// API server.
			live, err := c.pvcs.Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			if err == nil {
				claim = live
			}
		}
	}
	if claim != nil && claim.UID != ref.UID {
		// The cached claim may be an older one of that name: ask.
		live, err := c.pvcs.Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			claim = nil
		case err != nil:
			return err
		case live.UID != ref.UID:
			claim = nil
		default:
			claim = live
		}
	}
	switch {
	case claim == nil:
		// The claim is gone: released, then reclaimed.
		if volume.Status.Phase != corev1.VolumeReleased && volume.Status.Phase != corev1.VolumeFailed {
			c.cfg.Logger.Info("Volume is released and reclaim policy will be executed", "volume", volume.Name, "reclaimPolicy", volume.Spec.PersistentVolumeReclaimPolicy)
			if volume, err = c.updateVolumePhase(ctx, volume, corev1.VolumeReleased, ""); err != nil {
				return err
			}
		}
		return c.reclaimVolume(ctx, volume)
	case claim.Spec.VolumeName == "":
		if volumeutil.VolumeModeMismatch(&claim.Spec, &volume.Spec) {
			c.cfg.Recorder.Event(volume, corev1.EventTypeWarning, EventVolumeMismatch,
				fmt.Sprintf("Cannot bind PersistentVolume to requested PersistentVolumeClaim %q due to incompatible volumeMode.", claim.Name))
			c.cfg.Recorder.Event(claim, corev1.EventTypeWarning, EventVolumeMismatch,
				fmt.Sprintf("Cannot bind PersistentVolume %q to requested PersistentVolumeClaim due to incompatible volumeMode.", volume.Name))
			return nil
		}
		// The volume is bound, the claim not yet: the claim sync binds it.
		c.claimQueue.Add(volumeutil.ClaimKey(claim.Namespace, claim.Name))
		return nil
	case claim.Spec.VolumeName == volume.Name:
		_, err := c.updateVolumePhase(ctx, volume, corev1.VolumeBound, "")
		return err
	default:
		// The claim is bound to another volume.
		if metav1.HasAnnotation(volume.ObjectMeta, volumeutil.AnnDynamicallyProvisioned) &&
			volume.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimDelete {
			// Provisioned for this claim, not needed: released and deleted.
			if volume.Status.Phase != corev1.VolumeReleased && volume.Status.Phase != corev1.VolumeFailed {
				if volume, err = c.updateVolumePhase(ctx, volume, corev1.VolumeReleased, ""); err != nil {
					return err
				}
			}
			return c.reclaimVolume(ctx, volume)
		}
		return c.unbindVolume(ctx, volume)
	}
}

// reclaimVolume applies the reclaim policy of a released volume.
func (c *Controller) reclaimVolume(ctx context.Context, volume *corev1.PersistentVolume) error {
	switch volume.Spec.PersistentVolumeReclaimPolicy {
	case corev1.PersistentVolumeReclaimRetain:
		return nil
	case corev1.PersistentVolumeReclaimRecycle:
		// No recycler plugins in skiff (upstream's deprecated recycler).
		_, err := c.updateVolumePhaseWithEvent(ctx, volume, corev1.VolumeFailed, corev1.EventTypeWarning, EventVolumeFailedRecycle, "No recycler plugin found for the volume!")
		return err
	case corev1.PersistentVolumeReclaimDelete:
		if p := volume.Annotations[volumeutil.AnnDynamicallyProvisioned]; p != "" && !strings.HasPrefix(p, "kubernetes.io/") {
			return nil // its (external) provisioner deletes it
		}
		// No in-tree deleter plugins in skiff: upstream's "no plugin" path.
		msg := fmt.Sprintf("error getting deleter volume plugin for volume %q: no deletable volume plugin matched", volume.Name)
		_, err := c.updateVolumePhaseWithEvent(ctx, volume, corev1.VolumeFailed, corev1.EventTypeWarning, EventVolumeFailedDelete, msg)
		return err
	default:
		_, err := c.updateVolumePhaseWithEvent(ctx, volume, corev1.VolumeFailed, corev1.EventTypeWarning, EventVolumeUnknownReclaim, "Volume has unrecognized PersistentVolumeReclaimPolicy")
		return err
	}
}

// checkVolumeSatisfyClaim says why a volume the claim names cannot be
// bound to it (nil: it can).
func checkVolumeSatisfyClaim(volume *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) error {
	if volume.DeletionTimestamp != nil {
		return fmt.Errorf("the volume is marked for deletion %q", volume.Name)
	}
	requested := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	size := volume.Spec.Capacity[corev1.ResourceStorage]
	if size.Value() < requested.Value() {
		return fmt.Errorf("requested PV is too small")
	}
	if volumeutil.VolumeClass(volume) != volumeutil.ClaimClass(claim) {
		return fmt.Errorf("storageClassName does not match")
	}
	if volumeutil.VolumeModeMismatch(&claim.Spec, &volume.Spec) {
		return fmt.Errorf("incompatible volumeMode")
	}
	if !volumeutil.AccessModesContain(volume.Spec.AccessModes, claim.Spec.AccessModes) {
		return fmt.Errorf("incompatible accessMode")
	}
	return nil
}

// emitEventForUnboundDelayBindingClaim says what a WaitForFirstConsumer
// claim waits for.
func (c *Controller) emitEventForUnboundDelayBindingClaim(claim *corev1.PersistentVolumeClaim) {
	reason, msg := EventWaitForFirstConsumer, "waiting for first consumer to be created before binding"
	pods, err := volumeutil.PodsUsingClaim(c.pods, claim.Namespace, claim.Name)
	if err == nil {
		var names []string
		for _, p := range pods {
			if !volumeutil.IsPodTerminated(p) && p.Spec.NodeName == "" {
				names = append(names, p.Name)
			}
		}
		switch len(names) {
		case 0:
		case 1:
			reason, msg = EventWaitForPodScheduled, fmt.Sprintf("waiting for pod %s to be scheduled", names[0])
		default:
			reason, msg = EventWaitForPodScheduled, fmt.Sprintf("waiting for pods %s to be scheduled", strings.Join(names, ","))
		}
	}
	c.cfg.Recorder.Event(claim, corev1.EventTypeNormal, reason, msg)
}

// provisionClaim hands the claim to its class's provisioner: skiff's
// binder has no in-tree volume plugins, so every provisioner is external
// (as a CSI driver's is upstream).
func (c *Controller) provisionClaim(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	class, err := c.classes.Get(volumeutil.ClaimClass(claim))
	if err != nil {
		msg := err.Error()
		if apierrors.IsNotFound(err) {
			// Upstream's listers name the resource in the singular.
			msg = fmt.Sprintf("storageclass.storage.k8s.io %q not found", volumeutil.ClaimClass(claim))
		}
		c.cfg.Recorder.Event(claim, corev1.EventTypeWarning, EventProvisioningFailed, msg)
		return nil // retried at every sync, as upstream
	}
	if strings.HasPrefix(class.Provisioner, "kubernetes.io/") {
		c.cfg.Recorder.Event(claim, corev1.EventTypeWarning, EventProvisioningFailed, "no volume plugin matched name: "+class.Provisioner)
		return nil
	}
	if claim, err = c.setClaimProvisioner(ctx, claim, class.Provisioner); err != nil {
		c.cfg.Recorder.Event(claim, corev1.EventTypeWarning, EventProvisioningFailed, fmt.Sprintf("Error saving claim: %v", err))
		return err
	}
	c.cfg.Recorder.Event(claim, corev1.EventTypeNormal, EventExternalProvisioning, fmt.Sprintf(
		"Waiting for a volume to be created either by the external provisioner '%s' or manually by the system administrator. "+
			"If volume creation is delayed, please verify that the provisioner is running and correctly registered.", class.Provisioner))
	return nil
}

// setClaimProvisioner writes the provisioner annotations (GA and beta).
func (c *Controller) setClaimProvisioner(ctx context.Context, claim *corev1.PersistentVolumeClaim, provisioner string) (*corev1.PersistentVolumeClaim, error) {
	if claim.Annotations[volumeutil.AnnStorageProvisioner] == provisioner && claim.Annotations[volumeutil.AnnBetaStorageProvisioner] == provisioner {
		return claim, nil
	}
	clone := claim.DeepCopy()
	metav1.SetMetaDataAnnotation(&clone.ObjectMeta, volumeutil.AnnStorageProvisioner, provisioner)
	metav1.SetMetaDataAnnotation(&clone.ObjectMeta, volumeutil.AnnBetaStorageProvisioner, provisioner)
	return c.pvcs.Namespace(claim.Namespace).Update(ctx, clone, metav1.UpdateOptions{})
}

// assignDefaultStorageClass gives a claim without any class the default
// StorageClass; true when it wrote the claim.
func (c *Controller) assignDefaultStorageClass(ctx context.Context, claim *corev1.PersistentVolumeClaim) (bool, error) {
	if volumeutil.ClaimHasClass(claim) {
		return false, nil
	}
	class, err := volumeutil.DefaultClass(c.classes)
	if err != nil || class == nil {
		return false, err
	}
	clone := claim.DeepCopy()
	name := class.Name
	clone.Spec.StorageClassName = &name
	if _, err := c.pvcs.Namespace(claim.Namespace).Update(ctx, clone, metav1.UpdateOptions{}); err != nil {
		return false, err
	}
	return true, nil
}

// bind binds volume and claim both ways and marks both Bound; the volume
// is written first. Writes happen only when something changes.
func (c *Controller) bind(ctx context.Context, volume *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) error {
	volume, err := c.bindVolumeToClaim(ctx, volume, claim)
	if err != nil {
		return err
	}
	if volume, err = c.updateVolumePhase(ctx, volume, corev1.VolumeBound, ""); err != nil {
		return err
	}
	if claim, err = c.bindClaimToVolume(ctx, claim, volume); err != nil {
		return err
	}
	_, err = c.updateClaimStatus(ctx, claim, corev1.ClaimBound, volume)
	return err
}

func (c *Controller) bindVolumeToClaim(ctx context.Context, volume *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) (*corev1.PersistentVolume, error) {
	clone := volume.DeepCopy()
	dirty := false
	ref := volume.Spec.ClaimRef
	if ref == nil || ref.Name != claim.Name || ref.Namespace != claim.Namespace || ref.UID != claim.UID {
		clone.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
			Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID, ResourceVersion: claim.ResourceVersion}
		dirty = true
	}
	if !volumeutil.IsVolumeBoundToClaim(volume, claim) && !metav1.HasAnnotation(volume.ObjectMeta, volumeutil.AnnBoundByController) {
		metav1.SetMetaDataAnnotation(&clone.ObjectMeta, volumeutil.AnnBoundByController, "yes")
		dirty = true
	}
	if !dirty {
		return volume, nil
	}
	c.cfg.Logger.Info("Claim bound to volume", "claim", volumeutil.ClaimKey(claim.Namespace, claim.Name), "volume", volume.Name)
	return c.pvs.Update(ctx, clone, metav1.UpdateOptions{})
}

func (c *Controller) bindClaimToVolume(ctx context.Context, claim *corev1.PersistentVolumeClaim, volume *corev1.PersistentVolume) (*corev1.PersistentVolumeClaim, error) {
	clone := claim.DeepCopy()
	dirty := false
	if claim.Spec.VolumeName != volume.Name {
		clone.Spec.VolumeName = volume.Name
		if !metav1.HasAnnotation(clone.ObjectMeta, volumeutil.AnnBoundByController) {
			metav1.SetMetaDataAnnotation(&clone.ObjectMeta, volumeutil.AnnBoundByController, "yes")
		}
		dirty = true
	}
	if !metav1.HasAnnotation(clone.ObjectMeta, volumeutil.AnnBindCompleted) {
		metav1.SetMetaDataAnnotation(&clone.ObjectMeta, volumeutil.AnnBindCompleted, "yes")
		dirty = true
	}
	if !dirty {
		return claim, nil
	}
	return c.pvcs.Namespace(claim.Namespace).Update(ctx, clone, metav1.UpdateOptions{})
}

// unbindVolume undoes a binding the binder made (or, for a volume the
// user pre-bound, forgets only the claim's UID) and makes it Available.
func (c *Controller) unbindVolume(ctx context.Context, volume *corev1.PersistentVolume) error {
	clone := volume.DeepCopy()
	if metav1.HasAnnotation(volume.ObjectMeta, volumeutil.AnnBoundByController) {
		clone.Spec.ClaimRef = nil
		delete(clone.Annotations, volumeutil.AnnBoundByController)
		if len(clone.Annotations) == 0 {
			clone.Annotations = nil
		}
	} else {
		clone.Spec.ClaimRef.UID = ""
	}
	updated, err := c.pvs.Update(ctx, clone, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	_, err = c.updateVolumePhase(ctx, updated, corev1.VolumeAvailable, "")
	return err
}

// updateClaimStatus sets the claim's phase and, from the volume, its
// access modes and (when it becomes Bound) capacity.
func (c *Controller) updateClaimStatus(ctx context.Context, claim *corev1.PersistentVolumeClaim, phase corev1.PersistentVolumeClaimPhase, volume *corev1.PersistentVolume) (*corev1.PersistentVolumeClaim, error) {
	clone := claim.DeepCopy()
	dirty := false
	if claim.Status.Phase != phase {
		clone.Status.Phase = phase
		dirty = true
	}
	if volume == nil {
		if claim.Status.AccessModes != nil || claim.Status.Capacity != nil {
			clone.Status.AccessModes, clone.Status.Capacity = nil, nil
			dirty = true
		}
	} else {
		if !reflect.DeepEqual(claim.Status.AccessModes, volume.Spec.AccessModes) {
			clone.Status.AccessModes = volume.Spec.AccessModes
			dirty = true
		}
		if claim.Status.Phase != phase {
			vc, ok := volume.Spec.Capacity[corev1.ResourceStorage]
			if !ok {
				return nil, fmt.Errorf("PersistentVolume %q is without a storage capacity", volume.Name)
			}
			if cc, ok := claim.Status.Capacity[corev1.ResourceStorage]; !ok || vc.Cmp(cc) != 0 {
				clone.Status.Capacity = volume.Spec.Capacity
				dirty = true
			}
		}
	}
	if !dirty {
		return claim, nil
	}
	return c.pvcs.Namespace(claim.Namespace).UpdateStatus(ctx, clone, metav1.UpdateOptions{})
}

// updateClaimStatusWithEvent changes the phase and records the event only
// when the phase changes.
func (c *Controller) updateClaimStatusWithEvent(ctx context.Context, claim *corev1.PersistentVolumeClaim, phase corev1.PersistentVolumeClaimPhase, reason, msg string) error {
	if claim.Status.Phase == phase {
		return nil
	}
	updated, err := c.updateClaimStatus(ctx, claim, phase, nil)
	if err != nil {
		return err
	}
	c.cfg.Recorder.Event(updated, corev1.EventTypeWarning, reason, msg)
	return nil
}

func (c *Controller) updateVolumePhase(ctx context.Context, volume *corev1.PersistentVolume, phase corev1.PersistentVolumePhase, msg string) (*corev1.PersistentVolume, error) {
	if volume.Status.Phase == phase {
		return volume, nil
	}
	clone := volume.DeepCopy()
	clone.Status.Phase = phase
	clone.Status.Message = msg
	updated, err := c.pvs.UpdateStatus(ctx, clone, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	c.cfg.Logger.Debug("Volume entered phase", "volume", volume.Name, "phase", phase)
	return updated, nil
}

func (c *Controller) updateVolumePhaseWithEvent(ctx context.Context, volume *corev1.PersistentVolume, phase corev1.PersistentVolumePhase, eventtype, reason, msg string) (*corev1.PersistentVolume, error) {
	if volume.Status.Phase == phase {
		return volume, nil
	}
	updated, err := c.updateVolumePhase(ctx, volume, phase, msg)
	if err != nil {
		return nil, err
	}
	c.cfg.Recorder.Event(updated, eventtype, reason, msg)
	return updated, nil
}
