package cache

import (
	"context"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/client"
)

// TypedInformer is a SharedIndexInformer of objects of type T with a typed
// Lister over its cache:
//
//	pods := cache.NewTypedInformer(client.For[*corev1.Pod, *corev1.PodList](c), nil, cache.SharedIndexInformerOptions{})
//	pods.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Pod]{AddFunc: ...})
//	go pods.Run(ctx)
//	cache.WaitForSynced(ctx, pods.Informer().Synced())
//	p, err := pods.Lister().Namespace("default").Get("web")
type TypedInformer[T client.Object] struct {
	informer SharedIndexInformer
	lister   Lister[T]
}

// NewTypedInformer returns an informer of typed's resource (within its
// namespace, if set), with tweak (may be nil) applied to every list and
// watch. Without o.Indexers the cache is indexed by namespace
// (NamespaceIndex), which namespaced Lister calls use.
func NewTypedInformer[T client.Object, L client.ObjectList](typed *client.Typed[T, L], tweak func(*metav1.ListOptions), o SharedIndexInformerOptions) *TypedInformer[T] {
	if o.Indexers == nil {
		o.Indexers = Indexers{NamespaceIndex: MetaNamespaceIndexFunc}
	}
	inf := NewSharedIndexInformerWithOptions(NewListWatchFromTyped(typed, tweak), newObject[T](), o)
	return WrapTypedInformer[T](inf, typed.Resource().GroupVersionResource().GroupResource())
}

// WrapTypedInformer gives a typed view of an informer whose objects are of
// type T; resource names the objects in NotFound errors.
func WrapTypedInformer[T client.Object](informer SharedIndexInformer, resource schema.GroupResource) *TypedInformer[T] {
	return &TypedInformer[T]{informer: informer, lister: NewLister[T](informer.GetIndexer(), resource)}
}

// Informer is the underlying informer.
func (i *TypedInformer[T]) Informer() SharedIndexInformer { return i.informer }

// Lister reads the informer's cache.
func (i *TypedInformer[T]) Lister() Lister[T] { return i.lister }

// AddEventHandler adds a typed handler (see SharedInformer.AddEventHandler).
func (i *TypedInformer[T]) AddEventHandler(h TypedResourceEventHandlerFuncs[T]) (ResourceEventHandlerRegistration, error) {
	return i.informer.AddEventHandler(h)
}

// AddEventHandlerWithResyncPeriod adds a typed handler with its own resync
// period (see SharedInformer.AddEventHandlerWithResyncPeriod).
func (i *TypedInformer[T]) AddEventHandlerWithResyncPeriod(h TypedResourceEventHandlerFuncs[T], resyncPeriod time.Duration) (ResourceEventHandlerRegistration, error) {
	return i.informer.AddEventHandlerWithResyncPeriod(h, resyncPeriod)
}

// Run runs the informer until ctx is done.
func (i *TypedInformer[T]) Run(ctx context.Context) { i.informer.Run(ctx) }

// HasSynced reports whether the informer has synced.
func (i *TypedInformer[T]) HasSynced() bool { return i.informer.HasSynced() }

// newObject returns a new zero object of the pointer type T (nil if T is
// not a pointer type).
func newObject[T client.Object]() T {
	var zero T
	typ := reflect.TypeFor[T]()
	if typ.Kind() != reflect.Pointer {
		return zero
	}
	return reflect.New(typ.Elem()).Interface().(T)
}
