package volumebinding

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/componenthelpers/scheduling/nodeaffinity"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/helper"
)

// Reasons a node is rejected, upstream 1.34's ConflictReasons (checked
// against kube-scheduler v1.34.4 by test/compat).
const (
	ErrReasonBindConflict   = "node(s) didn't find available persistent volumes to bind"
	ErrReasonNodeConflict   = "node(s) didn't match PersistentVolume's node affinity"
	ErrReasonNotEnoughSpace = "node(s) did not have enough free storage"
	ErrReasonPVNotExist     = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)

// Annotations the binder reads and writes, as upstream's storage helpers.
const (
	AnnBindCompleted        = "pv.kubernetes.io/bind-completed"
	AnnBoundByController    = "pv.kubernetes.io/bound-by-controller"
	AnnSelectedNode         = "volume.kubernetes.io/selected-node"
	notSupportedProvisioner = "kubernetes.io/no-provisioner"
)

// BindingInfo is an unbound claim matched to an available volume.
type BindingInfo struct {
	pv  *corev1.PersistentVolume
	pvc *corev1.PersistentVolumeClaim
}

// PodVolumeClaims are the pod's claims sorted by what is left to do.
type PodVolumeClaims struct {
	boundClaims               []*corev1.PersistentVolumeClaim
	unboundClaimsDelayBinding []*corev1.PersistentVolumeClaim
	unboundClaimsImmediate    []*corev1.PersistentVolumeClaim
	// unboundVolumesDelayBinding: the volumes of the classes of the
	// delay-binding claims, by class name.
	unboundVolumesDelayBinding map[string][]*corev1.PersistentVolume
}

// PodVolumes is what must happen on one node for the pod's volumes.
type PodVolumes struct {
	// StaticBindings: claims to bind to existing volumes.
	StaticBindings []*BindingInfo
	// DynamicProvisions: claims to provision (selected-node annotation).
	DynamicProvisions []*corev1.PersistentVolumeClaim
}

// binder is upstream's volumeBinder over skiff's listers: it finds the
// pod's volumes per node, assumes the choice in memory and writes it.
type binder struct {
	pvcCache    *assumeCache[*corev1.PersistentVolumeClaim]
	pvCache     *assumeCache[*corev1.PersistentVolume]
	classLister cache.Lister[*storagev1.StorageClass]
	podLister   cache.Lister[*corev1.Pod]
	// csiDriverLister and capacityLister serve storage capacity tracking
	// (nil: not checked).
	csiDriverLister cache.Lister[*storagev1.CSIDriver]
	capacityLister  cache.Lister[*storagev1.CSIStorageCapacity]
	nodeLister      cache.Lister[*corev1.Node]
	client          func() *client.Client
	clock           clock.Clock
	bindTimeout     time.Duration
	// pollInterval: how often PreBind checks the bindings (1s upstream).
	pollInterval time.Duration
}

func isPVCFullyBound(pvc *corev1.PersistentVolumeClaim) bool {
	_, ok := pvc.Annotations[AnnBindCompleted]
	return pvc.Spec.VolumeName != "" && ok
}

// podClaimNames lists the claim names of the pod's volumes (claims and
// generic ephemeral volumes, named <pod>-<volume>).
func podClaimNames(pod *corev1.Pod) []string {
	var out []string
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		switch {
		case v.PersistentVolumeClaim != nil:
			out = append(out, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			out = append(out, pod.Name+"-"+v.Name)
		}
	}
	return out
}

// isDelayBindingMode: the claim's class exists and is WaitForFirstConsumer.
func (b *binder) isDelayBindingMode(pvc *corev1.PersistentVolumeClaim) (bool, error) {
	name := helper.ClaimClass(pvc)
	if name == "" {
		return false, nil
	}
	class, err := b.classLister.Get(name)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if class.VolumeBindingMode == nil {
		return false, fmt.Errorf("VolumeBindingMode not set for StorageClass %q", name)
	}
	return *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer, nil
}

// getPodVolumeClaims sorts the pod's claims into bound, unbound delayed
// and unbound immediate (pre-bound ones count as immediate), and lists the
// candidate volumes of the delayed claims' classes.
func (b *binder) getPodVolumeClaims(pod *corev1.Pod) (*PodVolumeClaims, error) {
	c := &PodVolumeClaims{unboundVolumesDelayBinding: map[string][]*corev1.PersistentVolume{}}
	for _, name := range podClaimNames(pod) {
		pvc, err := b.pvcCache.get(pod.Namespace, name)
		if err != nil {
			return c, fmt.Errorf("error getting PVC %q: %v", pod.Namespace+"/"+name, err)
		}
		if isPVCFullyBound(pvc) {
			c.boundClaims = append(c.boundClaims, pvc)
			continue
		}
		delay, err := b.isDelayBindingMode(pvc)
		if err != nil {
			return c, err
		}
		if delay && pvc.Spec.VolumeName == "" {
			c.unboundClaimsDelayBinding = append(c.unboundClaimsDelayBinding, pvc)
		} else {
			c.unboundClaimsImmediate = append(c.unboundClaimsImmediate, pvc)
		}
	}
	for _, pvc := range c.unboundClaimsDelayBinding {
		class := helper.ClaimClass(pvc)
		if _, done := c.unboundVolumesDelayBinding[class]; done {
			continue
		}
		pvs, err := b.pvCache.list(func(pv *corev1.PersistentVolume) bool { return helper.VolumeClass(pv) == class })
		if err != nil {
			return c, err
		}
		c.unboundVolumesDelayBinding[class] = pvs
	}
	return c, nil
}

// checkNodeAffinity matches the volume's required node affinity against
// the node's labels (as upstream, fields are not matched).
func checkNodeAffinity(pv *corev1.PersistentVolume, nodeLabels map[string]string) error {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return nil
	}
	sel, err := nodeaffinity.NewNodeSelector(pv.Spec.NodeAffinity.Required)
	if err != nil {
		return err
	}
	if !sel.Match(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: nodeLabels}}) {
		return errors.New("no matching NodeSelectorTerms")
	}
	return nil
}

// findPodVolumes decides for one node: the bindings and provisionings the
// pod needs there, or the reasons it cannot have its volumes there.
func (b *binder) findPodVolumes(c *PodVolumeClaims, node *corev1.Node) (*PodVolumes, []string, error) {
	pv := &PodVolumes{}
	boundSatisfied, unboundSatisfied, boundPVsFound, sufficientStorage := true, true, true, true
	reasons := func() []string {
		var r []string
		if !boundSatisfied {
			r = append(r, ErrReasonNodeConflict)
		}
		if !unboundSatisfied {
			r = append(r, ErrReasonBindConflict)
		}
		if !boundPVsFound {
			r = append(r, ErrReasonPVNotExist)
		}
		if !sufficientStorage {
			r = append(r, ErrReasonNotEnoughSpace)
		}
		return r
	}
	var err error
	if len(c.boundClaims) > 0 {
		if boundSatisfied, boundPVsFound, err = b.checkBoundClaims(c.boundClaims, node); err != nil {
			return nil, nil, err
		}
	}
	if len(c.unboundClaimsDelayBinding) > 0 {
		var toMatch, toProvision []*corev1.PersistentVolumeClaim
		for _, claim := range c.unboundClaimsDelayBinding {
			if selected, ok := claim.Annotations[AnnSelectedNode]; ok {
				if selected != node.Name {
					unboundSatisfied = false // provisioning on another node
					return pv, reasons(), nil
				}
				toProvision = append(toProvision, claim)
			} else {
				toMatch = append(toMatch, claim)
			}
		}
		if len(toMatch) > 0 {
			var unmatched []*corev1.PersistentVolumeClaim
			unboundSatisfied, pv.StaticBindings, unmatched, err = b.findMatchingVolumes(toMatch, c.unboundVolumesDelayBinding, node)
			if err != nil {
				return nil, nil, err
			}
			toProvision = append(toProvision, unmatched...)
		}
		if len(toProvision) > 0 {
			unboundSatisfied, sufficientStorage, pv.DynamicProvisions, err = b.checkVolumeProvisions(toProvision, node)
			if err != nil {
				return nil, nil, err
			}
		}
	}
	return pv, reasons(), nil
}

func (b *binder) checkBoundClaims(claims []*corev1.PersistentVolumeClaim, node *corev1.Node) (satisfied, found bool, err error) {
	for _, pvc := range claims {
		pv, err := b.pvCache.get("", pvc.Spec.VolumeName)
		if apierrors.IsNotFound(err) {
			return true, false, nil
		}
		if err != nil {
			return false, true, err
		}
		if checkNodeAffinity(pv, node.Labels) != nil {
			return false, true, nil
		}
	}
	return true, true, nil
}

func claimRequest(pvc *corev1.PersistentVolumeClaim) int64 {
	q := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	return q.Value()
}

// findMatchingVolumes matches each claim (smallest request first) to the
// smallest fitting available volume not chosen yet; unmatched claims are
// returned for provisioning.
func (b *binder) findMatchingVolumes(claims []*corev1.PersistentVolumeClaim, volumes map[string][]*corev1.PersistentVolume, node *corev1.Node) (bool, []*BindingInfo, []*corev1.PersistentVolumeClaim, error) {
	sorted := append([]*corev1.PersistentVolumeClaim(nil), claims...)
	sort.SliceStable(sorted, func(i, j int) bool { return claimRequest(sorted[i]) < claimRequest(sorted[j]) })
	chosen := map[string]bool{}
	found := true
	var bindings []*BindingInfo
	var unmatched []*corev1.PersistentVolumeClaim
	for _, pvc := range sorted {
		pv, err := findMatchingVolume(pvc, volumes[helper.ClaimClass(pvc)], node, chosen)
		if err != nil {
			return false, nil, nil, err
		}
		if pv == nil {
			unmatched = append(unmatched, pvc)
			found = false
			continue
		}
		chosen[pv.Name] = true
		bindings = append(bindings, &BindingInfo{pv: pv, pvc: pvc})
	}
	return found, bindings, unmatched, nil
}

func isVolumeBoundToClaim(pv *corev1.PersistentVolume, pvc *corev1.PersistentVolumeClaim) bool {
	ref := pv.Spec.ClaimRef
	if ref == nil || ref.Name != pvc.Name || ref.Namespace != pvc.Namespace {
		return false
	}
	return ref.UID == "" || ref.UID == pvc.UID
}

func volumeModeMismatch(claim *corev1.PersistentVolumeClaimSpec, pv *corev1.PersistentVolumeSpec) bool {
	cm, pm := corev1.PersistentVolumeFilesystem, corev1.PersistentVolumeFilesystem
	if claim.VolumeMode != nil {
		cm = *claim.VolumeMode
	}
	if pv.VolumeMode != nil {
		pm = *pv.VolumeMode
	}
	return cm != pm
}

func accessModesContain(have []corev1.PersistentVolumeAccessMode, want []corev1.PersistentVolumeAccessMode) bool {
	for _, w := range want {
		ok := false
		for _, h := range have {
			if h == w {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// findMatchingVolume is upstream's FindMatchingVolume on the scheduler
// path: a volume pre-bound to the claim wins (if its node affinity fits);
// otherwise the smallest Available volume of the claim's class matching
// size, volume mode, selector, access modes and the node.
func findMatchingVolume(claim *corev1.PersistentVolumeClaim, volumes []*corev1.PersistentVolume, node *corev1.Node, excluded map[string]bool) (*corev1.PersistentVolume, error) {
	requested := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	class := helper.ClaimClass(claim)
	var selector labels.Selector
	if claim.Spec.Selector != nil {
		s, err := metav1.LabelSelectorAsSelector(claim.Spec.Selector)
		if err != nil {
			return nil, fmt.Errorf("error creating internal label selector for claim: %v: %v", claim.Namespace+"/"+claim.Name, err)
		}
		selector = s
	}
	var smallest *corev1.PersistentVolume
	for _, pv := range volumes {
		if excluded[pv.Name] {
			continue
		}
		if pv.Spec.ClaimRef != nil && !isVolumeBoundToClaim(pv, claim) {
			continue
		}
		size := pv.Spec.Capacity[corev1.ResourceStorage]
		if size.Cmp(requested) < 0 || volumeModeMismatch(&claim.Spec, &pv.Spec) || pv.DeletionTimestamp != nil {
			continue
		}
		affinityOK := checkNodeAffinity(pv, node.Labels) == nil
		if isVolumeBoundToClaim(pv, claim) {
			if !affinityOK {
				return nil, nil
			}
			return pv, nil
		}
		if pv.Status.Phase != corev1.VolumeAvailable {
			continue
		}
		if selector != nil && !selector.Matches(labels.Set(pv.Labels)) {
			continue
		}
		if helper.VolumeClass(pv) != class || !affinityOK || !accessModesContain(pv.Spec.AccessModes, claim.Spec.AccessModes) {
			continue
		}
		if smallest == nil {
			smallest = pv
			continue
		}
		if s := smallest.Spec.Capacity[corev1.ResourceStorage]; s.Cmp(size) > 0 {
			smallest = pv
		}
	}
	return smallest, nil
}

// matchTopologySelectorTerms: no terms match everything; otherwise some
// non-empty term whose every expression holds.
func matchTopologySelectorTerms(terms []corev1.TopologySelectorTerm, nodeLabels map[string]string) bool {
	if len(terms) == 0 {
		return true
	}
	for _, t := range terms {
		if len(t.MatchLabelExpressions) == 0 {
			continue
		}
		ok := true
		for _, r := range t.MatchLabelExpressions {
			v, has := nodeLabels[r.Key]
			if !has || !contains(r.Values, v) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// checkVolumeProvisions: each claim's class must have a provisioner that
// can serve the node (allowed topologies) with enough capacity there
// (hasEnoughCapacity).
func (b *binder) checkVolumeProvisions(claims []*corev1.PersistentVolumeClaim, node *corev1.Node) (bool, bool, []*corev1.PersistentVolumeClaim, error) {
	var provisions []*corev1.PersistentVolumeClaim
	for _, claim := range claims {
		className := helper.ClaimClass(claim)
		if className == "" {
			return false, false, nil, fmt.Errorf("no class for claim %q", claim.Namespace+"/"+claim.Name)
		}
		class, err := b.classLister.Get(className)
		if err != nil {
			return false, false, nil, fmt.Errorf("failed to find storage class %q", className)
		}
		if class.Provisioner == "" || class.Provisioner == notSupportedProvisioner {
			return false, true, nil, nil
		}
		if !matchTopologySelectorTerms(class.AllowedTopologies, node.Labels) {
			return false, true, nil, nil
		}
		enough, err := b.hasEnoughCapacity(class.Provisioner, claim, class, node)
		if err != nil {
			return false, false, nil, err
		}
		if !enough {
			return true, false, nil, nil
		}
		provisions = append(provisions, claim)
	}
	return true, true, provisions, nil
}

// assumePodVolumes records the node's bindings in the assume caches: the
// volumes get their claimRef, the claims to provision the selected node.
// allBound: nothing to do (every claim is bound already).
func (b *binder) assumePodVolumes(pod *corev1.Pod, nodeName string, pv *PodVolumes) (bool, error) {
	allBound := true
	for _, name := range podClaimNames(pod) {
		pvc, err := b.pvcCache.get(pod.Namespace, name)
		if err != nil || !isPVCFullyBound(pvc) {
			allBound = false
			break
		}
	}
	if allBound {
		return true, nil
	}
	var bindings []*BindingInfo
	for _, bi := range pv.StaticBindings {
		newPV, dirty := bindVolumeToClaim(bi.pv, bi.pvc)
		if dirty {
			if err := b.pvCache.assume(newPV); err != nil {
				b.revertAssumedPVs(bindings)
				return false, err
			}
		}
		bindings = append(bindings, &BindingInfo{pv: newPV, pvc: bi.pvc})
	}
	var provisions []*corev1.PersistentVolumeClaim
	for _, claim := range pv.DynamicProvisions {
		clone := claim.DeepCopy()
		if clone.Annotations == nil {
			clone.Annotations = map[string]string{}
		}
		clone.Annotations[AnnSelectedNode] = nodeName
		if err := b.pvcCache.assume(clone); err != nil {
			b.revertAssumedPVs(bindings)
			b.revertAssumedPVCs(provisions)
			return false, err
		}
		provisions = append(provisions, clone)
	}
	pv.StaticBindings = bindings
	pv.DynamicProvisions = provisions
	return false, nil
}

// bindVolumeToClaim returns a copy of the volume bound to the claim
// (claimRef, bound-by-controller when the scheduler chose it).
func bindVolumeToClaim(pv *corev1.PersistentVolume, pvc *corev1.PersistentVolumeClaim) (*corev1.PersistentVolume, bool) {
	dirty := false
	byController := !isVolumeBoundToClaim(pv, pvc)
	clone := pv.DeepCopy()
	if ref := pv.Spec.ClaimRef; ref == nil || ref.Name != pvc.Name || ref.Namespace != pvc.Namespace || ref.UID != pvc.UID {
		clone.Spec.ClaimRef = &corev1.ObjectReference{
			Kind: "PersistentVolumeClaim", APIVersion: "v1",
			Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID, ResourceVersion: pvc.ResourceVersion,
		}
		dirty = true
	}
	if _, ok := clone.Annotations[AnnBoundByController]; byController && !ok {
		if clone.Annotations == nil {
			clone.Annotations = map[string]string{}
		}
		clone.Annotations[AnnBoundByController] = "yes"
		dirty = true
	}
	return clone, dirty
}

func (b *binder) revertAssumedPVs(bindings []*BindingInfo) {
	for _, bi := range bindings {
		b.pvCache.restore("", bi.pv.Name)
	}
}

func (b *binder) revertAssumedPVCs(claims []*corev1.PersistentVolumeClaim) {
	for _, c := range claims {
		b.pvcCache.restore(c.Namespace, c.Name)
	}
}

// revertAssumedPodVolumes undoes assumePodVolumes.
func (b *binder) revertAssumedPodVolumes(pv *PodVolumes) {
	b.revertAssumedPVs(pv.StaticBindings)
	b.revertAssumedPVCs(pv.DynamicProvisions)
}

// bindPodVolumes writes the assumed bindings (volumes' claimRef, claims'
// selected node) and waits until the PV controller and provisioners
// bound every claim, up to bindTimeout.
func (b *binder) bindPodVolumes(ctx context.Context, pod *corev1.Pod, nodeName string, pv *PodVolumes) error {
	if err := b.bindAPIUpdate(ctx, pv); err != nil {
		return err
	}
	timeout := b.clock.NewTimer(b.bindTimeout)
	defer timeout.Stop()
	tick := b.clock.NewTicker(b.pollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("binding volumes: %w", ctx.Err())
		case <-timeout.C():
			return fmt.Errorf("binding volumes: %w", context.DeadlineExceeded)
		case <-tick.C():
		}
		done, err := b.checkBindings(pod, nodeName, pv)
		if err != nil {
			return fmt.Errorf("binding volumes: %w", err)
		}
		if done {
			return nil
		}
	}
}

func (b *binder) bindAPIUpdate(ctx context.Context, pv *PodVolumes) error {
	c := b.client()
	pvs := client.For[*corev1.PersistentVolume, *corev1.PersistentVolumeList](c)
	for i, bi := range pv.StaticBindings {
		written, err := pvs.Update(ctx, bi.pv, metav1.UpdateOptions{})
		if err != nil {
			b.revertAssumedPVs(pv.StaticBindings[i:])
			b.revertAssumedPVCs(pv.DynamicProvisions)
			return err
		}
		bi.pv = written // what the informer must catch up with
	}
	for i, claim := range pv.DynamicProvisions {
		written, err := client.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](c).Namespace(claim.Namespace).Update(ctx, claim, metav1.UpdateOptions{})
		if err != nil {
			b.revertAssumedPVCs(pv.DynamicProvisions[i:])
			return err
		}
		pv.DynamicProvisions[i] = written
	}
	return nil
}

// checkBindings reports whether every claim the pod's binding touched is
// bound (reading the informers), or an error when it can no longer be.
func (b *binder) checkBindings(pod *corev1.Pod, nodeName string, pv *PodVolumes) (bool, error) {
	if _, err := helper.GetObject(b.podLister, podResource, pod.Namespace, pod.Name); apierrors.IsNotFound(err) {
		return false, fmt.Errorf("pod does not exist any more: %w", err)
	}
	node, err := helper.GetObject(b.nodeLister, nodeResource, "", nodeName)
	if err != nil {
		return false, fmt.Errorf("failed to get node %q: %w", nodeName, err)
	}
	for _, bi := range pv.StaticBindings {
		apiPV, err := b.pvCache.getAPI("", bi.pv.Name)
		if err != nil {
			return false, fmt.Errorf("failed to check binding: %w", err)
		}
		apiPVC, err := b.pvcCache.getAPI(bi.pvc.Namespace, bi.pvc.Name)
		if err != nil {
			return false, fmt.Errorf("failed to check binding: %w", err)
		}
		if newer(bi.pv, apiPV) {
			return false, nil // our write not seen yet
		}
		if err := checkNodeAffinity(apiPV, node.Labels); err != nil {
			return false, fmt.Errorf("pv %q node affinity doesn't match node %q: %w", apiPV.Name, node.Name, err)
		}
		if apiPV.Spec.ClaimRef == nil || apiPV.Spec.ClaimRef.UID == "" {
			return false, fmt.Errorf("ClaimRef got reset for pv %q", apiPV.Name)
		}
		if !isPVCFullyBound(apiPVC) {
			return false, nil
		}
	}
	for _, claim := range pv.DynamicProvisions {
		apiPVC, err := b.pvcCache.getAPI(claim.Namespace, claim.Name)
		if err != nil {
			return false, fmt.Errorf("failed to check provisioning pvc: %w", err)
		}
		if newer(claim, apiPVC) {
			return false, nil // our write not seen yet
		}
		if apiPVC.Annotations == nil {
			return false, fmt.Errorf("selectedNode annotation reset for PVC %q", apiPVC.Name)
		}
		if apiPVC.Annotations[AnnSelectedNode] != nodeName {
			// a provisioner that fails removes the annotation
			return false, fmt.Errorf("provisioning failed for PVC %q", apiPVC.Name)
		}
		if apiPVC.Spec.VolumeName != "" {
			apiPV, err := b.pvCache.getAPI("", apiPVC.Spec.VolumeName)
			if apierrors.IsNotFound(err) {
				return false, nil // not seen yet
			}
			if err != nil {
				return false, fmt.Errorf("failed to get pv %q from cache: %w", apiPVC.Spec.VolumeName, err)
			}
			if err := checkNodeAffinity(apiPV, node.Labels); err != nil {
				return false, fmt.Errorf("pv %q node affinity doesn't match node %q: %w", apiPV.Name, node.Name, err)
			}
		}
		if !isPVCFullyBound(apiPVC) {
			return false, nil
		}
	}
	return true, nil
}

// hasEnoughCapacity: for a CSI driver that opted into storage capacity
// tracking (CSIDriver spec.storageCapacity), some CSIStorageCapacity of
// the claim's class reachable from the node (nodeTopology) must hold the
// claim's request (maximumVolumeSize, else capacity); other provisioners
// are not checked, as upstream's.
func (b *binder) hasEnoughCapacity(provisioner string, claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass, node *corev1.Node) (bool, error) {
	quantity, ok := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	if !ok || b.csiDriverLister == nil || b.capacityLister == nil {
		return true, nil
	}
	driver, err := b.csiDriverLister.Get(provisioner)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if driver.Spec.StorageCapacity == nil || !*driver.Spec.StorageCapacity {
		return true, nil
	}
	capacities, err := b.capacityLister.List(labels.Everything())
	if err != nil {
		return false, err
	}
	size := quantity.Value()
	for _, c := range capacities {
		if c.StorageClassName != class.Name {
			continue
		}
		if limit := volumeLimit(c); limit == nil || limit.Value() < size {
			continue
		}
		if c.NodeTopology == nil {
			continue // unavailable
		}
		sel, err := metav1.LabelSelectorAsSelector(c.NodeTopology)
		if err != nil || !sel.Matches(labels.Set(node.Labels)) {
			continue
		}
		return true, nil
	}
	return false, nil
}
