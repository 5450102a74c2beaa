package volumerestrictions

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/helper"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
)

const (
	// Name is the plugin's name in configurations.
	Name = names.VolumeRestrictions
	// preFilterStateKey is where PreFilter leaves its state.
	preFilterStateKey framework.StateKey = "PreFilter" + Name

	// ErrReasonDiskConflict: a pod on the node uses the same disk.
	ErrReasonDiskConflict = "node(s) had no available disk"
	// ErrReasonReadWriteOncePodConflict: a scheduled pod uses one of the
	// pod's ReadWriteOncePod claims (1.34's wording, checked against
	// kube-scheduler v1.34.4 by test/compat).
	ErrReasonReadWriteOncePodConflict = "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)

// VolumeRestrictions checks disk conflicts and ReadWriteOncePod claims.
type VolumeRestrictions struct {
	pvcLister    cache.Lister[*corev1.PersistentVolumeClaim]
	sharedLister func() framework.SharedLister
}

var (
	_ framework.PreFilterPlugin     = &VolumeRestrictions{}
	_ framework.PreFilterExtensions = &VolumeRestrictions{}
	_ framework.FilterPlugin        = &VolumeRestrictions{}
	_ framework.EnqueueExtensions   = &VolumeRestrictions{}
)

// New returns the plugin (it has no args).
func New(_ context.Context, _ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	f, err := helper.InformerFactory(h, Name)
	if err != nil {
		return nil, err
	}
	return &VolumeRestrictions{
		pvcLister:    f.PersistentVolumeClaims().Lister(),
		sharedLister: h.SnapshotSharedLister,
	}, nil
}

// Name returns the plugin's name.
func (*VolumeRestrictions) Name() string { return Name }

// preFilterState: the pod's ReadWriteOncePod claim names and how many
// references scheduled pods hold to them.
type preFilterState struct {
	readWriteOncePodPVCs   map[string]struct{}
	conflictingPVCRefCount int
}

// Clone copies the count (the names never change).
func (s *preFilterState) Clone() framework.StateData {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}

func (s *preFilterState) conflictsOf(pod *corev1.Pod) int {
	n := 0
	for i := range pod.Spec.Volumes {
		if c := pod.Spec.Volumes[i].PersistentVolumeClaim; c != nil {
			if _, ok := s.readWriteOncePodPVCs[c.ClaimName]; ok {
				n++
			}
		}
	}
	return n
}

func needsRestrictionsCheck(v *corev1.Volume) bool {
	return v.GCEPersistentDisk != nil || v.AWSElasticBlockStore != nil || v.RBD != nil || v.ISCSI != nil
}

// PreFilter finds the pod's ReadWriteOncePod claims and counts the
// scheduled pods using them; Skip when there is nothing to check.
func (pl *VolumeRestrictions) PreFilter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	needsCheck := false
	for i := range pod.Spec.Volumes {
		if needsRestrictionsCheck(&pod.Spec.Volumes[i]) {
			needsCheck = true
			break
		}
	}
	s := &preFilterState{}
	for i := range pod.Spec.Volumes {
		c := pod.Spec.Volumes[i].PersistentVolumeClaim
		if c == nil {
			continue
		}
		pvc, err := helper.GetObject(pl.pvcLister, helper.PersistentVolumeClaimResource, pod.Namespace, c.ClaimName)
		if err != nil {
			return nil, helper.ErrorAsStatus(err)
		}
		if !containsAccessMode(pvc.Spec.AccessModes, corev1.ReadWriteOncePod) {
			continue
		}
		if s.readWriteOncePodPVCs == nil {
			s.readWriteOncePodPVCs = map[string]struct{}{}
		}
		s.readWriteOncePodPVCs[pvc.Name] = struct{}{}
	}
	for name := range s.readWriteOncePodPVCs {
		if pl.sharedLister().StorageInfos().IsPVCUsedByPods(pod.Namespace + "/" + name) {
			// at most one pod can use a ReadWriteOncePod claim
			s.conflictingPVCRefCount++
		}
	}
	if !needsCheck && s.conflictingPVCRefCount == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(preFilterStateKey, s)
	return nil, nil
}

func containsAccessMode(modes []corev1.PersistentVolumeAccessMode, mode corev1.PersistentVolumeAccessMode) bool {
	for _, m := range modes {
		if m == mode {
			return true
		}
	}
	return false
}

// PreFilterExtensions: the conflict count follows added and removed pods.
func (pl *VolumeRestrictions) PreFilterExtensions() framework.PreFilterExtensions { return pl }

// AddPod counts the added pod's references to the claims.
func (*VolumeRestrictions) AddPod(_ context.Context, state *framework.CycleState, _ *corev1.Pod, podInfoToAdd *framework.PodInfo, _ *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.conflictingPVCRefCount += s.conflictsOf(podInfoToAdd.Pod)
	return nil
}

// RemovePod uncounts the removed pod's references to the claims.
func (*VolumeRestrictions) RemovePod(_ context.Context, state *framework.CycleState, _ *corev1.Pod, podInfoToRemove *framework.PodInfo, _ *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.conflictingPVCRefCount -= s.conflictsOf(podInfoToRemove.Pod)
	return nil
}

func getPreFilterState(state *framework.CycleState) (*preFilterState, error) {
	c, err := state.Read(preFilterStateKey)
	if err != nil {
		return nil, fmt.Errorf("cannot read %q from cycleState", preFilterStateKey)
	}
	s, ok := c.(*preFilterState)
	if !ok {
		return nil, fmt.Errorf("%+v convert to volumerestrictions.state error", c)
	}
	return s, nil
}

// Filter rejects a node where a pod uses the same disk, and any node
// while a scheduled pod holds one of the pod's ReadWriteOncePod claims.
func (*VolumeRestrictions) Filter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	if !satisfyVolumeConflicts(pod, nodeInfo) {
		return framework.NewStatus(framework.Unschedulable, ErrReasonDiskConflict)
	}
	s, err := getPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	if s.conflictingPVCRefCount > 0 {
		return framework.NewStatus(framework.Unschedulable, ErrReasonReadWriteOncePodConflict)
	}
	return nil
}

func satisfyVolumeConflicts(pod *corev1.Pod, nodeInfo *framework.NodeInfo) bool {
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if !needsRestrictionsCheck(v) {
			continue
		}
		for _, ev := range nodeInfo.Pods {
			if isVolumeConflict(v, ev.Pod) {
				return false
			}
		}
	}
	return true
}

// isVolumeConflict reports whether volume clashes with one of pod's.
func isVolumeConflict(volume *corev1.Volume, pod *corev1.Pod) bool {
	for i := range pod.Spec.Volumes {
		ev := &pod.Spec.Volumes[i]
		if d, ed := volume.GCEPersistentDisk, ev.GCEPersistentDisk; d != nil && ed != nil {
			if d.PDName == ed.PDName && !(d.ReadOnly && ed.ReadOnly) {
				return true
			}
		}
		if d, ed := volume.AWSElasticBlockStore, ev.AWSElasticBlockStore; d != nil && ed != nil {
			if d.VolumeID == ed.VolumeID {
				return true
			}
		}
		if d, ed := volume.ISCSI, ev.ISCSI; d != nil && ed != nil {
			if d.IQN == ed.IQN && !(d.ReadOnly && ed.ReadOnly) {
				return true
			}
		}
		if d, ed := volume.RBD, ev.RBD; d != nil && ed != nil {
			if haveOverlap(d.CephMonitors, ed.CephMonitors) && d.RBDPool == ed.RBDPool && d.RBDImage == ed.RBDImage && !(d.ReadOnly && ed.ReadOnly) {
				return true
			}
		}
	}
	return false
}

func haveOverlap(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// EventsToRegister: a deleted pod may free a disk or a claim, a new node
// may have no conflicting pod, a created claim may be the missing one.
func (pl *VolumeRestrictions) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Delete}, QueueingHintFn: pl.isSchedulableAfterPodDeleted},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}},
		{Event: framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add}, QueueingHintFn: pl.isSchedulableAfterPersistentVolumeClaimAdded},
	}, nil
}

// isSchedulableAfterPersistentVolumeClaimAdded queues the pod when the new
// claim is one of its own.
func (*VolumeRestrictions) isSchedulableAfterPersistentVolumeClaimAdded(_ *slog.Logger, pod *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	_, pvc, err := helper.As[*corev1.PersistentVolumeClaim](oldObj, newObj)
	if err != nil {
		return framework.Queue, fmt.Errorf("unexpected objects in isSchedulableAfterPersistentVolumeClaimChange: %w", err)
	}
	if pvc == nil || pvc.Namespace != pod.Namespace {
		return framework.QueueSkip, nil
	}
	for i := range pod.Spec.Volumes {
		if c := pod.Spec.Volumes[i].PersistentVolumeClaim; c != nil && c.ClaimName == pvc.Name {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}

// isSchedulableAfterPodDeleted queues the pod when the deleted pod (of its
// namespace) used a conflicting disk or one of the same claims.
func (*VolumeRestrictions) isSchedulableAfterPodDeleted(_ *slog.Logger, pod *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	deleted, _, err := helper.As[*corev1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, fmt.Errorf("unexpected objects in isSchedulableAfterPodDeleted: %w", err)
	}
	if deleted == nil || deleted.Namespace != pod.Namespace {
		return framework.QueueSkip, nil
	}
	if !satisfyVolumeConflicts(pod, framework.NewNodeInfo(deleted)) {
		return framework.Queue, nil
	}
	claims := map[string]struct{}{}
	for i := range pod.Spec.Volumes {
		if c := pod.Spec.Volumes[i].PersistentVolumeClaim; c != nil {
			claims[c.ClaimName] = struct{}{}
		}
	}
	for i := range deleted.Spec.Volumes {
		if c := deleted.Spec.Volumes[i].PersistentVolumeClaim; c != nil {
			if _, ok := claims[c.ClaimName]; ok {
				return framework.Queue, nil
			}
		}
	}
	return framework.QueueSkip, nil
}
