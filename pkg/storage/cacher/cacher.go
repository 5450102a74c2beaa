package cacher

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/btree"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/storage"
)

// Config configures a Cacher.
type Config struct {
	// Storage is the store being cached; all writes go to it.
	Storage storage.Interface
	// Prefix is the resource's key prefix, ending in "/".
	Prefix string
	// NewFunc returns an empty object of the kind.
	NewFunc func() runtime.Object
	// KeyFunc returns the storage key of an object.
	KeyFunc func(obj runtime.Object) (string, error)
	// GetAttrs extracts labels and fields for selectors.
	GetAttrs storage.AttrFunc
	// Capacity is the number of recent events kept for watches that start
	// in the past (default 10000).
	Capacity int
	// BookmarkInterval is how often watchers that allow bookmarks get one
	// (default 1 minute).
	BookmarkInterval time.Duration
	// WaitTimeout bounds how long a read waits for the cache to catch up
	// to a requested resourceVersion (default 3 s).
	WaitTimeout time.Duration
	Clock       clock.Clock
	Logger      *slog.Logger
}

// entry is one cached object with its selector attributes.
type entry struct {
	key    string
	obj    *storage.CachedObject
	labels labels.Set // the object's own label map (not a copy)
	fields storage.FieldList
}

func lessEntry(a, b *entry) bool { return a.key < b.key }

// event is one change as the cache saw it.
type event struct {
	typ      watch.EventType
	key      string
	rv       int64
	cur      *entry // nil for a deletion
	prev     *entry // nil for a creation
	bookmark bool
}

// Cacher is the watch cache of one resource: one storage watch keeps an
// in-memory copy of every object and a window of recent events, from which
// it serves any number of client watches and lists. It implements
// storage.Interface, passing writes through to storage.
type Cacher struct {
	cfg Config

	mu    sync.RWMutex
	cond  *sync.Cond // signalled when rv or ready changes
	ready bool
	// rv is the revision the cache is complete up to.
	rv    int64
	items *btree.BTreeG[*entry]
	// ring holds the most recent events; ring[(start+i)%cap] for i < n.
	ring  []*event
	start int
	n     int
	// windowStart is the revision after which every event is in the ring.
	windowStart int64

	watchers map[*cacheWatcher]struct{}

	// progressMu serialises progress requests for consistent reads.
	progressMu sync.Mutex
}

// New returns a Cacher; call Run to fill it.
func New(cfg Config) *Cacher {
	if cfg.Capacity <= 0 {
		cfg.Capacity = 10000
	}
	if cfg.BookmarkInterval <= 0 {
		cfg.BookmarkInterval = time.Minute
	}
	if cfg.WaitTimeout <= 0 {
		cfg.WaitTimeout = 3 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.GetAttrs == nil {
		cfg.GetAttrs = storage.DefaultAttrs
	}
	c := &Cacher{
		cfg:      cfg,
		items:    btree.NewG(32, lessEntry),
		ring:     make([]*event, cfg.Capacity),
		watchers: map[*cacheWatcher]struct{}{},
	}
	c.cond = sync.NewCond(&c.mu)
	return c
}

var _ storage.Interface = (*Cacher)(nil)

// Run keeps the cache in sync with storage until ctx ends: list, then watch
// from the list's revision; on any watch failure, list again.
//
// Failures to list back off exponentially (100 ms doubling up to 6.4 s); a
// list that succeeds resets the delay, so a watch that ends after working
// for a while is followed by a relist 100 ms later.
func (c *Cacher) Run(ctx context.Context) error {
	backoff := minRelistDelay
	for ctx.Err() == nil {
		listed, err := c.listAndWatch(ctx)
		if ctx.Err() != nil {
			break
		}
		if listed {
			backoff = minRelistDelay
		}
		c.cfg.Logger.Warn("watch cache relisting", "resource", c.cfg.Prefix, "err", err)
		t := c.cfg.Clock.NewTimer(backoff)
		select {
		case <-ctx.Done():
		case <-t.C():
		}
		t.Stop()
		backoff = min(2*backoff, maxRelistDelay)
	}
	c.mu.Lock()
	c.ready = false
	ws := c.takeWatchers()
	c.cond.Broadcast()
	c.mu.Unlock()
	for _, w := range ws {
		w.terminate()
	}
	return nil
}

// The delays between a watch cache's attempts to list.
const (
	minRelistDelay = 100 * time.Millisecond
	maxRelistDelay = 6400 * time.Millisecond
)

func (c *Cacher) newEntry(key string, obj runtime.Object) (*entry, error) {
	l, f, err := c.cfg.GetAttrs(obj)
	if err != nil {
		return nil, err
	}
	return &entry{key: key, obj: storage.NewCachedObject(obj), labels: l, fields: storage.NewFieldList(f)}, nil
}

// listAndWatch lists into the cache, then follows storage's watch from the
// list's revision; listed is whether the list succeeded.
func (c *Cacher) listAndWatch(ctx context.Context) (listed bool, err error) {
	objs, lm, err := c.cfg.Storage.ListObjects(ctx, c.cfg.Prefix, storage.ListOptions{Recursive: true})
	if err != nil {
		return false, err
	}
	rv, err := storage.ParseResourceVersion(lm.ResourceVersion)
	if err != nil {
		return false, err
	}
	items := btree.NewG(32, lessEntry)
	for _, obj := range objs {
		key, err := c.cfg.KeyFunc(obj)
		if err != nil {
			return false, err
		}
		e, err := c.newEntry(key, obj)
		if err != nil {
			return false, err
		}
		items.ReplaceOrInsert(e)
	}
	c.mu.Lock()
	c.items, c.rv, c.windowStart = items, rv, rv
	c.start, c.n = 0, 0
	c.ready = true
	// Watchers fed from the previous state may have missed events.
	stale := c.takeWatchers()
	c.cond.Broadcast()
	c.mu.Unlock()
	for _, w := range stale {
		w.terminate()
	}

	return true, c.watch(ctx, rv)
}

// watch applies storage's events from rv on to the cache until the watch
// fails or ctx ends.
func (c *Cacher) watch(ctx context.Context, rv int64) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := c.cfg.Storage.Watch(wctx, c.cfg.Prefix, storage.ListOptions{
		ResourceVersion: storage.FormatRV(rv),
		Recursive:       true,
		ProgressNotify:  true,
		Predicate:       storage.SelectionPredicate{AllowWatchBookmarks: true},
	})
	if err != nil {
		return err
	}
	defer w.Stop()
	ticker := c.cfg.Clock.NewTicker(c.cfg.BookmarkInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C():
			c.dispatchBookmark()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("storage watch closed")
			}
			if err := c.process(ev); err != nil {
				return err
			}
		}
	}
}

// process applies one storage event to the cache and hands it to watchers.
func (c *Cacher) process(ev watch.Event) error {
	switch ev.Type {
	case watch.Error:
		return apierrors.FromObject(ev.Object)
	case watch.Bookmark:
		rv, err := rvOf(ev.Object)
		if err != nil {
			return err
		}
		c.mu.Lock()
		if rv > c.rv {
			c.rv = rv
			c.cond.Broadcast()
		}
		c.mu.Unlock()
		return nil
	}
	rv, err := rvOf(ev.Object)
	if err != nil {
		return err
	}
	key, err := c.cfg.KeyFunc(ev.Object)
	if err != nil {
		return err
	}
	e := &event{typ: ev.Type, key: key, rv: rv}
	c.mu.Lock()
	prev, _ := c.items.Get(&entry{key: key})
	e.prev = prev
	if ev.Type == watch.Deleted {
		c.items.Delete(&entry{key: key})
		// The deleted object as last seen, stamped with the deletion's revision.
		cur, err := c.newEntry(key, ev.Object)
		if err != nil {
			c.mu.Unlock()
			return err
		}
		e.prev = cur
	} else {
		cur, err := c.newEntry(key, ev.Object)
		if err != nil {
			c.mu.Unlock()
			return err
		}
		e.cur = cur
		c.items.ReplaceOrInsert(cur)
		if prev == nil {
			e.typ = watch.Added
		} else {
			e.typ = watch.Modified
		}
	}
	c.appendEvent(e)
	c.rv = rv
	targets := c.watcherList()
	c.cond.Broadcast()
	c.mu.Unlock()
	c.dispatch(e, targets)
	return nil
}

func (c *Cacher) appendEvent(e *event) {
	capacity := len(c.ring)
	if c.n == capacity {
		evicted := c.ring[c.start]
		c.windowStart = evicted.rv
		c.ring[c.start] = nil
		c.start = (c.start + 1) % capacity
		c.n--
	}
	c.ring[(c.start+c.n)%capacity] = e
	c.n++
}

func (c *Cacher) watcherList() []*cacheWatcher {
	out := make([]*cacheWatcher, 0, len(c.watchers))
	for w := range c.watchers {
		out = append(out, w)
	}
	return out
}

func (c *Cacher) takeWatchers() []*cacheWatcher {
	out := c.watcherList()
	c.watchers = map[*cacheWatcher]struct{}{}
	return out
}

// dispatchBudget is how long the dispatcher waits, across all watchers, for
// slow ones before it drops them (they reconnect from their last revision).
const dispatchBudget = 100 * time.Millisecond

func (c *Cacher) dispatch(e *event, targets []*cacheWatcher) {
	var slow []*cacheWatcher
	for _, w := range targets {
		if e.rv <= w.startRV {
			continue
		}
		if !w.tryAdd(e) {
			slow = append(slow, w)
		}
	}
	if len(slow) == 0 {
		return
	}
	deadline := time.NewTimer(dispatchBudget)
	defer deadline.Stop()
	for _, w := range slow {
		if !w.addBefore(e, deadline.C) {
			c.cfg.Logger.Warn("terminating slow watcher", "resource", c.cfg.Prefix)
			c.removeWatcher(w)
			w.terminate()
		}
	}
}

func (c *Cacher) dispatchBookmark() {
	c.mu.RLock()
	e := &event{typ: watch.Bookmark, rv: c.rv, bookmark: true}
	var targets []*cacheWatcher
	for w := range c.watchers {
		if w.bookmarks {
			targets = append(targets, w)
		}
	}
	c.mu.RUnlock()
	for _, w := range targets {
		w.tryAdd(e) // a bookmark is best effort
	}
}

func (c *Cacher) removeWatcher(w *cacheWatcher) {
	c.mu.Lock()
	delete(c.watchers, w)
	c.mu.Unlock()
}

func rvOf(obj runtime.Object) (int64, error) {
	a, err := meta.Accessor(obj)
	if err != nil {
		return 0, err
	}
	return storage.ParseResourceVersion(a.GetResourceVersion())
}

// progressInterval is how often a read waiting for the cache asks storage
// again for a progress notification (the first request can reach storage
// before the cache's watch is established, and then no notification comes).
// It runs on real time, not the configured clock: it is liveness plumbing
// between the cache and storage, and a fake clock that a test does not step
// while a read waits would otherwise leave that read waiting forever.
const progressInterval = 100 * time.Millisecond

// waitUntil blocks until the cache is ready and complete up to rv, for at
// most WaitTimeout, asking storage for progress notifications meanwhile.
// The caller holds c.mu.
func (c *Cacher) waitUntil(ctx context.Context, rv int64) error {
	if c.ready && c.rv >= rv {
		return nil
	}
	timer := c.cfg.Clock.NewTimer(c.cfg.WaitTimeout)
	defer timer.Stop()
	ticker := time.NewTicker(progressInterval)
	defer ticker.Stop()
	timedOut := false // guarded by c.mu
	done := make(chan struct{})
	defer close(done)
	go func() {
		c.requestProgress(ctx)
		for {
			select {
			case <-ticker.C:
				c.requestProgress(ctx)
				continue
			case <-timer.C():
			case <-ctx.Done():
			case <-done:
				return
			}
			c.mu.Lock()
			timedOut = true
			c.cond.Broadcast()
			c.mu.Unlock()
			return
		}
	}()
	for !c.ready || c.rv < rv {
		if err := ctx.Err(); err != nil {
			return err
		}
		if timedOut {
			if !c.ready {
				return apierrors.NewTooManyRequests("storage is (re)initializing", 1)
			}
			return storage.NewTooLargeResourceVersionError(rv, c.rv)
		}
		c.cond.Wait()
	}
	return nil
}

// requestProgress asks storage to tell the cache's watch how far it is.
func (c *Cacher) requestProgress(ctx context.Context) {
	if p, ok := c.cfg.Storage.(interface{ RequestProgress(context.Context) error }); ok {
		c.progressMu.Lock()
		defer c.progressMu.Unlock()
		if err := p.RequestProgress(ctx); err != nil {
			c.cfg.Logger.Debug("progress request failed", "resource", c.cfg.Prefix, "err", err)
		}
	}
}

// consistentRV returns the storage's current revision: a read that waits
// for the cache to reach it sees every write acknowledged before it.
func (c *Cacher) consistentRV(ctx context.Context) (int64, error) {
	rev, err := c.cfg.Storage.CurrentRevision(ctx)
	if err != nil {
		return 0, err
	}
	return int64(rev), nil
}

// readRV turns a request's resourceVersion into the revision the cache must
// have reached to answer it.
func (c *Cacher) readRV(ctx context.Context, rv string) (int64, error) {
	if rv == "" {
		return c.consistentRV(ctx)
	}
	return storage.ParseResourceVersion(rv)
}

// Create implements storage.Interface.
func (c *Cacher) Create(ctx context.Context, key string, obj, out runtime.Object) error {
	return c.cfg.Storage.Create(ctx, key, obj, out)
}

// Delete implements storage.Interface.
func (c *Cacher) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion storage.ValidateObjectFunc, _ runtime.Object) error {
	return c.cfg.Storage.Delete(ctx, key, out, preconditions, validateDeletion, c.cachedCopy(key))
}

// GuaranteedUpdate implements storage.Interface; the cached object saves the
// first read (storage detects a stale one and re-reads).
func (c *Cacher) GuaranteedUpdate(ctx context.Context, key string, dest runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, _ runtime.Object) error {
	return c.cfg.Storage.GuaranteedUpdate(ctx, key, dest, ignoreNotFound, preconditions, tryUpdate, c.cachedCopy(key))
}

func (c *Cacher) cachedCopy(key string) runtime.Object {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.ready {
		return nil
	}
	if e, ok := c.items.Get(&entry{key: key}); ok {
		return e.obj.Object.DeepCopyObject()
	}
	return nil
}

// CurrentRevision implements storage.Interface.
func (c *Cacher) CurrentRevision(ctx context.Context) (uint64, error) {
	return c.cfg.Storage.CurrentRevision(ctx)
}

// Count implements storage.Interface.
func (c *Cacher) Count(ctx context.Context, key string) (int64, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.ready {
		return c.cfg.Storage.Count(ctx, key)
	}
	var n int64
	c.ascend(key, true, func(*entry) bool { n++; return true })
	return n, nil
}

// Get implements storage.Interface: a consistent read ("") goes to storage,
// any other resourceVersion is answered from the cache once it is that new.
func (c *Cacher) Get(ctx context.Context, key string, opts storage.GetOptions, out runtime.Object) error {
	if opts.ResourceVersion == "" {
		return c.cfg.Storage.Get(ctx, key, opts, out)
	}
	rv, err := storage.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.waitUntil(ctx, rv); err != nil {
		return err
	}
	e, ok := c.items.Get(&entry{key: key})
	if !ok {
		if opts.IgnoreNotFound {
			return nil
		}
		return storage.NewKeyNotFoundError(key, c.rv)
	}
	copyInto(out, e.obj.Object)
	return nil
}

// ascend visits the entries under key (a prefix when recursive).
func (c *Cacher) ascend(key string, recursive bool, fn func(*entry) bool) {
	if !recursive {
		if e, ok := c.items.Get(&entry{key: key}); ok {
			fn(e)
		}
		return
	}
	if !strings.HasSuffix(key, "/") {
		key += "/"
	}
	c.items.AscendRange(&entry{key: key}, &entry{key: storage.PrefixEnd(key)}, fn)
}

// servable reports whether a list can come from the cache: paging at an
// exact revision needs storage's history.
func servable(opts storage.ListOptions) bool {
	if opts.Predicate.Continue != "" {
		return false
	}
	if opts.ResourceVersionMatch == string(metav1.ResourceVersionMatchExact) {
		return false
	}
	// Upstream ignores limit for resourceVersion="0" lists from the cache;
	// a limited consistent or "not older than" list pages through storage.
	if opts.Predicate.Limit > 0 && opts.ResourceVersion != "0" {
		return false
	}
	return true
}

// ListObjects implements storage.Interface.
func (c *Cacher) ListObjects(ctx context.Context, key string, opts storage.ListOptions) ([]runtime.Object, metav1.ListMeta, error) {
	if !servable(opts) {
		return c.cfg.Storage.ListObjects(ctx, key, opts)
	}
	rv, err := c.readRV(ctx, opts.ResourceVersion)
	if err != nil {
		return nil, metav1.ListMeta{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.waitUntil(ctx, rv); err != nil {
		return nil, metav1.ListMeta{}, err
	}
	var out []runtime.Object
	if opts.Predicate.Empty() {
		out = make([]runtime.Object, 0, c.items.Len())
	}
	c.ascend(key, opts.Recursive, func(e *entry) bool {
		if opts.Predicate.MatchesAttrs(e.labels, e.fields) {
			out = append(out, e.obj)
		}
		return true
	})
	return out, metav1.ListMeta{ResourceVersion: storage.FormatRV(c.rv)}, nil
}

// GetList implements storage.Interface; items are private copies.
func (c *Cacher) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	if !servable(opts) {
		return c.cfg.Storage.GetList(ctx, key, opts, listObj)
	}
	objs, lm, err := c.ListObjects(ctx, key, opts)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if err := storage.AppendToList(listObj, storage.Unwrap(o).DeepCopyObject()); err != nil {
			return err
		}
	}
	la, err := meta.ListAccessor(listObj)
	if err != nil {
		return err
	}
	la.SetResourceVersion(lm.ResourceVersion)
	return nil
}
