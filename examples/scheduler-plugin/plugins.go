package main

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// HoldAnnotation keeps a pod from being scheduled while present.
const HoldAnnotation = "example.com/hold"

// Hold rejects pods annotated with HoldAnnotation.
type Hold struct{}

var (
	_ framework.FilterPlugin      = &Hold{}
	_ framework.EnqueueExtensions = &Hold{}
)

// Name is the name a profile enables the plugin by.
func (*Hold) Name() string { return "Hold" }

// Filter is called for each node (concurrently): the pod fits no node
// while it is on hold. UnschedulableAndUnresolvable: preempting other
// pods would not help.
func (*Hold) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, _ *framework.NodeInfo) *framework.Status {
	if _, ok := pod.Annotations[HoldAnnotation]; ok {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, "pod is on hold ("+HoldAnnotation+")")
	}
	return nil
}

// EventsToRegister: no cluster event changes a hold; only the pod's own
// update does, which the queue considers for every pending pod (the
// UnscheduledPod update event, with a hint that says Queue only when the
// annotation went away).
func (*Hold) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{{
		Event: framework.ClusterEvent{Resource: framework.UnscheduledPod, ActionType: framework.Update},
		QueueingHintFn: func(_ *slog.Logger, pod *corev1.Pod, _, newObj any) (framework.QueueingHint, error) {
			p, ok := newObj.(*corev1.Pod)
			if !ok || p.UID != pod.UID {
				return framework.QueueSkip, nil
			}
			if _, held := p.Annotations[HoldAnnotation]; held {
				return framework.QueueSkip, nil
			}
			return framework.Queue, nil
		},
	}}, nil
}

// NewHold is Hold's factory (it takes no args).
func NewHold(context.Context, runtime.Object, framework.Handle) (framework.Plugin, error) {
	return &Hold{}, nil
}

// PreferLabelArgs are PreferLabel's args in the profile's pluginConfig.
type PreferLabelArgs struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// PreferLabel scores nodes with Label=Value highest.
type PreferLabel struct{ args PreferLabelArgs }

var _ framework.ScorePlugin = &PreferLabel{}

// Name is the name a profile enables the plugin by.
func (*PreferLabel) Name() string { return "PreferLabel" }

// Score is called for each feasible node (concurrently).
func (p *PreferLabel) Score(_ context.Context, _ *framework.CycleState, _ *corev1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	if v, ok := ni.Node().Labels[p.args.Label]; ok && v == p.args.Value {
		return framework.MaxNodeScore, nil
	}
	return framework.MinNodeScore, nil
}

// ScoreExtensions: the scores are already in [0, MaxNodeScore].
func (*PreferLabel) ScoreExtensions() framework.ScoreExtensions { return nil }

// NewPreferLabel decodes the args (strictly: an unknown field is an
// error naming it) and checks them.
func NewPreferLabel(_ context.Context, args runtime.Object, _ framework.Handle) (framework.Plugin, error) {
	p := &PreferLabel{}
	if args != nil {
		if err := config.DecodeInto(args, &p.args); err != nil {
			return nil, fmt.Errorf("PreferLabel args: %w", err)
		}
	}
	if p.args.Label == "" {
		return nil, fmt.Errorf("PreferLabel args: label is required")
	}
	return p, nil
}
