package cache

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/skiff-sh/skiff/pkg/client"
)

// ListerWatcher is what a Reflector needs from the API: a list and a watch
// of the same collection, with the same selectors. The Reflector sets
// ResourceVersion, Limit, Continue, TimeoutSeconds, AllowWatchBookmarks and
// the watch-list fields itself; implementations add their selectors.
//
// (client-go splits it into Lister and Watcher; here Lister is the generic
// typed cache reader, so the halves are only named as ListFunc and
// WatchFunc.)
type ListerWatcher interface {
	// List returns a list object (e.g. *corev1.PodList) whose ListMeta
	// carries the collection's resourceVersion and, for a paged list, the
	// continue token.
	List(ctx context.Context, options metav1.ListOptions) (runtime.Object, error)
	// Watch streams changes after options.ResourceVersion.
	Watch(ctx context.Context, options metav1.ListOptions) (watch.Interface, error)
}

// ListFunc lists a resource.
type ListFunc func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error)

// WatchFunc watches a resource.
type WatchFunc func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error)

// ListWatch is a ListerWatcher made of two functions.
type ListWatch struct {
	ListFunc  ListFunc
	WatchFunc WatchFunc
	// DisableChunking makes the Reflector list everything in one request
	// instead of pages of ReflectorOptions.PageSize.
	DisableChunking bool
}

var _ ListerWatcher = (*ListWatch)(nil)

// List calls ListFunc.
func (lw *ListWatch) List(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	return lw.ListFunc(ctx, options)
}

// Watch calls WatchFunc.
func (lw *ListWatch) Watch(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchFunc(ctx, options)
}

// NewListWatchFromTyped returns a ListWatch over a typed client (whose
// namespace, if set, scopes it). tweak, if not nil, adjusts the options of
// every list and watch — typically to set a label or field selector — and
// must do the same each time.
func NewListWatchFromTyped[T client.Object, L client.ObjectList](typed *client.Typed[T, L], tweak func(*metav1.ListOptions)) *ListWatch {
	return &ListWatch{
		ListFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
			if tweak != nil {
				tweak(&options)
			}
			return typed.List(ctx, options)
		},
		WatchFunc: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			options.Watch = true
			if tweak != nil {
				tweak(&options)
			}
			return typed.Watch(ctx, options)
		},
	}
}

// NewFilteredListWatchFromClient returns a ListWatch of the built-in
// resource of T (client.For) in namespace ("" = all namespaces), with
// tweak applied to every request (see NewListWatchFromTyped).
func NewFilteredListWatchFromClient[T client.Object, L client.ObjectList](c *client.Client, namespace string, tweak func(*metav1.ListOptions)) *ListWatch {
	return NewListWatchFromTyped(client.For[T, L](c).Namespace(namespace), tweak)
}

// NewListWatchFromClient returns a ListWatch of the built-in resource of T
// in namespace ("" = all namespaces) restricted by fieldSelector (nil or
// fields.Everything() for no restriction).
func NewListWatchFromClient[T client.Object, L client.ObjectList](c *client.Client, namespace string, fieldSelector fields.Selector) *ListWatch {
	return NewFilteredListWatchFromClient[T, L](c, namespace, func(o *metav1.ListOptions) {
		if fieldSelector != nil {
			o.FieldSelector = fieldSelector.String()
		}
	})
}
