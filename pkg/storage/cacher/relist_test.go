package cacher

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/storage"
	"github.com/skiff-sh/skiff/pkg/storage/memory"
)

// flakyKV fails the next failLists lists, and can end the open watch.
type flakyKV struct {
	storage.KV
	failLists atomic.Int32
	lists     atomic.Int32 // list attempts
	endWatch  atomic.Value // of context.CancelFunc: ends the latest watch
}

func (f *flakyKV) List(ctx context.Context, start, end string, limit, rev int64) (storage.ListResult, error) {
	f.lists.Add(1)
	if f.failLists.Load() > 0 {
		f.failLists.Add(-1)
		return storage.ListResult{}, errors.New("storage unavailable")
	}
	return f.KV.List(ctx, start, end, limit, rev)
}

func (f *flakyKV) Watch(ctx context.Context, prefix string, rev int64, progressNotify bool) <-chan storage.WatchResponse {
	ctx, cancel := context.WithCancel(ctx)
	f.endWatch.Store(cancel)
	return f.KV.Watch(ctx, prefix, rev, progressNotify)
}

// TestRelistBackoff: failed lists back off exponentially, and a list that
// succeeds resets the delay, so a watch ending long after start is
// followed by a relist after the minimum delay, not the largest one reached
// earlier.
func TestRelistBackoff(t *testing.T) {
	kv := &flakyKV{KV: memory.New(memory.Config{})}
	defer kv.Close()
	kv.failLists.Store(4)
	st := storage.NewStore(storage.StoreConfig{KV: kv, Codec: storage.JSONCodec{}, NewFunc: func() runtime.Object { return &corev1.Pod{} }, Prefix: prefix})
	fc := clock.NewFake(time.Unix(1000, 0))
	c := New(Config{
		Storage:  st,
		Prefix:   prefix,
		NewFunc:  func() runtime.Object { return &corev1.Pod{} },
		KeyFunc:  func(obj runtime.Object) (string, error) { p := obj.(*corev1.Pod); return key(p.Namespace, p.Name), nil },
		Capacity: 16,
		Clock:    fc,
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(time.Millisecond)
		}
	}
	// expectRetryAfter: the cacher waits exactly d (and nothing else) before
	// its next list attempt.
	expectRetryAfter := func(d time.Duration) {
		t.Helper()
		n := kv.lists.Load()
		due := fc.Now().Add(d)
		waitFor("the cacher to wait "+d.String(), func() bool { return fc.HasOneShotDue(due) })
		fc.Step(d - time.Nanosecond)
		if got := kv.lists.Load(); got != n {
			t.Fatalf("listed again before %v", d)
		}
		fc.Step(time.Nanosecond)
		waitFor("the next list attempt", func() bool { return kv.lists.Load() == n+1 })
	}
	waitFor("the first list", func() bool { return kv.lists.Load() == 1 })
	for _, d := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond} {
		expectRetryAfter(d) // lists 2..5; the 5th succeeds
	}
	// Serving now. When the watch ends, much later, the relist comes after
	// the minimum delay again, and failures back off from there.
	if _, _, err := c.ListObjects(context.Background(), prefix, storage.ListOptions{Recursive: true}); err != nil {
		t.Fatal(err)
	}
	fc.Step(time.Hour)
	kv.failLists.Store(1)
	kv.endWatch.Load().(context.CancelFunc)()
	expectRetryAfter(100 * time.Millisecond) // fails
	expectRetryAfter(200 * time.Millisecond) // succeeds
	if _, _, err := c.ListObjects(context.Background(), prefix, storage.ListOptions{Recursive: true}); err != nil {
		t.Fatal(err)
	}
}
