package autoscaling

import (
	"fmt"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Limits on the behavior field, as upstream.
const (
	maxPeriodSeconds              int32 = 1800
	maxStabilizationWindowSeconds int32 = 3600
)

// ValidateHorizontalPodAutoscaler validates a new HPA (autoscaling/v2 form,
// after defaulting).
func ValidateHorizontalPodAutoscaler(hpa *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&hpa.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	// minReplicas 0 needs the alpha HPAScaleToZero feature gate, which skiff
	// does not offer, so new HPAs need at least 1.
	return append(allErrs, validateSpec(&hpa.Spec, field.NewPath("spec"), 1)...)
}

// ValidateHorizontalPodAutoscalerUpdate validates an update of the main
// resource. The whole spec is mutable.
func ValidateHorizontalPodAutoscalerUpdate(hpa, old *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&hpa.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	// An HPA that already has minReplicas 0 (created where the gate was on)
	// may keep it.
	minReplicasLowerBound := int32(1)
	if old.Spec.MinReplicas != nil && *old.Spec.MinReplicas == 0 {
		minReplicasLowerBound = 0
	}
	return append(allErrs, validateSpec(&hpa.Spec, field.NewPath("spec"), minReplicasLowerBound)...)
}

// ValidateHorizontalPodAutoscalerStatusUpdate validates a write to the
// status subresource.
func ValidateHorizontalPodAutoscalerStatusUpdate(hpa, old *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&hpa.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	status := field.NewPath("status")
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(hpa.Status.CurrentReplicas), status.Child("currentReplicas"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(hpa.Status.DesiredReplicas), status.Child("desiredReplicas"))...)
	return allErrs
}

func validateSpec(spec *autoscalingv2.HorizontalPodAutoscalerSpec, fldPath *field.Path, minReplicasLowerBound int32) field.ErrorList {
	var allErrs field.ErrorList
	if spec.MinReplicas != nil && *spec.MinReplicas < minReplicasLowerBound {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("minReplicas"), *spec.MinReplicas,
			fmt.Sprintf("must be greater than or equal to %d", minReplicasLowerBound)))
	}
	if spec.MaxReplicas < 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("maxReplicas"), spec.MaxReplicas, "must be greater than 0"))
	}
	if spec.MinReplicas != nil && spec.MaxReplicas < *spec.MinReplicas {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("maxReplicas"), spec.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	allErrs = append(allErrs, validateCrossVersionObjectReference(spec.ScaleTargetRef, fldPath.Child("scaleTargetRef"))...)
	allErrs = append(allErrs, validateMetrics(spec.Metrics, fldPath.Child("metrics"), spec.MinReplicas)...)
	if spec.Behavior != nil {
		allErrs = append(allErrs, validateScalingRules(spec.Behavior.ScaleUp, fldPath.Child("behavior", "scaleUp"))...)
		allErrs = append(allErrs, validateScalingRules(spec.Behavior.ScaleDown, fldPath.Child("behavior", "scaleDown"))...)
	}
	return allErrs
}

// validateCrossVersionObjectReference checks a reference to another object
// (the scale target, or the object an Object metric describes). Kind and name
// end up in a URL path, hence the path-segment rules.
func validateCrossVersionObjectReference(ref autoscalingv2.CrossVersionObjectReference, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	allErrs = append(allErrs, requiredPathSegment(ref.Kind, fldPath.Child("kind"))...)
	allErrs = append(allErrs, requiredPathSegment(ref.Name, fldPath.Child("name"))...)
	return allErrs
}

func requiredPathSegment(value string, fldPath *field.Path) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var allErrs field.ErrorList
	for _, msg := range content.IsPathSegmentName(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

func validateMetrics(metrics []autoscalingv2.MetricSpec, fldPath *field.Path, minReplicas *int32) field.ErrorList {
	var allErrs field.ErrorList
	hasObjectOrExternal := false
	for i := range metrics {
		allErrs = append(allErrs, validateMetricSpec(&metrics[i], fldPath.Index(i))...)
		switch metrics[i].Type {
		case autoscalingv2.ObjectMetricSourceType, autoscalingv2.ExternalMetricSourceType:
			hasObjectOrExternal = true
		}
	}
	// With zero pods there are no pod metrics to wake the target up again.
	if minReplicas != nil && *minReplicas == 0 && !hasObjectOrExternal {
		allErrs = append(allErrs, field.Forbidden(fldPath, "must specify at least one Object or External metric to support scaling to zero replicas"))
	}
	return allErrs
}

// metricSourceTypes lists the valid metric types, sorted as upstream prints them.
func metricSourceTypes() []string {
	return []string{"ContainerResource", "External", "Object", "Pods", "Resource"}
}

// validateMetricSpec checks that spec.Type names exactly one populated source
// and validates that source. Like upstream, only the first populated source
// (in the order object, external, pods, resource, containerResource) is
// validated in depth; the others are reported as forbidden extras.
func validateMetricSpec(spec *autoscalingv2.MetricSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList

	type source struct {
		field    string
		present  bool
		validate func() field.ErrorList
	}
	sources := []source{
		{"object", spec.Object != nil, func() field.ErrorList { return validateObjectSource(spec.Object, fldPath.Child("object")) }},
		{"external", spec.External != nil, func() field.ErrorList { return validateExternalSource(spec.External, fldPath.Child("external")) }},
		{"pods", spec.Pods != nil, func() field.ErrorList { return validatePodsSource(spec.Pods, fldPath.Child("pods")) }},
		{"resource", spec.Resource != nil, func() field.ErrorList { return validateResourceSource(spec.Resource, fldPath.Child("resource")) }},
		{"containerResource", spec.ContainerResource != nil, func() field.ErrorList {
			return validateContainerResourceSource(spec.ContainerResource, fldPath.Child("containerResource"))
		}},
	}

	validated := false
	for _, s := range sources {
		if s.present && !validated {
			allErrs = append(allErrs, s.validate()...)
			validated = true
		}
	}

	// The field that spec.Type asks for, e.g. "Pods" -> "pods".
	expected := ""
	switch spec.Type {
	case "":
		allErrs = append(allErrs, field.Required(fldPath.Child("type"), "must specify a metric source type"))
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), spec.Type, metricSourceTypes()))
	case autoscalingv2.ContainerResourceMetricSourceType:
		expected = "containerResource"
	case autoscalingv2.ObjectMetricSourceType, autoscalingv2.ExternalMetricSourceType,
		autoscalingv2.PodsMetricSourceType, autoscalingv2.ResourceMetricSourceType:
		expected = strings.ToLower(string(spec.Type))
	default:
		// Upstream reports this twice; once is enough.
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), spec.Type, metricSourceTypes()))
	}

	present := 0
	for _, s := range sources {
		if s.present {
			present++
		}
		if s.field == expected && !s.present {
			allErrs = append(allErrs, field.Required(fldPath.Child(expected), "must populate information for the given metric source"))
		}
	}
	if present > 1 {
		for _, s := range sources {
			if s.present && s.field != expected {
				allErrs = append(allErrs, field.Forbidden(fldPath.Child(s.field), "must populate the given metric source only"))
			}
		}
	}
	return allErrs
}

func validateObjectSource(src *autoscalingv2.ObjectMetricSource, fldPath *field.Path) field.ErrorList {
	allErrs := validateCrossVersionObjectReference(src.DescribedObject, fldPath.Child("describedObject"))
	allErrs = append(allErrs, validateMetricIdentifier(src.Metric, fldPath.Child("metric"))...)
	allErrs = append(allErrs, validateMetricTarget(src.Target, fldPath.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("target", "averageValue"), "must set either a target value or averageValue"))
	}
	return allErrs
}

func validateExternalSource(src *autoscalingv2.ExternalMetricSource, fldPath *field.Path) field.ErrorList {
	allErrs := validateMetricIdentifier(src.Metric, fldPath.Child("metric"))
	allErrs = append(allErrs, validateMetricTarget(src.Target, fldPath.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("target", "averageValue"), "must set either a target value for metric or a per-pod target"))
	}
	if src.Target.Value != nil && src.Target.AverageValue != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("target", "value"), "may not set both a target value for metric and a per-pod target"))
	}
	return allErrs
}

func validatePodsSource(src *autoscalingv2.PodsMetricSource, fldPath *field.Path) field.ErrorList {
	allErrs := validateMetricIdentifier(src.Metric, fldPath.Child("metric"))
	allErrs = append(allErrs, validateMetricTarget(src.Target, fldPath.Child("target"))...)
	if src.Target.AverageValue == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("target", "averageValue"), "must specify a positive target averageValue"))
	}
	return allErrs
}

func validateResourceSource(src *autoscalingv2.ResourceMetricSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if src.Name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), "must specify a resource name"))
	}
	allErrs = append(allErrs, validateMetricTarget(src.Target, fldPath.Child("target"))...)
	return append(allErrs, validateUtilizationOrValue(src.Target, fldPath.Child("target"))...)
}

func validateContainerResourceSource(src *autoscalingv2.ContainerResourceMetricSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if src.Name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), "must specify a resource name"))
	} else {
		allErrs = append(allErrs, validateContainerResourceName(string(src.Name), fldPath.Child("name"))...)
	}
	if src.Container == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("container"), "must specify a container"))
	} else {
		for _, msg := range content.IsDNS1123Label(src.Container) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("container"), src.Container, msg))
		}
	}
	allErrs = append(allErrs, validateMetricTarget(src.Target, fldPath.Child("target"))...)
	return append(allErrs, validateUtilizationOrValue(src.Target, fldPath.Child("target"))...)
}

// validateContainerResourceName is a simplified form of upstream's check: a
// plain name must be a standard container resource, a prefixed name must be
// a qualified name (upstream also checks the extended-resource rules).
func validateContainerResourceName(name string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range content.IsQualifiedName(name) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	if !strings.Contains(name, "/") {
		switch {
		case name == "cpu", name == "memory", name == "ephemeral-storage", strings.HasPrefix(name, "hugepages-"):
		default:
			allErrs = append(allErrs, field.Invalid(fldPath, name, "must be a standard resource for containers"))
		}
	}
	return allErrs
}

// validateUtilizationOrValue: resource metrics are either a percentage of the
// pods' requests or a raw average, never both.
func validateUtilizationOrValue(target autoscalingv2.MetricTarget, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if target.AverageUtilization == nil && target.AverageValue == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("averageUtilization"), "must set either a target raw value or a target utilization"))
	}
	if target.AverageUtilization != nil && target.AverageValue != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("averageValue"), "may not set both a target raw value and a target utilization"))
	}
	return allErrs
}

func validateMetricTarget(mt autoscalingv2.MetricTarget, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if mt.Type == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("type"), "must specify a metric target type"))
	}
	switch mt.Type {
	case autoscalingv2.UtilizationMetricType, autoscalingv2.ValueMetricType, autoscalingv2.AverageValueMetricType:
	default:
		allErrs = append(allErrs, field.Invalid(fldPath.Child("type"), mt.Type, "must be either Utilization, Value, or AverageValue"))
	}
	if mt.Value != nil && mt.Value.Sign() != 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("value"), mt.Value, "must be positive"))
	}
	if mt.AverageValue != nil && mt.AverageValue.Sign() != 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("averageValue"), mt.AverageValue, "must be positive"))
	}
	if mt.AverageUtilization != nil && *mt.AverageUtilization < 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("averageUtilization"), mt.AverageUtilization, "must be greater than 0"))
	}
	return allErrs
}

func validateMetricIdentifier(id autoscalingv2.MetricIdentifier, fldPath *field.Path) field.ErrorList {
	if id.Name == "" {
		return field.ErrorList{field.Required(fldPath.Child("name"), "must specify a metric name")}
	}
	var allErrs field.ErrorList
	for _, msg := range content.IsPathSegmentName(id.Name) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), id.Name, msg))
	}
	return allErrs
}

func validateScalingRules(rules *autoscalingv2.HPAScalingRules, fldPath *field.Path) field.ErrorList {
	if rules == nil {
		return nil
	}
	var allErrs field.ErrorList
	if w := rules.StabilizationWindowSeconds; w != nil {
		if *w < 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("stabilizationWindowSeconds"), w, "must be greater than or equal to zero"))
		}
		if *w > maxStabilizationWindowSeconds {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("stabilizationWindowSeconds"), w,
				fmt.Sprintf("must be less than or equal to %v", maxStabilizationWindowSeconds)))
		}
	}
	if p := rules.SelectPolicy; p != nil {
		switch *p {
		case autoscalingv2.MaxChangePolicySelect, autoscalingv2.MinChangePolicySelect, autoscalingv2.DisabledPolicySelect:
		default:
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("selectPolicy"), p, []string{"Disabled", "Max", "Min"}))
		}
	}
	if t := rules.Tolerance; t != nil && t.Sign() < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("tolerance"), t, "must be greater than or equal to zero"))
	}
	policiesPath := fldPath.Child("policies")
	if len(rules.Policies) == 0 {
		allErrs = append(allErrs, field.Required(policiesPath, "must specify at least one Policy"))
	}
	for i, policy := range rules.Policies {
		allErrs = append(allErrs, validateScalingPolicy(policy, policiesPath.Index(i))...)
	}
	return allErrs
}

func validateScalingPolicy(policy autoscalingv2.HPAScalingPolicy, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if policy.Type != autoscalingv2.PodsScalingPolicy && policy.Type != autoscalingv2.PercentScalingPolicy {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), policy.Type, []string{"Percent", "Pods"}))
	}
	if policy.Value <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("value"), policy.Value, "must be greater than zero"))
	}
	if policy.PeriodSeconds <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("periodSeconds"), policy.PeriodSeconds, "must be greater than zero"))
	}
	if policy.PeriodSeconds > maxPeriodSeconds {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("periodSeconds"), policy.PeriodSeconds,
			fmt.Sprintf("must be less than or equal to %v", maxPeriodSeconds)))
	}
	return allErrs
}
