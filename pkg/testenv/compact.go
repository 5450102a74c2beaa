package testenv

import (
	"context"
	"errors"
	"sync"

	"github.com/skiff-sh/skiff/pkg/storage"
)

// Compact compacts the storage at its current revision and makes every
// watch cache of the server start over from there, as a watch cache whose
// storage watch falls behind a compaction does. (A compaction alone does
// not reach clients: the watch caches serve watches from their own window
// of recent events.) It returns the compacted revision once every watch
// cache has relisted; from then on the server answers a watch from any
// earlier resourceVersion with 410 Gone (Expired). Watches open at the time
// end, as the watch caches' stale watches do when they relist.
func (e *Environment) Compact(ctx context.Context) (int64, error) {
	return e.kv.compact(ctx)
}

// restartableKV is the storage as the server sees it; it can end the
// storage watches (those of the watch caches) and wait for them to be
// started again.
type restartableKV struct {
	storage.KV

	mu      sync.Mutex
	watches map[*kvWatch]struct{}
	changed chan struct{} // closed and replaced when a watch starts
}

type kvWatch struct {
	prefix string
	rev    int64
	cancel context.CancelFunc
	ended  chan struct{} // closed once the storage's stream has closed
}

func newRestartableKV(kv storage.KV) *restartableKV {
	return &restartableKV{KV: kv, watches: map[*kvWatch]struct{}{}, changed: make(chan struct{})}
}

// Watch implements storage.KV. It relays the storage's stream so that
// compact knows when a watch it ended is gone.
func (kv *restartableKV) Watch(ctx context.Context, prefix string, rev int64, progressNotify bool) <-chan storage.WatchResponse {
	ctx, cancel := context.WithCancel(ctx)
	w := &kvWatch{prefix: prefix, rev: rev, cancel: cancel, ended: make(chan struct{})}
	kv.mu.Lock()
	kv.watches[w] = struct{}{}
	close(kv.changed)
	kv.changed = make(chan struct{})
	kv.mu.Unlock()
	in := kv.KV.Watch(ctx, prefix, rev, progressNotify)
	out := make(chan storage.WatchResponse, cap(in))
	go func() {
		defer func() {
			cancel()
			kv.mu.Lock()
			delete(kv.watches, w)
			kv.mu.Unlock()
			close(w.ended)
			close(out)
		}()
		for r := range in { // the storage closes in once ctx is done
			select {
			case out <- r:
			case <-ctx.Done():
			}
		}
	}()
	return out
}

// compact compacts at the current revision, ends every storage watch and
// waits until each has been replaced by one from the compacted revision or
// later (each watch cache relists and watches again).
func (kv *restartableKV) compact(ctx context.Context) (int64, error) {
	_, rev, err := kv.Get(ctx, "/")
	if err != nil {
		return 0, err
	}
	if err := kv.KV.Compact(ctx, rev); err != nil && !errors.Is(err, storage.ErrCompacted) {
		return 0, err
	}
	kv.mu.Lock()
	var current []*kvWatch
	for w := range kv.watches {
		current = append(current, w)
	}
	kv.mu.Unlock()
	// One at a time: the embedded etcd's in-process client can deadlock
	// when many watches are cancelled at once (etcd-io/etcd#18879).
	ended := map[string]int{} // prefix -> watches ended
	for _, w := range current {
		w.cancel()
		select {
		case <-w.ended:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		ended[w.prefix]++
	}
	for {
		kv.mu.Lock()
		restarted := map[string]int{}
		for w := range kv.watches {
			if w.rev >= rev {
				restarted[w.prefix]++
			}
		}
		changed := kv.changed
		kv.mu.Unlock()
		done := true
		for p, n := range ended {
			if restarted[p] < n {
				done = false
				break
			}
		}
		if done {
			return rev, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}
