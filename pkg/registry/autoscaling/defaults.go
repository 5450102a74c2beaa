package autoscaling

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
)

// DefaultCPUUtilization is the target average CPU utilization, in percent of
// the pods' CPU requests, that an HPA gets when it names no metric at all.
const DefaultCPUUtilization int32 = 80

// DefaultHorizontalPodAutoscaler fills the autoscaling/v2 defaults (upstream's
// SetDefaults_HorizontalPodAutoscaler):
//   - spec.minReplicas: 1
//   - spec.metrics: one Resource metric, cpu at 80% average utilization
//   - spec.behavior: only when the user wrote a behavior, every missing
//     piece of scaleUp and scaleDown is filled (see defaultBehavior).
func DefaultHorizontalPodAutoscaler(hpa *autoscalingv2.HorizontalPodAutoscaler) {
	if hpa.Spec.MinReplicas == nil {
		hpa.Spec.MinReplicas = new(int32(1))
	}
	if len(hpa.Spec.Metrics) == 0 {
		hpa.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilizationMetric(DefaultCPUUtilization)}
	}
	if hpa.Spec.Behavior != nil {
		defaultBehavior(hpa.Spec.Behavior)
	}
}

// DefaultHorizontalPodAutoscalerV1 fills the autoscaling/v1 defaults: only
// spec.minReplicas. A v1 HPA without targetCPUUtilizationPercentage is not
// defaulted here; the conversion to v2 (HPAv1ToV2) adds the implicit 80% CPU
// metric, exactly as upstream does, because only the conversion can see the
// other metrics kept in annotations.
func DefaultHorizontalPodAutoscalerV1(hpa *autoscalingv1.HorizontalPodAutoscaler) {
	if hpa.Spec.MinReplicas == nil {
		hpa.Spec.MinReplicas = new(int32(1))
	}
}

// cpuUtilizationMetric is the metric `kubectl autoscale --cpu-percent` and the
// v1 API express: average CPU utilization across the target's pods.
func cpuUtilizationMetric(percent int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{
				Type:               autoscalingv2.UtilizationMetricType,
				AverageUtilization: new(percent),
			},
		},
	}
}

// defaultBehavior completes a user-supplied behavior. The defaults reproduce
// the HPA's behaviour from before behavior existed:
//   - scaleUp: no stabilization window; per 15s, add at most max(4 pods, 100%).
//   - scaleDown: at most 100% per 15s. Its stabilization window stays unset
//     on purpose: then the controller uses its own flag
//     (--horizontal-pod-autoscaler-downscale-stabilization, 5 minutes).
//
// A field the user did set is kept, even if the rest is defaulted.
func defaultBehavior(b *autoscalingv2.HorizontalPodAutoscalerBehavior) {
	b.ScaleUp = fillScalingRules(b.ScaleUp, autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: new(int32(0)),
		SelectPolicy:               new(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	})
	b.ScaleDown = fillScalingRules(b.ScaleDown, autoscalingv2.HPAScalingRules{
		SelectPolicy: new(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	})
}

// fillScalingRules returns defaults overlaid with every field set in user.
func fillScalingRules(user *autoscalingv2.HPAScalingRules, defaults autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if user == nil {
		return &defaults
	}
	if user.StabilizationWindowSeconds != nil {
		defaults.StabilizationWindowSeconds = user.StabilizationWindowSeconds
	}
	if user.SelectPolicy != nil {
		defaults.SelectPolicy = user.SelectPolicy
	}
	if user.Policies != nil {
		defaults.Policies = user.Policies
	}
	if user.Tolerance != nil {
		defaults.Tolerance = user.Tolerance
	}
	return &defaults
}
