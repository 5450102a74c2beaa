package nodeunschedulable

import (
	"context"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/componenthelpers/scheduling/corev1helpers"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/helper"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
)

const (
	// Name is the plugin's name in configurations.
	Name = names.NodeUnschedulable
	// ErrReasonUnknownCondition is upstream's reason for a node with
	// unknown conditions (kept for parity; this plugin does not use it).
	ErrReasonUnknownCondition = "node(s) had unknown conditions"
	// ErrReasonUnschedulable is the reason a cordoned node is rejected.
	ErrReasonUnschedulable = "node(s) were unschedulable"
)

// unschedulableTaint is the taint a cordoned node carries; tolerating it
// is tolerating spec.unschedulable.
var unschedulableTaint = corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}

// NodeUnschedulable rejects cordoned nodes.
type NodeUnschedulable struct{}

var (
	_ framework.FilterPlugin      = &NodeUnschedulable{}
	_ framework.EnqueueExtensions = &NodeUnschedulable{}
)

// New returns the plugin (it has no args).
func New(_ context.Context, _ runtime.Object, _ framework.Handle) (framework.Plugin, error) {
	return &NodeUnschedulable{}, nil
}

// Name returns the plugin's name.
func (*NodeUnschedulable) Name() string { return Name }

// EventsToRegister: a node added or its taints changed (a cordon is
// lifted together with its taint), and the pod gaining a toleration.
func (pl *NodeUnschedulable) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeTaint}, QueueingHintFn: pl.isSchedulableAfterNodeChange},
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodToleration}, QueueingHintFn: pl.isSchedulableAfterPodTolerationChange},
	}, nil
}

// isSchedulableAfterPodTolerationChange queues the pod when it is the
// updated pod and now tolerates the unschedulable taint (tolerations can
// only be added, so it did not before).
func (*NodeUnschedulable) isSchedulableAfterPodTolerationChange(_ *slog.Logger, pod *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	_, modified, err := helper.As[*corev1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if modified != nil && modified.UID == pod.UID && TolerationsTolerateTaint(modified.Spec.Tolerations, &unschedulableTaint) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// isSchedulableAfterNodeChange queues the pod when a schedulable node is
// added or a node stops being unschedulable.
func (*NodeUnschedulable) isSchedulableAfterNodeChange(_ *slog.Logger, _ *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	original, modified, err := helper.As[*corev1.Node](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if modified == nil {
		return framework.QueueSkip, nil
	}
	if (original != nil && original.Spec.Unschedulable && !modified.Spec.Unschedulable) ||
		(original == nil && !modified.Spec.Unschedulable) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// Filter rejects an unschedulable node unless the pod tolerates it.
func (*NodeUnschedulable) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	if !nodeInfo.Node().Spec.Unschedulable {
		return nil
	}
	if TolerationsTolerateTaint(pod.Spec.Tolerations, &unschedulableTaint) {
		return nil
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnschedulable)
}

// TolerationsTolerateTaint reports whether one of the tolerations
// tolerates the taint (pkg/componenthelpers' shared rules, upstream's): an empty effect matches every
// effect, an empty key (with Exists) every key, Exists every value,
// Equal (or no operator) the same value. The alpha Lt/Gt operators
// (disabled by default upstream) tolerate nothing.
func TolerationsTolerateTaint(tolerations []corev1.Toleration, taint *corev1.Taint) bool {
	return corev1helpers.TolerationsTolerateTaint(tolerations, taint)
}
