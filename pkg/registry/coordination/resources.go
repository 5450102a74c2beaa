package coordination

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/registry"
)

// Definitions are the coordination.k8s.io/v1 resources.
func Definitions() []*registry.Definition {
	return []*registry.Definition{registry.NewDefinition("coordination.k8s.io", "v1", "leases", "Lease", true,
		func() runtime.Object { return &coordinationv1.Lease{} }, func() runtime.Object { return &coordinationv1.LeaseList{} },
		&registry.Strategy{Default: registry.Default(DefaultLease), Validate: registry.Validate(ValidateLease),
			ValidateUpdate: registry.ValidateUpdate(ValidateLeaseUpdate)})}
}
