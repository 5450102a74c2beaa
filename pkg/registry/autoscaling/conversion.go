package autoscaling

import (
	"encoding/json"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// autoscaling/v1 can only say "target this CPU utilization". Everything else
// a v2 HPA holds travels through v1 in annotations, so that a v1 client doing
// read-modify-write (kubectl edit, an old controller) does not silently drop
// it. The names and encodings are upstream's, since clients (and tools such
// as Argo CD) know them.
const (
	// MetricSpecsAnnotation holds spec.metrics other than the CPU utilization
	// target, as JSON of []autoscalingv1.MetricSpec.
	MetricSpecsAnnotation = "autoscaling.alpha.kubernetes.io/metrics"
	// MetricStatusesAnnotation holds status.currentMetrics, as JSON of
	// []autoscalingv1.MetricStatus.
	MetricStatusesAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics"
	// BehaviorSpecsAnnotation holds spec.behavior. Upstream marshals its
	// internal type, which has no JSON tags, so the keys are Go field names
	// ("ScaleUp", "StabilizationWindowSeconds", ...); see behaviorJSON.
	BehaviorSpecsAnnotation = "autoscaling.alpha.kubernetes.io/behavior"
	// ConditionsAnnotation holds status.conditions, as JSON of
	// []autoscalingv1.HorizontalPodAutoscalerCondition.
	ConditionsAnnotation = "autoscaling.alpha.kubernetes.io/conditions"
)

// HPAv2ToV1 converts the storage form to autoscaling/v1. The input is not
// modified.
func HPAv2ToV1(in *autoscalingv2.HorizontalPodAutoscaler) (*autoscalingv1.HorizontalPodAutoscaler, error) {
	out := &autoscalingv1.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: *in.ObjectMeta.DeepCopy(),
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference(in.Spec.ScaleTargetRef),
			MinReplicas:    copyPtr(in.Spec.MinReplicas),
			MaxReplicas:    in.Spec.MaxReplicas,
		},
		Status: autoscalingv1.HorizontalPodAutoscalerStatus{
			ObservedGeneration: copyPtr(in.Status.ObservedGeneration),
			LastScaleTime:      in.Status.LastScaleTime.DeepCopy(),
			CurrentReplicas:    in.Status.CurrentReplicas,
			DesiredReplicas:    in.Status.DesiredReplicas,
		},
	}
	// Only annotations produced by this conversion may appear on the result:
	// stale ones a client sent back must not leak.
	dropRoundTripAnnotations(&out.ObjectMeta)

	// The first CPU resource metric becomes targetCPUUtilizationPercentage
	// when it is a utilization target. Every CPU utilization metric is left
	// out of the annotation; all other metrics go into it.
	firstCPU := true
	var otherMetrics []autoscalingv1.MetricSpec
	for i := range in.Spec.Metrics {
		m := &in.Spec.Metrics[i]
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU {
			if firstCPU && m.Resource.Target.AverageUtilization != nil {
				out.Spec.TargetCPUUtilizationPercentage = new(*m.Resource.Target.AverageUtilization)
			}
			firstCPU = false
			if m.Resource.Target.AverageUtilization != nil {
				continue
			}
		}
		otherMetrics = append(otherMetrics, metricSpecToV1(m))
	}

	// The CPU status is also kept in the annotation, which carries the raw
	// value as well as the utilization.
	currentMetrics := make([]autoscalingv1.MetricStatus, 0, len(in.Status.CurrentMetrics))
	for i := range in.Status.CurrentMetrics {
		m := &in.Status.CurrentMetrics[i]
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU &&
			m.Resource.Current.AverageUtilization != nil {
			out.Status.CurrentCPUUtilizationPercentage = new(*m.Resource.Current.AverageUtilization)
		}
		currentMetrics = append(currentMetrics, metricStatusToV1(m))
	}

	conditions := make([]autoscalingv1.HorizontalPodAutoscalerCondition, 0, len(in.Status.Conditions))
	for _, c := range in.Status.Conditions {
		conditions = append(conditions, autoscalingv1.HorizontalPodAutoscalerCondition{
			Type:               autoscalingv1.HorizontalPodAutoscalerConditionType(c.Type),
			Status:             c.Status,
			LastTransitionTime: c.LastTransitionTime,
			Reason:             c.Reason,
			Message:            c.Message,
			ObservedGeneration: copyPtr(c.ObservedGeneration),
		})
	}

	if len(otherMetrics) > 0 {
		if err := setJSONAnnotation(&out.ObjectMeta, MetricSpecsAnnotation, otherMetrics); err != nil {
			return nil, err
		}
	}
	if len(currentMetrics) > 0 {
		if err := setJSONAnnotation(&out.ObjectMeta, MetricStatusesAnnotation, currentMetrics); err != nil {
			return nil, err
		}
	}
	if in.Spec.Behavior != nil {
		if err := setJSONAnnotation(&out.ObjectMeta, BehaviorSpecsAnnotation, behaviorToJSON(in.Spec.Behavior)); err != nil {
			return nil, err
		}
	}
	if len(conditions) > 0 {
		if err := setJSONAnnotation(&out.ObjectMeta, ConditionsAnnotation, conditions); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// HPAv1ToV2 converts an autoscaling/v1 object to the storage form, lifting
// the round-trip annotations back into fields and removing them. Like
// upstream, an annotation that does not parse is ignored (and dropped). The
// input is not modified.
func HPAv1ToV2(in *autoscalingv1.HorizontalPodAutoscaler) (*autoscalingv2.HorizontalPodAutoscaler, error) {
	out := &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: *in.ObjectMeta.DeepCopy(),
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference(in.Spec.ScaleTargetRef),
			MinReplicas:    copyPtr(in.Spec.MinReplicas),
			MaxReplicas:    in.Spec.MaxReplicas,
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			ObservedGeneration: copyPtr(in.Status.ObservedGeneration),
			LastScaleTime:      in.Status.LastScaleTime.DeepCopy(),
			CurrentReplicas:    in.Status.CurrentReplicas,
			DesiredReplicas:    in.Status.DesiredReplicas,
		},
	}
	annotations := in.Annotations

	// Metrics: those from the annotation first, then the CPU target.
	var cpu []autoscalingv2.MetricSpec
	if in.Spec.TargetCPUUtilizationPercentage != nil {
		cpu = append(cpu, cpuUtilizationMetric(*in.Spec.TargetCPUUtilizationPercentage))
	}
	var otherMetrics []autoscalingv1.MetricSpec
	if raw, ok := annotations[MetricSpecsAnnotation]; ok && json.Unmarshal([]byte(raw), &otherMetrics) == nil {
		for i := range otherMetrics {
			out.Spec.Metrics = append(out.Spec.Metrics, metricSpecFromV1(&otherMetrics[i]))
		}
	}
	out.Spec.Metrics = append(out.Spec.Metrics, cpu...)
	// v1 always implied "80% CPU" when nothing else was said; v2 says it
	// explicitly.
	if len(out.Spec.Metrics) == 0 {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilizationMetric(DefaultCPUUtilization)}
	}

	// Current metrics: the annotation, when present, has more information
	// than currentCPUUtilizationPercentage and replaces it.
	if p := in.Status.CurrentCPUUtilizationPercentage; p != nil {
		out.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{
				Name:    corev1.ResourceCPU,
				Current: autoscalingv2.MetricValueStatus{AverageUtilization: new(*p)},
			},
		}}
	}
	var currentMetrics []autoscalingv1.MetricStatus
	if raw, ok := annotations[MetricStatusesAnnotation]; ok && json.Unmarshal([]byte(raw), &currentMetrics) == nil {
		out.Status.CurrentMetrics = make([]autoscalingv2.MetricStatus, 0, len(currentMetrics))
		for i := range currentMetrics {
			out.Status.CurrentMetrics = append(out.Status.CurrentMetrics, metricStatusFromV1(&currentMetrics[i]))
		}
	}

	var conditions []autoscalingv1.HorizontalPodAutoscalerCondition
	if raw, ok := annotations[ConditionsAnnotation]; ok && json.Unmarshal([]byte(raw), &conditions) == nil {
		out.Status.Conditions = make([]autoscalingv2.HorizontalPodAutoscalerCondition, 0, len(conditions))
		for _, c := range conditions {
			out.Status.Conditions = append(out.Status.Conditions, autoscalingv2.HorizontalPodAutoscalerCondition{
				Type:               autoscalingv2.HorizontalPodAutoscalerConditionType(c.Type),
				Status:             c.Status,
				LastTransitionTime: c.LastTransitionTime,
				Reason:             c.Reason,
				Message:            c.Message,
				ObservedGeneration: c.ObservedGeneration,
			})
		}
	}

	var behavior behaviorJSON
	if raw, ok := annotations[BehaviorSpecsAnnotation]; ok && json.Unmarshal([]byte(raw), &behavior) == nil &&
		(behavior.ScaleUp != nil || behavior.ScaleDown != nil) {
		out.Spec.Behavior = behavior.toV2()
	}

	dropRoundTripAnnotations(&out.ObjectMeta)
	return out, nil
}

func dropRoundTripAnnotations(meta *metav1.ObjectMeta) {
	for _, key := range []string{MetricSpecsAnnotation, MetricStatusesAnnotation, BehaviorSpecsAnnotation, ConditionsAnnotation} {
		delete(meta.Annotations, key)
	}
	if len(meta.Annotations) == 0 {
		meta.Annotations = nil
	}
}

func setJSONAnnotation(meta *metav1.ObjectMeta, key string, value any) error {
	raw, err := json.Marshal(value)
	if err != nil {
		return err
	}
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[key] = string(raw)
	return nil
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	return new(*p)
}

func copyQuantity(q *resource.Quantity) *resource.Quantity {
	if q == nil {
		return nil
	}
	return new(q.DeepCopy())
}

func quantityValue(q *resource.Quantity) resource.Quantity {
	if q == nil {
		return resource.Quantity{}
	}
	return q.DeepCopy()
}

// quantityIf returns a pointer to q unless q is zero and keepZero is false.
// v1 has plain (non-pointer) quantities where v2 has optional ones; upstream
// turns every v1 zero into an explicit v2 "0". We only do so when the value is
// the only one present, so that v2 -> v1 -> v2 gives back the same object.
func quantityIf(q resource.Quantity, keepZero bool) *resource.Quantity {
	if q.IsZero() && !keepZero {
		return nil
	}
	return new(q.DeepCopy())
}

// The metric conversions below map the v2 shape (metric identifier + target
// or current value) onto v1's older flat shape, which is the v2beta1 one.

func metricSpecToV1(in *autoscalingv2.MetricSpec) autoscalingv1.MetricSpec {
	out := autoscalingv1.MetricSpec{Type: autoscalingv1.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		out.Object = &autoscalingv1.ObjectMetricSource{
			Target:       autoscalingv1.CrossVersionObjectReference(s.DescribedObject),
			MetricName:   s.Metric.Name,
			Selector:     s.Metric.Selector.DeepCopy(),
			TargetValue:  quantityValue(s.Target.Value),
			AverageValue: copyQuantity(s.Target.AverageValue),
		}
	}
	if s := in.Pods; s != nil {
		out.Pods = &autoscalingv1.PodsMetricSource{
			MetricName:         s.Metric.Name,
			Selector:           s.Metric.Selector.DeepCopy(),
			TargetAverageValue: quantityValue(s.Target.AverageValue),
		}
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv1.ResourceMetricSource{
			Name:                     s.Name,
			TargetAverageUtilization: copyPtr(s.Target.AverageUtilization),
			TargetAverageValue:       copyQuantity(s.Target.AverageValue),
		}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricSource{
			Name:                     s.Name,
			Container:                s.Container,
			TargetAverageUtilization: copyPtr(s.Target.AverageUtilization),
			TargetAverageValue:       copyQuantity(s.Target.AverageValue),
		}
	}
	if s := in.External; s != nil {
		out.External = &autoscalingv1.ExternalMetricSource{
			MetricName:         s.Metric.Name,
			MetricSelector:     s.Metric.Selector.DeepCopy(),
			TargetValue:        copyQuantity(s.Target.Value),
			TargetAverageValue: copyQuantity(s.Target.AverageValue),
		}
	}
	return out
}

func metricSpecFromV1(in *autoscalingv1.MetricSpec) autoscalingv2.MetricSpec {
	out := autoscalingv2.MetricSpec{Type: autoscalingv2.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		target := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: new(s.TargetValue.DeepCopy())}
		if s.AverageValue != nil {
			target = autoscalingv2.MetricTarget{
				Type:         autoscalingv2.AverageValueMetricType,
				Value:        quantityIf(s.TargetValue, false),
				AverageValue: copyQuantity(s.AverageValue),
			}
		}
		out.Object = &autoscalingv2.ObjectMetricSource{
			DescribedObject: autoscalingv2.CrossVersionObjectReference(s.Target),
			Metric:          autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector.DeepCopy()},
			Target:          target,
		}
	}
	if s := in.Pods; s != nil {
		out.Pods = &autoscalingv2.PodsMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector.DeepCopy()},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: new(s.TargetAverageValue.DeepCopy())},
		}
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv2.ResourceMetricSource{
			Name:   s.Name,
			Target: resourceTargetFromV1(s.TargetAverageUtilization, s.TargetAverageValue),
		}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricSource{
			Name:      s.Name,
			Container: s.Container,
			Target:    resourceTargetFromV1(s.TargetAverageUtilization, s.TargetAverageValue),
		}
	}
	if s := in.External; s != nil {
		targetType := autoscalingv2.AverageValueMetricType
		if s.TargetValue != nil {
			targetType = autoscalingv2.ValueMetricType
		}
		out.External = &autoscalingv2.ExternalMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.MetricSelector.DeepCopy()},
			Target: autoscalingv2.MetricTarget{
				Type:         targetType,
				Value:        copyQuantity(s.TargetValue),
				AverageValue: copyQuantity(s.TargetAverageValue),
			},
		}
	}
	return out
}

// resourceTargetFromV1: a utilization, when given, makes it a Utilization
// target; otherwise it is an AverageValue target.
func resourceTargetFromV1(utilization *int32, averageValue *resource.Quantity) autoscalingv2.MetricTarget {
	t := autoscalingv2.MetricTarget{
		Type:               autoscalingv2.AverageValueMetricType,
		AverageUtilization: copyPtr(utilization),
		AverageValue:       copyQuantity(averageValue),
	}
	if utilization != nil {
		t.Type = autoscalingv2.UtilizationMetricType
	}
	return t
}

func metricStatusToV1(in *autoscalingv2.MetricStatus) autoscalingv1.MetricStatus {
	out := autoscalingv1.MetricStatus{Type: autoscalingv1.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		out.Object = &autoscalingv1.ObjectMetricStatus{
			Target:       autoscalingv1.CrossVersionObjectReference(s.DescribedObject),
			MetricName:   s.Metric.Name,
			Selector:     s.Metric.Selector.DeepCopy(),
			CurrentValue: quantityValue(s.Current.Value),
			AverageValue: copyQuantity(s.Current.AverageValue),
		}
	}
	if s := in.Pods; s != nil {
		out.Pods = &autoscalingv1.PodsMetricStatus{
			MetricName:          s.Metric.Name,
			Selector:            s.Metric.Selector.DeepCopy(),
			CurrentAverageValue: quantityValue(s.Current.AverageValue),
		}
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv1.ResourceMetricStatus{
			Name:                      s.Name,
			CurrentAverageUtilization: copyPtr(s.Current.AverageUtilization),
			CurrentAverageValue:       quantityValue(s.Current.AverageValue),
		}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricStatus{
			Name:                      s.Name,
			Container:                 s.Container,
			CurrentAverageUtilization: copyPtr(s.Current.AverageUtilization),
			CurrentAverageValue:       quantityValue(s.Current.AverageValue),
		}
	}
	if s := in.External; s != nil {
		out.External = &autoscalingv1.ExternalMetricStatus{
			MetricName:          s.Metric.Name,
			MetricSelector:      s.Metric.Selector.DeepCopy(),
			CurrentValue:        quantityValue(s.Current.Value),
			CurrentAverageValue: copyQuantity(s.Current.AverageValue),
		}
	}
	return out
}

func metricStatusFromV1(in *autoscalingv1.MetricStatus) autoscalingv2.MetricStatus {
	out := autoscalingv2.MetricStatus{Type: autoscalingv2.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		out.Object = &autoscalingv2.ObjectMetricStatus{
			DescribedObject: autoscalingv2.CrossVersionObjectReference(s.Target),
			Metric:          autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector.DeepCopy()},
			Current: autoscalingv2.MetricValueStatus{
				Value:        quantityIf(s.CurrentValue, s.AverageValue == nil),
				AverageValue: copyQuantity(s.AverageValue),
			},
		}
	}
	if s := in.Pods; s != nil {
		out.Pods = &autoscalingv2.PodsMetricStatus{
			Metric:  autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector.DeepCopy()},
			Current: autoscalingv2.MetricValueStatus{AverageValue: new(s.CurrentAverageValue.DeepCopy())},
		}
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv2.ResourceMetricStatus{
			Name: s.Name,
			Current: autoscalingv2.MetricValueStatus{
				AverageUtilization: copyPtr(s.CurrentAverageUtilization),
				AverageValue:       quantityIf(s.CurrentAverageValue, s.CurrentAverageUtilization == nil),
			},
		}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricStatus{
			Name:      s.Name,
			Container: s.Container,
			Current: autoscalingv2.MetricValueStatus{
				AverageUtilization: copyPtr(s.CurrentAverageUtilization),
				AverageValue:       quantityIf(s.CurrentAverageValue, s.CurrentAverageUtilization == nil),
			},
		}
	}
	if s := in.External; s != nil {
		out.External = &autoscalingv2.ExternalMetricStatus{
			Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.MetricSelector.DeepCopy()},
			Current: autoscalingv2.MetricValueStatus{
				Value:        quantityIf(s.CurrentValue, s.CurrentAverageValue == nil),
				AverageValue: copyQuantity(s.CurrentAverageValue),
			},
		}
	}
	return out
}

// behaviorJSON mirrors upstream's internal HorizontalPodAutoscalerBehavior,
// whose JSON form (Go field names, nulls included) is what the behavior
// annotation has always contained. Decoding is case-insensitive, so
// hand-written lowerCamel annotations are read too.
type behaviorJSON struct {
	ScaleUp   *scalingRulesJSON
	ScaleDown *scalingRulesJSON
}

type scalingRulesJSON struct {
	StabilizationWindowSeconds *int32
	SelectPolicy               *autoscalingv2.ScalingPolicySelect
	Policies                   []scalingPolicyJSON
	Tolerance                  *resource.Quantity
}

type scalingPolicyJSON struct {
	Type          autoscalingv2.HPAScalingPolicyType
	Value         int32
	PeriodSeconds int32
}

func behaviorToJSON(b *autoscalingv2.HorizontalPodAutoscalerBehavior) behaviorJSON {
	return behaviorJSON{ScaleUp: rulesToJSON(b.ScaleUp), ScaleDown: rulesToJSON(b.ScaleDown)}
}

func rulesToJSON(r *autoscalingv2.HPAScalingRules) *scalingRulesJSON {
	if r == nil {
		return nil
	}
	out := &scalingRulesJSON{
		StabilizationWindowSeconds: r.StabilizationWindowSeconds,
		SelectPolicy:               r.SelectPolicy,
		Tolerance:                  r.Tolerance,
	}
	for _, p := range r.Policies {
		out.Policies = append(out.Policies, scalingPolicyJSON(p))
	}
	return out
}

func (b behaviorJSON) toV2() *autoscalingv2.HorizontalPodAutoscalerBehavior {
	return &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: b.ScaleUp.toV2(), ScaleDown: b.ScaleDown.toV2()}
}

func (r *scalingRulesJSON) toV2() *autoscalingv2.HPAScalingRules {
	if r == nil {
		return nil
	}
	out := &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: r.StabilizationWindowSeconds,
		SelectPolicy:               r.SelectPolicy,
		Tolerance:                  r.Tolerance,
	}
	for _, p := range r.Policies {
		out.Policies = append(out.Policies, autoscalingv2.HPAScalingPolicy(p))
	}
	return out
}
