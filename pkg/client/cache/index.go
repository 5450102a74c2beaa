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

// KeySet is the set of store keys that share one indexed value. Next to each
// key it keeps the key's current object, densely packed, so that answering
// ByIndex is a single slice copy rather than a map walk plus one store lookup
// per key. Membership and removal are O(1) (removal swaps with the last
// element, so order is not meaningful).
//
// A KeySet belongs to its store and is only mutated under the store's lock.
type KeySet struct {
	pos  map[string]int
	keys []string
	objs []any
}

func newKeySet() *KeySet { return &KeySet{pos: make(map[string]int, 1)} }

// Len returns the number of keys in the set.
func (s *KeySet) Len() int { return len(s.keys) }

// Has reports whether key is in the set.
func (s *KeySet) Has(key string) bool {
	_, ok := s.pos[key]
	return ok
}

// Keys returns a sorted copy of the keys in the set.
func (s *KeySet) Keys() []string {
	keys := slices.Clone(s.keys)
	slices.Sort(keys)
	return keys
}

// put adds key or, if present, replaces its object.
func (s *KeySet) put(key string, obj any) {
	if i, ok := s.pos[key]; ok {
		s.objs[i] = obj
		return
	}
	s.insert(key, obj)
}

// insert adds key, which must not be present.
func (s *KeySet) insert(key string, obj any) {
	s.pos[key] = len(s.keys)
	s.keys = append(s.keys, key)
	s.objs = append(s.objs, obj)
}

// remove deletes key if present.
func (s *KeySet) remove(key string) {
	i, ok := s.pos[key]
	if !ok {
		return
	}
	delete(s.pos, key)
	last := len(s.keys) - 1
	if i != last {
		s.keys[i], s.objs[i] = s.keys[last], s.objs[last]
		s.pos[s.keys[i]] = i
	}
	s.keys[last], s.objs[last] = "", nil // drop references for the GC
	s.keys, s.objs = s.keys[:last], s.objs[:last]
	// Give memory back once a set has shrunk well below its peak.
	if c := cap(s.keys); c > 64 && len(s.keys) < c/4 {
		s.keys = slices.Clip(slices.Clone(s.keys))
		s.objs = slices.Clip(slices.Clone(s.objs))
	}
}

// appendObjs appends the set's objects to dst.
func (s *KeySet) appendObjs(dst []any) []any { return append(dst, s.objs...) }

// put files key/obj under value.
func (idx Index) put(value, key string, obj any) {
	idx.set(value).put(key, obj)
}

// insert files key/obj under value; key must not be filed there yet.
func (idx Index) insert(value, key string, obj any) {
	idx.set(value).insert(key, obj)
}

// set returns the KeySet of value, creating it if needed.
func (idx Index) set(value string) *KeySet {
	set := idx[value]
	if set == nil {
		set = newKeySet()
		idx[value] = set
	}
	return set
}

// remove unfiles key from value, dropping the value once its set is empty.
func (idx Index) remove(value, key string) {
	set := idx[value]
	if set == nil {
		return
	}
	set.remove(key)
	if set.Len() == 0 {
		delete(idx, value)
	}
}
