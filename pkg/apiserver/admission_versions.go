package apiserver

import (
	"fmt"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/skiff-sh/skiff/pkg/storage"
)

// admissionVersions implements admission.Versions for one endpoint: the
// conversions between the storage form and the served versions of the
// endpoint's resource that admission webhooks need.
type admissionVersions struct {
	s *Server
	e *endpoint

	// the equivalents, computed once per request (every webhook and
	// policy with matchPolicy Equivalent that the request's own version
	// does not match asks)
	eqOnce sync.Once
	eq     []schema.GroupVersionResource
}

// endpointFor finds the served endpoint gvr of the same stored resource.
func (v *admissionVersions) endpointFor(gvr schema.GroupVersionResource) *endpoint {
	if gvr == v.e.gvr {
		return v.e
	}
	e := v.s.endpoints[gvr]
	if e == nil {
		e = v.s.crs.Load().endpoints[gvr]
	}
	if e == nil || e.qualified != v.e.qualified || e.review != nil || e.computed {
		return nil
	}
	return e
}

func (v *admissionVersions) Equivalents() []schema.GroupVersionResource {
	v.eqOnce.Do(func() { v.eq = v.equivalents() })
	return v.eq
}

func (v *admissionVersions) equivalents() []schema.GroupVersionResource {
	var out []schema.GroupVersionResource
	add := func(eps map[schema.GroupVersionResource]*endpoint) {
		for gvr, e := range eps {
			if e.qualified == v.e.qualified && e.review == nil && !e.computed {
				out = append(out, gvr)
			}
		}
	}
	add(v.s.endpoints)
	if v.e.cr != nil {
		add(v.s.crs.Load().endpoints)
	}
	// a deterministic order (the endpoints are a map): by group, then
	// newest version first (v1 before v1beta1), so that a rule naming two
	// other versions always matches the same one
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return version.CompareKubeAwareVersionStrings(out[i].Version, out[j].Version) > 0
	})
	return out
}

func (v *admissionVersions) KindFor(gvr schema.GroupVersionResource) schema.GroupVersionKind {
	if e := v.endpointFor(gvr); e != nil {
		return e.gvk
	}
	return schema.GroupVersionKind{}
}

func (v *admissionVersions) ToVersion(obj runtime.Object, gvr schema.GroupVersionResource) (runtime.Object, error) {
	e := v.endpointFor(gvr)
	if e == nil {
		return nil, fmt.Errorf("unable to convert to %v: unknown kind", gvr)
	}
	out, err := e.fromStorage(storage.Unwrap(obj).DeepCopyObject())
	if err != nil {
		return nil, err
	}
	out.GetObjectKind().SetGroupVersionKind(e.gvk)
	return out, nil
}

func (v *admissionVersions) FromJSON(data []byte, gvr schema.GroupVersionResource) (runtime.Object, error) {
	e := v.endpointFor(gvr)
	if e == nil {
		return nil, fmt.Errorf("unable to convert from %v: unknown kind", gvr)
	}
	res, err := v.s.codecs.decode(bodyJSON, data, e.gvk, e.newObj())
	if err != nil {
		return nil, err
	}
	return v.s.defaultAndConvert(e, res.obj)
}
