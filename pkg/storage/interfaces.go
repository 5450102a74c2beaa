package storage

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// Interface is what a registry needs from storage: typed access to the
// objects under a key prefix, with optimistic concurrency on resourceVersion
// and ordered watches.
type Interface interface {
	// Create stores obj at key if nothing is there and decodes the stored
	// object (with its resourceVersion) into out. KeyExists if the key is taken.
	Create(ctx context.Context, key string, obj, out runtime.Object) error

	// Get decodes the object at key into out. With IgnoreNotFound a missing
	// key leaves out as the zero object instead of failing.
	Get(ctx context.Context, key string, opts GetOptions, out runtime.Object) error

	// GetList fills listObj (a *XList) with the objects under key (a prefix
	// when opts.Recursive) that match opts.Predicate, paged by Limit/Continue.
	GetList(ctx context.Context, key string, opts ListOptions, listObj runtime.Object) error

	// GuaranteedUpdate reads the object at key, calls tryUpdate with it and
	// writes the result if the object did not change in between; otherwise it
	// re-reads and calls tryUpdate again. The final object is decoded into dest.
	// cachedExisting, when not nil, is a recent copy of the object that the
	// caller hands over (tryUpdate may get it and change it); a stale one is
	// detected and the object re-read.
	GuaranteedUpdate(ctx context.Context, key string, dest runtime.Object, ignoreNotFound bool,
		preconditions *Preconditions, tryUpdate UpdateFunc, cachedExisting runtime.Object) error

	// Delete removes the object at key if preconditions and validateDeletion
	// accept its current state; the deleted object is decoded into out.
	Delete(ctx context.Context, key string, out runtime.Object, preconditions *Preconditions,
		validateDeletion ValidateObjectFunc, cachedExisting runtime.Object) error

	// ListObjects is GetList without a typed list: it returns the selected
	// objects (which may be shared *CachedObject values that must not be
	// mutated) and the list metadata (resourceVersion, continue,
	// remainingItemCount). The API server serves lists from it.
	ListObjects(ctx context.Context, key string, opts ListOptions) ([]runtime.Object, metav1.ListMeta, error)

	// Watch streams changes under key after opts.ResourceVersion.
	Watch(ctx context.Context, key string, opts ListOptions) (watch.Interface, error)

	// CurrentRevision is the backend's latest revision (a consistent read).
	CurrentRevision(ctx context.Context) (uint64, error)

	// Count is the number of keys under key (for metrics).
	Count(ctx context.Context, key string) (int64, error)
}

// UpdateFunc computes the new object from the current one. Returning an error
// aborts the update; returning the input unchanged writes nothing.
type UpdateFunc func(input runtime.Object, res ResponseMeta) (output runtime.Object, err error)

// ResponseMeta describes the state the UpdateFunc sees.
type ResponseMeta struct {
	// ResourceVersion is the revision of the current object (0 if absent).
	ResourceVersion uint64
}

// ValidateObjectFunc inspects the current object before a destructive write.
type ValidateObjectFunc func(ctx context.Context, obj runtime.Object) error

// Preconditions must hold on the current object for a write to happen.
type Preconditions struct {
	UID             *types.UID
	ResourceVersion *string
}

// GetOptions tunes Get.
type GetOptions struct {
	IgnoreNotFound bool
	// ResourceVersion "" means the latest; "0" allows any (a cache may answer).
	ResourceVersion string
}

// ListOptions tunes GetList and Watch.
type ListOptions struct {
	// ResourceVersion: for a list "" is a consistent read, "0" any, N means
	// "not older than N" (or exactly N with ResourceVersionMatch Exact).
	// For a watch it is the revision after which events are sent; "" and "0"
	// start with synthetic ADDED events for the current state.
	ResourceVersion      string
	ResourceVersionMatch string
	Predicate            SelectionPredicate
	// Recursive treats key as a prefix.
	Recursive bool
	// ProgressNotify asks for BOOKMARK events (when Predicate.AllowWatchBookmarks).
	ProgressNotify bool
	// SendInitialEvents, for a watch, streams the current state then a
	// bookmark annotated k8s.io/initial-events-end.
	SendInitialEvents *bool
}

// AttrFunc extracts the labels and fields a selector matches against.
type AttrFunc func(obj runtime.Object) (labels.Set, fields.Set, error)

// SelectionPredicate selects objects by labels and fields and carries the
// paging parameters of a list.
type SelectionPredicate struct {
	Label               labels.Selector
	Field               fields.Selector
	GetAttrs            AttrFunc
	Limit               int64
	Continue            string
	AllowWatchBookmarks bool
}

// Empty reports whether the predicate selects everything.
func (p SelectionPredicate) Empty() bool {
	return (p.Label == nil || p.Label.Empty()) && (p.Field == nil || p.Field.Empty())
}

// Matches reports whether obj is selected.
func (p SelectionPredicate) Matches(obj runtime.Object) (bool, error) {
	if p.Empty() {
		return true, nil
	}
	l, f, err := p.attrs(obj)
	if err != nil {
		return false, err
	}
	return p.MatchesAttrs(l, f), nil
}

// MatchesAttrs reports whether the given labels and fields are selected.
func (p SelectionPredicate) MatchesAttrs(l labels.Labels, f fields.Fields) bool {
	if p.Label != nil && !p.Label.Empty() && !p.Label.Matches(l) {
		return false
	}
	if p.Field != nil && !p.Field.Empty() && !p.Field.Matches(f) {
		return false
	}
	return true
}

func (p SelectionPredicate) attrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	if p.GetAttrs != nil {
		return p.GetAttrs(obj)
	}
	return DefaultAttrs(obj)
}

// MatchesSingleName returns the name the field selector pins (metadata.name=x).
func (p SelectionPredicate) MatchesSingleName() (string, bool) {
	if p.Field == nil {
		return "", false
	}
	return p.Field.RequiresExactMatch("metadata.name")
}

// FieldList is a compact, read-only field set: key, value, key, value...
// The watch cache keeps one per object instead of a map (a few hundred
// bytes less per object, and the values share the object's strings).
type FieldList []string

// NewFieldList copies a field set into a FieldList.
func NewFieldList(f fields.Set) FieldList {
	out := make(FieldList, 0, 2*len(f))
	for k, v := range f {
		out = append(out, k, v)
	}
	return out
}

// Has implements fields.Fields.
func (l FieldList) Has(field string) bool {
	for i := 0; i < len(l); i += 2 {
		if l[i] == field {
			return true
		}
	}
	return false
}

// Get implements fields.Fields.
func (l FieldList) Get(field string) string {
	for i := 0; i < len(l); i += 2 {
		if l[i] == field {
			return l[i+1]
		}
	}
	return ""
}
