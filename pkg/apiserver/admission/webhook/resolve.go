package webhook

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"sort"
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
)

// ServiceEndpoints is what a lookup of a service's endpoints for one of
// its ports found (see LookupService).
type ServiceEndpoints struct {
	// ServiceFound: the service exists; PortFound: it has the port (always
	// for an ExternalName service), PortName the port's name.
	ServiceFound, PortFound bool
	PortName                string
	// SlicesFound: the service has EndpointSlices.
	SlicesFound bool
	// Addresses are the ready endpoints ("host:port", sorted) serving the
	// port: from the EndpointSlices, else from the Endpoints; an
	// ExternalName service's one is its external name.
	Addresses []string
}

// LookupService finds the ready endpoints of the service namespace/name
// serving its port port, as upstream's endpoint routing (ResolveEndpoint)
// does: an ExternalName service resolves to its external name; otherwise
// the service port's target port is looked up by name in the service's
// EndpointSlices (kubernetes.io/service-name label), then in its
// Endpoints. Objects are read from the watch cache, so endpoint changes
// take effect promptly. It is what every API server component dialling a
// service uses (webhooks, aggregated APIs, whose availability check
// reports what was missing).
func LookupService(ctx context.Context, g admission.Getter, namespace, name string, port int32) (ServiceEndpoints, error) {
	var r ServiceEndpoints
	obj, err := g.Get(ctx, grServices, namespace, name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return r, nil
		}
		return r, err
	}
	r.ServiceFound = true
	svc := obj.(*corev1.Service)
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		r.PortFound, r.SlicesFound = true, true
		r.Addresses = []string{net.JoinHostPort(svc.Spec.ExternalName, strconv.Itoa(int(port)))}
		return r, nil
	}
	var svcPort *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == port {
			svcPort = &svc.Spec.Ports[i]
			break
		}
	}
	if svcPort == nil {
		return r, nil
	}
	r.PortFound, r.PortName = true, svcPort.Name
	slices, err := g.List(ctx, grEndpointSlices, namespace)
	if err != nil {
		return r, err
	}
	for _, o := range slices {
		sl, ok := o.(*discoveryv1.EndpointSlice)
		if !ok || sl.Labels[discoveryv1.LabelServiceName] != name {
			continue
		}
		r.SlicesFound = true
		for _, p := range sl.Ports {
			if !portMatches(p.Name, p.Port, svcPort) {
				continue
			}
			for _, ep := range sl.Endpoints {
				if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
					continue
				}
				for _, a := range ep.Addresses {
					r.Addresses = append(r.Addresses, net.JoinHostPort(a, strconv.Itoa(int(*p.Port))))
				}
			}
		}
	}
	if len(r.Addresses) == 0 {
		if obj, err := g.Get(ctx, grEndpoints, namespace, name); err == nil {
			eps := obj.(*corev1.Endpoints)
			for _, ss := range eps.Subsets {
				for _, p := range ss.Ports {
					pp := p.Port
					if !portMatches(&p.Name, &pp, svcPort) {
						continue
					}
					for _, a := range ss.Addresses {
						r.Addresses = append(r.Addresses, net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
					}
				}
			}
		}
	}
	sort.Strings(r.Addresses)
	return r, nil
}

// ResolveService returns the address ("host:port") of a ready endpoint of
// the service namespace/name serving its port port (LookupService), picked
// at random as upstream does, or an error in upstream's wording.
func ResolveService(ctx context.Context, g admission.Getter, namespace, name string, port int32) (string, error) {
	r, err := LookupService(ctx, g, namespace, name, port)
	switch {
	case err != nil:
		return "", err
	case !r.ServiceFound:
		return "", fmt.Errorf("service %q not found", name)
	case !r.PortFound:
		return "", fmt.Errorf("no service port %d found for service %q", port, name)
	case len(r.Addresses) == 0:
		return "", fmt.Errorf("no endpoints available for service %q", name)
	}
	return r.Addresses[rand.IntN(len(r.Addresses))], nil
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
