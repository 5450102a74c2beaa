package cache

import (
	"fmt"
	"maps"
	"slices"
	"sync"
)

// ThreadSafeStore is a concurrency-safe, indexed map from keys to objects. It
// is the storage underneath NewStore and NewIndexer; callers supply the keys.
//
// Objects handed to or obtained from the store must be treated as read-only:
// the store shares them with every reader.
//
// Unlike client-go, which panics when an index function fails, Add, Update and
// Replace compute every index value first and return the error, leaving the
// store unchanged. Deletion never calls index functions: each item remembers
// the values it was indexed under.
type ThreadSafeStore interface {
	Add(key string, obj any) error
	Update(key string, obj any) error
	Delete(key string)
	Get(key string) (item any, exists bool)
	List() []any
	ListKeys() []string
	// Replace swaps the whole content for items (the map is not retained)
	// and rebuilds every index.
	Replace(items map[string]any, resourceVersion string) error
	Index(indexName string, obj any) ([]any, error)
	IndexKeys(indexName, indexedValue string) ([]string, error)
	ListIndexFuncValues(indexName string) []string
	ByIndex(indexName, indexedValue string) ([]any, error)
	GetIndexers() Indexers
	AddIndexers(newIndexers Indexers) error
	// Resync is a no-op, present for Store compatibility.
	Resync() error
}

// storedItem is an object plus the values it is filed under in each index.
// The values of index i (threadSafeMap.names[i]) are values(i); the first
// index's are kept inline, which spares an allocation per item in the
// common one-index store.
type storedItem struct {
	obj   any
	first []string
	rest  [][]string
}

func (it *storedItem) values(i int) []string {
	if i == 0 {
		return it.first
	}
	return it.rest[i-1]
}

func (it *storedItem) setValues(i int, v []string) {
	if i == 0 {
		it.first = v
	} else {
		it.rest[i-1] = v
	}
}

type threadSafeMap struct {
	lock  sync.RWMutex
	items map[string]storedItem

	indexers Indexers
	indices  Indices
	// names and funcs list the indexers in a fixed order: the order of
	// storedItem.values.
	names []string
	funcs []IndexFunc
}

var _ ThreadSafeStore = (*threadSafeMap)(nil)

// NewThreadSafeStore returns an empty ThreadSafeStore with the given index
// functions, which must be non-nil. indices, kept for client-go signature
// compatibility, becomes the store's own index storage: any content is
// discarded, and the caller must not touch it afterwards. It may be nil.
func NewThreadSafeStore(indexers Indexers, indices Indices) ThreadSafeStore {
	if indices == nil {
		indices = Indices{}
	}
	clear(indices)
	s := &threadSafeMap{
		items:    map[string]storedItem{},
		indexers: Indexers{},
		indices:  indices,
	}
	if err := s.addIndexersLocked(indexers); err != nil {
		panic(err) // only possible for a nil IndexFunc: a programming error
	}
	return s
}

// newItem runs every index function over obj.
func (s *threadSafeMap) newItem(key string, obj any) (storedItem, error) {
	it := storedItem{obj: obj}
	if n := len(s.funcs); n > 1 {
		it.rest = make([][]string, n-1)
	}
	for i, fn := range s.funcs {
		v, err := fn(obj)
		if err != nil {
			return storedItem{}, fmt.Errorf("unable to calculate an index entry for key %q on index %q: %w", key, s.names[i], err)
		}
		it.setValues(i, v)
	}
	return it, nil
}

func (s *threadSafeMap) Add(key string, obj any) error { return s.Update(key, obj) }

func (s *threadSafeMap) Update(key string, obj any) error {
	s.lock.Lock()
	defer s.lock.Unlock()
	it, err := s.newItem(key, obj)
	if err != nil {
		return err
	}
	old, existed := s.items[key]
	for i, name := range s.names {
		idx := s.indices[name]
		values := it.values(i)
		if existed && slices.Equal(old.values(i), values) {
			// Common case: the indexed values did not change; just point
			// the entries at the new object.
			for _, v := range values {
				idx[v].put(key, obj)
			}
			continue
		}
		if existed {
			for _, v := range old.values(i) {
				idx.remove(v, key)
			}
		}
		// key is now filed nowhere in this index: a single value can be
		// inserted blindly; several may repeat, so check each.
		if len(values) == 1 {
			idx.insert(values[0], key, obj)
			continue
		}
		for _, v := range values {
			idx.put(v, key, obj)
		}
	}
	s.items[key] = it
	return nil
}

func (s *threadSafeMap) Delete(key string) {
	s.lock.Lock()
	defer s.lock.Unlock()
	old, ok := s.items[key]
	if !ok {
		return
	}
	for i, name := range s.names {
		idx := s.indices[name]
		for _, v := range old.values(i) {
			idx.remove(v, key)
		}
	}
	delete(s.items, key)
}

func (s *threadSafeMap) Get(key string) (any, bool) {
	s.lock.RLock()
	defer s.lock.RUnlock()
	it, ok := s.items[key]
	return it.obj, ok
}

func (s *threadSafeMap) List() []any {
	s.lock.RLock()
	defer s.lock.RUnlock()
	list := make([]any, 0, len(s.items))
	for _, it := range s.items {
		list = append(list, it.obj)
	}
	return list
}

func (s *threadSafeMap) ListKeys() []string {
	s.lock.RLock()
	defer s.lock.RUnlock()
	return slices.AppendSeq(make([]string, 0, len(s.items)), maps.Keys(s.items))
}

func (s *threadSafeMap) Replace(items map[string]any, _ string) error {
	s.lock.Lock()
	defer s.lock.Unlock()
	stored := make(map[string]storedItem, len(items))
	for key, obj := range items {
		it, err := s.newItem(key, obj)
		if err != nil {
			return err
		}
		stored[key] = it
	}
	s.items = stored
	for _, name := range s.names {
		s.indices[name] = Index{}
	}
	for key, it := range stored {
		s.fileLocked(key, it, 0)
	}
	return nil
}

// fileLocked puts key into the indices names[from:] according to it.
func (s *threadSafeMap) fileLocked(key string, it storedItem, from int) {
	for i := from; i < len(s.names); i++ {
		idx := s.indices[s.names[i]]
		for _, v := range it.values(i) {
			idx.put(v, key, it.obj)
		}
	}
}

func (s *threadSafeMap) Index(indexName string, obj any) ([]any, error) {
	s.lock.RLock()
	defer s.lock.RUnlock()
	fn, idx, err := s.indexLocked(indexName)
	if err != nil {
		return nil, err
	}
	values, err := fn(obj)
	if err != nil {
		return nil, err
	}
	if len(values) == 1 {
		set := idx[values[0]]
		if set == nil {
			return []any{}, nil
		}
		return set.appendObjs(make([]any, 0, set.Len())), nil
	}
	// Several values: an object may be filed under more than one of them.
	var list []any
	seen := map[string]struct{}{}
	for _, v := range values {
		set := idx[v]
		if set == nil {
			continue
		}
		for i, key := range set.keys {
			if _, dup := seen[key]; dup {
				continue
			}
			seen[key] = struct{}{}
			list = append(list, set.objs[i])
		}
	}
	if list == nil {
		list = []any{}
	}
	return list, nil
}

func (s *threadSafeMap) ByIndex(indexName, indexedValue string) ([]any, error) {
	s.lock.RLock()
	defer s.lock.RUnlock()
	_, idx, err := s.indexLocked(indexName)
	if err != nil {
		return nil, err
	}
	set := idx[indexedValue]
	if set == nil {
		return []any{}, nil
	}
	return set.appendObjs(make([]any, 0, set.Len())), nil
}

func (s *threadSafeMap) IndexKeys(indexName, indexedValue string) ([]string, error) {
	s.lock.RLock()
	defer s.lock.RUnlock()
	_, idx, err := s.indexLocked(indexName)
	if err != nil {
		return nil, err
	}
	set := idx[indexedValue]
	if set == nil {
		return []string{}, nil
	}
	return set.Keys(), nil
}

func (s *threadSafeMap) ListIndexFuncValues(indexName string) []string {
	s.lock.RLock()
	defer s.lock.RUnlock()
	idx := s.indices[indexName]
	return slices.AppendSeq(make([]string, 0, len(idx)), maps.Keys(idx))
}

func (s *threadSafeMap) indexLocked(name string) (IndexFunc, Index, error) {
	fn := s.indexers[name]
	if fn == nil {
		return nil, nil, fmt.Errorf("Index with name %s does not exist", name)
	}
	return fn, s.indices[name], nil
}

func (s *threadSafeMap) GetIndexers() Indexers {
	s.lock.RLock()
	defer s.lock.RUnlock()
	return maps.Clone(s.indexers)
}

func (s *threadSafeMap) AddIndexers(newIndexers Indexers) error {
	s.lock.Lock()
	defer s.lock.Unlock()
	return s.addIndexersLocked(newIndexers)
}

// addIndexersLocked validates newIndexers, computes their values for every
// stored item (so that a failing index function leaves the store unchanged)
// and then files the items in the new indices.
func (s *threadSafeMap) addIndexersLocked(newIndexers Indexers) error {
	names := slices.Sorted(maps.Keys(newIndexers))
	for _, name := range names {
		if _, dup := s.indexers[name]; dup {
			return fmt.Errorf("indexer conflict: %q already exists", name)
		}
		if newIndexers[name] == nil {
			return fmt.Errorf("indexer %q has a nil IndexFunc", name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	// Compute first, commit later.
	added := make(map[string][][]string, len(s.items))
	for key, it := range s.items {
		values := make([][]string, len(names))
		for i, name := range names {
			v, err := newIndexers[name](it.obj)
			if err != nil {
				return fmt.Errorf("unable to calculate an index entry for key %q on index %q: %w", key, name, err)
			}
			values[i] = v
		}
		added[key] = values
	}
	from := len(s.names)
	for _, name := range names {
		s.indexers[name] = newIndexers[name]
		s.indices[name] = Index{}
		s.names = append(s.names, name)
		s.funcs = append(s.funcs, newIndexers[name])
	}
	for key, it := range s.items {
		values := added[key]
		if from == 0 {
			it.first, values = values[0], values[1:]
		}
		it.rest = append(slices.Clip(it.rest), values...)
		s.items[key] = it
		s.fileLocked(key, it, from)
	}
	return nil
}

func (s *threadSafeMap) Resync() error { return nil }
