package queue

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// Labels of the moves the queue makes itself (the event label of
// scheduler_queue_incoming_pods_total), as upstream's.
const (
	ScheduleAttemptFailure = "ScheduleAttemptFailure"
	BackoffComplete        = "BackoffComplete"
	PopFromBackoffQ        = "PopFromBackoffQ"
	ForceActivate          = "ForceActivate"
)

// Events about pods the scheduler raises (upstream's labels).
var (
	// EventUnscheduledPodAdd: a new pending pod (Add).
	EventUnscheduledPodAdd = framework.ClusterEvent{Resource: framework.UnscheduledPod, ActionType: framework.Add, CustomLabel: "UnschedulablePodAdd"}
	// EventUnscheduledPodDelete: a pending pod went away.
	EventUnscheduledPodDelete = framework.ClusterEvent{Resource: framework.UnscheduledPod, ActionType: framework.Delete, CustomLabel: "UnschedulablePodDelete"}
	// EventAssignedPodAdd / Update / Delete: a bound pod changed.
	EventAssignedPodAdd    = framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Add}
	EventAssignedPodUpdate = framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Update}
	EventAssignedPodDelete = framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Delete}
)

// isWildCard: the event moves pods whatever rejected them
// (EventUnschedulableTimeout, EventForceActivate).
func isWildCard(e framework.ClusterEvent) bool {
	return e.Resource == framework.WildCard && e.ActionType == framework.All
}

// matchEvent reports whether the registered event covers the incoming
// one, as upstream's MatchClusterEvents: a wildcard registration matches
// everything; otherwise the resources match (WildCard matches any, and a
// registered Pod also matches the events of pending pods, UnscheduledPod)
// and the incoming action is one of the registered ones and no more
// general than them (an incoming plain Update only reaches plugins that
// registered the plain Update, not UpdateNodeLabel alone).
func matchEvent(registered, incoming framework.ClusterEvent) bool {
	if isWildCard(registered) {
		return true
	}
	resOK := registered.Resource == framework.WildCard || registered.Resource == incoming.Resource ||
		(registered.Resource == framework.Pod && incoming.Resource == framework.UnscheduledPod)
	return resOK && registered.ActionType&incoming.ActionType != 0 && incoming.ActionType <= registered.ActionType
}

func matchAnyEvent(incoming framework.ClusterEvent, registered []framework.ClusterEvent) bool {
	for _, r := range registered {
		if matchEvent(r, incoming) {
			return true
		}
	}
	return false
}

// podUpdateEvents interprets the update of a pod as the specific events
// plugins register (upstream's PodSchedulingPropertiesChange): labels,
// requests scaled down, scheduling gates all removed, tolerations added,
// generated resource claims; the plain Update when none of those. The
// resource is UnscheduledPod for a pod without a node, Pod otherwise.
func podUpdateEvents(newPod, oldPod *corev1.Pod) []framework.ClusterEvent {
	res := framework.Pod
	if newPod.Spec.NodeName == "" {
		res = framework.UnscheduledPod
	}
	mk := func(a framework.ActionType) framework.ClusterEvent {
		e := framework.ClusterEvent{Resource: res, ActionType: a}
		if res == framework.UnscheduledPod {
			e.CustomLabel = "UnschedulablePod" + a.String()
		}
		return e
	}
	if oldPod == nil {
		return []framework.ClusterEvent{mk(framework.Update)}
	}
	var events []framework.ClusterEvent
	if !equality.Semantic.DeepEqual(newPod.Labels, oldPod.Labels) {
		events = append(events, mk(framework.UpdatePodLabel))
	}
	if podScaledDown(newPod, oldPod) {
		events = append(events, mk(framework.UpdatePodScaleDown))
	}
	if len(newPod.Spec.SchedulingGates) == 0 && len(oldPod.Spec.SchedulingGates) != 0 {
		events = append(events, mk(framework.UpdatePodSchedulingGatesEliminated))
	}
	if len(newPod.Spec.Tolerations) != len(oldPod.Spec.Tolerations) {
		// Tolerations can only be added (API validation), so a change
		// of length is every change.
		events = append(events, mk(framework.UpdatePodToleration))
	}
	if !equality.Semantic.DeepEqual(newPod.Status.ResourceClaimStatuses, oldPod.Status.ResourceClaimStatuses) ||
		!equality.Semantic.DeepEqual(newPod.Status.ExtendedResourceClaimStatus, oldPod.Status.ExtendedResourceClaimStatus) {
		events = append(events, mk(framework.UpdatePodGeneratedResourceClaim))
	}
	if len(events) == 0 {
		events = append(events, mk(framework.Update))
	}
	return events
}

// podScaledDown: a resource the old pod requested is requested less, or
// no more.
func podScaledDown(newPod, oldPod *corev1.Pod) bool {
	o, n := framework.PodRequests(oldPod, false), framework.PodRequests(newPod, false)
	if o.MilliCPU > n.MilliCPU || o.Memory > n.Memory || o.EphemeralStorage > n.EphemeralStorage {
		return true
	}
	for name, q := range o.ScalarResources {
		if nq, ok := n.ScalarResources[name]; !ok || q > nq {
			return true
		}
	}
	return false
}
