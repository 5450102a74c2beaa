package nodeports

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/helper"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
)

const (
	// Name is the plugin's name in configurations.
	Name = names.NodePorts
	// preFilterStateKey is where PreFilter leaves the pod's host ports.
	preFilterStateKey framework.StateKey = "PreFilter" + Name
	// ErrReason is the reason a node is rejected.
	ErrReason = "node(s) didn't have free ports for the requested pod ports"
)

// preFilterState is the pod's host ports; other pods do not change it,
// so Clone shares it.
type preFilterState []corev1.ContainerPort

// Clone returns s itself (it is never changed).
func (s preFilterState) Clone() framework.StateData { return s }

// NodePorts checks host port conflicts.
type NodePorts struct{}

var (
	_ framework.PreFilterPlugin   = &NodePorts{}
	_ framework.FilterPlugin      = &NodePorts{}
	_ framework.EnqueueExtensions = &NodePorts{}
)

// New returns the plugin (it has no args).
func New(_ context.Context, _ runtime.Object, _ framework.Handle) (framework.Plugin, error) {
	return &NodePorts{}, nil
}

// Name returns the plugin's name.
func (*NodePorts) Name() string { return Name }

// PreFilter records the pod's host ports; Skip when it has none.
func (*NodePorts) PreFilter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	ports := GetHostPorts(pod)
	if len(ports) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(preFilterStateKey, preFilterState(ports))
	return nil, nil
}

// PreFilterExtensions: none (the state does not depend on other pods).
func (*NodePorts) PreFilterExtensions() framework.PreFilterExtensions { return nil }

func getPreFilterState(state *framework.CycleState) (preFilterState, error) {
	c, err := state.Read(preFilterStateKey)
	if err != nil {
		return nil, fmt.Errorf("reading %q from cycleState: %w", preFilterStateKey, err)
	}
	s, ok := c.(preFilterState)
	if !ok {
		return nil, fmt.Errorf("%+v  convert to nodeports.preFilterState error", c)
	}
	return s, nil
}

// EventsToRegister: a deleted pod may free a port (pods' ports are
// immutable, so updates never do), and a new node has all ports free.
// Pod/Delete covers scheduled and pending pods alike (the queue matches
// a registered Pod against UnscheduledPod events, as upstream); the hint
// skips pending pods that were not nominated anywhere.
func (pl *NodePorts) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Delete}, QueueingHintFn: pl.isSchedulableAfterPodDeleted},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}},
	}, nil
}

// isSchedulableAfterPodDeleted queues the pod when the deleted pod was
// scheduled (or nominated) and held a host port that conflicts with one
// the pod wants.
func (*NodePorts) isSchedulableAfterPodDeleted(_ *slog.Logger, pod *corev1.Pod, oldObj, _ any) (framework.QueueingHint, error) {
	deleted, _, err := helper.As[*corev1.Pod](oldObj, nil)
	if err != nil {
		return framework.Queue, err
	}
	if deleted == nil || (deleted.Spec.NodeName == "" && deleted.Status.NominatedNodeName == "") {
		return framework.QueueSkip, nil
	}
	ports := GetHostPorts(deleted)
	if len(ports) == 0 {
		return framework.QueueSkip, nil
	}
	used := make(framework.HostPortInfo, len(ports))
	for _, p := range ports {
		used.Add(p.HostIP, string(p.Protocol), p.HostPort)
	}
	if fitsPorts(GetHostPorts(pod), used) {
		return framework.QueueSkip, nil
	}
	return framework.Queue, nil
}

// Filter rejects a node where one of the pod's host ports is taken.
func (*NodePorts) Filter(_ context.Context, state *framework.CycleState, _ *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	want, err := getPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	if !fitsPorts(want, nodeInfo.UsedPorts) {
		return framework.NewStatus(framework.Unschedulable, ErrReason)
	}
	return nil
}

// Fits reports whether the pod's host ports are free on the node.
func Fits(pod *corev1.Pod, nodeInfo *framework.NodeInfo) bool {
	return fitsPorts(GetHostPorts(pod), nodeInfo.UsedPorts)
}

func fitsPorts(want []corev1.ContainerPort, used framework.HostPortInfo) bool {
	if len(used) == 0 {
		return true
	}
	for i := range want {
		if used.CheckConflict(want[i].HostIP, string(want[i].Protocol), want[i].HostPort) {
			return false
		}
	}
	return true
}

// GetHostPorts lists the ports with a hostPort of the pod's containers
// and of its init containers that run for the pod's whole life (sidecars,
// restartPolicy Always), as upstream's helper.
func GetHostPorts(pod *corev1.Pod) []corev1.ContainerPort {
	var ports []corev1.ContainerPort
	if pod == nil {
		return nil
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
			continue
		}
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				ports = append(ports, p)
			}
		}
	}
	for i := range pod.Spec.Containers {
		for _, p := range pod.Spec.Containers[i].Ports {
			if p.HostPort > 0 {
				ports = append(ports, p)
			}
		}
	}
	return ports
}
