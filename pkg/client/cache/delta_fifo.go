package cache

import (
	"errors"
	"fmt"
	"slices"
	"sync"
)

// PopProcessFunc processes one accumulator popped from a Queue. For a
// DeltaFIFO the accumulator is a Deltas. isInInitialList is true while the
// queue has not synced yet, i.e. the item belongs to the first list.
type PopProcessFunc func(obj any, isInInitialList bool) error

// ErrRequeue may be returned (possibly wrapped) by a PopProcessFunc to put the
// popped item back at the end of the queue, atomically with the Pop. Pop then
// returns Err.
type ErrRequeue struct {
	Err error
}

func (e ErrRequeue) Error() string {
	if e.Err == nil {
		return "the popped item should be requeued without returning an error"
	}
	return e.Err.Error()
}

func (e ErrRequeue) Unwrap() error { return e.Err }

// ErrFIFOClosed is returned by Pop once the queue is closed and empty.
var ErrFIFOClosed = errors.New("DeltaFIFO: manipulating with closed queue")

// ErrZeroLengthDeltasObject is returned (inside a KeyError) when asked for the
// key of an empty Deltas.
var ErrZeroLengthDeltasObject = errors.New("0 length Deltas object; can't get key")

// Queue is a Store with a set of keys waiting to be processed, consumed with
// Pop.
type Queue interface {
	Store
	// Pop blocks until an item is available (or the queue is closed), removes
	// it and calls process with it. See DeltaFIFO.Pop.
	Pop(PopProcessFunc) (any, error)
	// AddIfNotPresent puts an accumulator returned by Pop back, unless
	// something for its key was queued meanwhile.
	AddIfNotPresent(any) error
	// HasSynced reports whether the first batch of items (the first Replace,
	// if it came before any Add/Update/Delete) has been popped.
	HasSynced() bool
	// Close makes Pop return ErrFIFOClosed once the queue is empty.
	Close()
}

// KeyLister lists keys.
type KeyLister interface {
	ListKeys() []string
}

// KeyGetter looks objects up by key.
type KeyGetter interface {
	GetByKey(key string) (value any, exists bool, err error)
}

// KeyListerGetter lists keys and looks objects up by key. An Indexer is one.
type KeyListerGetter interface {
	KeyLister
	KeyGetter
}

// TransformFunc transforms an object before the DeltaFIFO enqueues it,
// typically to strip fields the consumer does not need. It runs once per
// object: not for tombstones nor for Resync's Sync deltas (those objects were
// transformed already). It may mutate the object in place and should be
// idempotent, since Replace may be handed objects that were seen before.
type TransformFunc func(any) (any, error)

// DeltaType is the kind of change a Delta records.
type DeltaType string

const (
	Added   DeltaType = "Added"
	Updated DeltaType = "Updated"
	Deleted DeltaType = "Deleted"
	// Replaced is emitted by Replace (a relist) when
	// DeltaFIFOOptions.EmitDeltaTypeReplaced is set; the object may or may
	// not have changed.
	Replaced DeltaType = "Replaced"
	// Sync is emitted by Resync and, for backwards compatibility, by
	// Replace when EmitDeltaTypeReplaced is not set.
	Sync DeltaType = "Sync"
)

// Delta is one change: its type and the object's state after the change (for
// Deleted, the last state before it; possibly a DeletedFinalStateUnknown).
type Delta struct {
	Type   DeltaType
	Object any
}

// Deltas is the list of changes to one object, oldest first.
type Deltas []Delta

// Oldest returns the oldest delta, or nil if there are none.
func (d Deltas) Oldest() *Delta {
	if len(d) > 0 {
		return &d[0]
	}
	return nil
}

// Newest returns the newest delta, or nil if there are none.
func (d Deltas) Newest() *Delta {
	if n := len(d); n > 0 {
		return &d[n-1]
	}
	return nil
}

// DeltaFIFOOptions configures a DeltaFIFO. All fields are optional.
type DeltaFIFOOptions struct {
	// KeyFunction computes keys; default MetaNamespaceKeyFunc.
	KeyFunction KeyFunc
	// KnownObjects is what the consumer already knows about (normally the
	// informer's Indexer). It lets Delete, Replace and Resync account for
	// objects that are not currently queued. May be nil.
	KnownObjects KeyListerGetter
	// EmitDeltaTypeReplaced makes Replace emit Replaced instead of Sync.
	EmitDeltaTypeReplaced bool
	// Transformer, if set, is applied to objects as they are enqueued.
	Transformer TransformFunc
}

// DeltaFIFO is a producer/consumer queue of per-object change lists. A
// Reflector produces (Add/Update/Delete/Replace/Resync); the consumer calls
// Pop and receives all changes accumulated for one object since it was last
// popped, oldest first.
//
// Invariants (guarded by lock):
//   - every Deltas in items is non-empty;
//   - queue holds each key at most once, and exactly the keys of items.
//
// Get, GetByKey and Pop return Deltas; List returns the newest object of each
// queued key.
type DeltaFIFO struct {
	lock sync.Mutex
	cond sync.Cond

	items map[string]Deltas
	queue keyQueue
	// itemsPeak is the most keys items has held since it was made: maps
	// never shrink, so once a large batch (a relist) has been popped the
	// map is replaced.
	itemsPeak int

	// populated is set by the first Add/Update/Delete/AddIfNotPresent/Replace;
	// initialPopulationCount counts the items of the first Replace (if it
	// came first) still to be popped. Synced = populated && count == 0.
	populated              bool
	initialPopulationCount int

	keyFunc               KeyFunc
	knownObjects          KeyListerGetter
	emitDeltaTypeReplaced bool
	transformer           TransformFunc

	closed bool
	// waiting counts the Pops blocked for an item (tests observe it).
	waiting int
}

var _ Queue = (*DeltaFIFO)(nil)

// NewDeltaFIFOWithOptions returns an empty DeltaFIFO.
func NewDeltaFIFOWithOptions(opts DeltaFIFOOptions) *DeltaFIFO {
	if opts.KeyFunction == nil {
		opts.KeyFunction = MetaNamespaceKeyFunc
	}
	f := &DeltaFIFO{
		items:                 map[string]Deltas{},
		keyFunc:               opts.KeyFunction,
		knownObjects:          opts.KnownObjects,
		emitDeltaTypeReplaced: opts.EmitDeltaTypeReplaced,
		transformer:           opts.Transformer,
	}
	f.cond.L = &f.lock
	return f
}

// NewDeltaFIFO is NewDeltaFIFOWithOptions with only KeyFunction and
// KnownObjects (so Replace emits Sync deltas).
func NewDeltaFIFO(keyFunc KeyFunc, knownObjects KeyListerGetter) *DeltaFIFO {
	return NewDeltaFIFOWithOptions(DeltaFIFOOptions{KeyFunction: keyFunc, KnownObjects: knownObjects})
}

// KeyOf returns the key of obj, which may also be a Deltas (its newest
// object's key) or a DeletedFinalStateUnknown (its Key).
func (f *DeltaFIFO) KeyOf(obj any) (string, error) {
	if d, ok := obj.(Deltas); ok {
		if len(d) == 0 {
			return "", KeyError{obj, ErrZeroLengthDeltasObject}
		}
		obj = d.Newest().Object
	}
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return d.Key, nil
	}
	return f.keyFunc(obj)
}

// HasSynced reports whether the first Replace's items have all been popped,
// or Add/Update/Delete/AddIfNotPresent was called before any Replace.
func (f *DeltaFIFO) HasSynced() bool {
	f.lock.Lock()
	defer f.lock.Unlock()
	return f.syncedLocked()
}

func (f *DeltaFIFO) syncedLocked() bool {
	return f.populated && f.initialPopulationCount == 0
}

// Add records an Added delta for obj.
func (f *DeltaFIFO) Add(obj any) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.populated = true
	return f.queueActionLocked(Added, Added, obj)
}

// Update records an Updated delta for obj.
func (f *DeltaFIFO) Update(obj any) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.populated = true
	return f.queueActionLocked(Updated, Updated, obj)
}

// Delete records a Deleted delta for obj, unless the object is neither
// queued nor (if KnownObjects is set) known: then it was presumably already
// deleted by a Replace and the deletion is not reported twice.
func (f *DeltaFIFO) Delete(obj any) error {
	id, err := f.KeyOf(obj)
	if err != nil {
		return KeyError{obj, err}
	}
	f.lock.Lock()
	defer f.lock.Unlock()
	f.populated = true
	if _, queued := f.items[id]; !queued {
		if f.knownObjects == nil {
			return nil
		}
		if _, known, err := f.knownObjects.GetByKey(id); err == nil && !known {
			return nil
		}
	}
	return f.queueActionLocked(Deleted, Deleted, obj)
}

// AddIfNotPresent re-inserts a Deltas (as returned by Pop) unless its key is
// already queued, in which case the queued deltas are newer and win.
func (f *DeltaFIFO) AddIfNotPresent(obj any) error {
	deltas, ok := obj.(Deltas)
	if !ok {
		return fmt.Errorf("object must be of type deltas, but got: %#v", obj)
	}
	id, err := f.KeyOf(deltas)
	if err != nil {
		return KeyError{obj, err}
	}
	f.lock.Lock()
	defer f.lock.Unlock()
	f.addIfNotPresentLocked(id, deltas)
	return nil
}

func (f *DeltaFIFO) addIfNotPresentLocked(id string, deltas Deltas) {
	f.populated = true
	if _, exists := f.items[id]; exists {
		return
	}
	f.pushLocked(id)
	// Clip so that a later append (and dedup) copies instead of writing
	// into an array the caller of Pop may still hold.
	f.items[id] = slices.Clip(deltas)
	f.cond.Broadcast()
}

// queueActionLocked appends a delta of type actionType for obj. internalType
// is what the caller really did (Replace emits Sync when
// EmitDeltaTypeReplaced is off, but its objects still need transforming).
func (f *DeltaFIFO) queueActionLocked(actionType, internalType DeltaType, obj any) error {
	id, err := f.KeyOf(obj)
	if err != nil {
		return KeyError{obj, err}
	}
	return f.queueKeyedActionLocked(id, actionType, internalType, obj)
}

// queueKeyedActionLocked is queueActionLocked for an object whose key, id,
// the caller has computed.
func (f *DeltaFIFO) queueKeyedActionLocked(id string, actionType, internalType DeltaType, obj any) error {
	var err error
	if f.transformer != nil && internalType != Sync {
		if _, tombstone := obj.(DeletedFinalStateUnknown); !tombstone {
			if obj, err = f.transformer(obj); err != nil {
				return err
			}
		}
	}
	old, queued := f.items[id]
	f.items[id] = dedupDeltas(append(old, Delta{actionType, obj}))
	if !queued {
		f.pushLocked(id)
	}
	f.cond.Broadcast()
	return nil
}

// pushLocked queues id, which has just been added to items.
func (f *DeltaFIFO) pushLocked(id string) {
	f.queue.push(id)
	f.itemsPeak = max(f.itemsPeak, len(f.items))
}

// dedupDeltas collapses the two newest deltas if they describe the same
// event. The only such case is two deletions: the informative one is kept,
// i.e. a real final state beats a DeletedFinalStateUnknown, and otherwise the
// older one wins. The result is never empty for a non-empty input.
func dedupDeltas(deltas Deltas) Deltas {
	n := len(deltas)
	if n < 2 {
		return deltas
	}
	newer, older := &deltas[n-1], &deltas[n-2]
	if older.Type != Deleted || newer.Type != Deleted {
		return deltas
	}
	if _, ok := older.Object.(DeletedFinalStateUnknown); ok {
		*older = *newer
	}
	deltas[n-1] = Delta{} // drop the reference held by the spare slot
	return deltas[:n-1]
}

// List returns the newest object of every queued key.
func (f *DeltaFIFO) List() []any {
	f.lock.Lock()
	defer f.lock.Unlock()
	list := make([]any, 0, len(f.items))
	for _, d := range f.items {
		list = append(list, d.Newest().Object)
	}
	return list
}

// ListKeys returns the keys of all queued items.
func (f *DeltaFIFO) ListKeys() []string {
	f.lock.Lock()
	defer f.lock.Unlock()
	return append([]string(nil), f.queue.keys()...)
}

// Get returns a copy of the Deltas queued for obj's key.
func (f *DeltaFIFO) Get(obj any) (any, bool, error) {
	key, err := f.KeyOf(obj)
	if err != nil {
		return nil, false, KeyError{obj, err}
	}
	return f.GetByKey(key)
}

// GetByKey returns a copy of the Deltas queued for key.
func (f *DeltaFIFO) GetByKey(key string) (any, bool, error) {
	f.lock.Lock()
	defer f.lock.Unlock()
	d, ok := f.items[key]
	if !ok {
		return nil, false, nil
	}
	// Copy so that the caller's view is not changed by later appends.
	return append(Deltas(nil), d...), true, nil
}

// IsClosed reports whether Close was called.
func (f *DeltaFIFO) IsClosed() bool {
	f.lock.Lock()
	defer f.lock.Unlock()
	return f.closed
}

// Close wakes blocked Pops; once the queue is empty they return ErrFIFOClosed.
// Items still queued can be popped.
func (f *DeltaFIFO) Close() {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.closed = true
	f.cond.Broadcast()
}

// Pop blocks until a key is queued, removes it with its Deltas and calls
// process(deltas, isInInitialList) — with the queue's lock held, so process
// may update state that must stay consistent with the queue (such as the
// KnownObjects indexer) but must not call back into the DeltaFIFO and should
// be quick. If process returns ErrRequeue the Deltas are put back (at the end
// of the queue) and Pop returns ErrRequeue.Err. Pop returns the Deltas and
// process' error, or ErrFIFOClosed if the queue is closed and empty.
func (f *DeltaFIFO) Pop(process PopProcessFunc) (any, error) {
	f.lock.Lock()
	defer f.lock.Unlock()
	for f.queue.len() == 0 {
		if f.closed {
			return nil, ErrFIFOClosed
		}
		f.waiting++
		f.cond.Wait()
		f.waiting--
	}
	isInInitialList := !f.syncedLocked()
	id := f.queue.pop()
	if f.initialPopulationCount > 0 {
		f.initialPopulationCount--
	}
	deltas := f.items[id] // present by invariant
	delete(f.items, id)
	if len(f.items) == 0 && f.itemsPeak > maxIdleQueue {
		// Drained after a large batch: give the map's memory back.
		f.items, f.itemsPeak = map[string]Deltas{}, 0
	}
	// Ownership of deltas passes to process and the caller; no copy needed.
	var item any = deltas
	err := process(item, isInInitialList)
	if err != nil {
		var requeue ErrRequeue
		if errors.As(err, &requeue) {
			f.addIfNotPresentLocked(id, deltas)
			err = requeue.Err
		}
	}
	return item, err
}

// Replace is a relist: it records a Replaced (or Sync, unless
// EmitDeltaTypeReplaced) delta for every object in list and then, for every
// key that is queued or known (KnownObjects) but absent from list, a Deleted
// delta carrying a DeletedFinalStateUnknown tombstone with the last known
// state: the newest queued object if any, else the KnownObjects one.
//
// The first Replace, if it precedes any Add/Update/Delete, defines the initial
// population that HasSynced waits for.
func (f *DeltaFIFO) Replace(list []any, _ string) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	action := Sync
	if f.emitDeltaTypeReplaced {
		action = Replaced
	}
	if len(f.items) == 0 {
		// Nothing queued (the common case: the first list, or a relist of
		// an informer that keeps up): size the queue for the list at once.
		f.items, f.itemsPeak = make(map[string]Deltas, len(list)), len(list)
		f.queue.reserve(len(list))
	}
	// The keys queued before this call come first in the queue; of those,
	// relisted collects the ones the list has too. Every other listed key
	// is appended after them.
	queuedBefore := f.queue.len()
	var relisted map[string]struct{}
	for _, obj := range list {
		key, err := f.KeyOf(obj)
		if err != nil {
			return KeyError{obj, err}
		}
		if queuedBefore > 0 {
			if _, queued := f.items[key]; queued {
				if relisted == nil {
					relisted = map[string]struct{}{}
				}
				relisted[key] = struct{}{}
			}
		}
		if err := f.queueKeyedActionLocked(key, action, Replaced, obj); err != nil {
			return fmt.Errorf("couldn't enqueue object: %w", err)
		}
	}

	// Keys queued before but missing from the list, in queue order (so
	// that tombstones are produced in a deterministic order).
	for _, key := range f.queue.keys()[:queuedBefore] {
		if _, ok := relisted[key]; ok {
			continue
		}
		last := f.items[key].Newest().Object
		if d, ok := last.(DeletedFinalStateUnknown); ok {
			last = d.Obj
		}
		if err := f.queueKeyedActionLocked(key, Deleted, Deleted, DeletedFinalStateUnknown{key, last}); err != nil {
			return err
		}
	}
	// Known keys missing from the list and not queued (every listed key is
	// queued by now).
	if f.knownObjects != nil {
		for _, key := range f.knownObjects.ListKeys() {
			if _, queued := f.items[key]; queued {
				continue
			}
			last, exists, err := f.knownObjects.GetByKey(key)
			if err != nil || !exists {
				last = nil // tombstone without a final state
			}
			if err := f.queueKeyedActionLocked(key, Deleted, Deleted, DeletedFinalStateUnknown{key, last}); err != nil {
				return err
			}
		}
	}

	if !f.populated {
		// Every queued key is now either listed or a tombstone: the
		// initial population is the whole queue.
		f.populated = true
		f.initialPopulationCount = f.queue.len()
	}
	return nil
}

// Resync queues a Sync delta for every KnownObjects object whose key is not
// already queued (a queued event is newer than the known state, so a resync
// with the known object would be stale). Without KnownObjects it is a no-op.
func (f *DeltaFIFO) Resync() error {
	f.lock.Lock()
	defer f.lock.Unlock()
	if f.knownObjects == nil {
		return nil
	}
	for _, key := range f.knownObjects.ListKeys() {
		obj, exists, err := f.knownObjects.GetByKey(key)
		if err != nil || !exists {
			continue // raced with a deletion; nothing to resync
		}
		id, err := f.KeyOf(obj)
		if err != nil {
			return KeyError{obj, err}
		}
		if _, queued := f.items[id]; queued {
			continue
		}
		if err := f.queueActionLocked(Sync, Sync, obj); err != nil {
			return fmt.Errorf("couldn't queue object: %w", err)
		}
	}
	return nil
}

// maxIdleQueue is the capacity (in keys) beyond which a DeltaFIFO's queue
// and items map are released once drained.
const maxIdleQueue = 1024

// keyQueue is a FIFO of keys: a slice consumed from head. Once drained it
// starts over at the front of its array (no allocation in steady state),
// unless the array grew beyond maxIdleQueue, which is then released.
type keyQueue struct {
	buf  []string
	head int
}

func (q *keyQueue) len() int { return len(q.buf) - q.head }

// keys returns the queued keys, oldest first (a view, not a copy).
func (q *keyQueue) keys() []string { return q.buf[q.head:] }

func (q *keyQueue) push(key string) {
	if len(q.buf) == cap(q.buf) && q.head > 0 && q.head >= len(q.buf)/2 {
		// Full, but at least half of it already popped: slide the live keys
		// to the front instead of growing.
		n := copy(q.buf, q.buf[q.head:])
		clear(q.buf[n:])
		q.buf, q.head = q.buf[:n], 0
	}
	q.buf = append(q.buf, key)
}

// pop removes and returns the oldest key; the queue must not be empty.
func (q *keyQueue) pop() string {
	key := q.buf[q.head]
	q.buf[q.head] = "" // let the string be collected
	q.head++
	if q.head == len(q.buf) {
		q.head = 0
		if cap(q.buf) > maxIdleQueue {
			q.buf = nil
		} else {
			q.buf = q.buf[:0]
		}
	}
	return key
}

// reserve makes room for n keys; the queue must be empty.
func (q *keyQueue) reserve(n int) {
	if cap(q.buf) < n {
		q.buf, q.head = make([]string, 0, n), 0
	}
}
