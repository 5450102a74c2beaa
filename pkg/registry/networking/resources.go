package networking

import (
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/registry"
)

// Definitions are the networking.k8s.io/v1 resources besides the Service
// allocation records (AllocationDefinitions): ingresses (+status),
// ingressclasses and networkpolicies.
func Definitions() []*registry.Definition {
	ing := registry.NewDefinition("networking.k8s.io", "v1", "ingresses", "Ingress", true,
		func() runtime.Object { return &networkingv1.Ingress{} }, func() runtime.Object { return &networkingv1.IngressList{} },
		&registry.Strategy{Validate: registry.Validate(ValidateIngress), ValidateUpdate: registry.ValidateUpdate(ValidateIngressUpdate),
			HasStatus: true, Generation: true})
	ing.ShortNames = []string{"ing"}
	ing.ValidateStatus = registry.ValidateUpdate(ValidateIngressStatusUpdate)

	class := registry.NewDefinition("networking.k8s.io", "v1", "ingressclasses", "IngressClass", false,
		func() runtime.Object { return &networkingv1.IngressClass{} }, func() runtime.Object { return &networkingv1.IngressClassList{} },
		&registry.Strategy{Default: registry.Default(DefaultIngressClass), Validate: registry.Validate(ValidateIngressClass),
			ValidateUpdate: registry.ValidateUpdate(ValidateIngressClassUpdate), Generation: true})

	np := registry.NewDefinition("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", true,
		func() runtime.Object { return &networkingv1.NetworkPolicy{} }, func() runtime.Object { return &networkingv1.NetworkPolicyList{} },
		&registry.Strategy{Default: registry.Default(DefaultNetworkPolicy), Validate: registry.Validate(ValidateNetworkPolicy),
			ValidateUpdate: registry.ValidateUpdate(ValidateNetworkPolicyUpdate), Generation: true})
	np.ShortNames = []string{"netpol"}
	return []*registry.Definition{ing, class, np}
}
