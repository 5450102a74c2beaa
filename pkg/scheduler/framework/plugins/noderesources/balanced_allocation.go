package noderesources

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
)

const (
	// BalancedAllocationName is the plugin's name in configurations.
	BalancedAllocationName = names.NodeResourcesBalancedAllocation
	// balancedAllocationPreScoreStateKey is where PreScore leaves the
	// pod's requests per resource.
	balancedAllocationPreScoreStateKey framework.StateKey = "PreScore" + BalancedAllocationName
)

// BalancedAllocation favours nodes whose resources would be used in
// equal proportions.
type BalancedAllocation struct {
	resourceAllocationScorer
}

var (
	_ framework.PreScorePlugin = &BalancedAllocation{}
	_ framework.ScorePlugin    = &BalancedAllocation{}
)

// NewBalancedAllocation builds the plugin from
// *config.NodeResourcesBalancedAllocationArgs (nil: the defaults).
func NewBalancedAllocation(_ context.Context, obj runtime.Object, _ framework.Handle) (framework.Plugin, error) {
	if obj == nil {
		obj = config.DefaultArgs(BalancedAllocationName)
	}
	args, ok := obj.(*config.NodeResourcesBalancedAllocationArgs)
	if !ok {
		return nil, fmt.Errorf("want args to be of type NodeResourcesBalancedAllocationArgs, got %T", obj)
	}
	if err := config.ValidateNodeResourcesBalancedAllocationArgs(nil, args).ToAggregate(); err != nil {
		return nil, err
	}
	ba := &BalancedAllocation{resourceAllocationScorer{name: BalancedAllocationName, strategy: balancedAllocation, useRequested: true, podLevel: true}}
	ba.setResources(args.Resources)
	return ba, nil
}

// Name returns the plugin's name.
func (*BalancedAllocation) Name() string { return BalancedAllocationName }

type balancedAllocationPreScoreState struct {
	podRequests []int64
}

// Clone returns s itself (it is never changed).
func (s *balancedAllocationPreScoreState) Clone() framework.StateData { return s }

// isBestEffort: the pod requests none of the resources.
func isBestEffort(podRequests []int64) bool {
	for _, r := range podRequests {
		if r != 0 {
			return false
		}
	}
	return true
}

// PreScore computes the pod's requests; Skip for a pod requesting none
// of the resources (scoring it would pile best-effort pods onto one
// node, upstream's issue 129138).
func (ba *BalancedAllocation) PreScore(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) *framework.Status {
	reqs := ba.podRequestList(pod)
	if isBestEffort(reqs) {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(balancedAllocationPreScoreStateKey, &balancedAllocationPreScoreState{podRequests: reqs})
	return nil
}

// Score is (1 - std of the requested fractions) × 100.
func (ba *BalancedAllocation) Score(_ context.Context, state *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	var reqs []int64
	if c, err := state.Read(balancedAllocationPreScoreStateKey); err == nil {
		if s, ok := c.(*balancedAllocationPreScoreState); ok {
			reqs = s.podRequests
		}
	}
	if reqs == nil {
		reqs = ba.podRequestList(pod)
		if isBestEffort(reqs) {
			return 0, nil
		}
	}
	return ba.score(nodeInfo, reqs)
}

// ScoreExtensions: none, scores are already in range.
func (*BalancedAllocation) ScoreExtensions() framework.ScoreExtensions { return nil }
