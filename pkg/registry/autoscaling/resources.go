package autoscaling

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/registry"
)

// Definitions: HorizontalPodAutoscalers are stored as autoscaling/v2 and
// also served as autoscaling/v1.
func Definitions() []*registry.Definition {
	hpa := registry.NewDefinition("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true,
		func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} },
		func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscalerList{} },
		&registry.Strategy{
			Default:        registry.Default(DefaultHorizontalPodAutoscaler),
			Validate:       registry.Validate(ValidateHorizontalPodAutoscaler),
			ValidateUpdate: registry.ValidateUpdate(ValidateHorizontalPodAutoscalerUpdate),
			Generation:     true,
			HasStatus:      true,
		})
	hpa.ShortNames, hpa.Categories = []string{"hpa"}, []string{"all"}
	hpa.ValidateStatus = registry.ValidateUpdate(ValidateHorizontalPodAutoscalerStatusUpdate)
	hpa.Extra = []registry.VersionDef{{
		Version: "v1",
		New:     func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscaler{} },
		NewList: func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscalerList{} },
		Default: registry.Default(DefaultHorizontalPodAutoscalerV1),
		ToStorage: func(obj runtime.Object) (runtime.Object, error) {
			return HPAv1ToV2(obj.(*autoscalingv1.HorizontalPodAutoscaler))
		},
		FromStorage: func(obj runtime.Object) (runtime.Object, error) {
			return HPAv2ToV1(obj.(*autoscalingv2.HorizontalPodAutoscaler))
		},
	}}
	return []*registry.Definition{hpa}
}
