package record

import (
	"fmt"
	"reflect"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/skiff-sh/skiff/pkg/client"
)

// recorder builds events and hands them to its broadcaster.
type recorder struct {
	b      *broadcaster
	source corev1.EventSource
}

func (r *recorder) Event(object runtime.Object, eventtype, reason, message string) {
	r.generateEvent(object, nil, eventtype, reason, message)
}

func (r *recorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	r.generateEvent(object, nil, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

func (r *recorder) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	r.generateEvent(object, annotations, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

func (r *recorder) generateEvent(object runtime.Object, annotations map[string]string, eventtype, reason, message string) {
	log := r.b.cfg.logger
	ref, err := GetReference(r.b.cfg.scheme, object)
	if err != nil {
		log.Error("could not construct reference, will not report event", "err", err, "type", eventtype, "reason", reason, "message", message)
		return
	}
	if eventtype != corev1.EventTypeNormal && eventtype != corev1.EventTypeWarning {
		log.Error("unsupported event type", "type", eventtype, "reason", reason)
		return
	}
	now := r.b.cfg.clock.Now()
	e := makeEvent(ref, r.b.names.next(ref.Name, now), now, annotations, eventtype, reason, message)
	e.Source = r.source
	e.ReportingController = r.source.Component
	e.ReportingInstance = r.source.Host
	if !r.b.action(e) {
		log.Error("unable to record event: too many queued events or broadcaster shut down, dropped event", "event", eventRef(e))
	}
}

// makeEvent builds a core/v1 Event about ref at now.
func makeEvent(ref *corev1.ObjectReference, name string, now time.Time, annotations map[string]string, eventtype, reason, message string) *corev1.Event {
	t := metav1.NewTime(now)
	ns := ref.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	var ann map[string]string
	if len(annotations) > 0 {
		ann = make(map[string]string, len(annotations))
		for k, v := range annotations {
			ann[k] = v
		}
	}
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   ns,
			Annotations: ann,
		},
		InvolvedObject: *ref,
		Reason:         reason,
		Message:        message,
		FirstTimestamp: t,
		LastTimestamp:  t,
		Count:          1,
		Type:           eventtype,
	}
}

// generateEventName is "<object name>.<unix nanoseconds in hex>", or a
// random UUID when that is not a valid name.
func generateEventName(refName string, unixNano int64) string {
	name := fmt.Sprintf("%s.%x", refName, unixNano)
	if errs := apimachineryvalidation.NameIsDNSSubdomain(name, false); len(errs) > 0 {
		name = string(uuid.NewUUID())
	}
	return name
}

// nameGenerator names events after the clock (generateEventName) but
// never twice with the same nanosecond: a clock that has not moved (a fake
// clock, or a coarse one) would otherwise give two different events about
// one object the same name, and the second would be rejected as
// AlreadyExists. Upstream has that collision; we bump the nanoseconds.
type nameGenerator struct {
	mu   sync.Mutex
	last int64
}

func (g *nameGenerator) next(refName string, now time.Time) string {
	g.mu.Lock()
	n := max(now.UnixNano(), g.last+1)
	g.last = n
	g.mu.Unlock()
	return generateEventName(refName, n)
}

// GetReference returns a reference to obj. Its kind and apiVersion come
// from obj's TypeMeta when set (objects read from the API server carry
// it); else from scheme (may be nil); else from the built-in types the
// client knows. An *corev1.ObjectReference is returned as is (a copy).
func GetReference(scheme *runtime.Scheme, obj runtime.Object) (*corev1.ObjectReference, error) {
	if obj == nil || (reflect.ValueOf(obj).Kind() == reflect.Pointer && reflect.ValueOf(obj).IsNil()) {
		return nil, fmt.Errorf("no object to reference")
	}
	if ref, ok := obj.(*corev1.ObjectReference); ok {
		return ref.DeepCopy(), nil
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		k, err := kindOf(scheme, obj)
		if err != nil {
			return nil, err
		}
		gvk = k
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	return &corev1.ObjectReference{
		Kind:            gvk.Kind,
		APIVersion:      gvk.GroupVersion().String(),
		Name:            m.GetName(),
		Namespace:       m.GetNamespace(),
		UID:             m.GetUID(),
		ResourceVersion: m.GetResourceVersion(),
	}, nil
}

// kindOf finds the kind of a typed object without TypeMeta.
func kindOf(scheme *runtime.Scheme, obj runtime.Object) (schema.GroupVersionKind, error) {
	if scheme != nil {
		if gvks, _, err := scheme.ObjectKinds(obj); err == nil && len(gvks) > 0 && gvks[0].Kind != "" {
			return gvks[0], nil
		}
	}
	if o, ok := obj.(client.Object); ok {
		if res, err := client.ResourceFor(o); err == nil {
			// The built-in types are named after their kind.
			return schema.GroupVersionKind{Group: res.Group, Version: res.Version, Kind: reflect.TypeOf(obj).Elem().Name()}, nil
		}
	}
	return schema.GroupVersionKind{}, fmt.Errorf("cannot find the kind of %T: set its TypeMeta or pass a scheme (WithScheme)", obj)
}
