package discovery

import (
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/registry"
)

// Definitions are the discovery.k8s.io/v1 resources.
func Definitions() []*registry.Definition {
	return []*registry.Definition{registry.NewDefinition("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", true,
		func() runtime.Object { return &discoveryv1.EndpointSlice{} }, func() runtime.Object { return &discoveryv1.EndpointSliceList{} },
		&registry.Strategy{Default: registry.Default(DefaultEndpointSlice), Validate: registry.Validate(ValidateEndpointSlice),
			ValidateUpdate: registry.ValidateUpdate(ValidateEndpointSliceUpdate), Generation: true,
			PrepareForUpdate: PrepareEndpointSliceUpdate})}
}

// PrepareEndpointSliceUpdate bumps the generation on a change of labels
// too, as upstream's strategy does (a slice has no spec: its endpoints,
// ports and labels are what the generation follows; the store bumps it
// for the first two).
func PrepareEndpointSliceUpdate(obj, old runtime.Object) {
	n, o := obj.(*discoveryv1.EndpointSlice), old.(*discoveryv1.EndpointSlice)
	if !equality.Semantic.DeepEqual(n.Labels, o.Labels) {
		n.Generation = o.Generation + 1
	}
}
