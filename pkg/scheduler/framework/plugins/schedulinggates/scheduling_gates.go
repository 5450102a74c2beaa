package schedulinggates

import (
	"context"
	"log/slog"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/helper"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
)

// Name is the plugin's name in configurations.
const Name = names.SchedulingGates

// SchedulingGates holds gated pods back from scheduling.
type SchedulingGates struct{}

var (
	_ framework.PreEnqueuePlugin  = &SchedulingGates{}
	_ framework.EnqueueExtensions = &SchedulingGates{}
)

// New returns the plugin (it has no args).
func New(_ context.Context, _ runtime.Object, _ framework.Handle) (framework.Plugin, error) {
	return &SchedulingGates{}, nil
}

// Name returns the plugin's name.
func (*SchedulingGates) Name() string { return Name }

// PreEnqueue rejects a pod that still has scheduling gates, naming them
// as upstream does (Go's %v of a string slice).
func (*SchedulingGates) PreEnqueue(_ context.Context, p *corev1.Pod) *framework.Status {
	if len(p.Spec.SchedulingGates) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("waiting for scheduling gates: [")
	for i, g := range p.Spec.SchedulingGates {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(g.Name)
	}
	b.WriteByte(']')
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, b.String())
}

// EventsToRegister: only the removal of the pod's last gate helps (Pod
// also matches pending pods' updates, as upstream registers it).
func (pl *SchedulingGates) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodSchedulingGatesEliminated}, QueueingHintFn: pl.isSchedulableAfterGatesEliminated},
	}, nil
}

// isSchedulableAfterGatesEliminated queues the pod when it is the pod
// whose gates went away, not another one.
func (*SchedulingGates) isSchedulableAfterGatesEliminated(_ *slog.Logger, pod *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	_, modified, err := helper.As[*corev1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if modified == nil || modified.UID != pod.UID {
		return framework.QueueSkip, nil
	}
	return framework.Queue, nil
}
