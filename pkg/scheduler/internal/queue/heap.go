package queue

// keyedHeap is a binary heap of items addressable by key: O(log n) add,
// update, delete and pop, O(1) lookup. Not safe for concurrent use (the
// PriorityQueue's lock guards it).
type keyedHeap[T any] struct {
	items []T
	index map[string]int
	key   func(T) string
	less  func(a, b T) bool
}

func newKeyedHeap[T any](key func(T) string, less func(a, b T) bool) *keyedHeap[T] {
	return &keyedHeap[T]{index: map[string]int{}, key: key, less: less}
}

func (h *keyedHeap[T]) Len() int { return len(h.items) }

// AddOrUpdate inserts item, or replaces the item with its key and
// restores the order.
func (h *keyedHeap[T]) AddOrUpdate(item T) {
	k := h.key(item)
	if i, ok := h.index[k]; ok {
		h.items[i] = item
		h.fix(i)
		return
	}
	h.items = append(h.items, item)
	h.index[k] = len(h.items) - 1
	h.up(len(h.items) - 1)
}

// Get returns the item with key k.
func (h *keyedHeap[T]) Get(k string) (T, bool) {
	if i, ok := h.index[k]; ok {
		return h.items[i], true
	}
	var zero T
	return zero, false
}

func (h *keyedHeap[T]) Has(k string) bool {
	_, ok := h.index[k]
	return ok
}

// Delete removes the item with key k and reports whether it was there.
func (h *keyedHeap[T]) Delete(k string) bool {
	i, ok := h.index[k]
	if !ok {
		return false
	}
	h.removeAt(i)
	return true
}

// Peek returns the first item.
func (h *keyedHeap[T]) Peek() (T, bool) {
	if len(h.items) == 0 {
		var zero T
		return zero, false
	}
	return h.items[0], true
}

// Pop removes and returns the first item.
func (h *keyedHeap[T]) Pop() (T, bool) {
	if len(h.items) == 0 {
		var zero T
		return zero, false
	}
	item := h.items[0]
	h.removeAt(0)
	return item, true
}

// List returns the items in no particular order.
func (h *keyedHeap[T]) List() []T {
	out := make([]T, len(h.items))
	copy(out, h.items)
	return out
}

func (h *keyedHeap[T]) removeAt(i int) {
	last := len(h.items) - 1
	delete(h.index, h.key(h.items[i]))
	if i != last {
		h.items[i] = h.items[last]
		h.index[h.key(h.items[i])] = i
	}
	var zero T
	h.items[last] = zero
	h.items = h.items[:last]
	if i != last {
		h.fix(i)
	}
}

func (h *keyedHeap[T]) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h *keyedHeap[T]) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.index[h.key(h.items[i])] = i
	h.index[h.key(h.items[j])] = j
}

func (h *keyedHeap[T]) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !h.less(h.items[j], h.items[i]) {
			break
		}
		h.swap(i, j)
		j = i
	}
}

func (h *keyedHeap[T]) down(i0 int) bool {
	i, n := i0, len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && h.less(h.items[r], h.items[l]) {
			j = r
		}
		if !h.less(h.items[j], h.items[i]) {
			break
		}
		h.swap(i, j)
		i = j
	}
	return i > i0
}
