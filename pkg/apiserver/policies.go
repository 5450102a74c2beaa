package apiserver

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
	"github.com/skiff-sh/skiff/pkg/apiserver/admission/policy"
)

// policyPlugins are the ValidatingAdmissionPolicy and
// MutatingAdmissionPolicy admission plugins (package policy), given the
// server's watch cache, resources and authorizer.
func (s *Server) policyPlugins() map[string]admission.Plugin {
	cfg := policy.Config{
		Getter:        s,
		Resources:     policyResources{s},
		Authorizer:    s.authorizer,
		TypeConverter: s.policyTypeConverter,
		Logger:        s.cfg.Logger,
	}
	s.policyTypes = &policy.TypeChecker{Resources: policyResources{s}, Schemas: func() (map[string]*spec.Schema, error) {
		if s.openapi == nil {
			return nil, nil
		}
		return s.openapi.Definitions().Schemas()
	}}
	return map[string]admission.Plugin{
		policy.ValidatingName: policy.NewValidating(cfg),
		policy.MutatingName:   policy.NewMutating(cfg),
	}
}

// policyResources implements policy.Resources over the served endpoints.
type policyResources struct{ s *Server }

func (r policyResources) endpointFor(gvr schema.GroupVersionResource) *endpoint {
	e := r.s.endpoints[gvr]
	if e == nil {
		e = r.s.crs.Load().endpoints[gvr]
	}
	if e == nil || e.review != nil || e.computed {
		return nil
	}
	return e
}

func (r policyResources) ResourceFor(gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool, bool) {
	for _, eps := range []map[schema.GroupVersionResource]*endpoint{r.s.endpoints, r.s.crs.Load().endpoints} {
		for gvr, e := range eps {
			if e.gvk == gvk && e.review == nil && !e.computed {
				return gvr, e.def.Namespaced, true
			}
		}
	}
	return schema.GroupVersionResource{}, false, false
}

func (r policyResources) KindFor(gvr schema.GroupVersionResource) (schema.GroupVersionKind, bool) {
	if e := r.endpointFor(gvr); e != nil {
		return e.gvk, true
	}
	return schema.GroupVersionKind{}, false
}

func (r policyResources) ToVersion(obj runtime.Object, gvr schema.GroupVersionResource) (runtime.Object, error) {
	e := r.endpointFor(gvr)
	if e == nil {
		return nil, fmt.Errorf("unable to convert to %v: unknown kind", gvr)
	}
	return (&admissionVersions{s: r.s, e: e}).ToVersion(obj, gvr)
}

func (s *Server) policyTypeConverter(gvk schema.GroupVersionKind) (managedfields.TypeConverter, error) {
	gvr, _, ok := policyResources{s}.ResourceFor(gvk)
	if !ok {
		return nil, fmt.Errorf("unknown kind %v", gvk)
	}
	return s.fields.TypeConverter(gvk, policyResources{s}.endpointFor(gvr).cr != nil)
}
