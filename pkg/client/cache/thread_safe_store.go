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

// storeItem is one stored object under its key. The same *storeItem is what
// every KeySet holding the key points to, so the key string is shared and an
// update that leaves the indexed values alone only replaces obj.
//
// The item also records where it is filed: a list of refs (KeySet and
// position in it), grouped by index in index order and, within an index, in
// the order the index function returned the values (duplicates dropped).
// Kept are the values the object was indexed under, so removal never calls
// index functions. The first ref is inline (set, pos); the others, if any,
// are threadSafeMap.extra[more-1]. That keeps an item at 48 bytes in the
// common case of one single-valued index.
type storeItem struct {
	key  string
	obj  any
	set  *KeySet // first ref; nil if the item is in no index
	pos  int32
	more int32 // 0, or 1 + the slot in threadSafeMap.extra of the other refs
}

// ref locates an item in one KeySet.
type ref struct {
	set *KeySet
	pos int32
}

type threadSafeMap struct {
	lock  sync.RWMutex
	items map[string]*storeItem

	indexers Indexers
	indices  Indices
	// names, funcs and maps list the indexers and their Index in a fixed
	// order: KeySet.index and the grouping of an item's refs refer to it.
	names []string
	funcs []IndexFunc
	maps  []Index

	// extra holds the refs after the first of the items filed more than
	// once (several indices, or several values); free lists its unused
	// slots.
	extra [][]ref
	free  []int32
}

var _ ThreadSafeStore = (*threadSafeMap)(nil)

// NewThreadSafeStore returns an empty ThreadSafeStore with the given index
// functions, which must be non-nil. indices, kept for client-go signature
// compatibility, becomes the store's own index storage: any content is
// discarded, and the caller must not touch it afterwards. It may be nil.
func NewThreadSafeStore(indexers Indexers, indices Indices) ThreadSafeStore {
	return newThreadSafeMap(indexers, indices)
}

func newThreadSafeMap(indexers Indexers, indices Indices) *threadSafeMap {
	if indices == nil {
		indices = Indices{}
	}
	clear(indices)
	s := &threadSafeMap{
		items:    map[string]*storeItem{},
		indexers: Indexers{},
		indices:  indices,
	}
	if err := s.addIndexersLocked(indexers); err != nil {
		panic(err) // only possible for a nil IndexFunc: a programming error
	}
	return s
}

// maxInlineIndices is how many indices' values Update computes into a
// stack buffer.
const maxInlineIndices = 4

// computeValues runs every index function over obj into dst (one entry per
// index).
func (s *threadSafeMap) computeValues(dst [][]string, key string, obj any) ([][]string, error) {
	for i, fn := range s.funcs {
		v, err := fn(obj)
		if err != nil {
			return nil, fmt.Errorf("unable to calculate an index entry for key %q on index %q: %w", key, s.names[i], err)
		}
		dst = append(dst, v)
	}
	return dst, nil
}

func (s *threadSafeMap) Add(key string, obj any) error { return s.Update(key, obj) }

func (s *threadSafeMap) Update(key string, obj any) error {
	_, _, err := s.upsert(key, obj)
	return err
}

// upsert is Update that also returns the object it replaced, if any.
func (s *threadSafeMap) upsert(key string, obj any) (old any, existed bool, err error) {
	s.lock.Lock()
	defer s.lock.Unlock()
	var buf [maxInlineIndices][]string
	values, err := s.computeValues(buf[:0], key, obj)
	if err != nil {
		return nil, false, err
	}
	old, existed = s.putLocked(key, obj, values)
	return old, existed, nil
}

// putLocked stores obj under key, filed under values (one list per index),
// and returns the object it replaced, if any.
func (s *threadSafeMap) putLocked(key string, obj any, values [][]string) (replaced any, existed bool) {
	it, existed := s.items[key]
	if !existed {
		it = &storeItem{key: key, obj: obj}
		s.items[key] = it
		var buf [8]ref
		s.setRefs(it, s.fileLocked(buf[:0], it, values, 0))
		return nil, false
	}
	replaced, it.obj = it.obj, obj
	var oldBuf, newBuf [8]ref
	old := s.appendRefs(oldBuf[:0], it)
	refs := newBuf[:0]
	changed := false
	j := 0
	for i := range s.names {
		k := j
		for k < len(old) && old[k].set.index == i {
			k++
		}
		if sameValues(old[j:k], values[i]) {
			refs = append(refs, old[j:k]...)
		} else {
			changed = true
			for _, r := range old[j:k] {
				s.unfileLocked(r.set, r.pos)
			}
			refs = s.fileIndexLocked(refs, it, i, values[i])
		}
		j = k
	}
	if changed {
		s.setRefs(it, refs)
	}
	return replaced, true
}

// sameValues reports whether refs (one index's refs of an item) are
// exactly the distinct values of values, in order.
func sameValues(refs []ref, values []string) bool {
	n := 0
	for i, v := range values {
		if slices.Contains(values[:i], v) {
			continue
		}
		if n == len(refs) || refs[n].set.value != v {
			return false
		}
		n++
	}
	return n == len(refs)
}

// fileLocked files it under values[from:] (values[x] for index from+x) and
// appends the new refs to refs.
func (s *threadSafeMap) fileLocked(refs []ref, it *storeItem, values [][]string, from int) []ref {
	for x, vs := range values {
		refs = s.fileIndexLocked(refs, it, from+x, vs)
	}
	return refs
}

// fileIndexLocked files it under each distinct value of values in index i
// and appends the refs to refs.
func (s *threadSafeMap) fileIndexLocked(refs []ref, it *storeItem, i int, values []string) []ref {
	idx := s.maps[i]
	for x, v := range values {
		if x > 0 && slices.Contains(values[:x], v) {
			continue
		}
		set := idx[v]
		if set == nil {
			set = &KeySet{index: i, value: v}
			idx[v] = set
		}
		refs = append(refs, ref{set, int32(len(set.items))})
		set.items = append(set.items, it)
	}
	return refs
}

// unfileLocked removes the item at pos from set, moving the set's last item
// into the hole, and drops the set from its Index once empty.
func (s *threadSafeMap) unfileLocked(set *KeySet, pos int32) {
	last := len(set.items) - 1
	if int(pos) != last {
		moved := set.items[last]
		set.items[pos] = moved
		s.movedLocked(moved, set, pos)
	}
	set.items[last] = nil // drop the reference for the GC
	set.items = set.items[:last]
	if last == 0 {
		delete(s.maps[set.index], set.value)
		return
	}
	// Give memory back once a set has shrunk well below its peak.
	if c := cap(set.items); c > 64 && last < c/4 {
		set.items = slices.Clone(set.items)
	}
}

// movedLocked records that it now sits at pos in set.
func (s *threadSafeMap) movedLocked(it *storeItem, set *KeySet, pos int32) {
	if it.set == set {
		it.pos = pos
		return
	}
	extra := s.extra[it.more-1]
	for i := range extra {
		if extra[i].set == set {
			extra[i].pos = pos
			return
		}
	}
	panic("cache: item missing from its KeySet") // broken invariant
}

// appendRefs appends it's refs to dst.
func (s *threadSafeMap) appendRefs(dst []ref, it *storeItem) []ref {
	if it.set == nil {
		return dst
	}
	dst = append(dst, ref{it.set, it.pos})
	if it.more != 0 {
		dst = append(dst, s.extra[it.more-1]...)
	}
	return dst
}

// setRefs makes refs it's refs.
func (s *threadSafeMap) setRefs(it *storeItem, refs []ref) {
	if len(refs) == 0 {
		it.set, it.pos = nil, 0
		s.freeExtra(it)
		return
	}
	it.set, it.pos = refs[0].set, refs[0].pos
	if len(refs) == 1 {
		s.freeExtra(it)
		return
	}
	if it.more == 0 {
		if n := len(s.free); n > 0 {
			it.more = s.free[n-1] + 1
			s.free = s.free[:n-1]
		} else {
			s.extra = append(s.extra, nil)
			it.more = int32(len(s.extra))
		}
	}
	slot := &s.extra[it.more-1]
	*slot = append((*slot)[:0], refs[1:]...)
}

// freeExtra releases it's extra slot, if any.
func (s *threadSafeMap) freeExtra(it *storeItem) {
	if it.more == 0 {
		return
	}
	s.extra[it.more-1] = nil
	s.free = append(s.free, it.more-1)
	it.more = 0
}

func (s *threadSafeMap) Delete(key string) {
	s.lock.Lock()
	defer s.lock.Unlock()
	it, ok := s.items[key]
	if !ok {
		return
	}
	var buf [8]ref
	for _, r := range s.appendRefs(buf[:0], it) {
		s.unfileLocked(r.set, r.pos)
	}
	s.freeExtra(it)
	delete(s.items, key)
}

func (s *threadSafeMap) Get(key string) (any, bool) {
	s.lock.RLock()
	defer s.lock.RUnlock()
	if it, ok := s.items[key]; ok {
		return it.obj, true
	}
	return nil, false
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
	// Build the new content aside, so that a failing index function leaves
	// the store as it was.
	n := &threadSafeMap{
		items: make(map[string]*storeItem, len(items)),
		names: s.names,
		funcs: s.funcs,
		maps:  make([]Index, len(s.names)),
	}
	for i := range n.maps {
		n.maps[i] = Index{}
	}
	var buf [maxInlineIndices][]string
	for key, obj := range items {
		values, err := n.computeValues(buf[:0], key, obj)
		if err != nil {
			return err
		}
		n.putLocked(key, obj, values)
	}
	s.items, s.maps, s.extra, s.free = n.items, n.maps, n.extra, n.free
	for i, name := range s.names {
		s.indices[name] = s.maps[i]
	}
	return nil
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
		return set.objs(), nil
	}
	// Several values: an item may be filed under more than one of them.
	list := []any{}
	seen := map[*storeItem]struct{}{}
	for _, v := range values {
		set := idx[v]
		if set == nil {
			continue
		}
		for _, it := range set.items {
			if _, dup := seen[it]; dup {
				continue
			}
			seen[it] = struct{}{}
			list = append(list, it.obj)
		}
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
	return set.objs(), nil
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
	type pending struct {
		it     *storeItem
		values [][]string
	}
	added := make([]pending, 0, len(s.items))
	for key, it := range s.items {
		values := make([][]string, len(names))
		for i, name := range names {
			v, err := newIndexers[name](it.obj)
			if err != nil {
				return fmt.Errorf("unable to calculate an index entry for key %q on index %q: %w", key, name, err)
			}
			values[i] = v
		}
		added = append(added, pending{it, values})
	}
	from := len(s.names)
	for _, name := range names {
		idx := Index{}
		s.indexers[name] = newIndexers[name]
		s.indices[name] = idx
		s.names = append(s.names, name)
		s.funcs = append(s.funcs, newIndexers[name])
		s.maps = append(s.maps, idx)
	}
	var buf [8]ref
	for _, p := range added {
		// The new indices come after the existing ones, and so do their
		// refs.
		refs := s.appendRefs(buf[:0], p.it)
		s.setRefs(p.it, s.fileLocked(refs, p.it, p.values, from))
	}
	return nil
}

func (s *threadSafeMap) Resync() error { return nil }
