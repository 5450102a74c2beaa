package cache

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
)

// Indexer is a Store that additionally maintains secondary indices over the
// stored objects, so that objects can be looked up by an indexed value (for
// example all pods of a namespace) without scanning the whole store.
type Indexer interface {
	Store
	// Index returns the stored objects whose values for the named index
	// intersect the values the index function produces for obj.
	Index(indexName string, obj any) ([]any, error)
	// IndexKeys returns the sorted keys of the stored objects that produce
	// indexedValue for the named index.
	IndexKeys(indexName, indexedValue string) ([]string, error)
	// ListIndexFuncValues returns every value currently present in the named
	// index (in no particular order).
	ListIndexFuncValues(indexName string) []string
	// ByIndex returns the stored objects that produce indexedValue for the
	// named index (in no particular order).
	ByIndex(indexName, indexedValue string) ([]any, error)
	// GetIndexers returns a copy of the index functions by name.
	GetIndexers() Indexers
	// AddIndexers adds new indices. Objects already in the store are indexed
	// immediately. Adding an index whose name already exists is an error.
	AddIndexers(newIndexers Indexers) error
}

// IndexFunc computes the values under which an object is indexed. It must be
// deterministic and must not retain or later modify the returned slice.
type IndexFunc func(obj any) ([]string, error)

// Indexers maps an index name to the function computing its values.
type Indexers map[string]IndexFunc

// Indices maps an index name to its Index.
type Indices map[string]Index

// Index maps an indexed value to the set of store keys whose objects produce
// that value. Values whose set would be empty are removed, so every KeySet in
// an Index is non-empty.
type Index map[string]*KeySet

// NamespaceIndex is the conventional name of the index built by
// MetaNamespaceIndexFunc. Namespaced listers use it when present.
const NamespaceIndex string = "namespace"

// MetaNamespaceIndexFunc indexes an object by its namespace.
func MetaNamespaceIndexFunc(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return []string{""}, fmt.Errorf("object has no meta: %v", err)
	}
	return []string{m.GetNamespace()}, nil
}

// IndexFuncToKeyFuncAdapter turns an IndexFunc that yields exactly one value
// into a KeyFunc.
func IndexFuncToKeyFuncAdapter(indexFunc IndexFunc) KeyFunc {
	return func(obj any) (string, error) {
		values, err := indexFunc(obj)
		if err != nil {
			return "", err
		}
		switch len(values) {
		case 0:
			return "", fmt.Errorf("unexpected empty indexKeys")
		case 1:
			return values[0], nil
		}
		return "", fmt.Errorf("too many keys: %v", values)
	}
}

// KeySet is the set of stored items that share one indexed value. It holds
// the items themselves (key and object), densely packed in a slice, so that
// ByIndex reads the objects straight out of it rather than walking a key set
// and looking every key up in the store. Each item remembers its position in
// every KeySet it belongs to, which makes removal O(1) (it swaps with the
// last element, so order is not meaningful) without a per-set key map.
//
// A KeySet belongs to its store and is only read or mutated under the
// store's lock.
type KeySet struct {
	index int    // the index it belongs to (position in the store's names)
	value string // the indexed value it is filed under
	items []*storeItem
}

// Len returns the number of keys in the set.
func (s *KeySet) Len() int { return len(s.items) }

// Has reports whether key is in the set. It is linear in the set's size.
func (s *KeySet) Has(key string) bool {
	for _, it := range s.items {
		if it.key == key {
			return true
		}
	}
	return false
}

// Keys returns a sorted copy of the keys in the set.
func (s *KeySet) Keys() []string {
	keys := make([]string, len(s.items))
	for i, it := range s.items {
		keys[i] = it.key
	}
	slices.Sort(keys)
	return keys
}

// objs returns the set's objects in a new slice.
func (s *KeySet) objs() []any {
	objs := make([]any, len(s.items))
	for i, it := range s.items {
		objs[i] = it.obj
	}
	return objs
}
