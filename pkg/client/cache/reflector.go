package cache

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// Reflector defaults, client-go's.
const (
	// DefaultPageSize is the page size of the initial list.
	DefaultPageSize int64 = 500
	// DefaultMinWatchTimeout is the shortest watch the Reflector asks for;
	// each watch asks for a random timeout in [min, 2*min] so that the
	// watches of many clients do not all end at once.
	DefaultMinWatchTimeout = 5 * time.Minute
)

// Backoff configures the Reflector's exponential backoff with jitter. The
// n-th consecutive wait is base_n + rand*Jitter*base_n, where base_1 =
// Initial and base_n+1 = min(base_n*Factor, Max). The sequence restarts at
// Initial once ResetAfter has passed since the end of the last wait without
// another one being asked for, i.e. after that long of healthy operation.
type Backoff struct {
	Initial    time.Duration
	Max        time.Duration
	Factor     float64
	Jitter     float64
	ResetAfter time.Duration
}

// DefaultBackoff is client-go's reflector backoff: 800ms doubling up to 30s
// (so waits end up in [30s, 60s)), jitter 1.0, reset after 2 minutes.
func DefaultBackoff() Backoff {
	return Backoff{Initial: 800 * time.Millisecond, Max: 30 * time.Second, Factor: 2, Jitter: 1, ResetAfter: 2 * time.Minute}
}

// backoff is the state of one Backoff sequence.
type backoff struct {
	cfg   Backoff
	clock clock.Clock
	rand  func() float64

	mu      sync.Mutex
	base    time.Duration // 0 until the first wait
	lastEnd time.Time     // when the last wait handed out ends
}

// next returns how long to wait now.
func (b *backoff) next() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	switch {
	case b.base == 0 || now.Sub(b.lastEnd) > b.cfg.ResetAfter:
		b.base = b.cfg.Initial
	default:
		b.base = time.Duration(float64(b.base) * b.cfg.Factor)
		if b.cfg.Max > 0 && b.base > b.cfg.Max {
			b.base = b.cfg.Max
		}
	}
	d := b.base
	if b.cfg.Jitter > 0 {
		d += time.Duration(b.rand() * b.cfg.Jitter * float64(b.base))
	}
	b.lastEnd = now.Add(d)
	return d
}

// ReflectorStore is what a Reflector writes to: normally a DeltaFIFO,
// possibly a plain Store.
type ReflectorStore interface {
	Add(obj any) error
	Update(obj any) error
	Delete(obj any) error
	Replace(list []any, resourceVersion string) error
	Resync() error
}

// ResourceVersionUpdater may be implemented by a ReflectorStore that wants
// to follow the resourceVersion of watch events and bookmarks.
type ResourceVersionUpdater interface {
	UpdateResourceVersion(resourceVersion string)
}

// WatchErrorHandler is called with the error that ended a ListAndWatch
// (before the Reflector backs off and retries). It must return quickly.
type WatchErrorHandler func(r *Reflector, err error)

// ReflectorOptions configures a Reflector. All fields are optional.
type ReflectorOptions struct {
	// Name is used in logs; default the expected type.
	Name string
	// ResyncPeriod, if positive, makes the Reflector call the store's
	// Resync that often while it is watching (when ShouldResync, if set,
	// agrees).
	ResyncPeriod time.Duration
	ShouldResync func() bool
	// Clock drives backoff waits and the resync timer; default the wall
	// clock.
	Clock clock.Clock
	// Rand returns pseudo-random numbers in [0, 1) for backoff jitter and
	// watch timeouts. It is only called from the goroutine running the
	// Reflector; a function shared by several Reflectors must be safe for
	// concurrent use. Default: a source private to the Reflector.
	Rand func() float64
	// Backoff between failed attempts; default DefaultBackoff().
	Backoff *Backoff
	// PageSize forces the page size of lists. Zero chooses as client-go
	// does: DefaultPageSize, except for a relist at a specific
	// resourceVersion (which the server's watch cache answers at once)
	// unless the server paged the initial list.
	PageSize int64
	// UseWatchList makes the Reflector get the initial state with a
	// streaming watch (sendInitialEvents=true) instead of a list, falling
	// back to list+watch if the server refuses.
	UseWatchList bool
	// MinWatchTimeout; default DefaultMinWatchTimeout.
	MinWatchTimeout time.Duration
	Logger          *slog.Logger
	// WatchErrorHandler; default logs the error.
	WatchErrorHandler WatchErrorHandler
}

// Reflector keeps a store in step with the server: it lists (or, with
// UseWatchList, streams the initial state), Replaces the store's content,
// then watches from the list's resourceVersion and applies each event.
//
//   - A watch that ends (its channel closes) is reopened from the last
//     resourceVersion seen (events and bookmarks advance it), without a
//     relist.
//   - A 410 Expired/Gone, as the answer to the watch request or as an ERROR
//     event, ends the ListAndWatch, and the Reflector relists (after a
//     backoff). Any other watch error also relists; 429 and connection
//     refused, and a watch closing within a second without any event, only
//     back off and re-watch.
//   - Lists are paged (limit/continue); when a continue token expires, the
//     list is retried in one piece at the same resourceVersion; when the
//     list's resourceVersion itself is expired or too new, it is retried
//     with resourceVersion "" (a consistent read).
//   - Failures back off exponentially with jitter (see Backoff), on the
//     injected clock and random source.
type Reflector struct {
	name            string
	typeDescription string
	expectedType    reflect.Type
	expectedGVK     *schema.GroupVersionKind
	store           ReflectorStore
	lw              ListerWatcher

	resyncPeriod    time.Duration
	shouldResync    func() bool
	clock           clock.Clock
	rand            func() float64
	backoff         *backoff
	pageSize        int64
	useWatchList    bool
	minWatchTimeout time.Duration
	logger          *slog.Logger
	errorHandler    WatchErrorHandler

	// paginatedResult records that the server paged the initial
	// (resourceVersion "0") list; only the Run goroutine touches it.
	paginatedResult bool

	mu sync.RWMutex
	// lastSyncResourceVersion is the resourceVersion of the last list,
	// event or bookmark applied to the store.
	lastSyncResourceVersion string
	// lastSyncResourceVersionUnavailable: the last list or watch-list at
	// lastSyncResourceVersion failed as expired or too large; the next one
	// reads at "" (the newest state).
	lastSyncResourceVersionUnavailable bool
}

// NewReflector returns a Reflector filling store from lw with objects of
// expectedType's type (nil: any type).
func NewReflector(lw ListerWatcher, expectedType any, store ReflectorStore, resyncPeriod time.Duration) *Reflector {
	return NewReflectorWithOptions(lw, expectedType, store, ReflectorOptions{ResyncPeriod: resyncPeriod})
}

// NewReflectorWithOptions returns a Reflector filling store from lw with
// objects of expectedType's type (nil: any type). For an unstructured
// expectedType with apiVersion and kind set, events of another kind are
// dropped too.
func NewReflectorWithOptions(lw ListerWatcher, expectedType any, store ReflectorStore, o ReflectorOptions) *Reflector {
	r := &Reflector{
		name:            o.Name,
		store:           store,
		lw:              lw,
		resyncPeriod:    o.ResyncPeriod,
		shouldResync:    o.ShouldResync,
		clock:           o.Clock,
		rand:            o.Rand,
		pageSize:        o.PageSize,
		useWatchList:    o.UseWatchList,
		minWatchTimeout: o.MinWatchTimeout,
		logger:          o.Logger,
		errorHandler:    o.WatchErrorHandler,
	}
	r.typeDescription = "<unspecified>"
	if expectedType != nil {
		r.expectedType = reflect.TypeOf(expectedType)
		r.typeDescription = r.expectedType.String()
		if u, ok := expectedType.(*unstructured.Unstructured); ok {
			if gvk := u.GroupVersionKind(); !gvk.Empty() {
				r.expectedGVK = &gvk
				r.typeDescription = gvk.String()
			}
		}
	}
	if r.name == "" {
		r.name = r.typeDescription
	}
	if r.clock == nil {
		r.clock = clock.Real{}
	}
	if r.rand == nil {
		var seed [32]byte
		_, _ = crand.Read(seed[:])
		r.rand = rand.New(rand.NewChaCha8(seed)).Float64
	}
	bo := DefaultBackoff()
	if o.Backoff != nil {
		bo = *o.Backoff
	}
	r.backoff = &backoff{cfg: bo, clock: r.clock, rand: r.rand}
	if r.minWatchTimeout <= 0 {
		r.minWatchTimeout = DefaultMinWatchTimeout
	}
	if r.logger == nil {
		r.logger = slog.Default()
	}
	r.logger = r.logger.With("reflector", r.name)
	if r.errorHandler == nil {
		r.errorHandler = DefaultWatchErrorHandler
	}
	return r
}

// Name is the Reflector's name.
func (r *Reflector) Name() string { return r.name }

// TypeDescription describes the expected type.
func (r *Reflector) TypeDescription() string { return r.typeDescription }

// DefaultWatchErrorHandler logs err, quietly for an expired resourceVersion
// (an ordinary event).
func DefaultWatchErrorHandler(r *Reflector, err error) {
	if isExpiredError(err) {
		r.logger.Debug("watch closed", "type", r.typeDescription, "err", err)
		return
	}
	r.logger.Warn("failed to list or watch", "type", r.typeDescription, "err", err)
}

// Run lists and watches until ctx is done, backing off between attempts.
func (r *Reflector) Run(ctx context.Context) {
	r.logger.Debug("starting reflector", "type", r.typeDescription, "resyncPeriod", r.resyncPeriod)
	for {
		if err := r.ListAndWatch(ctx); err != nil && ctx.Err() == nil {
			r.errorHandler(r, err)
		}
		if !r.sleep(ctx, r.backoff.next()) {
			break
		}
	}
	r.logger.Debug("stopping reflector", "type", r.typeDescription)
}

// sleep waits d on the clock; false if ctx ended first.
func (r *Reflector) sleep(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	if d <= 0 {
		return true
	}
	t := r.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}

// errStopRequested ends a watch whose context is done.
var errStopRequested = errors.New("stop requested")

// ListAndWatch gets the current state into the store (list, or watch-list)
// and then watches until the watch fails in a way that needs a relist, or
// ctx is done (then it returns nil). The error says why it stopped, if it
// did not even get to watch.
func (r *Reflector) ListAndWatch(ctx context.Context) error {
	var w watch.Interface
	useList := !r.useWatchList
	if r.useWatchList {
		var err error
		w, err = r.watchList(ctx)
		if ctx.Err() != nil {
			if w != nil {
				w.Stop()
			}
			return nil
		}
		if err != nil {
			r.logger.Info("watch-list failed, falling back to list", "type", r.typeDescription, "err", err)
			w, useList = nil, true
		}
	}
	if useList {
		if err := r.list(ctx); err != nil {
			return err
		}
	}
	return r.watchWithResync(ctx, w)
}

// list gets the full state by (paged) lists and Replaces the store with it.
func (r *Reflector) list(ctx context.Context) error {
	opts := metav1.ListOptions{ResourceVersion: r.relistResourceVersion()}
	items, rv, paginated, err := r.pagedList(ctx, opts)
	if isExpiredError(err) || isTooLargeResourceVersionError(err) {
		// The resourceVersion asked for is gone or not there yet: read the
		// newest state.
		r.setLastSyncResourceVersionUnavailable(true)
		opts = metav1.ListOptions{ResourceVersion: r.relistResourceVersion()}
		items, rv, paginated, err = r.pagedList(ctx, opts)
	}
	if err != nil {
		return fmt.Errorf("failed to list %s: %w", r.typeDescription, err)
	}
	if opts.ResourceVersion == "0" && paginated {
		// The server pages even "any version" lists: no watch cache here,
		// keep paging relists too.
		r.paginatedResult = true
	}
	r.setLastSyncResourceVersionUnavailable(false)
	if err := r.store.Replace(items, rv); err != nil {
		return fmt.Errorf("unable to sync list result: %w", err)
	}
	r.setLastSyncResourceVersion(rv)
	return nil
}

func (r *Reflector) listPageSize(rv string) int64 {
	if lw, ok := r.lw.(*ListWatch); ok && lw.DisableChunking {
		return 0
	}
	switch {
	case r.pageSize > 0:
		return r.pageSize
	case r.paginatedResult:
		return DefaultPageSize
	case rv != "" && rv != "0":
		// At a specific resourceVersion an unpaged list can be served from
		// the watch cache; a paged one would have to read storage.
		return 0
	}
	return DefaultPageSize
}

// pagedList lists page by page and returns all items with the
// resourceVersion of the first page (the snapshot the pages belong to). If
// a continue token has expired, it lists everything in one request at the
// requested resourceVersion instead.
func (r *Reflector) pagedList(ctx context.Context, opts metav1.ListOptions) (items []any, rv string, paginated bool, err error) {
	opts.Limit = r.listPageSize(opts.ResourceVersion)
	requestedRV, requestedMatch := opts.ResourceVersion, opts.ResourceVersionMatch
	first := true
	for {
		if err := ctx.Err(); err != nil {
			return nil, "", paginated, err
		}
		obj, err := r.lw.List(ctx, opts)
		if err != nil {
			if opts.Continue == "" || !apierrors.IsResourceExpired(err) {
				return nil, "", paginated, err
			}
			r.logger.Debug("continue token expired, listing in one piece", "type", r.typeDescription)
			obj, err = r.lw.List(ctx, metav1.ListOptions{ResourceVersion: requestedRV, ResourceVersionMatch: requestedMatch})
			if err != nil {
				return nil, "", paginated, err
			}
			items, rv, _, err = appendListItems(nil, obj)
			return items, rv, paginated, err
		}
		pageRV, cont := "", ""
		if first {
			if n := meta.LenList(obj); n > 0 {
				size := n
				if lm, err := meta.ListAccessor(obj); err == nil && lm.GetRemainingItemCount() != nil {
					size += int(*lm.GetRemainingItemCount())
				}
				items = make([]any, 0, size)
			}
		}
		items, pageRV, cont, err = appendListItems(items, obj)
		if err != nil {
			return nil, "", paginated, err
		}
		if first {
			rv, first = pageRV, false
		}
		if cont == "" {
			return items, rv, paginated, nil
		}
		// Later pages come from the snapshot the token names; a
		// resourceVersion must not be given with it.
		opts.Continue, opts.ResourceVersion, opts.ResourceVersionMatch = cont, "", ""
		paginated = true
	}
}

// appendListItems appends the items of a list object to items, each in its
// own allocation (so that keeping one does not keep the whole page).
func appendListItems(items []any, list runtime.Object) ([]any, string, string, error) {
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, "", "", fmt.Errorf("unable to understand list result %T: %w", list, err)
	}
	err = meta.EachListItemWithAlloc(list, func(obj runtime.Object) error {
		items = append(items, obj)
		return nil
	})
	if err != nil {
		return nil, "", "", fmt.Errorf("unable to understand list result %T: %w", list, err)
	}
	return items, lm.GetResourceVersion(), lm.GetContinue(), nil
}

// watchList gets the initial state with a streaming watch: ADDED events
// collected in a temporary store until the bookmark annotated
// k8s.io/initial-events-end, whose resourceVersion the store is then
// Replaced at. It returns the watch, still open, to go on with.
func (r *Reflector) watchList(ctx context.Context) (watch.Interface, error) {
	for {
		if ctx.Err() != nil {
			return nil, nil
		}
		temp := NewStore(DeletionHandlingMetaNamespaceKeyFunc)
		var rv string
		sendInitialEvents := true
		timeout := r.watchTimeoutSeconds()
		opts := metav1.ListOptions{
			ResourceVersion:      r.rewatchResourceVersion(),
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
			SendInitialEvents:    &sendInitialEvents,
			AllowWatchBookmarks:  true,
			TimeoutSeconds:       &timeout,
		}
		start := r.clock.Now()
		w, err := r.lw.Watch(ctx, opts)
		if err != nil {
			if ctx.Err() == nil && r.retryWatchList(ctx, err) {
				continue
			}
			return nil, err
		}
		ended, err := r.handleWatch(ctx, start, w, temp, false, func(v string) { rv = v }, true, nil)
		if err != nil {
			if errors.Is(err, errStopRequested) {
				return nil, nil
			}
			if r.retryWatchList(ctx, err) {
				continue
			}
			return nil, err
		}
		if ended {
			r.setLastSyncResourceVersionUnavailable(false)
			if err := r.store.Replace(temp.List(), rv); err != nil {
				w.Stop()
				return nil, fmt.Errorf("unable to sync watch-list result: %w", err)
			}
			r.setLastSyncResourceVersion(rv)
			return w, nil
		}
		// The stream ended before the initial events did: start over.
		if !r.sleep(ctx, r.backoff.next()) {
			return nil, nil
		}
	}
}

// retryWatchList reports whether a failed watch-list should be retried
// (after backing off, or at resourceVersion "").
func (r *Reflector) retryWatchList(ctx context.Context, err error) bool {
	if isWatchErrorRetriable(err) {
		r.logger.Debug("watch-list failed, backing off", "type", r.typeDescription, "err", err)
		return r.sleep(ctx, r.backoff.next())
	}
	if isExpiredError(err) || isTooLargeResourceVersionError(err) {
		r.setLastSyncResourceVersionUnavailable(true)
		return true
	}
	return false
}

func (r *Reflector) watchTimeoutSeconds() int64 {
	lo := r.minWatchTimeout.Seconds()
	return int64(lo + r.rand()*lo)
}

// watchWithResync watches (starting with w if not nil) with the resync
// timer running alongside.
func (r *Reflector) watchWithResync(ctx context.Context, w watch.Interface) error {
	resyncErr := make(chan error, 1)
	rctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { r.resyncLoop(rctx, resyncErr) })
	defer func() {
		cancel()
		wg.Wait()
	}()
	return r.watch(ctx, w, resyncErr)
}

// resyncLoop calls the store's Resync every resyncPeriod (when
// ShouldResync agrees) until ctx is done or Resync fails.
func (r *Reflector) resyncLoop(ctx context.Context, errc chan<- error) {
	if r.resyncPeriod <= 0 {
		return
	}
	t := r.clock.NewTimer(r.resyncPeriod)
	defer t.Stop()
	for {
		select {
		case <-t.C():
		case <-ctx.Done():
			return
		}
		if r.shouldResync == nil || r.shouldResync() {
			if err := r.store.Resync(); err != nil {
				errc <- err
				return
			}
		}
		t.Reset(r.resyncPeriod)
	}
}

// watch watches from the last synced resourceVersion, re-watching whenever
// a watch ends normally. It returns nil when ctx is done or a relist is due
// (410), and an error for other failures (which also lead to a relist).
func (r *Reflector) watch(ctx context.Context, w watch.Interface, resyncErr <-chan error) error {
	defer func() {
		if w != nil {
			w.Stop()
		}
	}()
	for {
		if ctx.Err() != nil {
			return nil
		}
		start := r.clock.Now()
		// A watch handed over by watch-list is past its initial events.
		propagateRV := true
		if w == nil {
			rv := r.LastSyncResourceVersion()
			timeout := r.watchTimeoutSeconds()
			opts := metav1.ListOptions{ResourceVersion: rv, TimeoutSeconds: &timeout, AllowWatchBookmarks: true}
			// From "" or "0" the server starts with synthetic ADDED events
			// in no resourceVersion order: only trust resourceVersions
			// once something else arrived.
			propagateRV = rv != "" && rv != "0"
			var err error
			w, err = r.lw.Watch(ctx, opts)
			if err != nil {
				w = nil
				if ctx.Err() != nil {
					return nil
				}
				if isWatchErrorRetriable(err) {
					r.logger.Debug("watch failed, backing off", "type", r.typeDescription, "err", err)
					if !r.sleep(ctx, r.backoff.next()) {
						return nil
					}
					continue
				}
				return err
			}
		}
		_, err := r.handleWatch(ctx, start, w, r.store, propagateRV, r.updateResourceVersion, false, resyncErr)
		w = nil // handleWatch stopped it
		var short *VeryShortWatchError
		switch {
		case err == nil:
			// The watch ended (server timeout, broken stream): go on from
			// the last resourceVersion seen.
			continue
		case errors.Is(err, errStopRequested):
			return nil
		case isExpiredError(err):
			r.logger.Debug("watch expired, relisting", "type", r.typeDescription, "err", err)
			return nil
		case apierrors.IsTooManyRequests(err), errors.As(err, &short):
			r.logger.Debug("watch ended early, backing off", "type", r.typeDescription, "err", err)
			if !r.sleep(ctx, r.backoff.next()) {
				return nil
			}
			continue
		default:
			return fmt.Errorf("watch of %s ended with error: %w", r.typeDescription, err)
		}
	}
}

func (r *Reflector) updateResourceVersion(rv string) {
	r.setLastSyncResourceVersion(rv)
	if u, ok := r.store.(ResourceVersionUpdater); ok {
		u.UpdateResourceVersion(rv)
	}
}

// handleWatch applies w's events to store until w closes, fails, ctx is
// done, errc delivers, or — if stopAtInitialEventsEnd — the bookmark
// ending the initial events arrives (then w is left open). setRV is called
// with each event's resourceVersion; with propagateRV false only once an
// event other than ADDED has been seen. It reports whether the
// initial-events-end bookmark was seen.
func (r *Reflector) handleWatch(ctx context.Context, start time.Time, w watch.Interface, store ReflectorStore,
	propagateRV bool, setRV func(string), stopAtInitialEventsEnd bool, errc <-chan error) (initialEventsEnd bool, err error) {
	stop := true
	defer func() {
		if stop {
			w.Stop()
		}
	}()
	events := 0
	for {
		select {
		case <-ctx.Done():
			return initialEventsEnd, errStopRequested
		case err := <-errc:
			return initialEventsEnd, err
		case ev, ok := <-w.ResultChan():
			if !ok {
				if events == 0 && r.clock.Since(start) < time.Second {
					return initialEventsEnd, &VeryShortWatchError{Name: r.name}
				}
				return initialEventsEnd, nil
			}
			if ev.Type == watch.Error {
				return initialEventsEnd, apierrors.FromObject(ev.Object)
			}
			if r.expectedType != nil && reflect.TypeOf(ev.Object) != r.expectedType {
				r.logger.Error("unexpected watch event object type", "expected", r.expectedType, "actual", reflect.TypeOf(ev.Object))
				continue
			}
			if r.expectedGVK != nil && ev.Object.GetObjectKind().GroupVersionKind() != *r.expectedGVK {
				r.logger.Error("unexpected watch event object kind", "expected", *r.expectedGVK, "actual", ev.Object.GetObjectKind().GroupVersionKind())
				continue
			}
			m, err := meta.Accessor(ev.Object)
			if err != nil {
				r.logger.Error("unable to understand watch event", "event", ev.Type, "err", err)
				continue
			}
			switch ev.Type {
			case watch.Added:
				err = store.Add(ev.Object)
			case watch.Modified:
				propagateRV = true
				err = store.Update(ev.Object)
			case watch.Deleted:
				propagateRV = true
				err = store.Delete(ev.Object)
			case watch.Bookmark:
				propagateRV = true
				if m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
					initialEventsEnd = true
				}
			default:
				r.logger.Error("unknown watch event type", "event", ev.Type)
				continue
			}
			if err != nil {
				r.logger.Error("unable to apply watch event to the store", "event", ev.Type, "err", err)
			}
			if propagateRV {
				setRV(m.GetResourceVersion())
			}
			events++
			if stopAtInitialEventsEnd && initialEventsEnd {
				stop = false
				return true, nil
			}
		}
	}
}

// LastSyncResourceVersion is the resourceVersion of the last list, event
// or bookmark the Reflector applied.
func (r *Reflector) LastSyncResourceVersion() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.lastSyncResourceVersion
}

func (r *Reflector) setLastSyncResourceVersion(v string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastSyncResourceVersion = v
}

func (r *Reflector) setLastSyncResourceVersionUnavailable(v bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastSyncResourceVersionUnavailable = v
}

// relistResourceVersion is what to list at: "0" (any, cheapest) the first
// time, the last synced resourceVersion later (never going back in time),
// "" (newest) if that one is unavailable.
func (r *Reflector) relistResourceVersion() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	switch {
	case r.lastSyncResourceVersionUnavailable:
		return ""
	case r.lastSyncResourceVersion == "":
		return "0"
	}
	return r.lastSyncResourceVersion
}

// rewatchResourceVersion is what a watch-list starts at.
func (r *Reflector) rewatchResourceVersion() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.lastSyncResourceVersionUnavailable {
		return ""
	}
	return r.lastSyncResourceVersion
}

// VeryShortWatchError: the watch closed within a second without any event.
type VeryShortWatchError struct {
	Name string
}

func (e *VeryShortWatchError) Error() string {
	return fmt.Sprintf("very short watch: %s: unexpected watch close - watch lasted less than a second and no items received", e.Name)
}

func isExpiredError(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

func isTooLargeResourceVersionError(err error) bool {
	if apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		return true
	}
	// Older servers say so only in the message of a timeout.
	if !apierrors.IsTimeout(err) {
		return false
	}
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return false
	}
	if d := st.Status().Details; d != nil {
		for _, c := range d.Causes {
			if c.Message == "Too large resource version" {
				return true
			}
		}
	}
	return strings.Contains(st.Status().Message, "Too large resource version")
}

// isWatchErrorRetriable: the server is probably overloaded or restarting;
// re-watch from where we are after a backoff rather than relist.
func isWatchErrorRetriable(err error) bool {
	return utilnet.IsConnectionRefused(err) || apierrors.IsTooManyRequests(err)
}
