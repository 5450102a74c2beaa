package tainttoleration

import (
	"context"
	"fmt"
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
	Name = names.TaintToleration
	// ErrReasonNotMatch is upstream's (unused) generic reason.
	ErrReasonNotMatch = "node(s) had taints that the pod didn't tolerate"
	// ErrReasonUntolerated is the Filter reason (upstream 1.34.2+ does not
	// name the taint in pod statuses).
	ErrReasonUntolerated = "node(s) had untolerated taint(s)"

	preScoreStateKey framework.StateKey = "PreScore" + Name
)

// TaintToleration checks the pod's tolerations against node taints.
type TaintToleration struct{}

var (
	_ framework.FilterPlugin      = &TaintToleration{}
	_ framework.PreScorePlugin    = &TaintToleration{}
	_ framework.ScorePlugin       = &TaintToleration{}
	_ framework.EnqueueExtensions = &TaintToleration{}
)

// New returns the plugin (it has no args).
func New(_ context.Context, _ runtime.Object, _ framework.Handle) (framework.Plugin, error) {
	return &TaintToleration{}, nil
}

// Name returns the plugin's name.
func (*TaintToleration) Name() string { return Name }

// EventsToRegister: a node added or its taints changed, and a pod's
// tolerations updated (upstream's with queueing hints enabled; the queue
// matches Pod against the pending pods' events too, and the hint only
// queues the pod's own update).
func (pl *TaintToleration) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeTaint}, QueueingHintFn: pl.isSchedulableAfterNodeChange},
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodToleration}, QueueingHintFn: pl.isSchedulableAfterPodTolerationChange},
	}, nil
}

// isSchedulableAfterNodeChange queues the pod when the node went from
// having an untolerated NoSchedule/NoExecute taint (or not existing) to
// having none.
func (*TaintToleration) isSchedulableAfterNodeChange(_ *slog.Logger, pod *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	original, modified, err := helper.As[*corev1.Node](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if modified == nil {
		return framework.QueueSkip, nil
	}
	wasUntolerated := true
	if original != nil {
		_, wasUntolerated = corev1helpers.FindMatchingUntoleratedTaint(original.Spec.Taints, pod.Spec.Tolerations, corev1helpers.DoNotScheduleTaint)
	}
	_, isUntolerated := corev1helpers.FindMatchingUntoleratedTaint(modified.Spec.Taints, pod.Spec.Tolerations, corev1helpers.DoNotScheduleTaint)
	if wasUntolerated && !isUntolerated {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// isSchedulableAfterPodTolerationChange queues the pod when it is the
// updated pod (tolerations can only be added).
func (*TaintToleration) isSchedulableAfterPodTolerationChange(_ *slog.Logger, pod *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	_, modified, err := helper.As[*corev1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if modified != nil && modified.UID == pod.UID {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// Filter rejects a node with an untolerated NoSchedule/NoExecute taint.
func (*TaintToleration) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(nodeInfo.Node().Spec.Taints, pod.Spec.Tolerations, corev1helpers.DoNotScheduleTaint); !untolerated {
		return nil
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUntolerated)
}

type preScoreState struct {
	// tolerationsPreferNoSchedule: the pod's tolerations of effect
	// PreferNoSchedule or of any effect.
	tolerationsPreferNoSchedule []corev1.Toleration
}

// Clone returns the state itself: it never changes.
func (s *preScoreState) Clone() framework.StateData { return s }

// PreScore keeps the tolerations that can tolerate PreferNoSchedule taints.
func (*TaintToleration) PreScore(_ context.Context, cs *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) *framework.Status {
	var tols []corev1.Toleration
	for _, t := range pod.Spec.Tolerations {
		if t.Effect == "" || t.Effect == corev1.TaintEffectPreferNoSchedule {
			tols = append(tols, t)
		}
	}
	cs.Write(preScoreStateKey, &preScoreState{tolerationsPreferNoSchedule: tols})
	return nil
}

// Score counts the node's PreferNoSchedule taints the pod does not
// tolerate.
func (*TaintToleration) Score(_ context.Context, cs *framework.CycleState, _ *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	v, err := cs.Read(preScoreStateKey)
	if err != nil {
		return 0, framework.AsStatus(fmt.Errorf("failed to read %q from cycleState: %w", preScoreStateKey, err))
	}
	s, ok := v.(*preScoreState)
	if !ok {
		return 0, framework.AsStatus(fmt.Errorf("%+v convert to tainttoleration.preScoreState error", v))
	}
	var n int64
	taints := nodeInfo.Node().Spec.Taints
	for i := range taints {
		if taints[i].Effect != corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !corev1helpers.TolerationsTolerateTaint(s.tolerationsPreferNoSchedule, &taints[i]) {
			n++
		}
	}
	return n, nil
}

// NormalizeScore reverses: the fewest intolerable taints score 100.
func (*TaintToleration) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *corev1.Pod, scores framework.NodeScoreList) *framework.Status {
	return helper.DefaultNormalizeScore(framework.MaxNodeScore, true, scores)
}

// ScoreExtensions returns the plugin (it normalizes).
func (pl *TaintToleration) ScoreExtensions() framework.ScoreExtensions { return pl }
