package nodevolumelimits

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/helper"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
)

const (
	// Name is the plugin's name in configurations.
	Name = names.NodeVolumeLimits
	// ErrReasonMaxVolumeCountExceeded: the node's attach limit is reached.
	ErrReasonMaxVolumeCountExceeded = "node(s) exceed max volume count"

	// csiAttachLimitPrefix prefixes a driver's limit in node allocatable.
	csiAttachLimitPrefix = "attachable-volumes-csi-"
	// attachableVolumesPrefix: every attach limit in node allocatable.
	attachableVolumesPrefix = "attachable-volumes-"
	resourceNameLengthLimit = 63
)

// CSILimits checks CSI attach limits.
type CSILimits struct {
	csiNodeLister cache.Lister[*storagev1.CSINode]
	pvLister      cache.Lister[*corev1.PersistentVolume]
	pvcLister     cache.Lister[*corev1.PersistentVolumeClaim]
	scLister      cache.Lister[*storagev1.StorageClass]

	randomVolumeIDPrefix string
}

var (
	_ framework.PreFilterPlugin   = &CSILimits{}
	_ framework.FilterPlugin      = &CSILimits{}
	_ framework.EnqueueExtensions = &CSILimits{}
)

// New returns the plugin (it has no args).
func New(_ context.Context, _ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	f, err := helper.InformerFactory(h, Name)
	if err != nil {
		return nil, err
	}
	return &CSILimits{
		csiNodeLister:        informers.InformerFor[*storagev1.CSINode, *storagev1.CSINodeList](f).Lister(),
		pvLister:             f.PersistentVolumes().Lister(),
		pvcLister:            f.PersistentVolumeClaims().Lister(),
		scLister:             f.StorageClasses().Lister(),
		randomVolumeIDPrefix: rand.String(32),
	}, nil
}

// Name returns the plugin's name.
func (*CSILimits) Name() string { return Name }

// GetCSIAttachLimitKey is the allocatable resource name of a CSI driver's
// attach limit, as upstream's volume util (long names are shortened with
// a hash).
func GetCSIAttachLimitKey(driverName string) string {
	if len(csiAttachLimitPrefix)+len(driverName) >= resourceNameLengthLimit {
		sum := sha1.Sum([]byte(driverName))
		return csiAttachLimitPrefix + driverName[:23] + hex.EncodeToString(sum[:])[:16]
	}
	return csiAttachLimitPrefix + driverName
}

// PreFilter Skips pods without claims or ephemeral volumes.
func (*CSILimits) PreFilter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	for i := range pod.Spec.Volumes {
		if v := &pod.Spec.Volumes[i]; v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
			return nil, nil
		}
	}
	return nil, framework.NewStatus(framework.Skip)
}

// PreFilterExtensions: none.
func (*CSILimits) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter counts the CSI volumes the pod would add to the node per driver
// against the node's limits.
func (pl *CSILimits) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	if len(pod.Spec.Volumes) == 0 {
		return nil
	}
	node := nodeInfo.Node()
	csiNode, err := pl.csiNodeLister.Get(node.Name)
	if err != nil {
		csiNode = nil // no CSINode: limits from the Node object only
	}
	newVolumes := map[string]string{}
	if err := pl.filterAttachableVolumes(pod, true, newVolumes); err != nil {
		if apierrors.IsNotFound(err) {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
		}
		return framework.AsStatus(err)
	}
	if len(newVolumes) == 0 {
		return nil
	}
	limits := getVolumeLimits(nodeInfo, csiNode)
	if len(limits) == 0 {
		return nil
	}
	attached := map[string]string{}
	for _, existing := range nodeInfo.Pods {
		if err := pl.filterAttachableVolumes(existing.Pod, false, attached); err != nil {
			return framework.AsStatus(err)
		}
	}
	attachedCount := map[string]int{}
	for unique, key := range attached {
		delete(newVolumes, unique) // shared with a pod on the node: counted once
		attachedCount[key]++
	}
	newCount := map[string]int{}
	for _, key := range newVolumes {
		newCount[key]++
	}
	for key, n := range newCount {
		if max, ok := limits[corev1.ResourceName(key)]; ok && int64(attachedCount[key]+n) > max {
			return framework.NewStatus(framework.Unschedulable, ErrReasonMaxVolumeCountExceeded)
		}
	}
	return nil
}

// filterAttachableVolumes adds the pod's CSI volumes to result as
// "driver/handle" → limit key. For the pod being scheduled a missing
// claim is an error; other pods' missing claims are not counted.
func (pl *CSILimits) filterAttachableVolumes(pod *corev1.Pod, newPod bool, result map[string]string) error {
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		var pvcName string
		ephemeral := false
		switch {
		case vol.PersistentVolumeClaim != nil:
			pvcName = vol.PersistentVolumeClaim.ClaimName
		case vol.Ephemeral != nil:
			pvcName = pod.Name + "-" + vol.Name
			ephemeral = true
		default:
			continue // inline volumes: no CSI migration in skiff
		}
		if pvcName == "" {
			return fmt.Errorf("PersistentVolumeClaim had no name")
		}
		pvc, err := helper.GetObject(pl.pvcLister, helper.PersistentVolumeClaimResource, pod.Namespace, pvcName)
		if err != nil {
			if newPod {
				return fmt.Errorf("looking up PVC %s/%s: %w", pod.Namespace, pvcName, err)
			}
			continue
		}
		if ephemeral && !metav1.IsControlledBy(pvc, pod) {
			return fmt.Errorf("PVC %s/%s was not created for pod %s/%s (pod is not owner)", pvc.Namespace, pvc.Name, pod.Namespace, pod.Name)
		}
		driver, handle := pl.getCSIDriverInfo(pvc)
		if driver == "" || handle == "" {
			continue
		}
		result[driver+"/"+handle] = GetCSIAttachLimitKey(driver)
	}
	return nil
}

// getCSIDriverInfo is the claim's CSI driver and volume handle: its
// bound volume's, else its class's provisioner with a placeholder handle.
func (pl *CSILimits) getCSIDriverInfo(pvc *corev1.PersistentVolumeClaim) (string, string) {
	if pvc.Spec.VolumeName == "" {
		return pl.getCSIDriverInfoFromSC(pvc)
	}
	pv, err := pl.pvLister.Get(pvc.Spec.VolumeName)
	if err != nil {
		// deleted, or pre-bound to a volume not created yet
		return pl.getCSIDriverInfoFromSC(pvc)
	}
	if pv.Spec.CSI == nil {
		return "", "" // not CSI (no CSI migration in skiff)
	}
	return pv.Spec.CSI.Driver, pv.Spec.CSI.VolumeHandle
}

func (pl *CSILimits) getCSIDriverInfoFromSC(pvc *corev1.PersistentVolumeClaim) (string, string) {
	scName := helper.ClaimClass(pvc)
	if scName == "" {
		return "", "" // immediate binding: bound before scheduling
	}
	sc, err := pl.scLister.Get(scName)
	if err != nil {
		return "", ""
	}
	// A random prefix keeps the placeholder apart from real handles.
	return sc.Provisioner, fmt.Sprintf("%s-%s/%s", pl.randomVolumeIDPrefix, pvc.Namespace, pvc.Name)
}

// getVolumeLimits: the node's allocatable attach limits, overridden by
// its CSINode's driver counts.
func getVolumeLimits(nodeInfo *framework.NodeInfo, csiNode *storagev1.CSINode) map[corev1.ResourceName]int64 {
	limits := map[corev1.ResourceName]int64{}
	if nodeInfo.Allocatable != nil {
		for k, v := range nodeInfo.Allocatable.ScalarResources {
			if strings.HasPrefix(string(k), attachableVolumesPrefix) {
				limits[k] = v
			}
		}
	}
	if csiNode != nil {
		for i := range csiNode.Spec.Drivers {
			d := &csiNode.Spec.Drivers[i]
			if d.Allocatable != nil && d.Allocatable.Count != nil {
				limits[corev1.ResourceName(GetCSIAttachLimitKey(d.Name))] = int64(*d.Allocatable.Count)
			}
		}
	}
	return limits
}

// EventsToRegister: a new CSINode, a deleted scheduled pod with claims,
// a created claim of the pod.
func (pl *CSILimits) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.CSINode, ActionType: framework.Add}},
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Delete}, QueueingHintFn: pl.isSchedulableAfterPodDeleted},
		{Event: framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add}, QueueingHintFn: pl.isSchedulableAfterPVCAdded},
	}, nil
}

func (*CSILimits) isSchedulableAfterPodDeleted(_ *slog.Logger, _ *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	deleted, _, err := helper.As[*corev1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, fmt.Errorf("unexpected objects in isSchedulableAfterPodDeleted: %w", err)
	}
	if deleted == nil || len(deleted.Spec.Volumes) == 0 || deleted.Spec.NodeName == "" {
		return framework.QueueSkip, nil
	}
	for i := range deleted.Spec.Volumes {
		if v := &deleted.Spec.Volumes[i]; v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}

func (*CSILimits) isSchedulableAfterPVCAdded(_ *slog.Logger, pod *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	_, pvc, err := helper.As[*corev1.PersistentVolumeClaim](oldObj, newObj)
	if err != nil {
		return framework.Queue, fmt.Errorf("unexpected objects in isSchedulableAfterPVCAdded: %w", err)
	}
	if pvc == nil || pvc.Namespace != pod.Namespace {
		return framework.QueueSkip, nil
	}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		var name string
		switch {
		case v.PersistentVolumeClaim != nil:
			name = v.PersistentVolumeClaim.ClaimName
		case v.Ephemeral != nil:
			name = pod.Name + "-" + v.Name
		default:
			continue
		}
		if name == pvc.Name {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}
