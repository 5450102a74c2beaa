package discovery

import (
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/registry"
)

// Definitions are the discovery.k8s.io/v1 resources.
func Definitions() []*registry.Definition {
	return []*registry.Definition{registry.NewDefinition("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", true,
		func() runtime.Object { return &discoveryv1.EndpointSlice{} }, func() runtime.Object { return &discoveryv1.EndpointSliceList{} },
		&registry.Strategy{Default: registry.Default(DefaultEndpointSlice), Validate: registry.Validate(ValidateEndpointSlice),
			ValidateUpdate: registry.ValidateUpdate(ValidateEndpointSliceUpdate), Generation: true})}
}
