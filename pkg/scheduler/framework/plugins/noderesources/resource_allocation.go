package noderesources

import (
	"math"

	corev1 "k8s.io/api/core/v1"

	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// strategy is how resourceAllocationScorer turns per-resource
// (requested, allocatable) pairs into a node score.
type strategy int

const (
	leastAllocated strategy = iota
	mostAllocated
	requestedToCapacityRatio
	balancedAllocation
)

// resourceKind says where a scored resource lives in a Resource, so that
// Score does no string comparison per node.
type resourceKind int

const (
	kindCPU resourceKind = iota
	kindMemory
	kindEphemeralStorage
	// kindScalar: in ScalarResources (extended, hugepages, ...).
	kindScalar
	// kindOther: a resource the node's Resource never holds (pods,
	// storage): it scores (0, 0) and is bypassed, as upstream.
	kindOther
)

type scoredResource struct {
	name   corev1.ResourceName
	kind   resourceKind
	weight int64
}

// resourceAllocationScorer scores a node from the node's requests plus
// the pod's, per configured resource.
type resourceAllocationScorer struct {
	name      string
	strategy  strategy
	shape     func(int64) int64
	resources []scoredResource
	// useRequested: score over real requests (BalancedAllocation);
	// otherwise over the non-zero requests for cpu and memory.
	useRequested bool
	// podLevel: the pod's requests include its pod-level requests and
	// its containers' actual (status) ones (BalancedAllocation). Upstream
	// builds NodeResourcesFit's scorer without its PodLevelResources and
	// InPlacePodVerticalScaling flags: Fit scores the container requests
	// of the spec alone (its Filter does count pod-level requests).
	podLevel bool
}

// maxStackResources bounds the per-node scratch arrays kept on the stack.
const maxStackResources = 8

func (r *resourceAllocationScorer) setResources(specs []config.ResourceSpec) {
	r.resources = make([]scoredResource, len(specs))
	for i, s := range specs {
		name := corev1.ResourceName(s.Name)
		kind := kindOther
		switch {
		case name == corev1.ResourceCPU:
			kind = kindCPU
		case name == corev1.ResourceMemory:
			kind = kindMemory
		case name == corev1.ResourceEphemeralStorage:
			kind = kindEphemeralStorage
		case framework.IsScalarResourceName(name):
			kind = kindScalar
		}
		r.resources[i] = scoredResource{name: name, kind: kind, weight: s.Weight}
	}
}

// podRequestList is the pod's request of each scored resource: non-zero
// requests unless useRequested; pod-level and status requests only with
// podLevel.
func (r *resourceAllocationScorer) podRequestList(pod *corev1.Pod) []int64 {
	req := framework.PodRequestsWith(pod, framework.PodRequestsOptions{NonZeroCPU: !r.useRequested, NonZeroMemory: !r.useRequested,
		SkipPodLevel: !r.podLevel, SkipStatus: !r.podLevel})
	out := make([]int64, len(r.resources))
	for i := range r.resources {
		out[i] = req.Get(r.resources[i].name)
	}
	return out
}

// allocatableRequested is the node's allocatable of resource i and its
// requests after adding the pod's; (0, 0) bypasses the resource (a
// scalar resource the pod does not request, or one the node lacks).
func (r *resourceAllocationScorer) allocatableRequested(nodeInfo *framework.NodeInfo, i int, podRequest int64) (int64, int64) {
	res := &r.resources[i]
	requested := nodeInfo.NonZeroRequested
	if r.useRequested {
		requested = nodeInfo.Requested
	}
	switch res.kind {
	case kindCPU:
		return nodeInfo.Allocatable.MilliCPU, requested.MilliCPU + podRequest
	case kindMemory:
		return nodeInfo.Allocatable.Memory, requested.Memory + podRequest
	case kindEphemeralStorage:
		return nodeInfo.Allocatable.EphemeralStorage, nodeInfo.Requested.EphemeralStorage + podRequest
	case kindScalar:
		if podRequest == 0 {
			return 0, 0
		}
		if alloc, ok := nodeInfo.Allocatable.ScalarResources[res.name]; ok {
			return alloc, nodeInfo.Requested.ScalarResources[res.name] + podRequest
		}
	}
	return 0, 0
}

// score computes the node's score for the pod's per-resource requests.
func (r *resourceAllocationScorer) score(nodeInfo *framework.NodeInfo, podRequests []int64) (int64, *framework.Status) {
	n := len(r.resources)
	if n == 0 {
		return 0, framework.NewStatus(framework.Error, "resources not found")
	}
	var reqBuf, allocBuf [maxStackResources]int64
	requested, allocatable := reqBuf[:0], allocBuf[:0]
	if n > maxStackResources {
		requested, allocatable = make([]int64, 0, n), make([]int64, 0, n)
	}
	requested, allocatable = requested[:n], allocatable[:n]
	for i := range r.resources {
		alloc, req := r.allocatableRequested(nodeInfo, i, podRequests[i])
		if alloc == 0 {
			requested[i], allocatable[i] = 0, 0
			continue
		}
		allocatable[i], requested[i] = alloc, req
	}
	switch r.strategy {
	case leastAllocated:
		return r.weightedScore(requested, allocatable, leastRequestedScore), nil
	case mostAllocated:
		return r.weightedScore(requested, allocatable, mostRequestedScore), nil
	case requestedToCapacityRatio:
		return r.ratioScore(requested, allocatable), nil
	default:
		return balancedResourceScore(requested, allocatable), nil
	}
}

// weightedScore is the weighted mean of per-resource scores over the
// resources the node has (integer division, as upstream).
func (r *resourceAllocationScorer) weightedScore(requested, allocatable []int64, f func(requested, capacity int64) int64) int64 {
	var nodeScore, weightSum int64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		w := r.resources[i].weight
		nodeScore += f(requested[i], allocatable[i]) * w
		weightSum += w
	}
	if weightSum == 0 {
		return 0
	}
	return nodeScore / weightSum
}

// leastRequestedScore favours free capacity: (capacity-requested)/capacity.
func leastRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 || requested > capacity {
		return 0
	}
	return (capacity - requested) * framework.MaxNodeScore / capacity
}

// mostRequestedScore favours used capacity: requested/capacity (capped).
func mostRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 {
		return 0
	}
	if requested > capacity {
		requested = capacity
	}
	return requested * framework.MaxNodeScore / capacity
}

// maxUtilization is the utilization of a full resource in the shape.
const maxUtilization = 100

// ratioScore is RequestedToCapacityRatio: the shape at each resource's
// utilization, weighted over the resources scoring above 0, rounded.
func (r *resourceAllocationScorer) ratioScore(requested, allocatable []int64) int64 {
	var nodeScore, weightSum int64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		var s int64
		if requested[i] > allocatable[i] {
			s = r.shape(maxUtilization)
		} else {
			s = r.shape(requested[i] * maxUtilization / allocatable[i])
		}
		if s > 0 {
			w := r.resources[i].weight
			nodeScore += s * w
			weightSum += w
		}
	}
	if weightSum == 0 {
		return 0
	}
	return int64(math.Round(float64(nodeScore) / float64(weightSum)))
}

// balancedResourceScore is (1 - std) × 100 of the requested fractions
// (each capped at 1) of the resources the node has: |f1-f2|/2 for two,
// the population standard deviation for more, 0 for one.
func balancedResourceScore(requested, allocatable []int64) int64 {
	var fracBuf [maxStackResources]float64
	fractions := fracBuf[:0]
	var total float64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		f := float64(requested[i]) / float64(allocatable[i])
		if f > 1 {
			f = 1
		}
		total += f
		fractions = append(fractions, f)
	}
	std := 0.0
	switch n := len(fractions); {
	case n == 2:
		std = math.Abs((fractions[0] - fractions[1]) / 2)
	case n > 2:
		mean := total / float64(n)
		var sum float64
		for _, f := range fractions {
			sum += (f - mean) * (f - mean)
		}
		std = math.Sqrt(sum / float64(n))
	}
	return int64((1 - std) * float64(framework.MaxNodeScore))
}
