package framework

import (
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	"strings"
)

// ActionType is what happened to an object, as a bit set so that a
// plugin can register several at once, as upstream's.
type ActionType int64

const (
	Add ActionType = 1 << iota
	Delete
	// Node updates, by what changed.
	UpdateNodeAllocatable
	UpdateNodeLabel
	UpdateNodeTaint
	UpdateNodeCondition
	UpdateNodeAnnotation
	// Pod updates, by what changed.
	UpdatePodLabel
	UpdatePodScaleDown // a pod's requests went down (in-place resize)
	UpdatePodToleration
	UpdatePodSchedulingGatesEliminated
	UpdatePodGeneratedResourceClaim

	none ActionType = 0
	// All is every action; Update every kind of update.
	All    ActionType = 1<<iota - 1
	Update            = UpdateNodeAllocatable | UpdateNodeLabel | UpdateNodeTaint | UpdateNodeCondition | UpdateNodeAnnotation |
		UpdatePodLabel | UpdatePodScaleDown | UpdatePodToleration | UpdatePodSchedulingGatesEliminated | UpdatePodGeneratedResourceClaim
)

var actionNames = []struct {
	a    ActionType
	name string
}{
	{Add, "Add"}, {Delete, "Delete"}, {UpdateNodeAllocatable, "UpdateNodeAllocatable"}, {UpdateNodeLabel, "UpdateNodeLabel"},
	{UpdateNodeTaint, "UpdateNodeTaint"}, {UpdateNodeCondition, "UpdateNodeCondition"}, {UpdateNodeAnnotation, "UpdateNodeAnnotation"},
	{UpdatePodLabel, "UpdatePodLabel"}, {UpdatePodScaleDown, "UpdatePodScaleDown"}, {UpdatePodToleration, "UpdatePodToleration"},
	{UpdatePodSchedulingGatesEliminated, "UpdatePodSchedulingGatesEliminated"}, {UpdatePodGeneratedResourceClaim, "UpdatePodGeneratedResourceClaim"},
}

func (a ActionType) String() string {
	switch a {
	case All:
		return "All"
	case Update:
		return "Update"
	}
	var parts []string
	for _, n := range actionNames {
		if a&n.a != 0 {
			parts = append(parts, n.name)
		}
	}
	return strings.Join(parts, "|")
}

// EventResource is the kind of object an event is about.
type EventResource string

const (
	// Pod: a pod bound to (or assumed on) a node: added, deleted, changed.
	Pod EventResource = "Pod"
	// UnscheduledPod: a pod not yet bound; plugins register it to be told
	// when another pending pod changes (the pod's own updates always
	// re-evaluate it).
	UnscheduledPod        EventResource = "UnscheduledPod"
	Node                  EventResource = "Node"
	PersistentVolume      EventResource = "PersistentVolume"
	PersistentVolumeClaim EventResource = "PersistentVolumeClaim"
	StorageClass          EventResource = "storage.k8s.io/StorageClass"
	CSINode               EventResource = "storage.k8s.io/CSINode"
	CSIDriver             EventResource = "storage.k8s.io/CSIDriver"
	CSIStorageCapacity    EventResource = "storage.k8s.io/CSIStorageCapacity"
	VolumeAttachment      EventResource = "storage.k8s.io/VolumeAttachment"
	ResourceClaim         EventResource = "resource.k8s.io/ResourceClaim"
	ResourceSlice         EventResource = "resource.k8s.io/ResourceSlice"
	DeviceClass           EventResource = "resource.k8s.io/DeviceClass"
	Namespace             EventResource = "Namespace"
	// WildCard matches every resource.
	WildCard EventResource = "*"
)

// ClusterEvent is something that happened in the cluster that may make
// a pending pod schedulable.
type ClusterEvent struct {
	Resource   EventResource
	ActionType ActionType
	// CustomLabel overrides the label used in logs and metrics.
	CustomLabel string
}

// Label names the event ("NodeAdd", "AssignedPodDelete", ...).
func (e ClusterEvent) Label() string {
	if e.CustomLabel != "" {
		return e.CustomLabel
	}
	res := string(e.Resource)
	if e.Resource == Pod {
		res = "AssignedPod"
	}
	if i := strings.LastIndex(res, "/"); i >= 0 {
		res = res[i+1:]
	}
	return res + e.ActionType.String()
}

// Match reports whether the registered event e covers the event that
// happened.
func (e ClusterEvent) Match(happened ClusterEvent) bool {
	return (e.Resource == WildCard || e.Resource == happened.Resource) && e.ActionType&happened.ActionType != 0
}

// Well-known events the scheduler raises itself.
var (
	// EventUnscheduledPodUpdate: the pending pod itself changed.
	EventUnscheduledPodUpdate = ClusterEvent{Resource: UnscheduledPod, ActionType: Update, CustomLabel: "UnschedulablePodUpdate"}
	// EventForceActivate: a plugin asked for the pod to be retried now.
	EventForceActivate = ClusterEvent{Resource: WildCard, ActionType: All, CustomLabel: "ForceActivate"}
	// EventUnschedulableTimeout: the pod waited in the unschedulable pool
	// longer than the maximum (5 minutes) and is retried anyway.
	EventUnschedulableTimeout = ClusterEvent{Resource: WildCard, ActionType: All, CustomLabel: "UnschedulableTimeout"}
)

// QueueingHint is a plugin's answer to "does this event make the pod
// worth retrying?".
type QueueingHint int

const (
	// QueueSkip: the event does not help this pod.
	QueueSkip QueueingHint = iota
	// Queue: the event may make the pod schedulable: retry it.
	Queue
)

func (h QueueingHint) String() string {
	if h == Queue {
		return "Queue"
	}
	return "QueueSkip"
}

// QueueingHintFn decides for one pod and one event (oldObj/newObj are
// the object before and after; either may be nil). An error counts as
// Queue.
type QueueingHintFn func(logger *slog.Logger, pod *corev1.Pod, oldObj, newObj any) (QueueingHint, error)

// ClusterEventWithHint is one event a plugin registers, with an
// optional hint function (nil: always Queue).
type ClusterEventWithHint struct {
	Event          ClusterEvent
	QueueingHintFn QueueingHintFn
}
