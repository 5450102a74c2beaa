package nodename

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
)

const (
	// Name is the plugin's name in configurations.
	Name = names.NodeName
	// ErrReason is the reason a node is rejected.
	ErrReason = "node(s) didn't match the requested node name"
)

// NodeName checks the pod's spec.nodeName.
type NodeName struct{}

var (
	_ framework.FilterPlugin      = &NodeName{}
	_ framework.EnqueueExtensions = &NodeName{}
)

// New returns the plugin (it has no args).
func New(_ context.Context, _ runtime.Object, _ framework.Handle) (framework.Plugin, error) {
	return &NodeName{}, nil
}

// Name returns the plugin's name.
func (*NodeName) Name() string { return Name }

// EventsToRegister: only an added node can be the requested one (with
// queueing hints, as upstream, no node update is registered).
func (*NodeName) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}},
	}, nil
}

// Filter rejects every node but the requested one.
func (*NodeName) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	if !Fits(pod, nodeInfo) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReason)
	}
	return nil
}

// Fits reports whether the pod asks for no node or for this one.
func Fits(pod *corev1.Pod, nodeInfo *framework.NodeInfo) bool {
	return pod.Spec.NodeName == "" || pod.Spec.NodeName == nodeInfo.Node().Name
}
