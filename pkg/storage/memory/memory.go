package memory

import (
	"context"
	"strings"
	"sync"

	"github.com/google/btree"

	"github.com/skiff-sh/skiff/pkg/storage"
)

// DefaultHistory is how many revisions of history the store keeps before it
// compacts on its own.
const DefaultHistory = 20000

// Config configures New.
type Config struct {
	// History is the number of most recent revisions kept readable and
	// watchable; older ones are compacted automatically. 0 means DefaultHistory.
	History int64
}

// version is one state of a key.
type version struct {
	rev       int64
	createRev int64
	value     []byte
	deleted   bool
}

// keyHistory is every retained version of one key, oldest first.
type keyHistory struct {
	key      string
	versions []version
}

func lessKey(a, b *keyHistory) bool { return a.key < b.key }

// KV is the in-memory backend.
type KV struct {
	mu        sync.RWMutex
	rev       int64
	compacted int64
	history   int64
	keys      *btree.BTreeG[*keyHistory]
	// live counts the keys that currently exist.
	live int64
	// log holds the event of each revision in (logStart, rev].
	log      []storage.Event
	logStart int64
	// watchers are woken (without blocking) by writes under their prefix
	// and by progress requests.
	watchers map[*memWatcher]struct{}
	// progressGen increments on every RequestProgress.
	progressGen uint64
	closed      bool
}

var _ storage.KV = (*KV)(nil)

// New returns an empty store at revision 1 (as a fresh etcd is).
func New(cfg Config) *KV {
	h := cfg.History
	if h <= 0 {
		h = DefaultHistory
	}
	return &KV{
		rev:      1,
		history:  h,
		keys:     btree.NewG(32, lessKey),
		logStart: 1,
		watchers: map[*memWatcher]struct{}{},
	}
}

func (kv *KV) find(key string) *keyHistory {
	h, _ := kv.keys.Get(&keyHistory{key: key})
	return h
}

// at returns the version of h visible at rev, or nil.
func (h *keyHistory) at(rev int64) *version {
	for i := len(h.versions) - 1; i >= 0; i-- {
		if h.versions[i].rev <= rev {
			if h.versions[i].deleted {
				return nil
			}
			return &h.versions[i]
		}
	}
	return nil
}

func (h *keyHistory) current() *version {
	if len(h.versions) == 0 {
		return nil
	}
	v := &h.versions[len(h.versions)-1]
	if v.deleted {
		return nil
	}
	return v
}

func toKV(key string, v *version) *storage.KeyValue {
	return &storage.KeyValue{Key: key, Value: v.value, CreateRev: v.createRev, ModRev: v.rev}
}

// Get implements storage.KV.
func (kv *KV) Get(ctx context.Context, key string) (*storage.KeyValue, int64, error) {
	kv.mu.RLock()
	defer kv.mu.RUnlock()
	if kv.closed {
		return nil, 0, storage.ErrUnavailable
	}
	if h := kv.find(key); h != nil {
		if v := h.current(); v != nil {
			return toKV(key, v), kv.rev, nil
		}
	}
	return nil, kv.rev, nil
}

// List implements storage.KV.
func (kv *KV) List(ctx context.Context, start, end string, limit int64, rev int64) (storage.ListResult, error) {
	kv.mu.RLock()
	defer kv.mu.RUnlock()
	res := storage.ListResult{Rev: kv.rev}
	if kv.closed {
		return res, storage.ErrUnavailable
	}
	if rev == 0 {
		rev = kv.rev
	}
	if rev < kv.compacted {
		return res, storage.ErrCompacted
	}
	if rev > kv.rev {
		return res, storage.ErrFutureRev
	}
	res.Rev = rev
	kv.keys.AscendRange(&keyHistory{key: start}, &keyHistory{key: end}, func(h *keyHistory) bool {
		v := h.at(rev)
		if v == nil {
			return true
		}
		res.Count++
		if limit > 0 && int64(len(res.KVs)) >= limit {
			res.More = true
			return true // keep counting
		}
		res.KVs = append(res.KVs, toKV(h.key, v))
		return true
	})
	return res, nil
}

// Count implements storage.KV.
func (kv *KV) Count(ctx context.Context, start, end string) (int64, error) {
	kv.mu.RLock()
	defer kv.mu.RUnlock()
	var n int64
	kv.keys.AscendRange(&keyHistory{key: start}, &keyHistory{key: end}, func(h *keyHistory) bool {
		if h.current() != nil {
			n++
		}
		return true
	})
	return n, nil
}

// write appends a version of key at the next revision and records the event.
func (kv *KV) write(h *keyHistory, value []byte, deleted bool) int64 {
	kv.rev++
	ev := storage.Event{Key: h.key, Rev: kv.rev}
	prev := h.current()
	if prev != nil {
		ev.PrevValue = prev.value
	}
	nv := version{rev: kv.rev, value: value, deleted: deleted}
	switch {
	case deleted:
		ev.Type = storage.EventDelete
		kv.live--
	case prev == nil:
		nv.createRev = kv.rev
		ev.Type, ev.Value, ev.Created = storage.EventPut, value, true
		kv.live++
	default:
		nv.createRev = prev.createRev
		ev.Type, ev.Value = storage.EventPut, value
	}
	h.versions = append(h.versions, nv)
	kv.log = append(kv.log, ev)
	if kv.rev-kv.compacted > kv.history*2 {
		kv.compactLocked(kv.rev - kv.history)
	}
	for w := range kv.watchers {
		if strings.HasPrefix(h.key, w.prefix) {
			w.wake()
		}
	}
	return kv.rev
}

// Create implements storage.KV.
func (kv *KV) Create(ctx context.Context, key string, value []byte) (int64, error) {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	if kv.closed {
		return 0, storage.ErrUnavailable
	}
	h := kv.find(key)
	if h == nil {
		h = &keyHistory{key: key}
		kv.keys.ReplaceOrInsert(h)
	} else if h.current() != nil {
		return 0, storage.ErrKeyExists
	}
	return kv.write(h, clone(value), false), nil
}

// Update implements storage.KV.
func (kv *KV) Update(ctx context.Context, key string, value []byte, modRev int64) (int64, *storage.KeyValue, error) {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	if kv.closed {
		return 0, nil, storage.ErrUnavailable
	}
	h := kv.find(key)
	var cur *version
	if h != nil {
		cur = h.current()
	}
	if cur == nil {
		return 0, nil, storage.ErrConflict
	}
	if cur.rev != modRev {
		return 0, toKV(key, cur), storage.ErrConflict
	}
	return kv.write(h, clone(value), false), nil, nil
}

// Delete implements storage.KV.
func (kv *KV) Delete(ctx context.Context, key string, modRev int64) (int64, *storage.KeyValue, error) {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	if kv.closed {
		return 0, nil, storage.ErrUnavailable
	}
	h := kv.find(key)
	var cur *version
	if h != nil {
		cur = h.current()
	}
	if cur == nil {
		return 0, nil, storage.ErrConflict
	}
	if cur.rev != modRev {
		return 0, toKV(key, cur), storage.ErrConflict
	}
	return kv.write(h, nil, true), nil, nil
}

// Compact implements storage.KV.
func (kv *KV) Compact(ctx context.Context, rev int64) error {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	if rev > kv.rev {
		return storage.ErrFutureRev
	}
	if rev <= kv.compacted {
		return storage.ErrCompacted
	}
	kv.compactLocked(rev)
	return nil
}

// compactLocked drops every version superseded at or before rev and the log
// up to rev; reads and watches at revisions before rev fail afterwards.
func (kv *KV) compactLocked(rev int64) {
	var empty []*keyHistory
	kv.keys.Ascend(func(h *keyHistory) bool {
		// Keep the newest version at or before rev (it is still visible at
		// rev) unless it is a deletion, and everything after it.
		keep := 0
		for i := len(h.versions) - 1; i >= 0; i-- {
			if h.versions[i].rev <= rev {
				keep = i
				if h.versions[i].deleted {
					keep = i + 1
				}
				break
			}
		}
		if keep > 0 {
			h.versions = append([]version(nil), h.versions[keep:]...)
		}
		if len(h.versions) == 0 {
			empty = append(empty, h)
		}
		return true
	})
	for _, h := range empty {
		kv.keys.Delete(h)
	}
	drop := rev - kv.logStart
	if drop > int64(len(kv.log)) {
		drop = int64(len(kv.log))
	}
	if drop > 0 {
		kv.log = append([]storage.Event(nil), kv.log[drop:]...)
		kv.logStart += drop
	}
	kv.compacted = rev
}

// RequestProgress implements storage.KV.
func (kv *KV) RequestProgress(ctx context.Context) error {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	kv.progressGen++
	for w := range kv.watchers {
		w.wake()
	}
	return nil
}

// Close implements storage.KV: watches end and later calls fail.
func (kv *KV) Close() error {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	if !kv.closed {
		kv.closed = true
		for w := range kv.watchers {
			w.wake()
		}
	}
	return nil
}

// Revision returns the current revision.
func (kv *KV) Revision() int64 {
	kv.mu.RLock()
	defer kv.mu.RUnlock()
	return kv.rev
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// maxBatch bounds the events in one watch response.
const maxBatch = 500

// Watch implements storage.KV.
func (kv *KV) Watch(ctx context.Context, prefix string, rev int64, progressNotify bool) <-chan storage.WatchResponse {
	out := make(chan storage.WatchResponse, 16)
	go kv.watch(ctx, prefix, rev, progressNotify, out)
	return out
}

// memWatcher is one watch's registration: writes under prefix wake it.
type memWatcher struct {
	prefix string
	notify chan struct{} // capacity 1: a pending wake-up
}

func (w *memWatcher) wake() {
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

func (kv *KV) watch(ctx context.Context, prefix string, rev int64, progressNotify bool, out chan<- storage.WatchResponse) {
	defer close(out)
	me := &memWatcher{prefix: prefix, notify: make(chan struct{}, 1)}
	kv.mu.Lock()
	kv.watchers[me] = struct{}{}
	next := rev + 1 // the first revision to deliver
	if rev == 0 {
		next = kv.rev + 1
	}
	gen := kv.progressGen
	kv.mu.Unlock()
	defer func() {
		kv.mu.Lock()
		delete(kv.watchers, me)
		kv.mu.Unlock()
	}()
	for {
		kv.mu.RLock()
		if kv.closed {
			kv.mu.RUnlock()
			return
		}
		if next <= kv.compacted {
			compacted := kv.compacted
			kv.mu.RUnlock()
			select {
			case out <- storage.WatchResponse{Err: storage.ErrCompacted, Revision: compacted}:
			case <-ctx.Done():
			}
			return
		}
		var batch []storage.Event
		i := next - kv.logStart - 1
		for ; i < int64(len(kv.log)) && len(batch) < maxBatch; i++ {
			if e := kv.log[i]; strings.HasPrefix(e.Key, prefix) {
				batch = append(batch, e)
			}
		}
		next = kv.logStart + i + 1
		caughtUp := next > kv.rev
		cur := kv.rev
		// A progress request is answered once the watch has caught up; one
		// arriving while it is still behind waits for that, not dropped.
		progress := false
		if caughtUp {
			progress = progressNotify && kv.progressGen != gen
			gen = kv.progressGen
		}
		kv.mu.RUnlock()

		if len(batch) > 0 {
			select {
			case out <- storage.WatchResponse{Events: batch, Revision: batch[len(batch)-1].Rev}:
			case <-ctx.Done():
				return
			}
		}
		if progress {
			select {
			case out <- storage.WatchResponse{Progress: true, Revision: cur}:
			case <-ctx.Done():
				return
			}
		}
		if !caughtUp {
			continue
		}
		select {
		case <-me.notify:
		case <-ctx.Done():
			return
		}
	}
}
