package cache

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// AppendFunc receives each matching object from ListAll/ListAllByNamespace.
type AppendFunc func(any)

// ListAll calls appendFn for every object in store whose labels match
// selector (a nil selector matches everything).
func ListAll(store Store, selector labels.Selector, appendFn AppendFunc) error {
	if selector == nil {
		selector = labels.Everything()
	}
	if labels.MatchesNothing(selector) {
		return nil
	}
	return appendMatching(store.List(), selector, "", false, appendFn)
}

// ListAllByNamespace calls appendFn for every object of namespace in indexer
// whose labels match selector. An empty namespace (metav1.NamespaceAll) means
// all namespaces. The NamespaceIndex is used when the indexer has it;
// otherwise the whole store is scanned.
func ListAllByNamespace(indexer Indexer, namespace string, selector labels.Selector, appendFn AppendFunc) error {
	if selector == nil {
		selector = labels.Everything()
	}
	if labels.MatchesNothing(selector) {
		return nil
	}
	if namespace == metav1.NamespaceAll {
		return ListAll(indexer, selector, appendFn)
	}
	items, err := indexer.ByIndex(NamespaceIndex, namespace)
	if err != nil {
		// No namespace index: filter a full listing.
		return appendMatching(indexer.List(), selector, namespace, true, appendFn)
	}
	return appendMatching(items, selector, "", false, appendFn)
}

func appendMatching(items []any, selector labels.Selector, namespace string, checkNamespace bool, appendFn AppendFunc) error {
	selectAll := selector.Empty()
	for _, obj := range items {
		if selectAll && !checkNamespace {
			// Avoid computing labels in the common list-everything case.
			appendFn(obj)
			continue
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return err
		}
		if checkNamespace && m.GetNamespace() != namespace {
			continue
		}
		if selectAll || selector.Matches(labels.Set(m.GetLabels())) {
			appendFn(obj)
		}
	}
	return nil
}

// Lister reads typed objects of one resource from an Indexer (normally an
// informer's). Returned objects are shared with the cache and must not be
// modified.
type Lister[T runtime.Object] interface {
	// List returns the objects of all namespaces matching selector.
	List(selector labels.Selector) ([]T, error)
	// Get returns a cluster-scoped object by name, or a NotFound error.
	Get(name string) (T, error)
	// Namespace returns a lister scoped to one namespace.
	Namespace(namespace string) NamespaceLister[T]
}

// NamespaceLister reads typed objects of one namespace.
type NamespaceLister[T runtime.Object] interface {
	// List returns the namespace's objects matching selector.
	List(selector labels.Selector) ([]T, error)
	// Get returns an object of the namespace by name, or a NotFound error.
	Get(name string) (T, error)
}

// NewLister returns a Lister over indexer, whose objects must be of type T
// and keyed with MetaNamespaceKeyFunc. resource is used in NotFound errors.
func NewLister[T runtime.Object](indexer Indexer, resource schema.GroupResource) Lister[T] {
	return &lister[T]{indexer: indexer, resource: resource}
}

type lister[T runtime.Object] struct {
	indexer  Indexer
	resource schema.GroupResource
}

func (l *lister[T]) List(selector labels.Selector) ([]T, error) {
	return collect[T](func(fn AppendFunc) error { return ListAll(l.indexer, selector, fn) })
}

func (l *lister[T]) Get(name string) (T, error) {
	return get[T](l.indexer, l.resource, name, name)
}

func (l *lister[T]) Namespace(namespace string) NamespaceLister[T] {
	return &namespaceLister[T]{indexer: l.indexer, resource: l.resource, namespace: namespace}
}

type namespaceLister[T runtime.Object] struct {
	indexer   Indexer
	resource  schema.GroupResource
	namespace string
}

func (n *namespaceLister[T]) List(selector labels.Selector) ([]T, error) {
	return collect[T](func(fn AppendFunc) error {
		return ListAllByNamespace(n.indexer, n.namespace, selector, fn)
	})
}

func (n *namespaceLister[T]) Get(name string) (T, error) {
	key := name
	if n.namespace != "" {
		key = n.namespace + "/" + name
	}
	return get[T](n.indexer, n.resource, key, name)
}

func collect[T runtime.Object](list func(AppendFunc) error) ([]T, error) {
	var out []T
	var typeErr error
	err := list(func(obj any) {
		t, ok := obj.(T)
		if !ok {
			if typeErr == nil {
				typeErr = fmt.Errorf("cache: unexpected object of type %T in lister for %T", obj, *new(T))
			}
			return
		}
		out = append(out, t)
	})
	if err == nil {
		err = typeErr
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

func get[T runtime.Object](indexer Indexer, resource schema.GroupResource, key, name string) (T, error) {
	var zero T
	obj, exists, err := indexer.GetByKey(key)
	if err != nil {
		return zero, err
	}
	if !exists {
		return zero, apierrors.NewNotFound(resource, name)
	}
	t, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("cache: unexpected object of type %T under key %q in lister for %T", obj, key, zero)
	}
	return t, nil
}
