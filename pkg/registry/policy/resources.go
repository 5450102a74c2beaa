package policy

import (
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/registry"
)

// Definitions are the policy/v1 resources.
func Definitions() []*registry.Definition {
	pdb := registry.NewDefinition("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", true,
		func() runtime.Object { return &policyv1.PodDisruptionBudget{} },
		func() runtime.Object { return &policyv1.PodDisruptionBudgetList{} },
		&registry.Strategy{
			Default:        registry.Default(DefaultPodDisruptionBudget),
			Validate:       registry.Validate(ValidatePodDisruptionBudget),
			ValidateUpdate: registry.ValidateUpdate(ValidatePodDisruptionBudgetUpdate),
			Generation:     true,
			HasStatus:      true,
		})
	pdb.ShortNames = []string{"pdb"}
	pdb.ValidateStatus = registry.ValidateUpdate(ValidatePodDisruptionBudgetStatusUpdate)
	return []*registry.Definition{pdb}
}
