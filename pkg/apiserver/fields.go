package apiserver

import (
	"fmt"
	"reflect"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/skiff-sh/skiff/pkg/apiserver/fieldmanager"
	"github.com/skiff-sh/skiff/pkg/storage"
)

// Field management (metadata.managedFields) and server-side apply glue: the
// endpoints are the kinds' versions, their toStorage/fromStorage the
// conversions the field managers need.

func (s *Server) newFieldManagers() *fieldmanager.Managers {
	return fieldmanager.New(fieldmanager.Config{
		Source:    func() fieldmanager.Source { return s.openapi.Definitions() },
		Convertor: fieldConvertor{s},
		Creater:   fieldConvertor{s},
	})
}

// endpointOfKind finds the endpoint serving gvk.
func (s *Server) endpointOfKind(gvk schema.GroupVersionKind) *endpoint {
	if e := s.kinds[gvk]; e != nil {
		return e
	}
	return s.crs.Load().kinds[gvk]
}

// fieldManagerKind describes the field manager of writes to e (through sub)
// whose objects are in version hub.
func fieldManagerKind(e *endpoint, sub string, hub schema.GroupVersion) fieldmanager.Kind {
	k := fieldmanager.Kind{GVK: e.gvk, Hub: hub, Subresource: sub, CustomResource: e.cr != nil}
	switch {
	case sub == "" && e.status != nil:
		// As upstream's strategies' reset fields: what a write through
		// the main resource cannot change is not owned by it.
		k.ResetFields = []fieldpath.Path{fieldpath.MakePathOrDie("status")}
	case sub == "status":
		k.ResetFields = []fieldpath.Path{fieldpath.MakePathOrDie("spec")}
	}
	return k
}

func storageGV(e *endpoint) schema.GroupVersion {
	return schema.GroupVersion{Group: e.def.Group, Version: e.def.Version}
}

// fieldManager returns the field manager of e's writes through sub, objects
// in the storage version (hub) or the served one.
func (s *Server) fieldManager(e *endpoint, sub string, servedHub bool) (*managedfields.FieldManager, error) {
	hub := storageGV(e)
	if servedHub {
		hub = e.gvk.GroupVersion()
	}
	return s.fields.For(fieldManagerKind(e, sub, hub))
}

// trackUpdate records manager's ownership of what obj changes from live
// (both in the storage version). Failing to track never fails the write:
// obj then keeps live's managedFields.
func (s *Server) trackUpdate(e *endpoint, sub string, live, obj runtime.Object, manager string) runtime.Object {
	if e.review != nil || e.computed {
		return obj
	}
	fm, err := s.fieldManager(e, sub, false)
	if err != nil {
		s.cfg.Logger.Warn("field management unavailable", "resource", e.qualified.String(), "err", err)
		return obj
	}
	live = storage.Unwrap(live)
	if u, ok := live.(*unstructured.Unstructured); ok && u.GetKind() == "" {
		// The empty "live" object of a create (custom resources carry
		// their kind in the object).
		u.SetGroupVersionKind(storageGV(e).WithKind(e.def.Kind))
	}
	out := fm.UpdateNoErrors(live, obj, manager)
	storage.InternManagedFields(out)
	return out
}

// trackCreate records manager's ownership of the fields of obj (storage
// version), being created.
func (s *Server) trackCreate(e *endpoint, obj runtime.Object, manager string) runtime.Object {
	if e.review != nil || e.computed || e.cr != nil {
		return s.trackUpdate(e, "", e.def.New(), obj, manager)
	}
	k := fieldManagerKind(e, "", storageGV(e))
	out, err := s.fields.TrackCreate(k, withKind(e.def.New(), k.Hub.WithKind(e.def.Kind)), obj, manager)
	if err != nil {
		s.cfg.Logger.Warn("field management unavailable", "resource", e.qualified.String(), "err", err)
		return obj
	}
	storage.InternManagedFields(out)
	return out
}

// fieldConvertor converts objects of a served kind between its versions
// (through the storage version) and makes empty ones, for the field
// managers. Results are typed objects with their kind set; the input is
// never modified.
type fieldConvertor struct{ s *Server }

func (c fieldConvertor) kindOf(in runtime.Object) (schema.GroupVersionKind, error) {
	if gvk := in.GetObjectKind().GroupVersionKind(); !gvk.Empty() {
		return gvk, nil
	}
	gvks, _, err := c.s.scheme.ObjectKinds(in)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	return gvks[0], nil
}

// withKind returns obj with its kind set, copying it (shallowly) when it
// has to be set.
func withKind(obj runtime.Object, gvk schema.GroupVersionKind) runtime.Object {
	if obj.GetObjectKind().GroupVersionKind() == gvk {
		return obj
	}
	v := reflect.ValueOf(obj)
	cp := reflect.New(v.Elem().Type())
	cp.Elem().Set(v.Elem())
	out := cp.Interface().(runtime.Object)
	out.GetObjectKind().SetGroupVersionKind(gvk)
	return out
}

func (c fieldConvertor) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	in = storage.Unwrap(in)
	from, err := c.kindOf(in)
	if err != nil {
		return nil, err
	}
	var to schema.GroupVersionKind
	if gv, ok := target.(schema.GroupVersion); ok {
		// also across groups: events.k8s.io/v1 Events are stored as core/v1
		to = gv.WithKind(from.Kind)
	} else if to, ok = target.KindForGroupVersionKinds([]schema.GroupVersionKind{from}); !ok {
		return nil, runtime.NewNotRegisteredGVKErrForTarget("skiff", from, target)
	}
	if from == scaleGVK && to == scaleGVK {
		// the scale subresource's kind (its own field manager)
		if u, ok := in.(runtime.Unstructured); ok {
			sc := &autoscalingv1.Scale{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), sc); err != nil {
				return nil, err
			}
			in = sc
		}
		return withKind(in, to), nil
	}
	src, dst := c.s.endpointOfKind(from), c.s.endpointOfKind(to)
	if src == nil || dst == nil || !sameResource(src, dst) {
		return nil, runtime.NewNotRegisteredGVKErrForTarget("skiff", from, target)
	}
	if src.cr != nil {
		// Custom resources: None conversion, apiVersion only.
		u, ok := in.(*unstructured.Unstructured)
		if !ok {
			return nil, fmt.Errorf("fieldConvertor: custom resource %s is a %T, not unstructured", from, in)
		}
		out := u.DeepCopy()
		out.SetGroupVersionKind(to)
		return out, nil
	}
	obj := in
	if u, ok := in.(runtime.Unstructured); ok {
		typed := src.newObj()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), typed); err != nil {
			return nil, err
		}
		obj = typed
	}
	if from == to {
		return withKind(obj, to), nil
	}
	stored, err := src.toStorage(obj)
	if err != nil {
		return nil, err
	}
	out, err := dst.fromStorage(stored)
	if err != nil {
		return nil, err
	}
	return withKind(out, to), nil
}

// sameResource reports whether two endpoints serve the same objects.
func sameResource(a, b *endpoint) bool {
	if a.cr != nil && b.cr != nil {
		return a.cr.res == b.cr.res
	}
	return a.def == b.def
}

func (c fieldConvertor) Convert(in, out, context any) error {
	return fmt.Errorf("fieldConvertor: Convert %T to %T is not supported", in, out)
}

func (c fieldConvertor) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return "", "", fmt.Errorf("fieldConvertor: field labels are not converted")
}

func (c fieldConvertor) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	if gvk == scaleGVK {
		return &autoscalingv1.Scale{TypeMeta: metav1.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}}, nil
	}
	e := c.s.endpointOfKind(gvk)
	if e == nil {
		return nil, runtime.NewNotRegisteredErrForKind("skiff", gvk)
	}
	obj := e.newObj()
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj, nil
}
