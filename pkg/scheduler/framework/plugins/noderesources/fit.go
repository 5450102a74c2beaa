package noderesources

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/helper"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
)

const (
	// Name is the Fit plugin's name in configurations.
	Name = names.NodeResourcesFit
	// preFilterStateKey is where PreFilter leaves the pod's requests.
	preFilterStateKey framework.StateKey = "PreFilter" + Name
	// preScoreStateKey is where PreScore leaves the pod's requests per
	// scored resource.
	preScoreStateKey framework.StateKey = "PreScore" + Name
)

// Upstream's reasons for the common resources.
const (
	ReasonTooManyPods               = "Too many pods"
	ReasonInsufficientCPU           = "Insufficient cpu"
	ReasonInsufficientMemory        = "Insufficient memory"
	ReasonInsufficientEphemeralDisk = "Insufficient ephemeral-storage"
)

// Fit checks that a node has room for the pod's requests and scores
// nodes by their allocation.
type Fit struct {
	ignoredResources      sets.Set[string]
	ignoredResourceGroups sets.Set[string]
	resourceAllocationScorer
}

var (
	_ framework.PreFilterPlugin   = &Fit{}
	_ framework.FilterPlugin      = &Fit{}
	_ framework.EnqueueExtensions = &Fit{}
	_ framework.PreScorePlugin    = &Fit{}
	_ framework.ScorePlugin       = &Fit{}
)

// NewFit builds the plugin from *config.NodeResourcesFitArgs (nil: the
// defaults), validated as upstream does.
func NewFit(_ context.Context, obj runtime.Object, _ framework.Handle) (framework.Plugin, error) {
	if obj == nil {
		obj = config.DefaultArgs(Name)
	}
	args, ok := obj.(*config.NodeResourcesFitArgs)
	if !ok {
		return nil, fmt.Errorf("want args to be of type NodeResourcesFitArgs, got %T", obj)
	}
	if err := config.ValidateNodeResourcesFitArgs(nil, args).ToAggregate(); err != nil {
		return nil, err
	}
	if args.ScoringStrategy == nil {
		return nil, errors.New("scoring strategy not specified")
	}
	s := args.ScoringStrategy
	scorer := resourceAllocationScorer{name: string(s.Type)}
	switch s.Type {
	case config.LeastAllocated:
		scorer.strategy = leastAllocated
	case config.MostAllocated:
		scorer.strategy = mostAllocated
	case config.RequestedToCapacityRatio:
		if s.RequestedToCapacityRatio == nil || len(s.RequestedToCapacityRatio.Shape) == 0 {
			return nil, errors.New("scoring strategy RequestedToCapacityRatio needs a shape")
		}
		scorer.strategy = requestedToCapacityRatio
		shape := make(helper.FunctionShape, 0, len(s.RequestedToCapacityRatio.Shape))
		for _, p := range s.RequestedToCapacityRatio.Shape {
			shape = append(shape, helper.FunctionShapePoint{
				Utilization: int64(p.Utilization),
				Score:       int64(p.Score) * (framework.MaxNodeScore / config.MaxCustomPriorityScore),
			})
		}
		scorer.shape = helper.BuildBrokenLinearFunction(shape)
	default:
		return nil, fmt.Errorf("scoring strategy %s is not supported", s.Type)
	}
	scorer.setResources(s.Resources)
	return &Fit{
		ignoredResources:         sets.New(args.IgnoredResources...),
		ignoredResourceGroups:    sets.New(args.IgnoredResourceGroups...),
		resourceAllocationScorer: scorer,
	}, nil
}

// Name returns the plugin's name.
func (*Fit) Name() string { return Name }

// scalarRequest is one non-zero scalar resource the pod requests, with
// the decisions Filter needs made up front.
type scalarRequest struct {
	name   corev1.ResourceName
	value  int64
	reason string
}

// preFilterState is the pod's requests. It does not depend on other
// pods, so Clone shares it.
type preFilterState struct {
	milliCPU, memory, ephemeralStorage int64
	// anyRequest: the pod requests something besides a pod slot
	// (upstream checks only the pod count otherwise; a zero scalar
	// request counts as "something", as upstream's map entry does).
	anyRequest bool
	// scalars are the non-zero scalar requests that are not ignored,
	// sorted by name (upstream iterates a map; the order only shows in
	// the reasons of a node short of several scalar resources).
	scalars []scalarRequest
}

// Clone returns s itself (it is never changed).
func (s *preFilterState) Clone() framework.StateData { return s }

// computePodResourceRequest is the pod's requests with the ignored
// extended resources (nil sets: none) left out.
func computePodResourceRequest(pod *corev1.Pod, ignored, ignoredGroups sets.Set[string]) *preFilterState {
	r := framework.PodRequests(pod, false)
	s := &preFilterState{milliCPU: r.MilliCPU, memory: r.Memory, ephemeralStorage: r.EphemeralStorage}
	s.anyRequest = r.MilliCPU != 0 || r.Memory != 0 || r.EphemeralStorage != 0 || len(r.ScalarResources) != 0
	for name, v := range r.ScalarResources {
		if v == 0 || isIgnored(name, ignored, ignoredGroups) {
			continue
		}
		s.scalars = append(s.scalars, scalarRequest{name: name, value: v, reason: "Insufficient " + string(name)})
	}
	sort.Slice(s.scalars, func(i, j int) bool { return s.scalars[i].name < s.scalars[j].name })
	return s
}

// isIgnored: an extended resource named in ignoredResources or whose
// domain ("example.com" of "example.com/foo") is an ignored group.
func isIgnored(name corev1.ResourceName, ignored, ignoredGroups sets.Set[string]) bool {
	if !framework.IsExtendedResourceName(name) {
		return false
	}
	if ignored.Has(string(name)) {
		return true
	}
	if ignoredGroups.Len() > 0 {
		prefix, _, _ := strings.Cut(string(name), "/")
		return ignoredGroups.Has(prefix)
	}
	return false
}

// PreFilter computes the pod's requests.
func (f *Fit) PreFilter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	state.Write(preFilterStateKey, computePodResourceRequest(pod, f.ignoredResources, f.ignoredResourceGroups))
	return nil, nil
}

// PreFilterExtensions: none (the state does not depend on other pods).
func (*Fit) PreFilterExtensions() framework.PreFilterExtensions { return nil }

func getPreFilterState(state *framework.CycleState) (*preFilterState, error) {
	c, err := state.Read(preFilterStateKey)
	if err != nil {
		return nil, fmt.Errorf("error reading %q from cycleState: %w", preFilterStateKey, err)
	}
	s, ok := c.(*preFilterState)
	if !ok {
		return nil, fmt.Errorf("%+v  convert to NodeResourcesFit.preFilterState error", c)
	}
	return s, nil
}

// Filter rejects a node without room for the pod, with every shortage
// as a reason.
func (f *Fit) Filter(_ context.Context, state *framework.CycleState, _ *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	insufficient := fitsRequest(s, nodeInfo, nil)
	if len(insufficient) == 0 {
		return nil
	}
	reasons := make([]string, len(insufficient))
	code := framework.Unschedulable
	for i := range insufficient {
		reasons[i] = insufficient[i].Reason
		if insufficient[i].Unresolvable {
			code = framework.UnschedulableAndUnresolvable
		}
	}
	return framework.NewStatus(code, reasons...)
}

// InsufficientResource is one resource the node is short of.
type InsufficientResource struct {
	ResourceName corev1.ResourceName
	Reason       string
	Requested    int64
	Used         int64
	Capacity     int64
	// Unresolvable: the request exceeds the node's allocatable, so no
	// preemption on the node can make room.
	Unresolvable bool
}

// Fits lists the resources the node lacks for the pod (no resource is
// ignored).
func Fits(pod *corev1.Pod, nodeInfo *framework.NodeInfo) []InsufficientResource {
	return fitsRequest(computePodResourceRequest(pod, nil, nil), nodeInfo, make([]InsufficientResource, 0, 4))
}

// fitsRequest appends the node's shortages for the request to out (nil
// on the success path: no allocation).
func fitsRequest(s *preFilterState, nodeInfo *framework.NodeInfo, out []InsufficientResource) []InsufficientResource {
	alloc, used := nodeInfo.Allocatable, nodeInfo.Requested
	if len(nodeInfo.Pods)+1 > alloc.AllowedPodNumber {
		out = append(out, InsufficientResource{ResourceName: corev1.ResourcePods, Reason: ReasonTooManyPods,
			Requested: 1, Used: int64(len(nodeInfo.Pods)), Capacity: int64(alloc.AllowedPodNumber)})
	}
	if !s.anyRequest {
		return out
	}
	if s.milliCPU > 0 && s.milliCPU > alloc.MilliCPU-used.MilliCPU {
		out = append(out, InsufficientResource{ResourceName: corev1.ResourceCPU, Reason: ReasonInsufficientCPU,
			Requested: s.milliCPU, Used: used.MilliCPU, Capacity: alloc.MilliCPU, Unresolvable: s.milliCPU > alloc.MilliCPU})
	}
	if s.memory > 0 && s.memory > alloc.Memory-used.Memory {
		out = append(out, InsufficientResource{ResourceName: corev1.ResourceMemory, Reason: ReasonInsufficientMemory,
			Requested: s.memory, Used: used.Memory, Capacity: alloc.Memory, Unresolvable: s.memory > alloc.Memory})
	}
	if s.ephemeralStorage > 0 && s.ephemeralStorage > alloc.EphemeralStorage-used.EphemeralStorage {
		out = append(out, InsufficientResource{ResourceName: corev1.ResourceEphemeralStorage, Reason: ReasonInsufficientEphemeralDisk,
			Requested: s.ephemeralStorage, Used: used.EphemeralStorage, Capacity: alloc.EphemeralStorage, Unresolvable: s.ephemeralStorage > alloc.EphemeralStorage})
	}
	for i := range s.scalars {
		sr := &s.scalars[i]
		capacity, inUse := alloc.ScalarResources[sr.name], used.ScalarResources[sr.name]
		if sr.value > capacity-inUse {
			out = append(out, InsufficientResource{ResourceName: sr.name, Reason: sr.reason,
				Requested: sr.value, Used: inUse, Capacity: capacity, Unresolvable: sr.value > capacity})
		}
	}
	return out
}

// preScoreState is the pod's request per scored resource.
type preScoreState struct {
	podRequests []int64
}

// Clone returns s itself (it is never changed).
func (s *preScoreState) Clone() framework.StateData { return s }

// PreScore computes the pod's (non-zero) requests of the scored
// resources.
func (f *Fit) PreScore(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) *framework.Status {
	state.Write(preScoreStateKey, &preScoreState{podRequests: f.podRequestList(pod)})
	return nil
}

// Score ranks the node by the scoring strategy.
func (f *Fit) Score(_ context.Context, state *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	var reqs []int64
	if c, err := state.Read(preScoreStateKey); err == nil {
		if s, ok := c.(*preScoreState); ok {
			reqs = s.podRequests
		}
	}
	if reqs == nil {
		reqs = f.podRequestList(pod)
	}
	return f.score(nodeInfo, reqs)
}

// ScoreExtensions: none, scores are already in range.
func (*Fit) ScoreExtensions() framework.ScoreExtensions { return nil }

// EventsToRegister: a scheduled (or nominated) pod deleted or scaled
// down frees room; a node added or with more allocatable has room.
// Pod covers scheduled and pending pods (the queue matches a registered
// Pod against UnscheduledPod events, as upstream): the pending pod
// itself scaling down may make it fit.
func (f *Fit) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	podActions := framework.Delete | framework.UpdatePodScaleDown
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: podActions}, QueueingHintFn: f.isSchedulableAfterPodEvent},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeAllocatable}, QueueingHintFn: f.isSchedulableAfterNodeChange},
	}, nil
}

// isSchedulableAfterPodEvent: any deletion of a scheduled or nominated
// pod may free room; a scale-down helps when it is the pod itself, or a
// scheduled pod releasing a resource the pod requests.
func (f *Fit) isSchedulableAfterPodEvent(_ *slog.Logger, pod *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	original, modified, err := helper.As[*corev1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if modified == nil {
		if original == nil || (original.Spec.NodeName == "" && original.Status.NominatedNodeName == "") {
			return framework.QueueSkip, nil
		}
		return framework.Queue, nil
	}
	if original == nil || !isSchedulableAfterPodScaleDown(pod, original, modified) {
		return framework.QueueSkip, nil
	}
	return framework.Queue, nil
}

// isSchedulableAfterPodScaleDown: the scaled-down pod is the target, or
// a scheduled pod whose requests of a resource the target requests went
// down (actual requests count: status resources during a resize).
func isSchedulableAfterPodScaleDown(target, original, modified *corev1.Pod) bool {
	if modified.UID == target.UID {
		return true
	}
	if modified.Spec.NodeName == "" {
		return false
	}
	before, after := framework.PodRequests(original, false), framework.PodRequests(modified, false)
	want := framework.PodRequests(target, false)
	if (want.MilliCPU != 0 && before.MilliCPU > after.MilliCPU) ||
		(want.Memory != 0 && before.Memory > after.Memory) ||
		(want.EphemeralStorage != 0 && before.EphemeralStorage > after.EphemeralStorage) {
		return true
	}
	for name, v := range want.ScalarResources {
		if v != 0 && before.ScalarResources[name] > after.ScalarResources[name] {
			return true
		}
	}
	return false
}

// isSchedulableAfterNodeChange: the node (alone) must fit the pod; an
// added node then helps, an updated one only when the allocatable of a
// requested resource (or the pod count) went up.
func (f *Fit) isSchedulableAfterNodeChange(_ *slog.Logger, pod *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	original, modified, err := helper.As[*corev1.Node](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if !isFit(pod, modified) {
		return framework.QueueSkip, nil
	}
	if original == nil {
		return framework.Queue, nil
	}
	if !haveAnyRequestedResourcesIncreased(pod, original, modified) {
		return framework.QueueSkip, nil
	}
	return framework.Queue, nil
}

// haveAnyRequestedResourcesIncreased: the pod count, or the allocatable
// of a resource the pod requests, grew.
func haveAnyRequestedResourcesIncreased(pod *corev1.Pod, originalNode, modifiedNode *corev1.Node) bool {
	req := framework.PodRequests(pod, false)
	before, after := framework.NewResource(originalNode.Status.Allocatable), framework.NewResource(modifiedNode.Status.Allocatable)
	if after.AllowedPodNumber > before.AllowedPodNumber {
		return true
	}
	if req.MilliCPU == 0 && req.Memory == 0 && req.EphemeralStorage == 0 && len(req.ScalarResources) == 0 {
		return false
	}
	if (req.MilliCPU > 0 && after.MilliCPU > before.MilliCPU) ||
		(req.Memory > 0 && after.Memory > before.Memory) ||
		(req.EphemeralStorage > 0 && after.EphemeralStorage > before.EphemeralStorage) {
		return true
	}
	for name, v := range req.ScalarResources {
		if v != 0 && after.ScalarResources[name] > before.ScalarResources[name] {
			return true
		}
	}
	return false
}

// isFit: the pod fits the node when it holds nothing else (false for no
// node).
func isFit(pod *corev1.Pod, node *corev1.Node) bool {
	if node == nil {
		return false
	}
	ni := framework.NewNodeInfo()
	ni.SetNode(node)
	return len(Fits(pod, ni)) == 0
}
