package cache

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/client"
)

// Config wires a Controller: a Reflector filling Queue from ListerWatcher,
// and a loop popping Queue into Process.
type Config struct {
	// Queue receives the Reflector's output; normally a DeltaFIFO whose
	// KnownObjects is the cache Process maintains.
	Queue Queue
	ListerWatcher
	// Process handles one popped item (a Deltas for a DeltaFIFO), with the
	// queue locked: it must not call back into the queue.
	Process PopProcessFunc
	// ObjectType is an example of the objects expected; others are dropped.
	ObjectType runtime.Object
	// FullResyncPeriod is how often the Reflector considers a resync;
	// ShouldResync (nil: always) decides.
	FullResyncPeriod time.Duration
	ShouldResync     func() bool
	// Reflector tunes the Reflector; its ResyncPeriod and ShouldResync are
	// taken from the fields above.
	Reflector ReflectorOptions
	// OnSynced, if set, is called once, when the queue has synced (see
	// Queue.HasSynced), from the goroutine that noticed.
	OnSynced func()
}

// Controller runs a Reflector and a processing loop: the low-level engine
// of informers.
type Controller interface {
	// Run runs until ctx is done, then closes the queue and waits for the
	// Reflector. It may be called once.
	Run(ctx context.Context)
	// HasSynced: the queue has synced (the first list's items have been
	// processed).
	HasSynced() bool
	// LastSyncResourceVersion is the Reflector's; "" before Run.
	LastSyncResourceVersion() string
}

type controller struct {
	cfg Config

	mu        sync.Mutex
	reflector *Reflector

	syncedOnce sync.Once
	synced     chan struct{}
}

// New returns a Controller for cfg.
func New(cfg *Config) Controller {
	return &controller{cfg: *cfg, synced: make(chan struct{})}
}

func (c *controller) Run(ctx context.Context) {
	ropts := c.cfg.Reflector
	ropts.ResyncPeriod = c.cfg.FullResyncPeriod
	ropts.ShouldResync = c.cfg.ShouldResync
	r := NewReflectorWithOptions(c.cfg.ListerWatcher, c.cfg.ObjectType, &syncNotifyingQueue{Queue: c.cfg.Queue, c: c}, ropts)
	c.mu.Lock()
	c.reflector = r
	c.mu.Unlock()

	var wg sync.WaitGroup
	wg.Go(func() { r.Run(ctx) })
	stopClose := context.AfterFunc(ctx, c.cfg.Queue.Close)
	defer stopClose()
	c.processLoop(ctx)
	c.cfg.Queue.Close()
	wg.Wait()
}

func (c *controller) processLoop(ctx context.Context) {
	logger := c.cfg.Reflector.Logger
	if logger == nil {
		logger = slog.Default()
	}
	for ctx.Err() == nil {
		_, err := c.cfg.Queue.Pop(c.cfg.Process)
		if errors.Is(err, ErrFIFOClosed) {
			return
		}
		if err != nil {
			logger.Error("processing an item failed", "err", err)
		}
		c.checkSynced()
	}
}

// checkSynced closes synced (and calls OnSynced) once the queue has synced.
func (c *controller) checkSynced() {
	select {
	case <-c.synced:
		return
	default:
	}
	if !c.cfg.Queue.HasSynced() {
		return
	}
	c.syncedOnce.Do(func() {
		close(c.synced)
		if c.cfg.OnSynced != nil {
			c.cfg.OnSynced()
		}
	})
}

func (c *controller) HasSynced() bool {
	select {
	case <-c.synced:
		return true
	default:
		return false
	}
}

func (c *controller) LastSyncResourceVersion() string {
	c.mu.Lock()
	r := c.reflector
	c.mu.Unlock()
	if r == nil {
		return ""
	}
	return r.LastSyncResourceVersion()
}

// syncNotifyingQueue lets the controller notice a sync that needs no Pop:
// an empty first list makes the queue synced right after Replace.
type syncNotifyingQueue struct {
	Queue
	c *controller
}

func (q *syncNotifyingQueue) Replace(list []any, rv string) error {
	err := q.Queue.Replace(list, rv)
	q.c.checkSynced()
	return err
}

// ResourceEventHandler receives an informer's notifications. The objects
// are shared with the cache and other handlers and must not be modified.
//
//   - OnAdd: an object appeared; isInInitialList tells whether it belongs to
//     the state the informer started from (the first list, or the cache
//     contents a late handler is introduced to).
//   - OnUpdate: an object changed — or not: relists and resyncs deliver
//     updates with unchanged objects (a resync has oldObj == newObj).
//     oldObj is the last state the cache had, so intermediate changes may
//     be skipped.
//   - OnDelete: an object is gone. obj is its final state, or a
//     DeletedFinalStateUnknown when the deletion was discovered by a relist
//     (the watch missed it); its Obj is the last state known, possibly
//     stale.
type ResourceEventHandler interface {
	OnAdd(obj any, isInInitialList bool)
	OnUpdate(oldObj, newObj any)
	OnDelete(obj any)
}

// ResourceEventHandlerFuncs adapts functions (nil ones are skipped) to a
// ResourceEventHandler.
type ResourceEventHandlerFuncs struct {
	AddFunc    func(obj any)
	UpdateFunc func(oldObj, newObj any)
	DeleteFunc func(obj any)
}

func (r ResourceEventHandlerFuncs) OnAdd(obj any, _ bool) {
	if r.AddFunc != nil {
		r.AddFunc(obj)
	}
}

func (r ResourceEventHandlerFuncs) OnUpdate(oldObj, newObj any) {
	if r.UpdateFunc != nil {
		r.UpdateFunc(oldObj, newObj)
	}
}

func (r ResourceEventHandlerFuncs) OnDelete(obj any) {
	if r.DeleteFunc != nil {
		r.DeleteFunc(obj)
	}
}

// ResourceEventHandlerDetailedFuncs is ResourceEventHandlerFuncs whose
// AddFunc also receives isInInitialList.
type ResourceEventHandlerDetailedFuncs struct {
	AddFunc    func(obj any, isInInitialList bool)
	UpdateFunc func(oldObj, newObj any)
	DeleteFunc func(obj any)
}

func (r ResourceEventHandlerDetailedFuncs) OnAdd(obj any, isInInitialList bool) {
	if r.AddFunc != nil {
		r.AddFunc(obj, isInInitialList)
	}
}

func (r ResourceEventHandlerDetailedFuncs) OnUpdate(oldObj, newObj any) {
	if r.UpdateFunc != nil {
		r.UpdateFunc(oldObj, newObj)
	}
}

func (r ResourceEventHandlerDetailedFuncs) OnDelete(obj any) {
	if r.DeleteFunc != nil {
		r.DeleteFunc(obj)
	}
}

// FilteringResourceEventHandler passes on the notifications about objects
// FilterFunc accepts. An update into the filter becomes an add, one out of
// it a delete.
type FilteringResourceEventHandler struct {
	FilterFunc func(obj any) bool
	Handler    ResourceEventHandler
}

func (r FilteringResourceEventHandler) OnAdd(obj any, isInInitialList bool) {
	if r.FilterFunc(obj) {
		r.Handler.OnAdd(obj, isInInitialList)
	}
}

func (r FilteringResourceEventHandler) OnUpdate(oldObj, newObj any) {
	newer, older := r.FilterFunc(newObj), r.FilterFunc(oldObj)
	switch {
	case newer && older:
		r.Handler.OnUpdate(oldObj, newObj)
	case newer:
		r.Handler.OnAdd(newObj, false)
	case older:
		r.Handler.OnDelete(oldObj)
	}
}

func (r FilteringResourceEventHandler) OnDelete(obj any) {
	if r.FilterFunc(obj) {
		r.Handler.OnDelete(obj)
	}
}

// DeletedObject is what a typed delete handler receives: the deleted
// object if known (Obj, possibly stale when FinalStateUnknown is set, or
// the zero T when no state at all is known) and the tombstone when the
// deletion was discovered by a relist.
type DeletedObject[T client.Object] struct {
	Obj               T
	FinalStateUnknown *DeletedFinalStateUnknown
}

// Key is the cache key of the deleted object.
func (d DeletedObject[T]) Key() string {
	if d.FinalStateUnknown != nil {
		return d.FinalStateUnknown.Key
	}
	key, _ := MetaNamespaceKeyFunc(d.Obj)
	return key
}

// TypedResourceEventHandlerFuncs is a ResourceEventHandler for objects of
// type T (nil functions are skipped).
type TypedResourceEventHandlerFuncs[T client.Object] struct {
	AddFunc    func(obj T, isInInitialList bool)
	UpdateFunc func(oldObj, newObj T)
	DeleteFunc func(obj DeletedObject[T])
}

func (r TypedResourceEventHandlerFuncs[T]) OnAdd(obj any, isInInitialList bool) {
	if r.AddFunc != nil {
		if t, ok := obj.(T); ok {
			r.AddFunc(t, isInInitialList)
		}
	}
}

func (r TypedResourceEventHandlerFuncs[T]) OnUpdate(oldObj, newObj any) {
	if r.UpdateFunc != nil {
		o, ok1 := oldObj.(T)
		n, ok2 := newObj.(T)
		if ok1 && ok2 {
			r.UpdateFunc(o, n)
		}
	}
}

func (r TypedResourceEventHandlerFuncs[T]) OnDelete(obj any) {
	if r.DeleteFunc == nil {
		return
	}
	if tomb, ok := obj.(DeletedFinalStateUnknown); ok {
		t, _ := tomb.Obj.(T)
		r.DeleteFunc(DeletedObject[T]{Obj: t, FinalStateUnknown: &tomb})
		return
	}
	if t, ok := obj.(T); ok {
		r.DeleteFunc(DeletedObject[T]{Obj: t})
	}
}

// processDeltas applies one key's Deltas, oldest first, to clientState and
// tells handler: Added/Updated/Sync/Replaced become OnUpdate if the object
// is already in clientState, else OnAdd; Deleted becomes OnDelete.
func processDeltas(handler ResourceEventHandler, clientState Store, deltas Deltas, isInInitialList bool) error {
	c, isCache := clientState.(*cache)
	for _, d := range deltas {
		obj := d.Object
		switch d.Type {
		case Sync, Replaced, Added, Updated:
			if isCache {
				// The same, keying obj once and under one lock.
				old, exists, err := c.upsert(obj)
				if err != nil {
					return err
				}
				if exists {
					handler.OnUpdate(old, obj)
				} else {
					handler.OnAdd(obj, isInInitialList)
				}
				continue
			}
			if old, exists, err := clientState.Get(obj); err == nil && exists {
				if err := clientState.Update(obj); err != nil {
					return err
				}
				handler.OnUpdate(old, obj)
			} else {
				if err := clientState.Add(obj); err != nil {
					return err
				}
				handler.OnAdd(obj, isInInitialList)
			}
		case Deleted:
			if err := clientState.Delete(obj); err != nil {
				return err
			}
			handler.OnDelete(obj)
		}
	}
	return nil
}

// NewIndexerInformer returns an Indexer kept in step with lw and a
// Controller that runs it, calling handler synchronously from the
// processing goroutine (a single-handler informer without the shared
// machinery). resyncPeriod, if positive, replays the cache as updates.
func NewIndexerInformer(lw ListerWatcher, objType runtime.Object, resyncPeriod time.Duration, handler ResourceEventHandler, indexers Indexers) (Indexer, Controller) {
	clientState := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, indexers)
	fifo := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: clientState, EmitDeltaTypeReplaced: true})
	return clientState, New(&Config{
		Queue:            fifo,
		ListerWatcher:    lw,
		ObjectType:       objType,
		FullResyncPeriod: resyncPeriod,
		Process: func(obj any, isInInitialList bool) error {
			deltas, ok := obj.(Deltas)
			if !ok {
				return errors.New("object given as Process argument is not Deltas")
			}
			return processDeltas(handler, clientState, deltas, isInInitialList)
		},
	})
}
