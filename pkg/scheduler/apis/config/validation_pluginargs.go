package config

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The validation of the in-tree plugins' args, with upstream's rules,
// field paths (relative to path) and messages. The args are expected
// defaulted (nil pointers count as zero).

var supportedScoringStrategyTypes = []string{string(LeastAllocated), string(MostAllocated), string(RequestedToCapacityRatio)}

// ValidateDefaultPreemptionArgs: percentage in [0, 100], absolute >= 0, not both 0.
func ValidateDefaultPreemptionArgs(path *field.Path, args *DefaultPreemptionArgs) field.ErrorList {
	var errs field.ErrorList
	pct, abs := deref(args.MinCandidateNodesPercentage), deref(args.MinCandidateNodesAbsolute)
	pctPath, absPath := path.Child("minCandidateNodesPercentage"), path.Child("minCandidateNodesAbsolute")
	if pct < 0 || pct > 100 {
		errs = append(errs, field.Invalid(pctPath, pct, "not in valid range [0, 100]"))
	}
	if abs < 0 {
		errs = append(errs, field.Invalid(absPath, abs, "not in valid range [0, inf)"))
	}
	if pct == 0 && abs == 0 {
		errs = append(errs,
			field.Invalid(pctPath, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"),
			field.Invalid(absPath, abs, "cannot be zero at the same time as minCandidateNodesPercentage"))
	}
	return errs
}

// ValidateInterPodAffinityArgs: hardPodAffinityWeight in [0, 100].
func ValidateInterPodAffinityArgs(path *field.Path, args *InterPodAffinityArgs) field.ErrorList {
	w := deref(args.HardPodAffinityWeight)
	if w < 0 || w > 100 {
		return field.ErrorList{field.Invalid(path.Child("hardPodAffinityWeight"), w, "not in valid range [0, 100]")}
	}
	return nil
}

// ValidatePodTopologySpreadArgs: defaultingType System or List (System
// without defaultConstraints); each constraint with maxSkew > 0, a valid
// topologyKey, whenUnsatisfiable DoNotSchedule|ScheduleAnyway, no
// labelSelector, no repeated {topologyKey, whenUnsatisfiable}.
func ValidatePodTopologySpreadArgs(path *field.Path, args *PodTopologySpreadArgs) field.ErrorList {
	var errs field.ErrorList
	dtPath := path.Child("defaultingType")
	switch {
	case args.DefaultingType != SystemDefaulting && args.DefaultingType != ListDefaulting:
		errs = append(errs, field.NotSupported(dtPath, args.DefaultingType, []string{string(SystemDefaulting), string(ListDefaulting)}))
	case args.DefaultingType == SystemDefaulting && len(args.DefaultConstraints) > 0:
		errs = append(errs, field.Invalid(dtPath, args.DefaultingType, "when .defaultConstraints are not empty"))
	}
	dcPath := path.Child("defaultConstraints")
	for i, c := range args.DefaultConstraints {
		p := dcPath.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, "not in valid range (0, inf)"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
		} else {
			errs = append(errs, metav1validation.ValidateLabelName(c.TopologyKey, p.Child("topologyKey"))...)
		}
		switch c.WhenUnsatisfiable {
		case "":
			errs = append(errs, field.Required(p.Child("whenUnsatisfiable"), "can not be empty"))
		case corev1.DoNotSchedule, corev1.ScheduleAnyway:
		default:
			errs = append(errs, field.NotSupported(p.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, []string{string(corev1.DoNotSchedule), string(corev1.ScheduleAnyway)}))
		}
		if c.LabelSelector != nil {
			errs = append(errs, field.Forbidden(p.Child("labelSelector"), "constraint must not define a selector, as they deduced for each pod"))
		}
		for j := 0; j < i; j++ {
			o := args.DefaultConstraints[j]
			if o.TopologyKey == c.TopologyKey && o.WhenUnsatisfiable == c.WhenUnsatisfiable {
				errs = append(errs, field.Duplicate(dcPath.Index(i), fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
	}
	return errs
}

func validateFunctionShape(shape []UtilizationShapePoint, path *field.Path) field.ErrorList {
	const maxScore = int32(MaxCustomPriorityScore)
	var errs field.ErrorList
	if len(shape) == 0 {
		return field.ErrorList{field.Required(path, "at least one point must be specified")}
	}
	for i := 1; i < len(shape); i++ {
		if shape[i-1].Utilization >= shape[i].Utilization {
			errs = append(errs, field.Invalid(path.Index(i).Child("utilization"), shape[i].Utilization, "values must be sorted in increasing order"))
			break
		}
	}
	for i, pt := range shape {
		if pt.Utilization < 0 || pt.Utilization > 100 {
			errs = append(errs, field.Invalid(path.Index(i).Child("utilization"), pt.Utilization, "not in valid range [0, 100]"))
		}
		if pt.Score < 0 || pt.Score > maxScore {
			errs = append(errs, field.Invalid(path.Index(i).Child("score"), pt.Score, fmt.Sprintf("not in valid range [0, %d]", maxScore)))
		}
	}
	return errs
}

// ValidateNodeResourcesBalancedAllocationArgs: unique resource names, weights 1.
func ValidateNodeResourcesBalancedAllocationArgs(path *field.Path, args *NodeResourcesBalancedAllocationArgs) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, r := range args.Resources {
		p := path.Child("resources").Index(i)
		if seen[r.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), r.Name))
		}
		seen[r.Name] = true
		if r.Weight != 1 {
			errs = append(errs, field.Invalid(p.Child("weight"), r.Weight, "must be 1"))
		}
	}
	return errs
}

// ValidateNodeAffinityArgs: addedAffinity's terms must parse as node
// selectors (operators, label keys and values; matchFields only In/NotIn
// with one value).
func ValidateNodeAffinityArgs(path *field.Path, args *NodeAffinityArgs) field.ErrorList {
	if args.AddedAffinity == nil {
		return nil
	}
	var errs field.ErrorList
	aff := args.AddedAffinity
	if ns := aff.RequiredDuringSchedulingIgnoredDuringExecution; ns != nil {
		tp := path.Child("addedAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
		for i := range ns.NodeSelectorTerms {
			errs = append(errs, validateNodeSelectorTerm(&ns.NodeSelectorTerms[i], tp.Index(i))...)
		}
	}
	pp := path.Child("addedAffinity", "preferredDuringSchedulingIgnoredDuringExecution")
	for i := range aff.PreferredDuringSchedulingIgnoredDuringExecution {
		t := &aff.PreferredDuringSchedulingIgnoredDuringExecution[i]
		if t.Weight == 0 {
			continue // upstream skips terms of weight 0
		}
		errs = append(errs, validateNodeSelectorTerm(&t.Preference, pp.Index(i))...)
	}
	return errs
}

var labelOps = map[corev1.NodeSelectorOperator]selection.Operator{
	corev1.NodeSelectorOpIn:           selection.In,
	corev1.NodeSelectorOpNotIn:        selection.NotIn,
	corev1.NodeSelectorOpExists:       selection.Exists,
	corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	corev1.NodeSelectorOpGt:           selection.GreaterThan,
	corev1.NodeSelectorOpLt:           selection.LessThan,
}

func validateNodeSelectorTerm(term *corev1.NodeSelectorTerm, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, expr := range term.MatchExpressions {
		p := path.Child("matchExpressions").Index(i)
		op, ok := labelOps[expr.Operator]
		if !ok {
			errs = append(errs, field.NotSupported(p.Child("operator"), expr.Operator, []corev1.NodeSelectorOperator{
				corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists,
				corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt}))
			continue
		}
		_, err := labels.NewRequirement(expr.Key, op, expr.Values, field.WithPath(p))
		errs = append(errs, fieldErrors(p, expr, err)...)
	}
	for i, expr := range term.MatchFields {
		p := path.Child("matchFields").Index(i)
		switch expr.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			if len(expr.Values) != 1 {
				errs = append(errs, field.Invalid(p.Child("values"), expr.Values, "must have one element"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("operator"), expr.Operator, []corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn}))
		}
	}
	return errs
}

// ValidateVolumeBindingArgs: bindTimeoutSeconds >= 0; shape must be unset
// (StorageCapacityScoring is off in 1.34).
func ValidateVolumeBindingArgs(path *field.Path, args *VolumeBindingArgs) field.ErrorList {
	var errs field.ErrorList
	if t := deref(args.BindTimeoutSeconds); t < 0 {
		errs = append(errs, field.Invalid(path.Child("bindTimeoutSeconds"), t, "invalid BindTimeoutSeconds, should not be a negative value"))
	}
	if args.Shape != nil {
		errs = append(errs, field.Invalid(path.Child("shape"), args.Shape, "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"))
	}
	return errs
}

// ValidateNodeResourcesFitArgs: ignored resources are label names, groups
// have no '/', scoring strategy type supported, resource weights in (0, 100],
// the RequestedToCapacityRatio shape valid (reported under
// scoringStrategy.shape, as upstream).
func ValidateNodeResourcesFitArgs(path *field.Path, args *NodeResourcesFitArgs) field.ErrorList {
	var errs field.ErrorList
	for i, r := range args.IgnoredResources {
		errs = append(errs, metav1validation.ValidateLabelName(r, path.Child("ignoredResources").Index(i))...)
	}
	for i, g := range args.IgnoredResourceGroups {
		p := path.Child("ignoredResourceGroups").Index(i)
		if strings.Contains(g, "/") {
			errs = append(errs, field.Invalid(p, g, "resource group name can't contain '/'"))
		}
		errs = append(errs, metav1validation.ValidateLabelName(g, p)...)
	}
	if s := args.ScoringStrategy; s != nil {
		sp := path.Child("scoringStrategy")
		switch s.Type {
		case LeastAllocated, MostAllocated, RequestedToCapacityRatio:
		default:
			errs = append(errs, field.NotSupported(sp.Child("type"), s.Type, supportedScoringStrategyTypes))
		}
		for i, r := range s.Resources {
			if r.Weight <= 0 || r.Weight > 100 {
				errs = append(errs, field.Invalid(sp.Child("resources").Index(i).Child("weight"), r.Weight,
					fmt.Sprintf("resource weight of %v not in valid range (0, 100]", r.Name)))
			}
		}
		if s.RequestedToCapacityRatio != nil {
			errs = append(errs, validateFunctionShape(s.RequestedToCapacityRatio.Shape, sp.Child("shape"))...)
		}
	}
	return errs
}

// ValidateDynamicResourcesArgs: filterTimeout >= 0.
func ValidateDynamicResourcesArgs(path *field.Path, args *DynamicResourcesArgs) field.ErrorList {
	if args.FilterTimeout != nil && args.FilterTimeout.Duration < 0 {
		return field.ErrorList{field.Invalid(path.Child("filterTimeout"), args.FilterTimeout, "must be zero or positive")}
	}
	return nil
}
