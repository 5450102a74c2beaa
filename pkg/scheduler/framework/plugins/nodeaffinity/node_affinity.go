package nodeaffinity

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/skiff-sh/skiff/pkg/componenthelpers/scheduling/nodeaffinity"
	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/helper"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
)

const (
	// Name is the plugin's name in configurations.
	Name = names.NodeAffinity

	preScoreStateKey  framework.StateKey = "PreScore" + Name
	preFilterStateKey framework.StateKey = "PreFilter" + Name

	// ErrReasonPod: the pod's nodeSelector or required node affinity does
	// not match the node.
	ErrReasonPod = "node(s) didn't match Pod's node affinity/selector"
	// errReasonEnforced: the args' addedAffinity does not match the node.
	errReasonEnforced = "node(s) didn't match scheduler-enforced node affinity"
	// errReasonConflict: the required terms name no common node.
	errReasonConflict = "pod affinity terms conflict"
)

// NodeAffinity checks the pod's nodeSelector and node affinity (plus the
// scheduler-enforced addedAffinity) against nodes.
type NodeAffinity struct {
	addedNodeSelector   *nodeaffinity.NodeSelector
	addedPrefSchedTerms *nodeaffinity.PreferredSchedulingTerms
}

var (
	_ framework.PreFilterPlugin   = &NodeAffinity{}
	_ framework.FilterPlugin      = &NodeAffinity{}
	_ framework.PreScorePlugin    = &NodeAffinity{}
	_ framework.ScorePlugin       = &NodeAffinity{}
	_ framework.EnqueueExtensions = &NodeAffinity{}
)

// New builds the plugin from *config.NodeAffinityArgs (nil: defaults);
// the args are validated and addedAffinity parsed.
func New(_ context.Context, obj runtime.Object, _ framework.Handle) (framework.Plugin, error) {
	if obj == nil {
		obj = config.DefaultArgs(Name)
	}
	args, ok := obj.(*config.NodeAffinityArgs)
	if !ok {
		return nil, fmt.Errorf("args are not of type NodeAffinityArgs, got %T", obj)
	}
	if errs := config.ValidateNodeAffinityArgs(nil, args); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	pl := &NodeAffinity{}
	if a := args.AddedAffinity; a != nil {
		var err error
		if ns := a.RequiredDuringSchedulingIgnoredDuringExecution; ns != nil {
			if pl.addedNodeSelector, err = nodeaffinity.NewNodeSelector(ns); err != nil {
				return nil, fmt.Errorf("parsing addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: %w", err)
			}
		}
		if terms := a.PreferredDuringSchedulingIgnoredDuringExecution; len(terms) != 0 {
			if pl.addedPrefSchedTerms, err = nodeaffinity.NewPreferredSchedulingTerms(terms); err != nil {
				return nil, fmt.Errorf("parsing addedAffinity.preferredDuringSchedulingIgnoredDuringExecution: %w", err)
			}
		}
	}
	return pl, nil
}

// Name returns the plugin's name.
func (*NodeAffinity) Name() string { return Name }

type preFilterState struct {
	required nodeaffinity.RequiredNodeAffinity
}

// Clone returns the state itself: it never changes.
func (s *preFilterState) Clone() framework.StateData { return s }

type preScoreState struct {
	preferred *nodeaffinity.PreferredSchedulingTerms
}

// Clone returns the state itself: it never changes.
func (s *preScoreState) Clone() framework.StateData { return s }

// EventsToRegister: a node added or its labels changed (upstream's with
// queueing hints enabled).
func (pl *NodeAffinity) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel}, QueueingHintFn: pl.isSchedulableAfterNodeChange},
	}, nil
}

// isSchedulableAfterNodeChange queues the pod when the node (added, or
// updated from not matching) now matches the addedAffinity and the pod's
// required affinity.
func (pl *NodeAffinity) isSchedulableAfterNodeChange(_ *slog.Logger, pod *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	original, modified, err := helper.As[*corev1.Node](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if modified == nil {
		return framework.QueueSkip, nil
	}
	if pl.addedNodeSelector != nil && !pl.addedNodeSelector.Match(modified) {
		return framework.QueueSkip, nil
	}
	required := nodeaffinity.GetRequiredNodeAffinity(pod)
	matched, err := required.Match(modified)
	if err != nil {
		return framework.Queue, err
	}
	if !matched {
		return framework.QueueSkip, nil
	}
	if original == nil {
		return framework.Queue, nil
	}
	wasMatched, err := required.Match(original)
	if err != nil {
		return framework.Queue, err
	}
	if wasMatched {
		return framework.QueueSkip, nil
	}
	return framework.Queue, nil
}

// PreFilter parses the pod's required placement; Skip when there is
// nothing to check. When every required term names nodes (metadata.name
// In), the result is the union over terms of each term's intersection.
func (pl *NodeAffinity) PreFilter(_ context.Context, cs *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	affinity := pod.Spec.Affinity
	noNodeAffinity := affinity == nil || affinity.NodeAffinity == nil || affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil
	if noNodeAffinity && pl.addedNodeSelector == nil && pod.Spec.NodeSelector == nil {
		return nil, framework.NewStatus(framework.Skip)
	}
	cs.Write(preFilterStateKey, &preFilterState{required: nodeaffinity.GetRequiredNodeAffinity(pod)})
	if noNodeAffinity {
		return nil, nil
	}
	terms := affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		return nil, nil
	}
	var nodeNames sets.Set[string]
	for _, t := range terms {
		var termNames sets.Set[string]
		for _, r := range t.MatchFields {
			if r.Key == metav1.ObjectNameField && r.Operator == corev1.NodeSelectorOpIn {
				s := sets.New(r.Values...)
				if termNames == nil {
					termNames = s
				} else {
					termNames = termNames.Intersection(s)
				}
			}
		}
		if termNames == nil {
			// A term without a name requirement: every node may match.
			return nil, nil
		}
		nodeNames = nodeNames.Union(termNames)
	}
	if nodeNames != nil && len(nodeNames) == 0 {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, errReasonConflict)
	}
	if len(nodeNames) > 0 {
		return &framework.PreFilterResult{NodeNames: nodeNames}, nil
	}
	return nil, nil
}

// PreFilterExtensions: none (the state does not depend on other pods).
func (*NodeAffinity) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter checks addedAffinity and the pod's required placement.
func (pl *NodeAffinity) Filter(_ context.Context, cs *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	node := nodeInfo.Node()
	if pl.addedNodeSelector != nil && !pl.addedNodeSelector.Match(node) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, errReasonEnforced)
	}
	var required nodeaffinity.RequiredNodeAffinity
	if v, err := cs.Read(preFilterStateKey); err == nil {
		s, ok := v.(*preFilterState)
		if !ok {
			return framework.AsStatus(fmt.Errorf("invalid PreFilter state, got type %T", v))
		}
		required = s.required
	} else {
		// PreFilter disabled: compute here.
		required = nodeaffinity.GetRequiredNodeAffinity(pod)
	}
	// Parse errors count as no match, as upstream's.
	if match, _ := required.Match(node); !match {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonPod)
	}
	return nil
}

// PreScore parses the pod's preferred terms; Skip when neither the pod
// nor addedAffinity has any.
func (pl *NodeAffinity) PreScore(_ context.Context, cs *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) *framework.Status {
	preferred, err := podPreferredNodeAffinity(pod)
	if err != nil {
		return framework.AsStatus(err)
	}
	if preferred == nil && pl.addedPrefSchedTerms == nil {
		return framework.NewStatus(framework.Skip)
	}
	cs.Write(preScoreStateKey, &preScoreState{preferred: preferred})
	return nil
}

// Score sums the weights of the matching preferred terms.
func (pl *NodeAffinity) Score(_ context.Context, cs *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	node := nodeInfo.Node()
	var count int64
	if pl.addedPrefSchedTerms != nil {
		count += pl.addedPrefSchedTerms.Score(node)
	}
	var preferred *nodeaffinity.PreferredSchedulingTerms
	if v, err := cs.Read(preScoreStateKey); err == nil {
		s, ok := v.(*preScoreState)
		if !ok {
			return 0, framework.AsStatus(fmt.Errorf("invalid PreScore state, got type %T", v))
		}
		preferred = s.preferred
	} else {
		// PreScore disabled: compute here.
		if preferred, err = podPreferredNodeAffinity(pod); err != nil {
			return 0, framework.AsStatus(err)
		}
	}
	if preferred != nil {
		count += preferred.Score(node)
	}
	return count, nil
}

// NormalizeScore scales to 0..100 in proportion to the best node.
func (*NodeAffinity) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *corev1.Pod, scores framework.NodeScoreList) *framework.Status {
	return helper.DefaultNormalizeScore(framework.MaxNodeScore, false, scores)
}

// ScoreExtensions returns the plugin (it normalizes).
func (pl *NodeAffinity) ScoreExtensions() framework.ScoreExtensions { return pl }

func podPreferredNodeAffinity(pod *corev1.Pod) (*nodeaffinity.PreferredSchedulingTerms, error) {
	a := pod.Spec.Affinity
	if a != nil && a.NodeAffinity != nil && a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution != nil {
		return nodeaffinity.NewPreferredSchedulingTerms(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	return nil, nil
}
