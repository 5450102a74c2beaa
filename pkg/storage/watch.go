package storage

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// InitialEventsAnnotation marks the bookmark that ends the initial events of
// a sendInitialEvents watch.
const InitialEventsAnnotation = "k8s.io/initial-events-end"

// watchBuffer is the channel depth of one storage watcher.
const watchBuffer = 100

// Watch implements Interface.
func (s *Store) Watch(ctx context.Context, key string, opts ListOptions) (watch.Interface, error) {
	rv, err := ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	prefix := key
	if opts.Recursive && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	initial := rv == 0
	if opts.SendInitialEvents != nil {
		initial = *opts.SendInitialEvents
		if initial && rv != 0 {
			return nil, apierrors.NewBadRequest("sendInitialEvents is only supported with resourceVersion unset or \"0\"")
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &storeWatcher{
		store:    s,
		key:      key,
		prefix:   prefix,
		opts:     opts,
		result:   make(chan watch.Event, watchBuffer),
		cancel:   cancel,
		ctx:      ctx,
		bookmark: opts.ProgressNotify && opts.Predicate.AllowWatchBookmarks,
	}
	go w.run(rv, initial)
	return w, nil
}

type storeWatcher struct {
	store    *Store
	key      string
	prefix   string
	opts     ListOptions
	result   chan watch.Event
	ctx      context.Context
	cancel   context.CancelFunc
	bookmark bool
	stopOnce sync.Once
}

func (w *storeWatcher) ResultChan() <-chan watch.Event { return w.result }

func (w *storeWatcher) Stop() { w.stopOnce.Do(w.cancel) }

func (w *storeWatcher) send(ev watch.Event) bool {
	select {
	case w.result <- ev:
		return true
	case <-w.ctx.Done():
		return false
	}
}

func (w *storeWatcher) sendError(err error) {
	var status *apierrors.StatusError
	if !errors.As(err, &status) {
		status = apierrors.NewInternalError(err)
	}
	st := status.Status()
	w.send(watch.Event{Type: watch.Error, Object: &st})
}

func (w *storeWatcher) run(rev int64, initial bool) {
	defer close(w.result)
	defer w.cancel()
	if initial {
		var ok bool
		if rev, ok = w.sendInitial(); !ok {
			return
		}
	}
	ch := w.store.kv.Watch(w.ctx, w.prefix, rev, w.bookmark)
	for resp := range ch {
		if resp.Err != nil {
			if errors.Is(resp.Err, ErrCompacted) {
				w.sendError(apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", rev, resp.Revision)))
			} else if w.ctx.Err() == nil {
				w.sendError(resp.Err)
			}
			return
		}
		if resp.Progress {
			if w.bookmark {
				if !w.sendBookmark(resp.Revision, false) {
					return
				}
			}
			continue
		}
		for i := range resp.Events {
			ev, ok, err := w.transform(&resp.Events[i])
			if err != nil {
				w.sendError(err)
				return
			}
			if ok && !w.send(ev) {
				return
			}
		}
	}
}

// sendInitial lists the current state as ADDED events and returns the
// revision to watch from.
func (w *storeWatcher) sendInitial() (int64, bool) {
	var (
		start, end = w.key, w.key + "\x00"
		rev        int64
	)
	if w.opts.Recursive {
		start, end = w.prefix, PrefixEnd(w.prefix)
	}
	for {
		res, err := w.store.kv.List(w.ctx, start, end, 1000, rev)
		if err != nil {
			w.sendError(NewUnreachableError(w.key, err))
			return 0, false
		}
		rev = res.Rev
		for _, kv := range res.KVs {
			obj := w.store.newFunc()
			if err := w.store.decode(kv.Key, kv.Value, obj, kv.ModRev); err != nil {
				w.sendError(err)
				return 0, false
			}
			if ok, _ := w.opts.Predicate.Matches(obj); ok {
				if !w.send(watch.Event{Type: watch.Added, Object: obj}) {
					return 0, false
				}
			}
			start = kv.Key + "\x00"
		}
		if !res.More {
			break
		}
	}
	if w.opts.SendInitialEvents != nil && *w.opts.SendInitialEvents && w.opts.Predicate.AllowWatchBookmarks {
		if !w.sendBookmark(rev, true) {
			return 0, false
		}
	}
	return rev, true
}

func (w *storeWatcher) sendBookmark(rev int64, initialEnd bool) bool {
	obj := w.store.newFunc()
	if err := SetResourceVersion(obj, rev); err != nil {
		return false
	}
	if initialEnd {
		a, _ := meta.Accessor(obj)
		a.SetAnnotations(map[string]string{InitialEventsAnnotation: "true"})
	}
	return w.send(watch.Event{Type: watch.Bookmark, Object: obj})
}

// transform turns a KV event into the watch event a client with this
// predicate sees: an object entering the selection is ADDED, one leaving it
// DELETED.
func (w *storeWatcher) transform(e *Event) (watch.Event, bool, error) {
	if !w.opts.Recursive && e.Key != w.key {
		return watch.Event{}, false, nil
	}
	var cur, prev runtime.Object
	if e.Type == EventPut {
		if cur = w.store.recent.take(e.Key, e.Rev); cur == nil {
			cur = w.store.newFunc()
			if err := w.store.decode(e.Key, e.Value, cur, e.Rev); err != nil {
				return watch.Event{}, false, err
			}
		}
	}
	if len(e.PrevValue) > 0 && (e.Type == EventDelete || !w.opts.Predicate.Empty()) {
		prev = w.store.newFunc()
		// The previous state is reported at the event's revision, as upstream does.
		if err := w.store.decode(e.Key, e.PrevValue, prev, e.Rev); err != nil {
			return watch.Event{}, false, err
		}
	}
	return Transition(w.opts.Predicate, e.Type == EventDelete, e.Created, cur, prev)
}

// Transition decides the event a watcher with predicate p sees for a change
// from prev to cur (cur nil for a deletion).
func Transition(p SelectionPredicate, deleted, created bool, cur, prev runtime.Object) (watch.Event, bool, error) {
	if deleted {
		if prev == nil {
			return watch.Event{}, false, nil
		}
		ok, err := p.Matches(prev)
		if err != nil || !ok {
			return watch.Event{}, false, err
		}
		return watch.Event{Type: watch.Deleted, Object: prev}, true, nil
	}
	curOK, err := p.Matches(cur)
	if err != nil {
		return watch.Event{}, false, err
	}
	if created {
		if !curOK {
			return watch.Event{}, false, nil
		}
		return watch.Event{Type: watch.Added, Object: cur}, true, nil
	}
	if p.Empty() || prev == nil {
		if !curOK {
			return watch.Event{}, false, nil
		}
		return watch.Event{Type: watch.Modified, Object: cur}, true, nil
	}
	prevOK, err := p.Matches(prev)
	if err != nil {
		return watch.Event{}, false, err
	}
	switch {
	case curOK && prevOK:
		return watch.Event{Type: watch.Modified, Object: cur}, true, nil
	case curOK:
		return watch.Event{Type: watch.Added, Object: cur}, true, nil
	case prevOK:
		return watch.Event{Type: watch.Deleted, Object: prev}, true, nil
	}
	return watch.Event{}, false, nil
}

// FormatRV formats a revision as a resourceVersion.
func FormatRV(rev int64) string { return strconv.FormatInt(rev, 10) }
