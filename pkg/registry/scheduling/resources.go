package scheduling

import (
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/registry"
)

// Definitions are the scheduling.k8s.io/v1 resources.
func Definitions() []*registry.Definition {
	pc := registry.NewDefinition("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", false,
		func() runtime.Object { return &schedulingv1.PriorityClass{} }, func() runtime.Object { return &schedulingv1.PriorityClassList{} },
		&registry.Strategy{Default: registry.Default(DefaultPriorityClass), Validate: registry.Validate(ValidatePriorityClass),
			ValidateUpdate: registry.ValidateUpdate(ValidatePriorityClassUpdate)})
	pc.ShortNames = []string{"pc"}
	return []*registry.Definition{pc}
}
