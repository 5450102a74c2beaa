package registry

import (
	"reflect"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/storage"
)

// Strategy is what makes one resource different from another: how objects
// are defaulted, prepared, validated and deleted. Every field is optional;
// nil means "nothing special".
type Strategy struct {
	// Default applies upstream's defaulting (run on every decoded object).
	Default func(obj runtime.Object)
	// PrepareForCreate normalises a new object (e.g. resets its status).
	PrepareForCreate func(obj runtime.Object)
	// PrepareForUpdate normalises an update given the stored object.
	PrepareForUpdate func(obj, old runtime.Object)
	// SetRequester records the requesting user (nil when the request
	// carries none, e.g. the server's own creates) in a new object, after
	// PrepareForCreate (a CertificateSigningRequest's spec.username).
	SetRequester func(obj runtime.Object, user *authenticationv1.UserInfo)
	// StampUpdate sets the times the server records on an update (a
	// condition's lastTransitionTime), after PrepareForUpdate; now comes
	// from the Store's clock.
	StampUpdate func(obj, old runtime.Object, now time.Time)
	// Validate checks a new object.
	Validate func(obj runtime.Object) field.ErrorList
	// ValidateUpdate checks an update.
	ValidateUpdate func(obj, old runtime.Object) field.ErrorList
	// Canonicalize makes equivalent objects identical before storing.
	Canonicalize func(obj runtime.Object)

	// Generation: a new object gets metadata.generation 1, and every change
	// outside metadata and status increments it.
	Generation bool
	// HasStatus: the resource has a status subresource, so the main
	// resource ignores status changes and create resets status (unless
	// KeepStatusOnCreate).
	HasStatus          bool
	KeepStatusOnCreate bool
	// AllowCreateOnUpdate lets PUT create a missing object.
	AllowCreateOnUpdate bool
	// AllowUnconditionalUpdate lets PUT omit metadata.resourceVersion.
	AllowUnconditionalUpdate bool
	// GracePeriod returns the default grace period for deleting obj and
	// whether deletion is graceful at all (pods on a node).
	GracePeriod func(obj runtime.Object) (int64, bool)
	// Finalizing is called on an object being deleted (deletionTimestamp
	// set): it may mark the object (a namespace becomes Terminating) and
	// reports whether something other than metadata.finalizers still holds
	// the deletion (a namespace's spec.finalizers).
	Finalizing func(obj runtime.Object) (wait bool)
	// DefaultPropagation is the garbage collection policy of a delete that
	// names none and finds no "orphan" or "foregroundDeletion" finalizer on
	// the object (upstream's DefaultGarbageCollectionPolicy); empty means
	// Background. core/v1 ReplicationControllers orphan their pods by
	// default, as before garbage collection existed.
	DefaultPropagation metav1.DeletionPropagation
	// ReturnDeletedObject: DELETE answers with the object instead of a Status.
	ReturnDeletedObject bool
	// FieldLabels are the field selector keys the resource supports beyond
	// metadata.name and metadata.namespace, with their extractor.
	Fields func(obj runtime.Object) map[string]string
}

// attrs returns the selector attributes of obj under this strategy.
func (s *Strategy) attrs(obj runtime.Object) (map[string]string, fields.Set, error) {
	if s.Fields == nil {
		return storage.DefaultAttrs(obj)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, err
	}
	f := fields.Set(s.Fields(obj))
	f["metadata.name"] = m.GetName()
	if ns := m.GetNamespace(); ns != "" {
		f["metadata.namespace"] = ns
	}
	return m.GetLabels(), f, nil
}

// statusField returns the Status field of obj, if it has one.
func statusField(obj runtime.Object) reflect.Value {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer {
		return reflect.Value{}
	}
	return v.Elem().FieldByName("Status")
}

// CopyStatus sets obj's status to old's (the main resource ignores status).
func CopyStatus(obj, old runtime.Object) {
	dst, src := statusField(obj), statusField(old)
	if dst.IsValid() && src.IsValid() && dst.CanSet() {
		dst.Set(reflect.ValueOf(old.DeepCopyObject()).Elem().FieldByName("Status"))
	}
}

// ResetStatus clears obj's status.
func ResetStatus(obj runtime.Object) {
	if s := statusField(obj); s.IsValid() && s.CanSet() {
		s.Set(reflect.Zero(s.Type()))
	}
}

// CopyAllButStatus makes obj equal to old except for its status and
// metadata (what a status subresource update may change).
func CopyAllButStatus(obj, old runtime.Object) {
	dst := reflect.ValueOf(obj).Elem()
	src := reflect.ValueOf(old.DeepCopyObject()).Elem()
	for i := 0; i < dst.NumField(); i++ {
		switch dst.Type().Field(i).Name {
		case "Status", "TypeMeta", "ObjectMeta":
			continue
		}
		if dst.Field(i).CanSet() {
			dst.Field(i).Set(src.Field(i))
		}
	}
}

// specChanged reports whether anything outside metadata and status differs.
func specChanged(obj, old runtime.Object) bool {
	a, b := reflect.ValueOf(obj).Elem(), reflect.ValueOf(old).Elem()
	for i := 0; i < a.NumField(); i++ {
		switch a.Type().Field(i).Name {
		case "Status", "TypeMeta", "ObjectMeta":
			continue
		}
		if !equality.Semantic.DeepEqual(a.Field(i).Interface(), b.Field(i).Interface()) {
			return true
		}
	}
	return false
}

// StatusStrategy derives the strategy of a status subresource: only the
// status (and labels/annotations... as upstream, metadata updates are kept)
// changes; everything else stays as stored.
func StatusStrategy(main *Strategy, validateStatus func(obj, old runtime.Object) field.ErrorList) *Strategy {
	s := *main
	s.PrepareForCreate = nil
	s.PrepareForUpdate = func(obj, old runtime.Object) {
		CopyAllButStatus(obj, old)
	}
	s.ValidateUpdate = validateStatus
	s.StampUpdate = nil
	s.Generation = false
	s.HasStatus = false
	s.AllowCreateOnUpdate = false
	return &s
}

// SubresourceStrategy derives the strategy of an update subresource from
// the main resource's: only what sub.Keep leaves alone changes.
func SubresourceStrategy(main *Strategy, sub UpdateSubresource) *Strategy {
	s := StatusStrategy(main, sub.ValidateUpdate)
	s.PrepareForUpdate = sub.Keep
	s.StampUpdate = sub.Stamp
	return s
}

// objectMeta is a convenience accessor for typed objects.
func objectMeta(obj runtime.Object) metav1.Object {
	if m, ok := obj.(metav1.Object); ok {
		return m
	}
	return nil
}
