package podtopologyspread

import (
	"context"
	"fmt"
	"log/slog"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/helper"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
)

const (
	// Name is the plugin's name in configurations.
	Name = names.PodTopologySpread
	// ErrReasonConstraintsNotMatch: the node would break a constraint.
	ErrReasonConstraintsNotMatch = "node(s) didn't match pod topology spread constraints"
	// ErrReasonNodeLabelNotMatch: the node lacks a topology key.
	ErrReasonNodeLabelNotMatch = ErrReasonConstraintsNotMatch + " (missing required label)"
)

// PodTopologySpread spreads pods over topology domains.
type PodTopologySpread struct {
	systemDefaulted    bool
	parallelizer       framework.Parallelizer
	defaultConstraints []corev1.TopologySpreadConstraint
	sharedLister       framework.SharedLister
	services           cache.Lister[*corev1.Service]
	replicationCtrls   cache.Lister[*corev1.ReplicationController]
	replicaSets        cache.Lister[*appsv1.ReplicaSet]
	statefulSets       cache.Lister[*appsv1.StatefulSet]

	// memos keep PreFilter's per-node counts across cycles (memo.go).
	memos memoTable
	// hosts keep Score's per-node counts for hostname constraints.
	hosts hostMemo
}

var (
	_ framework.PreFilterPlugin   = &PodTopologySpread{}
	_ framework.FilterPlugin      = &PodTopologySpread{}
	_ framework.PreScorePlugin    = &PodTopologySpread{}
	_ framework.ScorePlugin       = &PodTopologySpread{}
	_ framework.EnqueueExtensions = &PodTopologySpread{}
)

// New builds the plugin from *config.PodTopologySpreadArgs (nil:
// defaults, i.e. the system default constraints). Default constraints
// need the handle's informer factory (Services, ReplicationControllers,
// ReplicaSets, StatefulSets listers).
func New(_ context.Context, obj runtime.Object, h framework.Handle) (framework.Plugin, error) {
	if h == nil || h.SnapshotSharedLister() == nil {
		return nil, fmt.Errorf("SnapshotSharedlister is nil")
	}
	if obj == nil {
		obj = config.DefaultArgs(Name)
	}
	args, ok := obj.(*config.PodTopologySpreadArgs)
	if !ok {
		return nil, fmt.Errorf("want args to be of type PodTopologySpreadArgs, got %T", obj)
	}
	if errs := config.ValidatePodTopologySpreadArgs(nil, args); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	pl := &PodTopologySpread{
		parallelizer:       h.Parallelizer(),
		sharedLister:       h.SnapshotSharedLister(),
		defaultConstraints: args.DefaultConstraints,
	}
	if args.DefaultingType == config.SystemDefaulting {
		pl.defaultConstraints = config.SystemDefaultConstraints
		pl.systemDefaulted = true
	}
	if len(pl.defaultConstraints) != 0 {
		f := h.SharedInformerFactory()
		if f == nil {
			return nil, fmt.Errorf("SharedInformerFactory is nil")
		}
		pl.setListers(f)
	}
	return pl, nil
}

func (pl *PodTopologySpread) setListers(f *informers.SharedInformerFactory) {
	pl.services = f.Services().Lister()
	pl.replicationCtrls = informers.InformerFor[*corev1.ReplicationController, *corev1.ReplicationControllerList](f).Lister()
	pl.replicaSets = f.ReplicaSets().Lister()
	pl.statefulSets = f.StatefulSets().Lister()
}

// Name returns the plugin's name.
func (*PodTopologySpread) Name() string { return Name }

// EventsToRegister: pods added, relabelled, deleted or (the pending pod
// itself, for nodeTaintsPolicy Honor) given a toleration; nodes added,
// deleted, relabelled or re-tainted (upstream's with queueing hints
// enabled; the queue matches Pod against pending pods' events too).
func (pl *PodTopologySpread) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Add | framework.UpdatePodLabel | framework.UpdatePodToleration | framework.Delete}, QueueingHintFn: pl.isSchedulableAfterPodChange},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.Delete | framework.UpdateNodeLabel | framework.UpdateNodeTaint}, QueueingHintFn: pl.isSchedulableAfterNodeChange},
	}, nil
}

// involvedInTopologySpreading: incoming is the pod itself, or a bound pod
// of its namespace.
func involvedInTopologySpreading(incoming, podWithSpreading *corev1.Pod) bool {
	return incoming.UID == podWithSpreading.UID ||
		(incoming.Spec.NodeName != "" && incoming.Namespace == podWithSpreading.Namespace)
}

func hasConstraintWithNodeTaintsPolicyHonor(constraints []topologySpreadConstraint) bool {
	for i := range constraints {
		if constraints[i].NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor {
			return true
		}
	}
	return false
}

func (pl *PodTopologySpread) isSchedulableAfterPodChange(_ *slog.Logger, pod *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	original, modified, err := helper.As[*corev1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if (modified != nil && !involvedInTopologySpreading(modified, pod)) || (original != nil && !involvedInTopologySpreading(original, pod)) {
		return framework.QueueSkip, nil
	}
	constraints, err := pl.getConstraints(pod)
	if err != nil {
		return framework.Queue, err
	}
	switch {
	case modified != nil && original != nil:
		if pod.UID == modified.UID && !equality.Semantic.DeepEqual(modified.Spec.Tolerations, original.Spec.Tolerations) && hasConstraintWithNodeTaintsPolicyHonor(constraints) {
			return framework.Queue, nil
		}
		if equality.Semantic.DeepEqual(modified.Labels, original.Labels) {
			return framework.QueueSkip, nil
		}
		for i := range constraints {
			if constraints[i].Selector.Matches(labels.Set(original.Labels)) != constraints[i].Selector.Matches(labels.Set(modified.Labels)) {
				return framework.Queue, nil
			}
		}
		return framework.QueueSkip, nil
	case modified != nil:
		if podLabelsMatchSpreadConstraints(constraints, modified.Labels) {
			return framework.Queue, nil
		}
		return framework.QueueSkip, nil
	case original != nil:
		if podLabelsMatchSpreadConstraints(constraints, original.Labels) {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}

// getConstraints: the pod's DoNotSchedule constraints, or the default
// ones.
func (pl *PodTopologySpread) getConstraints(pod *corev1.Pod) ([]topologySpreadConstraint, error) {
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		c, err := filterTopologySpreadConstraints(pod.Spec.TopologySpreadConstraints, pod.Labels, corev1.DoNotSchedule)
		if err != nil {
			return nil, fmt.Errorf("obtaining pod's hard topology spread constraints: %w", err)
		}
		return c, nil
	}
	c, err := pl.buildDefaultConstraints(pod, corev1.DoNotSchedule)
	if err != nil {
		return nil, fmt.Errorf("setting default hard topology spread constraints: %w", err)
	}
	return c, nil
}

// isSchedulableAfterNodeChange queues the pod when a node having every
// topology key is added or deleted, gains or loses one, changes a
// topology value, or (having them) changes taints.
func (pl *PodTopologySpread) isSchedulableAfterNodeChange(_ *slog.Logger, pod *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	original, modified, err := helper.As[*corev1.Node](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	constraints, err := pl.getConstraints(pod)
	if err != nil {
		return framework.Queue, err
	}
	var originalMatching, modifiedMatching bool
	if original != nil {
		originalMatching = nodeLabelsMatchSpreadConstraints(original.Labels, constraints)
	}
	if modified != nil {
		modifiedMatching = nodeLabelsMatchSpreadConstraints(modified.Labels, constraints)
	}
	switch {
	case original != nil && modified != nil:
		if originalMatching != modifiedMatching {
			return framework.Queue, nil
		}
		if modifiedMatching && (topologyKeyLabelsChanged(original.Labels, modified.Labels, constraints) || !equality.Semantic.DeepEqual(original.Spec.Taints, modified.Spec.Taints)) {
			return framework.Queue, nil
		}
		return framework.QueueSkip, nil
	case modified != nil:
		if modifiedMatching {
			return framework.Queue, nil
		}
		return framework.QueueSkip, nil
	}
	if originalMatching {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

func topologyKeyLabelsChanged(original, modified map[string]string, constraints []topologySpreadConstraint) bool {
	for i := range constraints {
		k := constraints[i].TopologyKey
		if original[k] != modified[k] {
			return true
		}
	}
	return false
}
