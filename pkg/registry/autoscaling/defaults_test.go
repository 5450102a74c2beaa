package autoscaling

import (
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

func TestDefaultHorizontalPodAutoscaler(t *testing.T) {
	tests := []struct {
		name string
		in   autoscalingv2.HorizontalPodAutoscalerSpec
		want autoscalingv2.HorizontalPodAutoscalerSpec
	}{
		{
			name: "empty spec gets minReplicas 1 and 80% cpu",
			in:   autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 5},
			want: autoscalingv2.HorizontalPodAutoscalerSpec{
				MaxReplicas: 5,
				MinReplicas: new(int32(1)),
				Metrics:     []autoscalingv2.MetricSpec{cpuUtilizationMetric(80)},
			},
		},
		{
			name: "user values are kept, no behavior means no behavior",
			in: autoscalingv2.HorizontalPodAutoscalerSpec{
				MinReplicas: new(int32(3)),
				Metrics:     []autoscalingv2.MetricSpec{cpuUtilizationMetric(50)},
			},
			want: autoscalingv2.HorizontalPodAutoscalerSpec{
				MinReplicas: new(int32(3)),
				Metrics:     []autoscalingv2.MetricSpec{cpuUtilizationMetric(50)},
			},
		},
		{
			name: "partial behavior is completed",
			in: autoscalingv2.HorizontalPodAutoscalerSpec{
				MinReplicas: new(int32(1)),
				Metrics:     []autoscalingv2.MetricSpec{cpuUtilizationMetric(50)},
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
					ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: new(int32(60))},
				},
			},
			want: autoscalingv2.HorizontalPodAutoscalerSpec{
				MinReplicas: new(int32(1)),
				Metrics:     []autoscalingv2.MetricSpec{cpuUtilizationMetric(50)},
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
					ScaleUp: &autoscalingv2.HPAScalingRules{
						StabilizationWindowSeconds: new(int32(0)),
						SelectPolicy:               new(autoscalingv2.MaxChangePolicySelect),
						Policies: []autoscalingv2.HPAScalingPolicy{
							{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
							{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
						},
					},
					ScaleDown: &autoscalingv2.HPAScalingRules{
						StabilizationWindowSeconds: new(int32(60)),
						SelectPolicy:               new(autoscalingv2.MaxChangePolicySelect),
						Policies: []autoscalingv2.HPAScalingPolicy{
							{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
						},
					},
				},
			},
		},
		{
			name: "scaleDown window stays unset so the controller flag applies",
			in: autoscalingv2.HorizontalPodAutoscalerSpec{
				MinReplicas: new(int32(1)),
				Metrics:     []autoscalingv2.MetricSpec{cpuUtilizationMetric(50)},
				Behavior:    &autoscalingv2.HorizontalPodAutoscalerBehavior{},
			},
			want: autoscalingv2.HorizontalPodAutoscalerSpec{
				MinReplicas: new(int32(1)),
				Metrics:     []autoscalingv2.MetricSpec{cpuUtilizationMetric(50)},
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
					ScaleUp: &autoscalingv2.HPAScalingRules{
						StabilizationWindowSeconds: new(int32(0)),
						SelectPolicy:               new(autoscalingv2.MaxChangePolicySelect),
						Policies: []autoscalingv2.HPAScalingPolicy{
							{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
							{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
						},
					},
					ScaleDown: &autoscalingv2.HPAScalingRules{
						SelectPolicy: new(autoscalingv2.MaxChangePolicySelect),
						Policies: []autoscalingv2.HPAScalingPolicy{
							{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
						},
					},
				},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hpa := &autoscalingv2.HorizontalPodAutoscaler{Spec: tc.in}
			DefaultHorizontalPodAutoscaler(hpa)
			if !equality.Semantic.DeepEqual(hpa.Spec, tc.want) {
				t.Errorf("got %+v\nwant %+v", hpa.Spec, tc.want)
			}
		})
	}
}

func TestDefaultHorizontalPodAutoscalerV1(t *testing.T) {
	hpa := &autoscalingv1.HorizontalPodAutoscaler{}
	DefaultHorizontalPodAutoscalerV1(hpa)
	if hpa.Spec.MinReplicas == nil || *hpa.Spec.MinReplicas != 1 {
		t.Errorf("minReplicas = %v, want 1", hpa.Spec.MinReplicas)
	}
	if hpa.Spec.TargetCPUUtilizationPercentage != nil {
		t.Errorf("targetCPUUtilizationPercentage must stay unset; the conversion supplies the 80%% default")
	}
	v2, err := HPAv1ToV2(hpa)
	if err != nil {
		t.Fatal(err)
	}
	want := []autoscalingv2.MetricSpec{cpuUtilizationMetric(80)}
	if !equality.Semantic.DeepEqual(v2.Spec.Metrics, want) {
		t.Errorf("metrics after conversion = %+v, want %+v", v2.Spec.Metrics, want)
	}
	if v2.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU {
		t.Errorf("want cpu metric")
	}
}
