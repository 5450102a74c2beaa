package cacher

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/skiff-sh/skiff/pkg/storage"
)

// watcherBuffer is the depth of a watcher's input queue.
const watcherBuffer = 256

// cacheWatcher is one client watch served from the cache. The dispatcher
// feeds it events in revision order; its goroutine filters them through the
// client's predicate and sends them on.
type cacheWatcher struct {
	input  chan *event
	result chan watch.Event
	pred   storage.SelectionPredicate
	// match selects the keys the client watches (nil: all of the resource).
	match     func(key string) bool
	startRV   int64
	bookmarks bool
	newFunc   func() runtime.Object
	initial   []watch.Event
	done      chan struct{}
	// closed when the dispatcher drops the watcher
	dropped  chan struct{}
	dropOnce sync.Once
	stopOnce sync.Once
	cacher   *Cacher
}

func (w *cacheWatcher) ResultChan() <-chan watch.Event { return w.result }

// Stop ends the watch; the result channel closes.
func (w *cacheWatcher) Stop() {
	w.stopOnce.Do(func() {
		w.cacher.removeWatcher(w)
		close(w.done)
	})
}

// terminate is the cacher dropping the watcher: the client sees its result
// channel close and re-watches from the last revision it got.
func (w *cacheWatcher) terminate() {
	w.dropOnce.Do(func() { close(w.dropped) })
}

func (w *cacheWatcher) tryAdd(e *event) bool {
	select {
	case w.input <- e:
		return true
	case <-w.done:
		return true
	case <-w.dropped:
		return true
	default:
		return false
	}
}

// addBefore waits for room in the queue until deadline fires.
func (w *cacheWatcher) addBefore(e *event, deadline <-chan time.Time) bool {
	select {
	case w.input <- e:
		return true
	case <-w.done:
		return true
	case <-w.dropped:
		return true
	case <-deadline:
		return false
	}
}

func (w *cacheWatcher) send(ev watch.Event) bool {
	select {
	case w.result <- ev:
		return true
	case <-w.done:
		return false
	case <-w.dropped:
		return false
	}
}

func (w *cacheWatcher) run() {
	defer close(w.result)
	for _, ev := range w.initial {
		if !w.send(ev) {
			return
		}
	}
	w.initial = nil
	for {
		select {
		case <-w.done:
			return
		case <-w.dropped:
			return
		case e := <-w.input:
			ev, ok := w.convert(e)
			if ok && !w.send(ev) {
				return
			}
		}
	}
}

// convert turns a cache event into what this watcher's client sees.
func (w *cacheWatcher) convert(e *event) (watch.Event, bool) {
	if e.bookmark {
		if !w.bookmarks {
			return watch.Event{}, false
		}
		return w.bookmark(e.rv, false), true
	}
	if e.rv <= w.startRV || (w.match != nil && !w.match(e.key)) {
		return watch.Event{}, false
	}
	return transition(w.pred, e)
}

func (w *cacheWatcher) bookmark(rv int64, initialEnd bool) watch.Event {
	obj := w.newFunc()
	a, _ := meta.Accessor(obj)
	a.SetResourceVersion(storage.FormatRV(rv))
	if initialEnd {
		a.SetAnnotations(map[string]string{storage.InitialEventsAnnotation: "true"})
	}
	return watch.Event{Type: watch.Bookmark, Object: obj}
}

// transition picks the event for a predicate: entering the selection is
// ADDED, leaving it DELETED.
func transition(p storage.SelectionPredicate, e *event) (watch.Event, bool) {
	curOK := e.cur != nil && p.MatchesAttrs(e.cur.labels, e.cur.fields)
	prevOK := e.prev != nil && p.MatchesAttrs(e.prev.labels, e.prev.fields)
	switch {
	case e.typ == watch.Deleted:
		if prevOK {
			return watch.Event{Type: watch.Deleted, Object: e.prev.obj}, true
		}
	case curOK && prevOK:
		return watch.Event{Type: watch.Modified, Object: e.cur.obj}, true
	case curOK:
		return watch.Event{Type: watch.Added, Object: e.cur.obj}, true
	case prevOK:
		// Left the selection: the client sees the object deleted, at this revision.
		gone := e.prev.obj.Object.DeepCopyObject()
		_ = storage.SetResourceVersion(gone, e.rv)
		return watch.Event{Type: watch.Deleted, Object: storage.NewCachedObject(gone)}, true
	}
	return watch.Event{}, false
}

// Watch implements storage.Interface. resourceVersion "" or "0" starts with
// the current state as ADDED events (sendInitialEvents decides explicitly);
// N starts after revision N, which must still be in the event window.
func (c *Cacher) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	rv, err := storage.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	initial := rv == 0
	if opts.SendInitialEvents != nil {
		initial = *opts.SendInitialEvents
		if initial && rv != 0 && opts.ResourceVersionMatch != string(metav1.ResourceVersionMatchNotOlderThan) {
			return nil, apierrors.NewBadRequest("sendInitialEvents is only supported with resourceVersion unset, \"0\" or resourceVersionMatch=NotOlderThan")
		}
	}
	// A consistent start ("" with initial events) must include every write
	// acknowledged before the request.
	var need int64
	switch {
	case opts.ResourceVersion == "" && initial:
		if need, err = c.consistentRV(ctx); err != nil {
			return nil, err
		}
	case rv > 0:
		need = rv
	}
	pred := opts.Predicate
	if pred.Label == nil && pred.Field == nil {
		pred = storage.SelectionPredicate{AllowWatchBookmarks: pred.AllowWatchBookmarks}
	}
	w := &cacheWatcher{
		input:     make(chan *event, watcherBuffer),
		result:    make(chan watch.Event),
		pred:      pred,
		bookmarks: opts.Predicate.AllowWatchBookmarks,
		newFunc:   c.cfg.NewFunc,
		done:      make(chan struct{}),
		dropped:   make(chan struct{}),
		cacher:    c,
	}
	recursive := opts.Recursive
	matchKey := func(k string) bool {
		if recursive {
			p := key
			if len(p) > 0 && p[len(p)-1] != '/' {
				p += "/"
			}
			return len(k) >= len(p) && k[:len(p)] == p
		}
		return k == key
	}
	if !recursive || key != c.cfg.Prefix {
		w.match = matchKey
	}

	c.mu.Lock()
	if err := c.waitUntil(ctx, need); err != nil {
		c.mu.Unlock()
		return nil, err
	}
	if initial {
		c.ascend(key, recursive, func(e *entry) bool {
			if pred.MatchesAttrs(e.labels, e.fields) {
				w.initial = append(w.initial, watch.Event{Type: watch.Added, Object: e.obj})
			}
			return true
		})
		w.startRV = c.rv
		if opts.SendInitialEvents != nil && *opts.SendInitialEvents && w.bookmarks {
			w.initial = append(w.initial, w.bookmark(c.rv, true))
		}
	} else {
		if rv < c.windowStart {
			c.mu.Unlock()
			return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", rv, c.windowStart))
		}
		for i := 0; i < c.n; i++ {
			e := c.ring[(c.start+i)%len(c.ring)]
			if e.rv <= rv || !matchKey(e.key) {
				continue
			}
			if ev, ok := transition(pred, e); ok {
				w.initial = append(w.initial, ev)
			}
		}
		w.startRV = c.rv
	}
	c.watchers[w] = struct{}{}
	c.mu.Unlock()

	go w.run()
	go func() {
		select {
		case <-ctx.Done():
			w.Stop()
		case <-w.done:
		}
	}()
	return w, nil
}

func copyInto(dst, src runtime.Object) {
	reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src.DeepCopyObject()).Elem())
}
