package config

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
)

// The args types of the in-tree plugins, in upstream's v1 wire shape. Each
// is a runtime.Object (kind "<Plugin>Args" in kubescheduler.config.k8s.io/v1)
// so that a plugin factory receives it as upstream's do. After SetDefaults
// their pointer fields are set.

// DefaultPreemptionArgs are the args of DefaultPreemption.
type DefaultPreemptionArgs struct {
	metav1.TypeMeta `json:",inline"`
	// MinCandidateNodesPercentage: share of nodes to dry-run preemption on
	// (default 10).
	MinCandidateNodesPercentage *int32 `json:"minCandidateNodesPercentage,omitempty"`
	// MinCandidateNodesAbsolute: minimum number of candidates (default 100).
	MinCandidateNodesAbsolute *int32 `json:"minCandidateNodesAbsolute,omitempty"`
}

// InterPodAffinityArgs are the args of InterPodAffinity.
type InterPodAffinityArgs struct {
	metav1.TypeMeta `json:",inline"`
	// HardPodAffinityWeight is the score weight of existing pods' required
	// affinity terms matching the incoming pod (default 1, 0..100).
	HardPodAffinityWeight *int32 `json:"hardPodAffinityWeight,omitempty"`
	// IgnorePreferredTermsOfExistingPods ignores existing pods' preferred
	// terms when scoring.
	IgnorePreferredTermsOfExistingPods bool `json:"ignorePreferredTermsOfExistingPods"`
}

// NodeResourcesFitArgs are the args of NodeResourcesFit.
type NodeResourcesFitArgs struct {
	metav1.TypeMeta `json:",inline"`
	// IgnoredResources are resource names the filter ignores.
	IgnoredResources []string `json:"ignoredResources,omitempty"`
	// IgnoredResourceGroups are resource name prefixes ("example.com" for
	// "example.com/foo") the filter ignores.
	IgnoredResourceGroups []string `json:"ignoredResourceGroups,omitempty"`
	// ScoringStrategy (default LeastAllocated over cpu:1, memory:1).
	ScoringStrategy *ScoringStrategy `json:"scoringStrategy,omitempty"`
}

// PodTopologySpreadConstraintsDefaulting says how default constraints are chosen.
type PodTopologySpreadConstraintsDefaulting string

const (
	// SystemDefaulting uses SystemDefaultConstraints.
	SystemDefaulting PodTopologySpreadConstraintsDefaulting = "System"
	// ListDefaulting uses PodTopologySpreadArgs.DefaultConstraints.
	ListDefaulting PodTopologySpreadConstraintsDefaulting = "List"
)

// SystemDefaultConstraints are the constraints PodTopologySpread applies to
// pods without their own when defaultingType is System (upstream's
// systemDefaultConstraints). The caller must not modify them.
var SystemDefaultConstraints = []corev1.TopologySpreadConstraint{
	{TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway, MaxSkew: 3},
	{TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.ScheduleAnyway, MaxSkew: 5},
}

// PodTopologySpreadArgs are the args of PodTopologySpread.
type PodTopologySpreadArgs struct {
	metav1.TypeMeta `json:",inline"`
	// DefaultConstraints apply to pods without constraints of their own
	// when DefaultingType is List; they must not have a labelSelector.
	DefaultConstraints []corev1.TopologySpreadConstraint `json:"defaultConstraints,omitempty"`
	// DefaultingType is System (default) or List.
	DefaultingType PodTopologySpreadConstraintsDefaulting `json:"defaultingType,omitempty"`
}

// NodeResourcesBalancedAllocationArgs are the args of NodeResourcesBalancedAllocation.
type NodeResourcesBalancedAllocationArgs struct {
	metav1.TypeMeta `json:",inline"`
	// Resources to balance (default cpu and memory, weight 1; weights must be 1).
	Resources []ResourceSpec `json:"resources,omitempty"`
}

// UtilizationShapePoint is a point of a piecewise linear scoring function.
type UtilizationShapePoint struct {
	Utilization int32 `json:"utilization"`
	Score       int32 `json:"score"`
}

// ResourceSpec is a resource name with its weight.
type ResourceSpec struct {
	Name   string `json:"name"`
	Weight int64  `json:"weight,omitempty"`
}

// VolumeBindingArgs are the args of VolumeBinding.
type VolumeBindingArgs struct {
	metav1.TypeMeta `json:",inline"`
	// BindTimeoutSeconds bounds the wait for volume binding in PreBind
	// (default 600).
	BindTimeoutSeconds *int64 `json:"bindTimeoutSeconds,omitempty"`
	// Shape is the storage capacity scoring function; only with the
	// StorageCapacityScoring feature (alpha, off in 1.34): must be unset.
	Shape []UtilizationShapePoint `json:"shape,omitempty"`
}

// NodeAffinityArgs are the args of NodeAffinity.
type NodeAffinityArgs struct {
	metav1.TypeMeta `json:",inline"`
	// AddedAffinity is ANDed with every pod's own node affinity.
	AddedAffinity *corev1.NodeAffinity `json:"addedAffinity,omitempty"`
}

// DynamicResourcesArgs are the args of DynamicResources.
type DynamicResourcesArgs struct {
	metav1.TypeMeta `json:",inline"`
	// FilterTimeout bounds the Filter of one node (default 10s; 0 disables).
	FilterTimeout *metav1.Duration `json:"filterTimeout"`
}

// DynamicResourcesFilterTimeoutDefault is the default FilterTimeout.
const DynamicResourcesFilterTimeoutDefault = 10 * time.Second

// ScoringStrategyType names a NodeResourcesFit scoring strategy.
type ScoringStrategyType string

const (
	LeastAllocated           ScoringStrategyType = "LeastAllocated"
	MostAllocated            ScoringStrategyType = "MostAllocated"
	RequestedToCapacityRatio ScoringStrategyType = "RequestedToCapacityRatio"
)

// ScoringStrategy of NodeResourcesFit.
type ScoringStrategy struct {
	Type      ScoringStrategyType `json:"type,omitempty"`
	Resources []ResourceSpec      `json:"resources,omitempty"`
	// RequestedToCapacityRatio is used with type RequestedToCapacityRatio.
	RequestedToCapacityRatio *RequestedToCapacityRatioParam `json:"requestedToCapacityRatio,omitempty"`
}

// RequestedToCapacityRatioParam is the shape of the RequestedToCapacityRatio strategy.
type RequestedToCapacityRatioParam struct {
	Shape []UtilizationShapePoint `json:"shape,omitempty"`
}

// newArgs returns an empty args object for an in-tree plugin that has
// args, with its TypeMeta set; ok is false for other names.
func newArgs(plugin string) (obj runtime.Object, ok bool) {
	switch plugin {
	case names.DefaultPreemption:
		obj = &DefaultPreemptionArgs{}
	case names.InterPodAffinity:
		obj = &InterPodAffinityArgs{}
	case names.NodeResourcesFit:
		obj = &NodeResourcesFitArgs{}
	case names.PodTopologySpread:
		obj = &PodTopologySpreadArgs{}
	case names.NodeResourcesBalancedAllocation:
		obj = &NodeResourcesBalancedAllocationArgs{}
	case names.VolumeBinding:
		obj = &VolumeBindingArgs{}
	case names.NodeAffinity:
		obj = &NodeAffinityArgs{}
	case names.DynamicResources:
		obj = &DynamicResourcesArgs{}
	default:
		return nil, false
	}
	obj.GetObjectKind().SetGroupVersionKind(SchemeGroupVersion.WithKind(plugin + "Args"))
	return obj, true
}

// HasArgs reports whether the in-tree plugin name has a typed args kind.
func HasArgs(plugin string) bool {
	_, ok := newArgs(plugin)
	return ok
}

// DeepCopyObject implementations (runtime.Object).

func (a *DefaultPreemptionArgs) DeepCopyObject() runtime.Object {
	if a == nil {
		return nil
	}
	out := *a
	out.MinCandidateNodesPercentage = copyPtr(a.MinCandidateNodesPercentage)
	out.MinCandidateNodesAbsolute = copyPtr(a.MinCandidateNodesAbsolute)
	return &out
}

func (a *InterPodAffinityArgs) DeepCopyObject() runtime.Object {
	if a == nil {
		return nil
	}
	out := *a
	out.HardPodAffinityWeight = copyPtr(a.HardPodAffinityWeight)
	return &out
}

func (a *NodeResourcesFitArgs) DeepCopyObject() runtime.Object {
	if a == nil {
		return nil
	}
	out := *a
	out.IgnoredResources = copySlice(a.IgnoredResources)
	out.IgnoredResourceGroups = copySlice(a.IgnoredResourceGroups)
	if a.ScoringStrategy != nil {
		s := *a.ScoringStrategy
		s.Resources = copySlice(s.Resources)
		if s.RequestedToCapacityRatio != nil {
			r := RequestedToCapacityRatioParam{Shape: copySlice(s.RequestedToCapacityRatio.Shape)}
			s.RequestedToCapacityRatio = &r
		}
		out.ScoringStrategy = &s
	}
	return &out
}

func (a *PodTopologySpreadArgs) DeepCopyObject() runtime.Object {
	if a == nil {
		return nil
	}
	out := *a
	if a.DefaultConstraints != nil {
		out.DefaultConstraints = make([]corev1.TopologySpreadConstraint, len(a.DefaultConstraints))
		for i := range a.DefaultConstraints {
			a.DefaultConstraints[i].DeepCopyInto(&out.DefaultConstraints[i])
		}
	}
	return &out
}

func (a *NodeResourcesBalancedAllocationArgs) DeepCopyObject() runtime.Object {
	if a == nil {
		return nil
	}
	out := *a
	out.Resources = copySlice(a.Resources)
	return &out
}

func (a *VolumeBindingArgs) DeepCopyObject() runtime.Object {
	if a == nil {
		return nil
	}
	out := *a
	out.BindTimeoutSeconds = copyPtr(a.BindTimeoutSeconds)
	out.Shape = copySlice(a.Shape)
	return &out
}

func (a *NodeAffinityArgs) DeepCopyObject() runtime.Object {
	if a == nil {
		return nil
	}
	out := *a
	out.AddedAffinity = a.AddedAffinity.DeepCopy()
	return &out
}

func (a *DynamicResourcesArgs) DeepCopyObject() runtime.Object {
	if a == nil {
		return nil
	}
	out := *a
	out.FilterTimeout = copyPtr(a.FilterTimeout)
	return &out
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func copySlice[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}
