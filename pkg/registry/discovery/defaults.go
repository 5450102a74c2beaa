package discovery

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// DefaultEndpointSlice fills the discovery.k8s.io/v1 defaults on each port:
// name "" (the unnamed port) and protocol TCP. Endpoint conditions are left
// unset on purpose: for "ready", unset means "unknown", which consumers treat
// as ready.
func DefaultEndpointSlice(slice *discoveryv1.EndpointSlice) {
	for i := range slice.Ports {
		p := &slice.Ports[i]
		if p.Name == nil {
			p.Name = new("")
		}
		if p.Protocol == nil {
			p.Protocol = new(corev1.ProtocolTCP)
		}
	}
}
