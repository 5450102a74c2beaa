package volumezone

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/helper"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
)

const (
	// Name is the plugin's name in configurations.
	Name = names.VolumeZone
	// preFilterStateKey is where PreFilter leaves the volumes' topology.
	preFilterStateKey framework.StateKey = "PreFilter" + Name
	// ErrReasonConflict: a volume's zone or region is not the node's.
	ErrReasonConflict = "node(s) had no available volume zone"
)

// topologyLabels are the volume labels checked, in upstream's order.
var topologyLabels = []string{
	corev1.LabelFailureDomainBetaZone,
	corev1.LabelFailureDomainBetaRegion,
	corev1.LabelTopologyZone,
	corev1.LabelTopologyRegion,
}

func translateToGALabel(label string) string {
	switch label {
	case corev1.LabelFailureDomainBetaRegion:
		return corev1.LabelTopologyRegion
	case corev1.LabelFailureDomainBetaZone:
		return corev1.LabelTopologyZone
	}
	return label
}

// pvTopology is one topology label of a volume with its allowed values.
type pvTopology struct {
	pvName string
	key    string
	values map[string]struct{}
}

type stateData struct {
	podPVTopologies []pvTopology
}

// Clone returns d (never changed after PreFilter).
func (d *stateData) Clone() framework.StateData { return d }

// VolumeZone checks volume zones against node zones.
type VolumeZone struct {
	pvLister  cache.Lister[*corev1.PersistentVolume]
	pvcLister cache.Lister[*corev1.PersistentVolumeClaim]
	scLister  cache.Lister[*storagev1.StorageClass]
}

var (
	_ framework.PreFilterPlugin   = &VolumeZone{}
	_ framework.FilterPlugin      = &VolumeZone{}
	_ framework.EnqueueExtensions = &VolumeZone{}
)

// New returns the plugin (it has no args).
func New(_ context.Context, _ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	f, err := helper.InformerFactory(h, Name)
	if err != nil {
		return nil, err
	}
	return &VolumeZone{
		pvLister:  f.PersistentVolumes().Lister(),
		pvcLister: f.PersistentVolumeClaims().Lister(),
		scLister:  f.StorageClasses().Lister(),
	}, nil
}

// Name returns the plugin's name.
func (*VolumeZone) Name() string { return Name }

// PreFilter collects the topology labels of the pod's bound volumes;
// Skip when there are none.
func (pl *VolumeZone) PreFilter(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	tops, st := pl.getPVbyPod(pod)
	if !st.IsSuccess() {
		return nil, st
	}
	if len(tops) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(preFilterStateKey, &stateData{podPVTopologies: tops})
	return nil, nil
}

// PreFilterExtensions: none.
func (*VolumeZone) PreFilterExtensions() framework.PreFilterExtensions { return nil }

func (pl *VolumeZone) getPVbyPod(pod *corev1.Pod) ([]pvTopology, *framework.Status) {
	var tops []pvTopology
	for i := range pod.Spec.Volumes {
		c := pod.Spec.Volumes[i].PersistentVolumeClaim
		if c == nil {
			continue
		}
		if c.ClaimName == "" {
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, "PersistentVolumeClaim had no name")
		}
		pvc, err := helper.GetObject(pl.pvcLister, helper.PersistentVolumeClaimResource, pod.Namespace, c.ClaimName)
		if err != nil {
			return nil, helper.ErrorAsStatus(err)
		}
		pvName := pvc.Spec.VolumeName
		if pvName == "" {
			scName := helper.ClaimClass(pvc)
			if scName == "" {
				return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, "PersistentVolumeClaim had no pv name and storageClass name")
			}
			class, err := helper.GetObject(pl.scLister, helper.StorageClassResource, "", scName)
			if err != nil {
				return nil, helper.ErrorAsStatus(err)
			}
			if class.VolumeBindingMode == nil {
				return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("VolumeBindingMode not set for StorageClass %q", scName))
			}
			if *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
				continue // VolumeBinding's business
			}
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, "PersistentVolume had no name")
		}
		pv, err := helper.GetObject(pl.pvLister, helper.PersistentVolumeResource, "", pvName)
		if err != nil {
			return nil, helper.ErrorAsStatus(err)
		}
		tops = append(tops, getPVTopologies(pv)...)
	}
	return tops, nil
}

// getPVTopologies lists a volume's topology labels; a label whose value
// does not parse is ignored, as upstream's.
func getPVTopologies(pv *corev1.PersistentVolume) []pvTopology {
	var tops []pvTopology
	for _, key := range topologyLabels {
		value, ok := pv.Labels[key]
		if !ok {
			continue
		}
		set, err := labelZonesToSet(value)
		if err != nil {
			continue
		}
		tops = append(tops, pvTopology{pvName: pv.Name, key: key, values: set})
	}
	return tops
}

// labelZonesToSet splits a multi-zone label value ("a__b"), as
// upstream's volume helpers; an empty zone is an error.
func labelZonesToSet(value string) (map[string]struct{}, error) {
	set := map[string]struct{}{}
	if value == "" {
		return set, nil
	}
	for _, z := range strings.Split(value, "__") {
		if z == "" {
			return nil, fmt.Errorf("provided label value %q contains empty zone", value)
		}
		set[z] = struct{}{}
	}
	return set, nil
}

// Filter rejects a node whose zone/region labels do not match one of the
// volumes'.
func (pl *VolumeZone) Filter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	if len(pod.Spec.Volumes) == 0 {
		return nil
	}
	var tops []pvTopology
	if s, err := getStateData(state); err == nil {
		tops = s.podPVTopologies
	} else {
		var st *framework.Status
		if tops, st = pl.getPVbyPod(pod); !st.IsSuccess() {
			return st
		}
	}
	node := nodeInfo.Node()
	constrained := false
	for _, l := range topologyLabels {
		if _, ok := node.Labels[l]; ok {
			constrained = true
			break
		}
	}
	if !constrained {
		return nil
	}
	for i := range tops {
		v, ok := node.Labels[tops[i].key]
		if !ok {
			v, ok = node.Labels[translateToGALabel(tops[i].key)]
		}
		if _, has := tops[i].values[v]; !ok || !has {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonConflict)
		}
	}
	return nil
}

func getStateData(state *framework.CycleState) (*stateData, error) {
	c, err := state.Read(preFilterStateKey)
	if err != nil {
		return nil, err
	}
	s, ok := c.(*stateData)
	if !ok {
		return nil, errors.New("unable to convert state into stateData")
	}
	return s, nil
}

// EventsToRegister: a WaitForFirstConsumer class, a node (added or
// relabeled), one of the pod's claims, a new volume or a volume whose
// topology changed.
func (pl *VolumeZone) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.StorageClass, ActionType: framework.Add}, QueueingHintFn: pl.isSchedulableAfterStorageClassAdded},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel}},
		{Event: framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add | framework.Update}, QueueingHintFn: pl.isSchedulableAfterPersistentVolumeClaimChange},
		{Event: framework.ClusterEvent{Resource: framework.PersistentVolume, ActionType: framework.Add | framework.Update}, QueueingHintFn: pl.isSchedulableAfterPersistentVolumeChange},
	}, nil
}

func (*VolumeZone) isSchedulableAfterPersistentVolumeClaimChange(_ *slog.Logger, pod *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
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

func (*VolumeZone) isSchedulableAfterStorageClassAdded(_ *slog.Logger, _ *corev1.Pod, _, newObj any) (framework.QueueingHint, error) {
	_, sc, err := helper.As[*storagev1.StorageClass](nil, newObj)
	if err != nil {
		return framework.Queue, fmt.Errorf("unexpected objects in isSchedulableAfterStorageClassAdded: %w", err)
	}
	if sc == nil || sc.VolumeBindingMode == nil || *sc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
		return framework.QueueSkip, nil
	}
	return framework.Queue, nil
}

func (*VolumeZone) isSchedulableAfterPersistentVolumeChange(_ *slog.Logger, _ *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	oldPV, newPV, err := helper.As[*corev1.PersistentVolume](oldObj, newObj)
	if err != nil {
		return framework.Queue, fmt.Errorf("unexpected objects in isSchedulableAfterPersistentVolumeChange: %w", err)
	}
	if oldPV == nil {
		return framework.Queue, nil
	}
	if newPV == nil || !reflect.DeepEqual(getPVTopologies(oldPV), getPVTopologies(newPV)) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}
