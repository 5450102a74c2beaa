package apiregistration

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	apiregistrationv1 "github.com/skiff-sh/skiff/pkg/apis/apiregistration/v1"
)

// AutoManagedLabel marks the APIServices the API server maintains itself:
// "onstart" for its own group/versions (registered at start), "true" for
// custom resource group/versions (kept in step with the CRDs).
const AutoManagedLabel = "kube-aggregator.kubernetes.io/automanaged"

// Priority orders a group/version in discovery.
type Priority struct{ Group, Version int32 }

// priorities is upstream's table of the built-in group/versions' APIService
// priorities (group first, version within the group). Group/versions not
// in it get no APIService, as upstream.
var priorities = map[schema.GroupVersion]Priority{
	{Group: "", Version: "v1"}:                             {18000, 1},
	{Group: "apiregistration.k8s.io", Version: "v1"}:       {18000, 15},
	{Group: "apps", Version: "v1"}:                         {17800, 15},
	{Group: "events.k8s.io", Version: "v1"}:                {17750, 15},
	{Group: "authentication.k8s.io", Version: "v1"}:        {17700, 15},
	{Group: "authorization.k8s.io", Version: "v1"}:         {17600, 15},
	{Group: "autoscaling", Version: "v1"}:                  {17500, 15},
	{Group: "autoscaling", Version: "v2"}:                  {17500, 30},
	{Group: "batch", Version: "v1"}:                        {17400, 15},
	{Group: "certificates.k8s.io", Version: "v1"}:          {17300, 15},
	{Group: "networking.k8s.io", Version: "v1"}:            {17200, 15},
	{Group: "policy", Version: "v1"}:                       {17100, 15},
	{Group: "rbac.authorization.k8s.io", Version: "v1"}:    {17000, 15},
	{Group: "storage.k8s.io", Version: "v1"}:               {16800, 15},
	{Group: "apiextensions.k8s.io", Version: "v1"}:         {16700, 15},
	{Group: "admissionregistration.k8s.io", Version: "v1"}: {16700, 15},
	{Group: "scheduling.k8s.io", Version: "v1"}:            {16600, 15},
	{Group: "coordination.k8s.io", Version: "v1"}:          {16500, 15},
	{Group: "node.k8s.io", Version: "v1"}:                  {16300, 15},
	{Group: "discovery.k8s.io", Version: "v1"}:             {16200, 15},
	{Group: "resource.k8s.io", Version: "v1"}:              {16200, 21},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1"}: {16100, 21},
	{Group: "storagemigration.k8s.io", Version: "v1"}:      {15800, 15},
}

// CRD APIServices sort below every built-in group, by kube-like version.
const (
	crdGroupPriority   = 1000
	crdVersionPriority = 100
)

// LocalAPIService returns the APIService the API server registers for one
// of its own group/versions, or nil when upstream's table has none.
func LocalAPIService(gv schema.GroupVersion) *apiregistrationv1.APIService {
	p, ok := priorities[gv]
	if !ok {
		return nil
	}
	return newLocal(gv, p, "onstart")
}

// CustomResourceAPIService returns the APIService for a group/version
// served for custom resources.
func CustomResourceAPIService(gv schema.GroupVersion) *apiregistrationv1.APIService {
	return newLocal(gv, Priority{crdGroupPriority, crdVersionPriority}, "true")
}

// Name is an APIService's name for gv: version.group.
func Name(gv schema.GroupVersion) string { return gv.Version + "." + gv.Group }

func newLocal(gv schema.GroupVersion, p Priority, managed string) *apiregistrationv1.APIService {
	return &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: Name(gv), Labels: map[string]string{AutoManagedLabel: managed}},
		Spec:       apiregistrationv1.APIServiceSpec{Group: gv.Group, Version: gv.Version, GroupPriorityMinimum: p.Group, VersionPriority: p.Version},
	}
}

// SetLocalAvailable marks a local APIService Available, as upstream's
// availability controller does ("Local APIServices are always
// available"), keeping the transition time of an unchanged condition. It
// reports whether the status changed.
func SetLocalAvailable(a *apiregistrationv1.APIService, now metav1.Time) bool {
	return setAvailable(a, apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue,
		Reason: "Local", Message: "Local APIServices are always available", LastTransitionTime: now})
}

// Remote is what the availability check of an APIService naming a
// service found.
type Remote struct {
	// ServiceFound: the service exists; Port: it has the port the
	// APIService names (ExternalName services always do), PortName its
	// name.
	ServiceFound, Port bool
	PortName           string
	// SlicesFound: the service has EndpointSlices; Addresses: one of them
	// has a ready endpoint and a port named PortName.
	SlicesFound, Addresses bool
	// DiscoveryErr is why the request for the group/version's discovery
	// document (GET /apis/<group>/<version> on the server) failed; nil
	// when it answered 2xx.
	DiscoveryErr error
}

// SetRemoteAvailable records the availability of an APIService served by
// another server, with the reasons and messages of upstream's remote
// availability controller. It reports whether the status changed.
func SetRemoteAvailable(a *apiregistrationv1.APIService, r Remote, now metav1.Time) bool {
	s := a.Spec.Service
	port := int32(443)
	if s.Port != nil {
		port = *s.Port
	}
	c := apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionFalse, LastTransitionTime: now}
	switch {
	case !r.ServiceFound:
		c.Reason, c.Message = "ServiceNotFound", fmt.Sprintf("service/%s in %q is not present", s.Name, s.Namespace)
	case !r.Port:
		c.Reason, c.Message = "ServicePortError", fmt.Sprintf("service/%s in %q is not listening on port %d", s.Name, s.Namespace, port)
	case !r.SlicesFound:
		c.Reason, c.Message = "EndpointsNotFound", fmt.Sprintf("cannot find endpointslices for service/%s in %q", s.Name, s.Namespace)
	case !r.Addresses:
		c.Reason, c.Message = "MissingEndpoints", fmt.Sprintf("endpointslices for service/%s in %q have no addresses with port name %q", s.Name, s.Namespace, r.PortName)
	case r.DiscoveryErr != nil:
		c.Reason, c.Message = "FailedDiscoveryCheck", r.DiscoveryErr.Error()
	default:
		c.Status, c.Reason, c.Message = apiregistrationv1.ConditionTrue, "Passed", "all checks passed"
	}
	return setAvailable(a, c)
}

// setAvailable puts c in a's conditions, keeping the transition time of
// an unchanged status; it reports whether anything changed.
func setAvailable(a *apiregistrationv1.APIService, want apiregistrationv1.APIServiceCondition) bool {
	for i, c := range a.Status.Conditions {
		if c.Type != want.Type {
			continue
		}
		if c.Status == want.Status && c.Reason == want.Reason && c.Message == want.Message {
			return false
		}
		if c.Status == want.Status {
			want.LastTransitionTime = c.LastTransitionTime
		}
		a.Status.Conditions[i] = want
		return true
	}
	a.Status.Conditions = append(a.Status.Conditions, want)
	return true
}
