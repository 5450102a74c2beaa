package webhook

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
)

var (
	grServices       = schema.GroupResource{Resource: "services"}
	grEndpoints      = schema.GroupResource{Resource: "endpoints"}
	grEndpointSlices = schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}
	grNamespaces     = schema.GroupResource{Resource: "namespaces"}
)

// ResolveService returns the address ("ip:port") of a ready endpoint of
// the service namespace/name serving its port port, as upstream's endpoint
// routing (ResolveEndpoint): an ExternalName service resolves to its
// external name; otherwise the service port's target port is looked up in
// the service's EndpointSlices (kubernetes.io/service-name label), then in
// its Endpoints, and a ready address is picked at random. Objects are read
// from the watch cache, so endpoint changes take effect promptly.
//
// It is what any API server component dialing a service (webhooks, an
// aggregated API) uses; the errors are upstream's wording.
func ResolveService(ctx context.Context, g admission.Getter, namespace, name string, port int32) (string, error) {
	obj, err := g.Get(ctx, grServices, namespace, name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return "", fmt.Errorf("service %q not found", name)
		}
		return "", err
	}
	svc := obj.(*corev1.Service)
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return net.JoinHostPort(svc.Spec.ExternalName, strconv.Itoa(int(port))), nil
	}
	var svcPort *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == port {
			svcPort = &svc.Spec.Ports[i]
			break
		}
	}
	if svcPort == nil {
		return "", fmt.Errorf("no service port %d found for service %q", port, name)
	}
	var addrs []string
	slices, err := g.List(ctx, grEndpointSlices, namespace)
	if err == nil {
		for _, o := range slices {
			sl, ok := o.(*discoveryv1.EndpointSlice)
			if !ok || sl.Labels[discoveryv1.LabelServiceName] != name {
				continue
			}
			for _, p := range sl.Ports {
				if !portMatches(p.Name, p.Port, svcPort) {
					continue
				}
				for _, ep := range sl.Endpoints {
					if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
						continue
					}
					for _, a := range ep.Addresses {
						addrs = append(addrs, net.JoinHostPort(a, strconv.Itoa(int(*p.Port))))
					}
				}
			}
		}
	}
	if len(addrs) == 0 {
		if obj, err := g.Get(ctx, grEndpoints, namespace, name); err == nil {
			eps := obj.(*corev1.Endpoints)
			for _, ss := range eps.Subsets {
				for _, p := range ss.Ports {
					pp := p.Port
					if !portMatches(&p.Name, &pp, svcPort) {
						continue
					}
					for _, a := range ss.Addresses {
						addrs = append(addrs, net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
					}
				}
			}
		}
	}
	if len(addrs) == 0 {
		return "", fmt.Errorf("no endpoints available for service %q", name)
	}
	return addrs[rand.IntN(len(addrs))], nil
}

// portMatches reports whether an endpoint port serves the service port:
// upstream matches them by name.
func portMatches(name *string, port *int32, sp *corev1.ServicePort) bool {
	if port == nil {
		return false
	}
	n := ""
	if name != nil {
		n = *name
	}
	return n == sp.Name
}
