package volumebinding

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/helper"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
)

const (
	// Name is the plugin's name in configurations.
	Name = names.VolumeBinding
	// stateKey is where PreFilter leaves the pod's claims (upstream's key
	// is the plugin name).
	stateKey framework.StateKey = Name

	// ErrReasonUnboundImmediate: PreFilter's reason for claims the PV
	// controller should have bound already.
	ErrReasonUnboundImmediate = "pod has unbound immediate PersistentVolumeClaims"

	defaultBindTimeout = 600 * time.Second
)

var (
	podResource  = schema.GroupResource{Resource: "pod"}
	nodeResource = schema.GroupResource{Resource: "node"}
)

// stateData is the pod's claims and, per node that passed Filter, what
// binding the pod's volumes there takes.
type stateData struct {
	allBound         bool
	podVolumeClaims  *PodVolumeClaims
	mu               sync.Mutex
	podVolumesByNode map[string]*PodVolumes
}

// Clone returns d: Filter results accumulate across the cycle.
func (d *stateData) Clone() framework.StateData { return d }

// VolumeBinding binds the pod's unbound WaitForFirstConsumer claims to
// volumes (or has them provisioned) on the chosen node.
type VolumeBinding struct {
	binder    *binder
	pvcLister func(namespace, name string) (*corev1.PersistentVolumeClaim, error)
}

var (
	_ framework.PreFilterPlugin   = &VolumeBinding{}
	_ framework.FilterPlugin      = &VolumeBinding{}
	_ framework.ReservePlugin     = &VolumeBinding{}
	_ framework.PreBindPlugin     = &VolumeBinding{}
	_ framework.EnqueueExtensions = &VolumeBinding{}
)

// New returns the plugin; args is *config.VolumeBindingArgs (defaults
// applied) or nil (bindTimeoutSeconds 600).
func New(_ context.Context, args runtime.Object, h framework.Handle) (framework.Plugin, error) {
	timeout := defaultBindTimeout
	if args != nil {
		a, ok := args.(*config.VolumeBindingArgs)
		if !ok {
			return nil, fmt.Errorf("want args to be of type VolumeBindingArgs, got %T", args)
		}
		if a.BindTimeoutSeconds != nil {
			timeout = time.Duration(*a.BindTimeoutSeconds) * time.Second
		}
		if len(a.Shape) > 0 {
			return nil, errors.New("VolumeBindingArgs.shape needs the StorageCapacityScoring feature, which is off")
		}
	}
	f, err := helper.InformerFactory(h, Name)
	if err != nil {
		return nil, err
	}
	clk := h.Clock()
	if clk == nil {
		clk = clock.Real{}
	}
	b := &binder{
		pvcCache:        newAssumeCache(f.PersistentVolumeClaims().Lister(), helper.PersistentVolumeClaimResource),
		pvCache:         newAssumeCache(f.PersistentVolumes().Lister(), helper.PersistentVolumeResource),
		classLister:     f.StorageClasses().Lister(),
		podLister:       f.Pods().Lister(),
		csiDriverLister: informers.InformerFor[*storagev1.CSIDriver, *storagev1.CSIDriverList](f).Lister(),
		capacityLister:  informers.InformerFor[*storagev1.CSIStorageCapacity, *storagev1.CSIStorageCapacityList](f).Lister(),
		nodeLister:      f.Nodes().Lister(),
		client:          h.Client,
		clock:           clk,
		bindTimeout:     timeout,
		pollInterval:    time.Second,
	}
	return newWithBinder(b), nil
}

func newWithBinder(b *binder) *VolumeBinding {
	return &VolumeBinding{binder: b, pvcLister: func(ns, name string) (*corev1.PersistentVolumeClaim, error) {
		return helper.GetObject(b.pvcCache.lister, helper.PersistentVolumeClaimResource, ns, name)
	}}
}

// Name returns the plugin's name.
func (*VolumeBinding) Name() string { return Name }

// podHasPVCs reports whether the pod uses claims, and an error for a
// claim that is missing, lost, being deleted or (ephemeral) not the pod's.
func (pl *VolumeBinding) podHasPVCs(pod *corev1.Pod) (bool, error) {
	has := false
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		var name string
		ephemeral := false
		switch {
		case v.PersistentVolumeClaim != nil:
			name = v.PersistentVolumeClaim.ClaimName
		case v.Ephemeral != nil:
			name = pod.Name + "-" + v.Name
			ephemeral = true
		default:
			continue
		}
		has = true
		pvc, err := pl.pvcLister(pod.Namespace, name)
		if err != nil {
			if ephemeral && apierrors.IsNotFound(err) {
				err = fmt.Errorf("waiting for ephemeral volume controller to create the persistentvolumeclaim %q", name)
			}
			return has, err
		}
		if pvc.Status.Phase == corev1.ClaimLost {
			return has, fmt.Errorf("persistentvolumeclaim %q bound to non-existent persistentvolume %q", pvc.Name, pvc.Spec.VolumeName)
		}
		if pvc.DeletionTimestamp != nil {
			return has, fmt.Errorf("persistentvolumeclaim %q is being deleted", pvc.Name)
		}
		if ephemeral && !metav1.IsControlledBy(pvc, pod) {
			return has, fmt.Errorf("PVC %s/%s was not created for pod %s/%s (pod is not owner)", pvc.Namespace, pvc.Name, pod.Namespace, pod.Name)
		}
	}
	return has, nil
}

// PreFilter sorts the pod's claims: Skip without claims; unbound
// Immediate claims make the pod UnschedulableAndUnresolvable until the PV
// controller binds them.
func (pl *VolumeBinding) PreFilter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	if has, err := pl.podHasPVCs(pod); err != nil {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
	} else if !has {
		state.Write(stateKey, &stateData{})
		return nil, framework.NewStatus(framework.Skip)
	}
	claims, err := pl.binder.getPodVolumeClaims(pod)
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	if len(claims.unboundClaimsImmediate) > 0 {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnboundImmediate)
	}
	state.Write(stateKey, &stateData{podVolumeClaims: claims, podVolumesByNode: map[string]*PodVolumes{}})
	return nil, nil
}

// PreFilterExtensions: none.
func (*VolumeBinding) PreFilterExtensions() framework.PreFilterExtensions { return nil }

func getStateData(state *framework.CycleState) (*stateData, error) {
	c, err := state.Read(stateKey)
	if err != nil {
		return nil, err
	}
	s, ok := c.(*stateData)
	if !ok {
		return nil, errors.New("unable to convert state into stateData")
	}
	return s, nil
}

// Filter checks bound volumes' node affinity and finds volumes (or a
// provisioner) for unbound delayed claims on the node.
func (pl *VolumeBinding) Filter(_ context.Context, state *framework.CycleState, _ *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getStateData(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	node := nodeInfo.Node()
	pv, reasons, err := pl.binder.findPodVolumes(s.podVolumeClaims, node)
	if err != nil {
		stageFailed.WithLabelValues("predicate").Inc()
		return framework.AsStatus(err)
	}
	if len(reasons) > 0 {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, reasons...)
	}
	s.mu.Lock()
	s.podVolumesByNode[node.Name] = pv
	s.mu.Unlock()
	return nil
}

// Reserve assumes the node's bindings in memory, so that the next pods
// see the volumes taken.
func (pl *VolumeBinding) Reserve(_ context.Context, state *framework.CycleState, pod *corev1.Pod, nodeName string) *framework.Status {
	s, err := getStateData(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.mu.Lock()
	pv, ok := s.podVolumesByNode[nodeName]
	s.mu.Unlock()
	if !ok {
		s.allBound = true // no claims
		return nil
	}
	allBound, err := pl.binder.assumePodVolumes(pod, nodeName, pv)
	if err != nil {
		stageFailed.WithLabelValues("assume").Inc()
		return framework.AsStatus(err)
	}
	s.allBound = allBound
	return nil
}

// PreBind writes the bindings and waits until the claims are bound.
func (pl *VolumeBinding) PreBind(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodeName string) *framework.Status {
	s, err := getStateData(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	if s.allBound {
		return nil
	}
	s.mu.Lock()
	pv, ok := s.podVolumesByNode[nodeName]
	s.mu.Unlock()
	if !ok {
		return framework.AsStatus(fmt.Errorf("no pod volumes found for node %q", nodeName))
	}
	if err := pl.binder.bindPodVolumes(ctx, pod, nodeName, pv); err != nil {
		stageFailed.WithLabelValues("bind").Inc()
		return framework.AsStatus(err)
	}
	return nil
}

// Unreserve drops the assumed bindings (idempotent).
func (pl *VolumeBinding) Unreserve(_ context.Context, state *framework.CycleState, _ *corev1.Pod, nodeName string) {
	s, err := getStateData(state)
	if err != nil {
		return
	}
	s.mu.Lock()
	pv, ok := s.podVolumesByNode[nodeName]
	s.mu.Unlock()
	if ok {
		pl.binder.revertAssumedPodVolumes(pv)
	}
}

// EventsToRegister: classes (new, or allowed topologies changed), the
// pod's claims, volumes, nodes (added, relabeled), CSINodes, CSIDrivers
// and CSIStorageCapacities, as upstream's.
func (pl *VolumeBinding) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.StorageClass, ActionType: framework.Add | framework.Update}, QueueingHintFn: pl.isSchedulableAfterStorageClassChange},
		{Event: framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add | framework.Update}, QueueingHintFn: pl.isSchedulableAfterPersistentVolumeClaimChange},
		{Event: framework.ClusterEvent{Resource: framework.PersistentVolume, ActionType: framework.Add | framework.Update}},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel}},
		{Event: framework.ClusterEvent{Resource: framework.CSINode, ActionType: framework.Add | framework.Update}, QueueingHintFn: pl.isSchedulableAfterCSINodeChange},
		{Event: framework.ClusterEvent{Resource: framework.CSIDriver, ActionType: framework.Update}, QueueingHintFn: pl.isSchedulableAfterCSIDriverChange},
		{Event: framework.ClusterEvent{Resource: framework.CSIStorageCapacity, ActionType: framework.Add | framework.Update}, QueueingHintFn: pl.isSchedulableAfterCSIStorageCapacityChange},
	}, nil
}

func (*VolumeBinding) isSchedulableAfterPersistentVolumeClaimChange(_ *slog.Logger, pod *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	_, pvc, err := helper.As[*corev1.PersistentVolumeClaim](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if pvc == nil || pvc.Namespace != pod.Namespace {
		return framework.QueueSkip, nil
	}
	for _, name := range podClaimNames(pod) {
		if name == pvc.Name {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}

func (*VolumeBinding) isSchedulableAfterStorageClassChange(_ *slog.Logger, _ *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	oldSC, newSC, err := helper.As[*storagev1.StorageClass](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if oldSC == nil || newSC == nil {
		return framework.Queue, nil
	}
	if !apiequality.Semantic.DeepEqual(newSC.AllowedTopologies, oldSC.AllowedTopologies) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

func (*VolumeBinding) isSchedulableAfterCSINodeChange(_ *slog.Logger, _ *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	if oldObj == nil {
		return framework.Queue, nil
	}
	oldN, newN, err := helper.As[*storagev1.CSINode](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if newN == nil || oldN.Annotations[corev1.MigratedPluginsAnnotationKey] != newN.Annotations[corev1.MigratedPluginsAnnotationKey] {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

func (*VolumeBinding) isSchedulableAfterCSIDriverChange(_ *slog.Logger, pod *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	oldD, newD, err := helper.As[*storagev1.CSIDriver](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if oldD == nil || newD == nil {
		return framework.QueueSkip, nil
	}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.CSI == nil || v.CSI.Driver != newD.Name {
			continue
		}
		if oldD.Spec.StorageCapacity != nil && *oldD.Spec.StorageCapacity && (newD.Spec.StorageCapacity == nil || !*newD.Spec.StorageCapacity) {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}

func (*VolumeBinding) isSchedulableAfterCSIStorageCapacityChange(_ *slog.Logger, _ *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	oldC, newC, err := helper.As[*storagev1.CSIStorageCapacity](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if oldC == nil {
		return framework.Queue, nil
	}
	if newC == nil {
		return framework.QueueSkip, nil
	}
	o, n := volumeLimit(oldC), volumeLimit(newC)
	if n != nil && (o == nil || n.Cmp(*o) > 0) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// volumeLimit: the largest volume a capacity allows (maximumVolumeSize,
// else capacity).
func volumeLimit(c *storagev1.CSIStorageCapacity) *resource.Quantity {
	if c.MaximumVolumeSize != nil {
		return c.MaximumVolumeSize
	}
	return c.Capacity
}
