package autoscaling

import (
	"encoding/json"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func fullV2() *autoscalingv2.HorizontalPodAutoscaler {
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "default",
			Annotations: map[string]string{"team": "a"},
		},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"},
			MinReplicas:    new(int32(2)),
			MaxReplicas:    10,
			Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
					Name:   corev1.ResourceMemory,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: new(resource.MustParse("500Mi"))},
				}},
				{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "qps", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: new(resource.MustParse("10"))},
				}},
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
					DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: "Ingress", Name: "main", APIVersion: "networking.k8s.io/v1"},
					Metric:          autoscalingv2.MetricIdentifier{Name: "rps"},
					Target:          autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: new(resource.MustParse("2k"))},
				}},
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
					DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: "Service", Name: "main", APIVersion: "v1"},
					Metric:          autoscalingv2.MetricIdentifier{Name: "latency"},
					Target:          autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: new(resource.MustParse("30m"))},
				}},
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "queue"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: new(resource.MustParse("30"))},
				}},
				{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
					Name: corev1.ResourceCPU, Container: "app",
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: new(int32(70))},
				}},
				// CPU utilization last: v1 keeps it in targetCPUUtilizationPercentage,
				// and the way back appends it after the annotation's metrics.
				cpuUtilizationMetric(60),
			},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{},
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			ObservedGeneration: new(int64(3)),
			LastScaleTime:      &now,
			CurrentReplicas:    3,
			DesiredReplicas:    4,
			CurrentMetrics: []autoscalingv2.MetricStatus{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
					Name:    corev1.ResourceCPU,
					Current: autoscalingv2.MetricValueStatus{AverageUtilization: new(int32(55)), AverageValue: new(resource.MustParse("110m"))},
				}},
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
					Name:    corev1.ResourceMemory,
					Current: autoscalingv2.MetricValueStatus{AverageValue: new(resource.MustParse("400Mi"))},
				}},
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricStatus{
					DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: "Ingress", Name: "main"},
					Metric:          autoscalingv2.MetricIdentifier{Name: "rps"},
					Current:         autoscalingv2.MetricValueStatus{Value: new(resource.MustParse("1500"))},
				}},
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricStatus{
					Metric:  autoscalingv2.MetricIdentifier{Name: "queue"},
					Current: autoscalingv2.MetricValueStatus{AverageValue: new(resource.MustParse("12"))},
				}},
			},
			Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{
				{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, LastTransitionTime: now, Reason: "ReadyForNewScale", Message: "ok"},
			},
		},
	}
	DefaultHorizontalPodAutoscaler(hpa)
	return hpa
}

func TestHPARoundTripV2(t *testing.T) {
	in := fullV2()
	orig := in.DeepCopy()
	v1, err := HPAv2ToV1(in)
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(in, orig) {
		t.Fatal("HPAv2ToV1 modified its input")
	}
	if got := v1.Spec.TargetCPUUtilizationPercentage; got == nil || *got != 60 {
		t.Errorf("targetCPUUtilizationPercentage = %v, want 60", got)
	}
	if got := v1.Status.CurrentCPUUtilizationPercentage; got == nil || *got != 55 {
		t.Errorf("currentCPUUtilizationPercentage = %v, want 55", got)
	}
	for _, key := range []string{MetricSpecsAnnotation, MetricStatusesAnnotation, BehaviorSpecsAnnotation, ConditionsAnnotation, "team"} {
		if _, ok := v1.Annotations[key]; !ok {
			t.Errorf("missing annotation %s", key)
		}
	}

	back, err := HPAv1ToV2(v1)
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(back, orig) {
		a, _ := json.MarshalIndent(back, "", " ")
		b, _ := json.MarshalIndent(orig, "", " ")
		t.Fatalf("round trip differs:\ngot  %s\nwant %s", a, b)
	}
}

func TestHPARoundTripV1(t *testing.T) {
	in := &autoscalingv1.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
			ScaleTargetRef:                 autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"},
			MinReplicas:                    new(int32(1)),
			MaxReplicas:                    5,
			TargetCPUUtilizationPercentage: new(int32(50)),
		},
		Status: autoscalingv1.HorizontalPodAutoscalerStatus{CurrentReplicas: 2, DesiredReplicas: 2, CurrentCPUUtilizationPercentage: new(int32(40))},
	}
	v2, err := HPAv1ToV2(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := []autoscalingv2.MetricSpec{cpuUtilizationMetric(50)}; !equality.Semantic.DeepEqual(v2.Spec.Metrics, want) {
		t.Errorf("metrics = %+v", v2.Spec.Metrics)
	}
	back, err := HPAv2ToV1(v2)
	if err != nil {
		t.Fatal(err)
	}
	// The current metric travels in the annotation, as upstream does; the
	// rest is identical.
	if _, ok := back.Annotations[MetricStatusesAnnotation]; !ok {
		t.Errorf("want %s annotation", MetricStatusesAnnotation)
	}
	delete(back.Annotations, MetricStatusesAnnotation)
	if len(back.Annotations) == 0 {
		back.Annotations = nil
	}
	if !equality.Semantic.DeepEqual(back, in) {
		t.Fatalf("round trip differs:\ngot  %+v\nwant %+v", back, in)
	}
}

func TestHPAAnnotationFormats(t *testing.T) {
	in := fullV2()
	in.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleUp: &autoscalingv2.HPAScalingRules{
			StabilizationWindowSeconds: new(int32(0)),
			SelectPolicy:               new(autoscalingv2.MaxChangePolicySelect),
			Policies:                   []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15}},
		},
	}
	v1, err := HPAv2ToV1(in)
	if err != nil {
		t.Fatal(err)
	}
	// Upstream marshals its untagged internal type: Go field names, nulls kept.
	want := `{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15}],"Tolerance":null},"ScaleDown":null}`
	if got := v1.Annotations[BehaviorSpecsAnnotation]; got != want {
		t.Errorf("behavior annotation\ngot  %s\nwant %s", got, want)
	}
	var metrics []autoscalingv1.MetricSpec
	if err := json.Unmarshal([]byte(v1.Annotations[MetricSpecsAnnotation]), &metrics); err != nil {
		t.Fatal(err)
	}
	if len(metrics) != 6 || metrics[0].Resource == nil || metrics[0].Resource.Name != corev1.ResourceMemory {
		t.Errorf("metrics annotation = %s", v1.Annotations[MetricSpecsAnnotation])
	}
}

func TestHPAv1ToV2Annotations(t *testing.T) {
	in := &autoscalingv1.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Annotations: map[string]string{
			// Hand-written, lowerCamel: decoding is case-insensitive.
			BehaviorSpecsAnnotation: `{"scaleDown":{"stabilizationWindowSeconds":30}}`,
			// Malformed: ignored and dropped, like upstream.
			MetricSpecsAnnotation: `{not json`,
			ConditionsAnnotation:  `[{"type":"ScalingActive","status":"False","reason":"FailedGetResourceMetric"}]`,
		}},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 3},
	}
	out, err := HPAv1ToV2(in)
	if err != nil {
		t.Fatal(err)
	}
	if out.Annotations != nil {
		t.Errorf("round-trip annotations must be removed, got %v", out.Annotations)
	}
	if in.Annotations[BehaviorSpecsAnnotation] == "" {
		t.Errorf("input was modified")
	}
	if b := out.Spec.Behavior; b == nil || b.ScaleDown == nil || *b.ScaleDown.StabilizationWindowSeconds != 30 || b.ScaleUp != nil {
		t.Errorf("behavior = %+v", b)
	}
	if want := []autoscalingv2.MetricSpec{cpuUtilizationMetric(80)}; !equality.Semantic.DeepEqual(out.Spec.Metrics, want) {
		t.Errorf("metrics = %+v, want the implicit 80%% cpu", out.Spec.Metrics)
	}
	if len(out.Status.Conditions) != 1 || out.Status.Conditions[0].Reason != "FailedGetResourceMetric" {
		t.Errorf("conditions = %+v", out.Status.Conditions)
	}

	// Stale round-trip annotations sent by a client never leak into v1 output.
	v2 := fullV2()
	v2.Spec.Behavior = nil
	v2.Status.Conditions = nil
	v2.Annotations[BehaviorSpecsAnnotation] = "stale"
	v1, err := HPAv2ToV1(v2)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v1.Annotations[BehaviorSpecsAnnotation]; ok {
		t.Errorf("stale behavior annotation leaked")
	}
	if _, ok := v1.Annotations[ConditionsAnnotation]; ok {
		t.Errorf("conditions annotation without conditions")
	}
}
