package autoscaling

import (
	"github.com/skiff-sh/skiff/pkg/registry/registrytest"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validHPA() *autoscalingv2.HorizontalPodAutoscaler {
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", ResourceVersion: "1"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"},
			MaxReplicas:    10,
			Behavior:       &autoscalingv2.HorizontalPodAutoscalerBehavior{},
		},
	}
	DefaultHorizontalPodAutoscaler(hpa)
	return hpa
}

// findError reports whether errs holds an error of type typ at path.

func TestValidateHorizontalPodAutoscaler(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*autoscalingv2.HorizontalPodAutoscaler)
		path   string // "" means valid
		typ    field.ErrorType
	}{
		{"valid", func(*autoscalingv2.HorizontalPodAutoscaler) {}, "", ""},
		{"valid pods metric", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: "qps"},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: new(resource.MustParse("10"))},
			}}}
		}, "", ""},
		{"bad name", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Name = "Web_1" }, "metadata.name", field.ErrorTypeInvalid},
		{"no namespace", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Namespace = "" }, "metadata.namespace", field.ErrorTypeRequired},
		{"minReplicas 0", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas = new(int32(0)) }, "spec.minReplicas", field.ErrorTypeInvalid},
		{"maxReplicas 0", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MaxReplicas = 0 }, "spec.maxReplicas", field.ErrorTypeInvalid},
		{"max < min", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas = new(int32(20)) }, "spec.maxReplicas", field.ErrorTypeInvalid},
		{"no target kind", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.ScaleTargetRef.Kind = "" }, "spec.scaleTargetRef.kind", field.ErrorTypeRequired},
		{"target name with slash", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.ScaleTargetRef.Name = "a/b" }, "spec.scaleTargetRef.name", field.ErrorTypeInvalid},
		{"metric without type", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.Metrics[0].Type = "" }, "spec.metrics[0].type", field.ErrorTypeRequired},
		{"metric with unknown type", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.Metrics[0].Type = "Foo" }, "spec.metrics[0].type", field.ErrorTypeNotSupported},
		{"type Pods but resource given", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.Metrics[0].Type = "Pods" }, "spec.metrics[0].pods", field.ErrorTypeRequired},
		{"two sources", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Pods = &autoscalingv2.PodsMetricSource{}
		}, "spec.metrics[0].pods", field.ErrorTypeForbidden},
		{"utilization 0", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Resource.Target.AverageUtilization = new(int32(0))
		}, "spec.metrics[0].resource.target.averageUtilization", field.ErrorTypeInvalid},
		{"resource target without value", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Resource.Target.AverageUtilization = nil
		}, "spec.metrics[0].resource.target.averageUtilization", field.ErrorTypeRequired},
		{"bad target type", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Resource.Target.Type = "Percent"
		}, "spec.metrics[0].resource.target.type", field.ErrorTypeInvalid},
		{"scaling policy value 0", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior.ScaleUp.Policies[0].Value = 0
		}, "spec.behavior.scaleUp.policies[0].value", field.ErrorTypeInvalid},
		{"period too long", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior.ScaleDown.Policies[0].PeriodSeconds = 1801
		}, "spec.behavior.scaleDown.policies[0].periodSeconds", field.ErrorTypeInvalid},
		{"no policies", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior.ScaleDown.Policies = nil
		}, "spec.behavior.scaleDown.policies", field.ErrorTypeRequired},
		{"bad select policy", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior.ScaleUp.SelectPolicy = new(autoscalingv2.ScalingPolicySelect("Average"))
		}, "spec.behavior.scaleUp.selectPolicy", field.ErrorTypeNotSupported},
		{"window too long", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior.ScaleUp.StabilizationWindowSeconds = new(int32(3601))
		}, "spec.behavior.scaleUp.stabilizationWindowSeconds", field.ErrorTypeInvalid},
		{"negative tolerance", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior.ScaleUp.Tolerance = new(resource.MustParse("-0.1"))
		}, "spec.behavior.scaleUp.tolerance", field.ErrorTypeInvalid},
		{"external with value and averageValue", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: "queue"},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: new(resource.MustParse("1")), AverageValue: new(resource.MustParse("1"))},
			}}}
		}, "spec.metrics[0].external.target.value", field.ErrorTypeForbidden},
		{"container resource without container", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
				Name:   "cpu",
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: new(int32(50))},
			}}}
		}, "spec.metrics[0].containerResource.container", field.ErrorTypeRequired},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hpa := validHPA()
			tc.mutate(hpa)
			errs := ValidateHorizontalPodAutoscaler(hpa)
			if tc.path == "" {
				if len(errs) != 0 {
					t.Fatalf("unexpected errors: %v", errs)
				}
				return
			}
			if !registrytest.FindError(errs, tc.path, tc.typ) {
				t.Fatalf("want %s at %s, got %v", tc.typ, tc.path, errs)
			}
		})
	}
}

func TestValidateHorizontalPodAutoscalerMessages(t *testing.T) {
	hpa := validHPA()
	hpa.Spec.MinReplicas = new(int32(0))
	errs := ValidateHorizontalPodAutoscaler(hpa)
	want := "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"
	// Upstream also adds "spec.metrics: Forbidden: must specify at least one
	// Object or External metric to support scaling to zero replicas".
	if len(errs) != 2 || errs[0].Error() != want {
		t.Fatalf("got %v, want %q", errs, want)
	}
}

func TestValidateHorizontalPodAutoscalerUpdate(t *testing.T) {
	old := validHPA()
	hpa := validHPA()
	hpa.Spec.MaxReplicas = 20
	if errs := ValidateHorizontalPodAutoscalerUpdate(hpa, old); len(errs) != 0 {
		t.Fatalf("spec is mutable, got %v", errs)
	}

	// minReplicas 0 is kept on objects that already have it.
	old.Spec.MinReplicas = new(int32(0))
	old.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
		DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: "Service", Name: "web"},
		Metric:          autoscalingv2.MetricIdentifier{Name: "rps"},
		Target:          autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: new(resource.MustParse("100"))},
	}}}
	hpa = old.DeepCopy()
	if errs := ValidateHorizontalPodAutoscalerUpdate(hpa, old); len(errs) != 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}
	// ...but scaling to zero needs an Object or External metric.
	hpa.Spec.Metrics = validHPA().Spec.Metrics
	if errs := ValidateHorizontalPodAutoscalerUpdate(hpa, old); !registrytest.FindError(errs, "spec.metrics", field.ErrorTypeForbidden) {
		t.Fatalf("want forbidden spec.metrics, got %v", errs)
	}

	hpa = validHPA()
	hpa.Name = "other"
	if errs := ValidateHorizontalPodAutoscalerUpdate(hpa, validHPA()); !registrytest.FindError(errs, "metadata.name", field.ErrorTypeInvalid) {
		t.Fatalf("name is immutable, got %v", errs)
	}
}

func TestValidateHorizontalPodAutoscalerStatusUpdate(t *testing.T) {
	old := validHPA()
	hpa := validHPA()
	hpa.Status.CurrentReplicas = 3
	hpa.Status.DesiredReplicas = 4
	if errs := ValidateHorizontalPodAutoscalerStatusUpdate(hpa, old); len(errs) != 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}
	hpa.Status.DesiredReplicas = -1
	if errs := ValidateHorizontalPodAutoscalerStatusUpdate(hpa, old); !registrytest.FindError(errs, "status.desiredReplicas", field.ErrorTypeInvalid) {
		t.Fatalf("got %v", errs)
	}
}
