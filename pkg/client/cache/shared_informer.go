package cache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// SharedInformer keeps one cache of a resource, filled by one
// ListerWatcher, and tells any number of handlers about its changes.
//
// Each handler gets its own unbounded buffer and goroutine, so a slow
// handler delays nobody else (and, in the worst case, grows its buffer).
// Notifications reach a handler in the order the cache changed. The cache
// is updated before handlers are notified, so a handler may see a newer
// state in the cache than in the notification it is handling.
type SharedInformer interface {
	// AddEventHandler adds a handler with the informer's default resync
	// period. A handler added after Run first gets an add for every object
	// in the cache (isInInitialList = true). It fails once the informer
	// has stopped.
	AddEventHandler(handler ResourceEventHandler) (ResourceEventHandlerRegistration, error)
	// AddEventHandlerWithResyncPeriod adds a handler that wants the whole
	// cache replayed as updates (old == new) every resyncPeriod (0: never).
	// The period is at least 1s, and cannot be shorter than the informer's
	// resync check period once the informer runs; an informer created
	// without resync (period 0) never resyncs.
	AddEventHandlerWithResyncPeriod(handler ResourceEventHandler, resyncPeriod time.Duration) (ResourceEventHandlerRegistration, error)
	// RemoveEventHandler stops notifications to a handler; pending ones
	// are dropped. Removing an unknown registration is a no-op.
	RemoveEventHandler(handle ResourceEventHandlerRegistration) error
	// GetStore is the cache (read-only for users).
	GetStore() Store
	// Run runs the informer until ctx is done, then stops the handlers and
	// waits for them (including a handler call in progress). It may be
	// called once.
	Run(ctx context.Context)
	// HasSynced: the first list has been fully applied to the cache and
	// handed to the handlers (not necessarily handled by them: see the
	// registration's HasSynced).
	HasSynced() bool
	// Synced is closed when HasSynced becomes true.
	Synced() <-chan struct{}
	// LastSyncResourceVersion is the resourceVersion the cache was last
	// synced at; "" before Run.
	LastSyncResourceVersion() string
	// SetWatchErrorHandler replaces the Reflector's error handler; only
	// before Run.
	SetWatchErrorHandler(handler WatchErrorHandler) error
	// SetTransform sets a function applied to every object before it is
	// cached; only before Run.
	SetTransform(handler TransformFunc) error
	// IsStopped: Run has returned (or is returning).
	IsStopped() bool
}

// SharedIndexInformer is a SharedInformer with an indexed cache.
type SharedIndexInformer interface {
	SharedInformer
	// AddIndexers adds indices; existing objects are indexed at once.
	AddIndexers(indexers Indexers) error
	GetIndexer() Indexer
}

// ResourceEventHandlerRegistration is a handler's handle.
type ResourceEventHandlerRegistration interface {
	// HasSynced: the informer has synced and this handler has handled the
	// objects of the initial list (for a handler added late, the synthetic
	// adds for the cache as it was).
	HasSynced() bool
	// Synced is closed when HasSynced becomes true.
	Synced() <-chan struct{}
	// Stopped is closed once the handler's goroutine has exited, after
	// RemoveEventHandler or the informer's stop.
	Stopped() <-chan struct{}
}

// InformerSynced reports whether something has synced (HasSynced).
type InformerSynced func() bool

// minimumResyncPeriod is the shortest handler resync period.
const minimumResyncPeriod = time.Second

// SharedIndexInformerOptions configures a SharedIndexInformer.
type SharedIndexInformerOptions struct {
	// ResyncPeriod is the default resync period of handlers (0: none) and
	// the initial resync check period.
	ResyncPeriod time.Duration
	// Indexers of the cache.
	Indexers Indexers
	// Clock; default the wall clock. Also the Reflector's unless
	// Reflector.Clock is set.
	Clock clock.Clock
	// Reflector tunes the Reflector (backoff, randomness, paging,
	// watch-list, logging). Its ResyncPeriod and ShouldResync are set by
	// the informer.
	Reflector ReflectorOptions
}

// NewSharedInformer returns a SharedInformer of the objects lw lists, of
// exampleObject's type.
func NewSharedInformer(lw ListerWatcher, exampleObject runtime.Object, defaultEventHandlerResyncPeriod time.Duration) SharedInformer {
	return NewSharedIndexInformer(lw, exampleObject, defaultEventHandlerResyncPeriod, Indexers{})
}

// NewSharedIndexInformer returns a SharedIndexInformer of the objects lw
// lists, of exampleObject's type, indexed by indexers.
func NewSharedIndexInformer(lw ListerWatcher, exampleObject runtime.Object, defaultEventHandlerResyncPeriod time.Duration, indexers Indexers) SharedIndexInformer {
	return NewSharedIndexInformerWithOptions(lw, exampleObject, SharedIndexInformerOptions{ResyncPeriod: defaultEventHandlerResyncPeriod, Indexers: indexers})
}

// NewSharedIndexInformerWithOptions returns a SharedIndexInformer of the
// objects lw lists, of exampleObject's type.
func NewSharedIndexInformerWithOptions(lw ListerWatcher, exampleObject runtime.Object, o SharedIndexInformerOptions) SharedIndexInformer {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Reflector.Clock == nil {
		o.Reflector.Clock = o.Clock
	}
	if o.Reflector.Logger == nil {
		o.Reflector.Logger = slog.Default()
	}
	if o.Indexers == nil {
		o.Indexers = Indexers{}
	}
	return &sharedIndexInformer{
		indexer:                         NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, o.Indexers),
		lw:                              lw,
		objectType:                      exampleObject,
		clock:                           o.Clock,
		reflectorOpts:                   o.Reflector,
		logger:                          o.Reflector.Logger,
		processor:                       &sharedProcessor{},
		resyncCheckPeriod:               o.ResyncPeriod,
		defaultEventHandlerResyncPeriod: o.ResyncPeriod,
		synced:                          make(chan struct{}),
	}
}

// sharedIndexInformer is a Controller (Reflector → DeltaFIFO → Pop) whose
// process function updates the Indexer and hands notifications to the
// sharedProcessor. The DeltaFIFO's KnownObjects is the Indexer, so a relist
// turns keys missing from the list into DeletedFinalStateUnknown deletes.
type sharedIndexInformer struct {
	indexer       Indexer
	lw            ListerWatcher
	objectType    runtime.Object
	clock         clock.Clock
	reflectorOpts ReflectorOptions
	logger        *slog.Logger
	processor     *sharedProcessor
	synced        chan struct{}

	// blockDeltas is held while deltas are processed, and while a late
	// handler is introduced to the cache, so that it misses nothing and
	// gets nothing twice.
	blockDeltas sync.Mutex

	mu                              sync.Mutex // guards what follows
	started, stopped                bool
	controller                      Controller
	resyncCheckPeriod               time.Duration
	defaultEventHandlerResyncPeriod time.Duration
	transform                       TransformFunc
	watchErrorHandler               WatchErrorHandler
}

var _ SharedIndexInformer = (*sharedIndexInformer)(nil)

func (s *sharedIndexInformer) Run(ctx context.Context) {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		s.logger.Warn("the shared informer has started already; Run more than once is not allowed")
		return
	}
	fifo := NewDeltaFIFOWithOptions(DeltaFIFOOptions{
		KnownObjects:          s.indexer,
		EmitDeltaTypeReplaced: true,
		Transformer:           s.transform,
	})
	ropts := s.reflectorOpts
	if s.watchErrorHandler != nil {
		ropts.WatchErrorHandler = s.watchErrorHandler
	}
	s.controller = New(&Config{
		Queue:            fifo,
		ListerWatcher:    s.lw,
		ObjectType:       s.objectType,
		FullResyncPeriod: s.resyncCheckPeriod,
		ShouldResync:     func() bool { return s.processor.shouldResync(s.clock.Now()) },
		Process:          s.handleDeltas,
		Reflector:        ropts,
		OnSynced: func() {
			s.processor.setUpstreamSynced()
			close(s.synced)
		},
	})
	s.started = true
	s.processor.start()
	s.mu.Unlock()

	s.controller.Run(ctx)

	s.mu.Lock()
	s.stopped = true // no new handlers
	s.mu.Unlock()
	s.processor.stop()
}

func (s *sharedIndexInformer) HasSynced() bool {
	select {
	case <-s.synced:
		return true
	default:
		return false
	}
}

func (s *sharedIndexInformer) Synced() <-chan struct{} { return s.synced }

func (s *sharedIndexInformer) LastSyncResourceVersion() string {
	s.mu.Lock()
	c := s.controller
	s.mu.Unlock()
	if c == nil {
		return ""
	}
	return c.LastSyncResourceVersion()
}

func (s *sharedIndexInformer) GetStore() Store     { return s.indexer }
func (s *sharedIndexInformer) GetIndexer() Indexer { return s.indexer }

func (s *sharedIndexInformer) AddIndexers(indexers Indexers) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return errors.New("indexer was not added because the informer has stopped")
	}
	return s.indexer.AddIndexers(indexers)
}

func (s *sharedIndexInformer) SetWatchErrorHandler(handler WatchErrorHandler) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("informer has already started")
	}
	s.watchErrorHandler = handler
	return nil
}

func (s *sharedIndexInformer) SetTransform(handler TransformFunc) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("informer has already started")
	}
	s.transform = handler
	return nil
}

func (s *sharedIndexInformer) IsStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

func (s *sharedIndexInformer) AddEventHandler(handler ResourceEventHandler) (ResourceEventHandlerRegistration, error) {
	s.mu.Lock()
	period := s.defaultEventHandlerResyncPeriod
	s.mu.Unlock()
	return s.AddEventHandlerWithResyncPeriod(handler, period)
}

func (s *sharedIndexInformer) AddEventHandlerWithResyncPeriod(handler ResourceEventHandler, resyncPeriod time.Duration) (ResourceEventHandlerRegistration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil, fmt.Errorf("handler %T was not added to shared informer because it has stopped already", handler)
	}
	if resyncPeriod > 0 {
		if resyncPeriod < minimumResyncPeriod {
			s.logger.Warn("resync period is too small, using the minimum", "resyncPeriod", resyncPeriod, "minimum", minimumResyncPeriod)
			resyncPeriod = minimumResyncPeriod
		}
		if resyncPeriod < s.resyncCheckPeriod {
			if s.started {
				s.logger.Warn("resync period is shorter than the running informer's resync check period, using that",
					"resyncPeriod", resyncPeriod, "resyncCheckPeriod", s.resyncCheckPeriod)
				resyncPeriod = s.resyncCheckPeriod
			} else {
				// Check more often, for this handler's sake.
				s.resyncCheckPeriod = resyncPeriod
				s.processor.resyncCheckPeriodChanged(resyncPeriod)
			}
		}
	}
	l := newProcessorListener(handler, resyncPeriod, effectiveResyncPeriod(resyncPeriod, s.resyncCheckPeriod), s.clock.Now())
	if !s.started {
		s.processor.addListener(l)
		return l, nil
	}
	// Join a running informer: with deltas blocked, queue an add for each
	// cached object, then register (from then on the handler gets the
	// deltas that follow).
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	for _, item := range s.indexer.List() {
		l.add(notification{kind: addNotification, newObj: item, isInInitialList: true})
	}
	if !s.processor.addListener(l) {
		return nil, fmt.Errorf("handler %T was not added to shared informer because it has stopped already", handler)
	}
	return l, nil
}

func (s *sharedIndexInformer) RemoveEventHandler(handle ResourceEventHandlerRegistration) error {
	l, ok := handle.(*processorListener)
	if !ok {
		return fmt.Errorf("invalid registration of type %T", handle)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	s.processor.removeListener(l)
	return nil
}

// handleDeltas is the controller's process function (called with the
// DeltaFIFO locked).
func (s *sharedIndexInformer) handleDeltas(obj any, isInInitialList bool) error {
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	deltas, ok := obj.(Deltas)
	if !ok {
		return errors.New("object given as Process argument is not Deltas")
	}
	return processDeltas(s, s.indexer, deltas, isInInitialList)
}

// OnAdd distributes an add (ResourceEventHandler for processDeltas).
func (s *sharedIndexInformer) OnAdd(obj any, isInInitialList bool) {
	s.processor.distribute(notification{kind: addNotification, newObj: obj, isInInitialList: isInInitialList}, false)
}

// OnUpdate distributes an update; one that did not change the
// resourceVersion (a resync, or a relist finding the object unchanged) is
// a sync notification, for the syncing handlers only.
func (s *sharedIndexInformer) OnUpdate(oldObj, newObj any) {
	isSync := false
	if n, err := meta.Accessor(newObj); err == nil {
		if o, err := meta.Accessor(oldObj); err == nil {
			isSync = n.GetResourceVersion() == o.GetResourceVersion()
		}
	}
	s.processor.distribute(notification{kind: updateNotification, oldObj: oldObj, newObj: newObj}, isSync)
}

// OnDelete distributes a delete.
func (s *sharedIndexInformer) OnDelete(obj any) {
	s.processor.distribute(notification{kind: deleteNotification, oldObj: obj}, false)
}

// WaitForCacheSync waits until every cacheSync reports true (then true) or
// ctx is done (then false). It polls every 10ms.
func WaitForCacheSync(ctx context.Context, cacheSyncs ...InformerSynced) bool {
	all := func() bool {
		for _, synced := range cacheSyncs {
			if !synced() {
				return false
			}
		}
		return true
	}
	if all() {
		return true
	}
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			if all() {
				return true
			}
		}
	}
}

// WaitForSynced waits until every channel (such as SharedInformer.Synced
// or a registration's Synced) is closed (then true) or ctx is done (then
// false), without polling.
func WaitForSynced(ctx context.Context, synced ...<-chan struct{}) bool {
	for _, c := range synced {
		select {
		case <-c:
			continue
		default:
		}
		select {
		case <-c:
		case <-ctx.Done():
			return false
		}
	}
	return true
}
