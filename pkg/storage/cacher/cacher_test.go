package cacher

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/storage"
	"github.com/skiff-sh/skiff/pkg/storage/memory"
)

const prefix = "/registry/pods/"

type fixture struct {
	store  *storage.Store
	cacher *Cacher
	clock  *clock.Fake
}

func newFixture(t *testing.T, capacity int) *fixture {
	t.Helper()
	kv := memory.New(memory.Config{})
	st := storage.NewStore(storage.StoreConfig{KV: kv, Codec: storage.JSONCodec{}, NewFunc: func() runtime.Object { return &corev1.Pod{} }, Prefix: prefix})
	fc := clock.NewFake(time.Unix(1000, 0))
	c := New(Config{
		Storage:  st,
		Prefix:   prefix,
		NewFunc:  func() runtime.Object { return &corev1.Pod{} },
		KeyFunc:  func(obj runtime.Object) (string, error) { p := obj.(*corev1.Pod); return key(p.Namespace, p.Name), nil },
		Capacity: capacity,
		Clock:    fc,
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done; kv.Close() })
	// Like the API server, serve only once the cache is filled: a
	// consistent read waits for that.
	if _, _, err := c.ListObjects(context.Background(), prefix, storage.ListOptions{Recursive: true}); err != nil {
		t.Fatal(err)
	}
	return &fixture{store: st, cacher: c, clock: fc}
}

func key(ns, name string) string { return prefix + ns + "/" + name }

func pod(ns, name string, lbls map[string]string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls},
	}
}

func (f *fixture) create(t *testing.T, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	out := &corev1.Pod{}
	if err := f.cacher.Create(context.Background(), key(p.Namespace, p.Name), p, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func (f *fixture) label(t *testing.T, ns, name, k, v string) *corev1.Pod {
	t.Helper()
	out := &corev1.Pod{}
	err := f.cacher.GuaranteedUpdate(context.Background(), key(ns, name), out, false, nil, func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, error) {
		p := in.(*corev1.Pod)
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels[k] = v
		return p, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return watch.Event{}
}

func expect(t *testing.T, w watch.Interface, typ watch.EventType, name string) *corev1.Pod {
	t.Helper()
	ev := next(t, w)
	p, ok := storage.Unwrap(ev.Object).(*corev1.Pod)
	if ev.Type != typ || !ok || p.Name != name {
		t.Fatalf("got %s %v, want %s %s", ev.Type, ev.Object, typ, name)
	}
	return p
}

func names(objs []runtime.Object) []string {
	var out []string
	for _, o := range objs {
		p := storage.Unwrap(o).(*corev1.Pod)
		out = append(out, p.Namespace+"/"+p.Name)
	}
	return out
}

func TestListReadsYourWrites(t *testing.T) {
	f := newFixture(t, 100)
	ctx := context.Background()
	f.create(t, pod("a", "p1", map[string]string{"app": "web"}))
	f.create(t, pod("b", "p2", map[string]string{"app": "db"}))
	last := f.create(t, pod("a", "p3", nil))
	cases := []struct {
		name string
		key  string
		opts storage.ListOptions
		want string
	}{
		{"consistent", prefix, storage.ListOptions{Recursive: true}, "[a/p1 a/p3 b/p2]"},
		{"namespace", prefix + "a", storage.ListOptions{Recursive: true}, "[a/p1 a/p3]"},
		{"any", prefix, storage.ListOptions{Recursive: true, ResourceVersion: "0"}, "[a/p1 a/p3 b/p2]"},
		{"not older than", prefix, storage.ListOptions{Recursive: true, ResourceVersion: last.ResourceVersion}, "[a/p1 a/p3 b/p2]"},
		{"selector", prefix, storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"app": "web"})}}, "[a/p1]"},
		{"paged goes to storage", prefix, storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 2}}, "[a/p1 a/p3]"},
	}
	for _, c := range cases {
		objs, lm, err := f.cacher.ListObjects(ctx, c.key, c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if fmt.Sprint(names(objs)) != c.want {
			t.Errorf("%s: got %v want %s", c.name, names(objs), c.want)
		}
		if rv, _ := strconv.Atoi(lm.ResourceVersion); rv < mustAtoi(last.ResourceVersion) {
			t.Errorf("%s: list rv %s older than last write %s", c.name, lm.ResourceVersion, last.ResourceVersion)
		}
	}
	// Typed lists are private copies.
	l := &corev1.PodList{}
	if err := f.cacher.GetList(ctx, prefix, storage.ListOptions{Recursive: true, ResourceVersion: "0"}, l); err != nil || len(l.Items) != 3 {
		t.Fatalf("GetList: %v %d", err, len(l.Items))
	}
	l.Items[0].Labels["app"] = "mutated"
	got := &corev1.Pod{}
	if err := f.cacher.Get(ctx, key("a", "p1"), storage.GetOptions{ResourceVersion: "0"}, got); err != nil || got.Labels["app"] != "web" {
		t.Fatalf("cache mutated through a list copy: %v %v", err, got.Labels)
	}
	// A resourceVersion the cache never reaches times out as upstream does.
	go func() {
		for f.clock.Waiters() < 2 { // the bookmark ticker and our wait
			time.Sleep(time.Millisecond)
		}
		f.clock.Step(5 * time.Second)
	}()
	_, _, err := f.cacher.ListObjects(ctx, prefix, storage.ListOptions{Recursive: true, ResourceVersion: "999999"})
	if !apierrors.IsTimeout(err) {
		t.Fatalf("future rv: %v", err)
	}
}

func mustAtoi(s string) int { n, _ := strconv.Atoi(s); return n }

func TestWatchFromRevision(t *testing.T) {
	f := newFixture(t, 100)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := f.create(t, pod("a", "p1", nil))
	f.create(t, pod("a", "p2", nil))
	w, err := f.cacher.Watch(ctx, prefix, storage.ListOptions{Recursive: true, ResourceVersion: first.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	expect(t, w, watch.Added, "p2") // replayed from the window
	f.label(t, "a", "p1", "x", "y")
	expect(t, w, watch.Modified, "p1") // live
	if err := f.cacher.Delete(ctx, key("a", "p2"), &corev1.Pod{}, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	expect(t, w, watch.Deleted, "p2")

	// Namespace-scoped watch sees only its namespace.
	wn, err := f.cacher.Watch(ctx, prefix+"b", storage.ListOptions{Recursive: true, ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer wn.Stop()
	f.create(t, pod("a", "p9", nil))
	f.create(t, pod("b", "p8", nil))
	expect(t, wn, watch.Added, "p8")
}

func TestWatchTooOld(t *testing.T) {
	f := newFixture(t, 3)
	first := f.create(t, pod("a", "p0", nil))
	for i := 1; i < 6; i++ {
		f.create(t, pod("a", fmt.Sprintf("p%d", i), nil))
	}
	// Wait until the cache has seen the writes (a consistent list does).
	if _, _, err := f.cacher.ListObjects(context.Background(), prefix, storage.ListOptions{Recursive: true}); err != nil {
		t.Fatal(err)
	}
	_, err := f.cacher.Watch(context.Background(), prefix, storage.ListOptions{Recursive: true, ResourceVersion: first.ResourceVersion})
	if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Fatalf("want 410, got %v", err)
	}
}

func TestWatchSelectorTransitions(t *testing.T) {
	f := newFixture(t, 100)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.create(t, pod("a", "p", map[string]string{"app": "other"}))
	w, err := f.cacher.Watch(ctx, prefix, storage.ListOptions{Recursive: true, ResourceVersion: "0",
		Predicate: storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"app": "web"})}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	f.label(t, "a", "p", "app", "web")
	expect(t, w, watch.Added, "p")
	f.label(t, "a", "p", "extra", "1")
	expect(t, w, watch.Modified, "p")
	left := f.label(t, "a", "p", "app", "db")
	if got := expect(t, w, watch.Deleted, "p"); got.ResourceVersion != left.ResourceVersion {
		t.Fatalf("deleted-by-selector rv %s, want %s", got.ResourceVersion, left.ResourceVersion)
	}
}

func TestInitialEventsAndBookmarks(t *testing.T) {
	f := newFixture(t, 100)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.create(t, pod("a", "p1", nil))
	yes := true
	w, err := f.cacher.Watch(ctx, prefix, storage.ListOptions{Recursive: true, SendInitialEvents: &yes,
		ResourceVersionMatch: "NotOlderThan", Predicate: storage.SelectionPredicate{AllowWatchBookmarks: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	expect(t, w, watch.Added, "p1")
	ev := next(t, w)
	if ev.Type != watch.Bookmark || ev.Object.(*corev1.Pod).Annotations[storage.InitialEventsAnnotation] != "true" {
		t.Fatalf("want initial-events-end bookmark, got %s %v", ev.Type, ev.Object)
	}
	created := f.create(t, pod("a", "p2", nil))
	expect(t, w, watch.Added, "p2")
	// The bookmark timer fires on the fake clock.
	f.clock.Step(time.Minute)
	ev = next(t, w)
	if ev.Type != watch.Bookmark || ev.Object.(*corev1.Pod).ResourceVersion != created.ResourceVersion {
		t.Fatalf("want periodic bookmark at %s, got %s %v", created.ResourceVersion, ev.Type, ev.Object)
	}
}

func TestSlowWatcherDoesNotBlockOthers(t *testing.T) {
	f := newFixture(t, 10000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	slow, err := f.cacher.Watch(ctx, prefix, storage.ListOptions{Recursive: true, ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Stop()
	fast, err := f.cacher.Watch(ctx, prefix, storage.ListOptions{Recursive: true, ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Stop()
	const n = watcherBuffer * 3
	for i := 0; i < n; i++ {
		f.create(t, pod("a", fmt.Sprintf("p%04d", i), nil))
		next(t, fast) // the fast watcher keeps up while the slow one never reads
	}
	// The slow watcher was dropped: its channel closes after what it buffered.
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-slow.ResultChan():
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("slow watcher was never terminated")
		}
	}
}

func TestConcurrentWritersManyWatchers(t *testing.T) {
	f := newFixture(t, 10000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := f.create(t, pod("a", "start", nil))
	const watchers, writers, each = 10, 4, 50
	ws := make([]watch.Interface, watchers)
	for i := range ws {
		w, err := f.cacher.Watch(ctx, prefix, storage.ListOptions{Recursive: true, ResourceVersion: start.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		ws[i] = w
	}
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				p := pod("a", fmt.Sprintf("w%d-%d", w, i), nil)
				if err := f.cacher.Create(ctx, key("a", p.Name), p, &corev1.Pod{}); err != nil {
					t.Error(err)
				}
			}
		}(w)
	}
	var rg sync.WaitGroup
	for i, w := range ws {
		rg.Add(1)
		go func(i int, w watch.Interface) {
			defer rg.Done()
			last := 0
			seen := map[string]bool{}
			for n := 0; n < writers*each; n++ {
				select {
				case ev := <-w.ResultChan():
					p := storage.Unwrap(ev.Object).(*corev1.Pod)
					rv := mustAtoi(p.ResourceVersion)
					if rv <= last || seen[p.Name] {
						t.Errorf("watcher %d: %s at rv %d after %d", i, p.Name, rv, last)
						return
					}
					last = rv
					seen[p.Name] = true
				case <-time.After(10 * time.Second):
					t.Errorf("watcher %d: stalled after %d events", i, n)
					return
				}
			}
		}(i, w)
	}
	wg.Wait()
	rg.Wait()
}
