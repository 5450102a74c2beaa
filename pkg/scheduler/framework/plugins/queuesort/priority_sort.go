package queuesort

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
)

// Name is the plugin's name in configurations.
const Name = names.PrioritySort

// PrioritySort orders pods by priority, then by the time they were queued.
type PrioritySort struct{}

var _ framework.QueueSortPlugin = &PrioritySort{}

// New returns the plugin (it has no args).
func New(_ context.Context, _ runtime.Object, _ framework.Handle) (framework.Plugin, error) {
	return &PrioritySort{}, nil
}

// Name returns the plugin's name.
func (*PrioritySort) Name() string { return Name }

// Less reports whether a goes before b: the higher priority first, and
// among equal priorities the one queued earlier.
func (*PrioritySort) Less(a, b *framework.QueuedPodInfo) bool {
	p1, p2 := PodPriority(a.Pod), PodPriority(b.Pod)
	return p1 > p2 || (p1 == p2 && a.Timestamp.Before(b.Timestamp))
}

// PodPriority is the pod's spec.priority, 0 when unset (the admission
// plugin normally sets it).
func PodPriority(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}
