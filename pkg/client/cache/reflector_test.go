package cache

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// newTestReflector returns a Reflector over lw into store with a fake clock
// and jitter fixed at 0.5 (so backoff waits are 1.2s, 2.4s, 4.8s, ...).
func newTestReflector(lw ListerWatcher, store ReflectorStore, o ReflectorOptions) (*Reflector, *clock.Fake) {
	fc := newFakeClock()
	o.Clock = fc
	o.Logger = quietLogger
	if o.Rand == nil {
		o.Rand = fixedRand(0.5)
	}
	return NewReflectorWithOptions(lw, &corev1.Pod{}, store, o), fc
}

func TestReflectorListThenWatch(t *testing.T) {
	lw := newFakeLW()
	lw.pushList(podList("10", "", pod("a", "1"), pod("b", "2")), nil)
	store := newRecordingStore()
	r, _ := newTestReflector(lw, store, ReflectorOptions{})
	run(t, r.Run)

	w := lw.waitForWatch(t, 1)
	if lo := lw.listCall(0); lo.ResourceVersion != "0" || lo.Limit != 500 || lo.Continue != "" {
		t.Fatalf("initial list options: %+v", lo)
	}
	wo := lw.watchCall(0)
	if wo.ResourceVersion != "10" || !wo.AllowWatchBookmarks || wo.TimeoutSeconds == nil || *wo.TimeoutSeconds != 450 {
		t.Fatalf("watch options: %+v", wo)
	}
	w.add(pod("c", "11"))
	w.modify(pod("a", "12"))
	w.delete(pod("b", "13"))
	expectEvents(t, store.waitCalls(t, 4),
		"replace 10 [ns/a 1,ns/b 2]", "add ns/c 11", "update ns/a 12", "delete ns/b 13")
	eventually(t, "resourceVersion 13", func() bool { return r.LastSyncResourceVersion() == "13" })
	if keys := store.ListKeys(); len(keys) != 2 {
		t.Fatalf("store keys %v", keys)
	}
}

func TestReflectorRewatchesFromLastResourceVersionWithoutRelist(t *testing.T) {
	lw := newFakeLW()
	lw.pushList(podList("10", "", pod("a", "1")), nil)
	store := newRecordingStore()
	r, _ := newTestReflector(lw, store, ReflectorOptions{})
	run(t, r.Run)

	w1 := lw.waitForWatch(t, 1)
	w1.add(pod("c", "11"))
	w1.bookmark("15", false) // bookmarks advance the resourceVersion
	w1.close()
	w2 := lw.waitForWatch(t, 2)
	if rv := lw.watchCall(1).ResourceVersion; rv != "15" {
		t.Fatalf("re-watch from %q, want 15 (the bookmark's)", rv)
	}
	if !w1.isStopped() {
		t.Fatal("closed watch not stopped")
	}
	w2.modify(pod("c", "16"))
	w2.close()
	lw.waitForWatch(t, 3)
	if rv := lw.watchCall(2).ResourceVersion; rv != "16" {
		t.Fatalf("re-watch from %q, want 16", rv)
	}
	if n := lw.listCount(); n != 1 {
		t.Fatalf("%d lists, want 1: a closed watch must not relist", n)
	}
	expectEvents(t, store.getCalls(), "replace 10 [ns/a 1]", "add ns/c 11", "update ns/c 16")
}

func TestReflectorRelistsAfterExpired(t *testing.T) {
	expired := apierrors.NewResourceExpired("too old resource version: 10 (12)")
	for name, expire := range map[string]func(lw *fakeLW){
		// The server answers the watch request with 410.
		"http error": func(lw *fakeLW) {
			lw.pushWatchError(expired)    // the re-watch is refused...
			lw.waitForWatch(t, 1).close() // ...after the first watch ends normally
		},
		// The server sends an ERROR event with a 410 Status.
		"error event": func(lw *fakeLW) { lw.waitForWatch(t, 1).fail(expired) },
	} {
		t.Run(name, func(t *testing.T) {
			lw := newFakeLW()
			lw.pushList(podList("10", "", pod("a", "1")), nil)
			store := newRecordingStore()
			r, fc := newTestReflector(lw, store, ReflectorOptions{})
			run(t, r.Run)
			w := lw.waitForWatch(t, 1)
			w.add(pod("b", "11"))
			store.waitCalls(t, 2)
			if name == "http error" {
				w.bookmark("12", false)
			}
			expire(lw)

			// A relist follows, after a backoff.
			waitForTimers(t, fc, 1)
			if n := lw.listCount(); n != 1 {
				t.Fatalf("relisted before the backoff: %d lists", n)
			}
			fc.Step(1200 * time.Millisecond)
			lw.waitForList(t, 2)
			want := "11"
			if name == "http error" {
				want = "12"
			}
			if lo := lw.listCall(1); lo.ResourceVersion != want || lo.Limit != 0 {
				t.Fatalf("relist options %+v, want resourceVersion %s (never back in time) unpaged", lo, want)
			}
			lw.pushList(podList("20", "", pod("b", "11")), nil)
			lw.waitForWatch(t, 2)
			if rv := lw.watchCall(lw.watchCount() - 1).ResourceVersion; rv != "20" {
				t.Fatalf("watch after relist from %q, want 20", rv)
			}
			calls := store.getCalls()
			if last := calls[len(calls)-1]; last != "replace 20 [ns/b 11]" {
				t.Fatalf("store calls %v", calls)
			}
		})
	}
}

func TestReflectorListsAtNewestWhenResourceVersionExpired(t *testing.T) {
	lw := newFakeLW()
	lw.pushList(podList("10", "", pod("a", "1")), nil)
	store := newRecordingStore()
	r, fc := newTestReflector(lw, store, ReflectorOptions{})
	run(t, r.Run)
	lw.waitForWatch(t, 1).fail(apierrors.NewResourceExpired("too old"))
	waitForTimers(t, fc, 1)
	fc.Step(1200 * time.Millisecond)
	// The relist at 10 is refused too: the reflector lists the newest state.
	lw.pushList(nil, apierrors.NewResourceExpired("too old resource version: 10"))
	lw.pushList(podList("30", "", pod("z", "29")), nil)
	lw.waitForWatch(t, 2)
	if rv2, rv3 := lw.listCall(1).ResourceVersion, lw.listCall(2).ResourceVersion; rv2 != "10" || rv3 != "" {
		t.Fatalf("relists at %q then %q, want 10 then \"\"", rv2, rv3)
	}
	if rv := lw.watchCall(1).ResourceVersion; rv != "30" {
		t.Fatalf("watch from %q", rv)
	}
}

func pods(prefix string, from, n int) []*corev1.Pod {
	out := make([]*corev1.Pod, n)
	for i := range out {
		out[i] = pod(fmt.Sprintf("%s%04d", prefix, from+i), "1")
	}
	return out
}

func TestReflectorPagesTheInitialList(t *testing.T) {
	all := pods("p", 0, 1200)
	remaining := func(n int64) *int64 { return &n }
	lw := newFakeLW()
	lw.listFn = func(o metav1.ListOptions) (runtime.Object, error) {
		switch o.Continue {
		case "":
			if o.ResourceVersion != "0" || o.Limit != 500 {
				return nil, fmt.Errorf("first page options %+v", o)
			}
			l := podList("100", "c2", all[:500]...)
			l.RemainingItemCount = remaining(700)
			return l, nil
		case "c2":
			if o.ResourceVersion != "" || o.Limit != 500 {
				return nil, fmt.Errorf("second page options %+v", o)
			}
			return podList("100", "c3", all[500:1000]...), nil
		case "c3":
			return podList("100", "", all[1000:]...), nil
		}
		return nil, fmt.Errorf("unexpected continue %q", o.Continue)
	}
	store := NewStore(MetaNamespaceKeyFunc)
	r, _ := newTestReflector(lw, store, ReflectorOptions{})
	run(t, r.Run)
	lw.waitForWatch(t, 1)
	if n := len(store.List()); n != 1200 {
		t.Fatalf("%d objects, want 1200", n)
	}
	if n := lw.listCount(); n != 3 {
		t.Fatalf("%d list calls, want 3 pages", n)
	}
	if rv := lw.watchCall(0).ResourceVersion; rv != "100" {
		t.Fatalf("watch from %q, want the first page's 100", rv)
	}
	// Each item is its own allocation, not a pointer into the page.
	a, _, _ := store.GetByKey("ns/p0000")
	if a.(*corev1.Pod) == all[0] {
		t.Fatal("store holds the caller's object")
	}
}

func TestReflectorFallsBackToFullListWhenContinueExpires(t *testing.T) {
	all := pods("p", 0, 700)
	lw := newFakeLW()
	lw.listFn = func(o metav1.ListOptions) (runtime.Object, error) {
		switch {
		case o.Continue == "c2":
			return nil, apierrors.NewResourceExpired("The provided continue parameter is too old")
		case o.Limit == 500:
			return podList("100", "c2", all[:500]...), nil
		case o.Limit == 0 && o.ResourceVersion == "0":
			return podList("120", "", all...), nil
		}
		return nil, fmt.Errorf("unexpected options %+v", o)
	}
	store := NewStore(MetaNamespaceKeyFunc)
	r, _ := newTestReflector(lw, store, ReflectorOptions{})
	run(t, r.Run)
	lw.waitForWatch(t, 1)
	if n := len(store.List()); n != 700 {
		t.Fatalf("%d objects, want 700", n)
	}
	if n := lw.listCount(); n != 3 {
		t.Fatalf("%d list calls, want page, expired page, full list", n)
	}
	if rv := lw.watchCall(0).ResourceVersion; rv != "120" {
		t.Fatalf("watch from %q", rv)
	}
}

func TestReflectorBacksOffExponentially(t *testing.T) {
	lw := newFakeLW()
	var fail atomic.Bool
	fail.Store(true)
	lw.listFn = func(metav1.ListOptions) (runtime.Object, error) {
		if fail.Load() {
			return nil, apierrors.NewServiceUnavailable("down")
		}
		return podList("5", ""), nil
	}
	var handled atomic.Int32
	r, fc := newTestReflector(lw, NewStore(MetaNamespaceKeyFunc), ReflectorOptions{
		WatchErrorHandler: func(*Reflector, error) { handled.Add(1) },
	})
	run(t, r.Run)
	// base 0.8s doubling to the 30s cap, plus jitter 0.5*base.
	for i, wait := range []time.Duration{1200, 2400, 4800, 9600, 19200, 38400, 45000, 45000} {
		wait *= time.Millisecond
		lw.waitForList(t, i+1)
		waitForTimers(t, fc, 1)
		fc.Step(wait - time.Nanosecond)
		if n := lw.listCount(); n != i+1 {
			t.Fatalf("attempt %d came before its %v backoff", i+2, wait)
		}
		if i == 7 {
			fail.Store(false)
		}
		fc.Step(time.Nanosecond)
	}
	lw.waitForWatch(t, 1)
	if n := handled.Load(); n != 8 {
		t.Fatalf("error handler called %d times, want 8", n)
	}
}

func TestBackoffResetsAfterQuietPeriod(t *testing.T) {
	fc := newFakeClock()
	b := &backoff{cfg: DefaultBackoff(), clock: fc, rand: fixedRand(0)}
	var got []time.Duration
	for range 8 {
		got = append(got, b.next())
	}
	want := []time.Duration{800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond, 6400 * time.Millisecond,
		12800 * time.Millisecond, 25600 * time.Millisecond, 30 * time.Second, 30 * time.Second}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
	// The last wait ends 30s from now; two minutes after that without a
	// failure is not yet "more than" two minutes.
	fc.Step(30*time.Second + 2*time.Minute)
	if d := b.next(); d != 30*time.Second {
		t.Fatalf("after exactly 2m of quiet: %v, want still 30s", d)
	}
	fc.Step(30*time.Second + 2*time.Minute + time.Nanosecond)
	if d := b.next(); d != 800*time.Millisecond {
		t.Fatalf("after more than 2m of quiet: %v, want reset to 800ms", d)
	}
	// Jitter stays below one more base.
	b = &backoff{cfg: DefaultBackoff(), clock: fc, rand: fixedRand(0.999)}
	if d := b.next(); d < 800*time.Millisecond || d >= 1600*time.Millisecond {
		t.Fatalf("jittered first wait %v", d)
	}
}

func TestReflectorBacksOffAndRewatchesOnRetriableWatchErrors(t *testing.T) {
	lw := newFakeLW()
	lw.pushList(podList("10", "", pod("a", "1")), nil)
	lw.pushWatchError(apierrors.NewTooManyRequests("slow down", 1))
	r, fc := newTestReflector(lw, newRecordingStore(), ReflectorOptions{})
	run(t, r.Run)
	eventually(t, "first watch attempt", func() bool { return lw.watchCount() == 1 })
	waitForTimers(t, fc, 1)
	fc.Step(1200 * time.Millisecond)
	w := lw.waitForWatch(t, 1) // the second attempt succeeds
	if rv := lw.watchCall(1).ResourceVersion; rv != "10" {
		t.Fatalf("re-watch from %q", rv)
	}
	// A watch that closes at once without any event backs off too.
	w.close()
	waitForTimers(t, fc, 1)
	if n := lw.watchCount(); n != 2 {
		t.Fatalf("re-watched a very short watch without backoff: %d watches", n)
	}
	fc.Step(2400 * time.Millisecond)
	lw.waitForWatch(t, 2)
	if rv := lw.watchCall(2).ResourceVersion; rv != "10" {
		t.Fatalf("re-watch from %q", rv)
	}
	if n := lw.listCount(); n != 1 {
		t.Fatalf("%d lists, want 1", n)
	}
}

func TestReflectorResyncsOnTheClock(t *testing.T) {
	lw := newFakeLW()
	lw.pushList(podList("10", ""), nil)
	store := newRecordingStore()
	var allow atomic.Bool
	allow.Store(true)
	var asked atomic.Int32
	r, fc := newTestReflector(lw, store, ReflectorOptions{
		ResyncPeriod: 30 * time.Second,
		ShouldResync: func() bool { asked.Add(1); return allow.Load() },
	})
	run(t, r.Run)
	lw.waitForWatch(t, 1)
	waitForTimers(t, fc, 1) // the resync timer
	fc.Step(30*time.Second - time.Nanosecond)
	if n := store.resyncCount(); n != 0 {
		t.Fatalf("resynced early")
	}
	fc.Step(time.Nanosecond)
	eventually(t, "first resync", func() bool { return store.resyncCount() == 1 })
	waitForTimers(t, fc, 1)
	fc.Step(30 * time.Second)
	eventually(t, "second resync", func() bool { return store.resyncCount() == 2 })

	allow.Store(false)
	waitForTimers(t, fc, 1)
	fc.Step(30 * time.Second)
	eventually(t, "ShouldResync consulted", func() bool { return asked.Load() == 3 })
	waitForTimers(t, fc, 1) // re-armed without resyncing
	if n := store.resyncCount(); n != 2 {
		t.Fatalf("resynced although ShouldResync said no")
	}
}

func TestReflectorWatchList(t *testing.T) {
	lw := newFakeLW()
	store := newRecordingStore()
	r, _ := newTestReflector(lw, store, ReflectorOptions{UseWatchList: true})
	run(t, r.Run)

	w := lw.waitForWatch(t, 1)
	o := lw.watchCall(0)
	if o.SendInitialEvents == nil || !*o.SendInitialEvents || o.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan ||
		o.ResourceVersion != "" || !o.AllowWatchBookmarks {
		t.Fatalf("watch-list options %+v", o)
	}
	w.add(pod("a", "3"))
	w.add(pod("b", "4"))
	w.bookmark("4", false) // an ordinary bookmark does not end the initial events
	w.add(pod("c", "2"))
	w.bookmark("5", true)
	calls := store.waitCalls(t, 1)
	expectEvents(t, calls, "replace 5 [ns/a 3,ns/b 4,ns/c 2]")
	eventually(t, "resourceVersion 5", func() bool { return r.LastSyncResourceVersion() == "5" })
	// The same watch goes on.
	w.modify(pod("a", "6"))
	expectEvents(t, store.waitCalls(t, 2), "replace 5 [ns/a 3,ns/b 4,ns/c 2]", "update ns/a 6")
	if n := lw.listCount(); n != 0 {
		t.Fatalf("%d lists in watch-list mode", n)
	}
	w.close()
	lw.waitForWatch(t, 2)
	if o := lw.watchCall(1); o.ResourceVersion != "6" || o.SendInitialEvents != nil {
		t.Fatalf("re-watch options %+v", o)
	}
}

func TestReflectorWatchListFallsBackToList(t *testing.T) {
	lw := newFakeLW()
	lw.pushWatchError(apierrors.NewBadRequest("sendInitialEvents is not supported"))
	lw.pushList(podList("7", "", pod("a", "6")), nil)
	store := newRecordingStore()
	r, _ := newTestReflector(lw, store, ReflectorOptions{UseWatchList: true})
	run(t, r.Run)
	lw.waitForWatch(t, 1)
	if o := lw.watchCall(1); o.ResourceVersion != "7" || o.SendInitialEvents != nil {
		t.Fatalf("watch after fallback %+v", o)
	}
	expectEvents(t, store.getCalls(), "replace 7 [ns/a 6]")
}

func TestReflectorDropsObjectsOfOtherTypes(t *testing.T) {
	lw := newFakeLW()
	lw.pushList(podList("1", ""), nil)
	store := newRecordingStore()
	r, _ := newTestReflector(lw, store, ReflectorOptions{})
	run(t, r.Run)
	w := lw.waitForWatch(t, 1)
	w.add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", ResourceVersion: "2"}})
	w.add(pod("a", "3"))
	expectEvents(t, store.waitCalls(t, 2), "replace 1 []", "add ns/a 3")
}

func TestIsTooLargeResourceVersionError(t *testing.T) {
	err := apierrors.NewTimeoutError("Too large resource version", 1)
	if !isTooLargeResourceVersionError(err) {
		t.Fatal("old-style message not recognized")
	}
	st := apierrors.NewTimeoutError("", 1)
	st.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge}}
	if !isTooLargeResourceVersionError(fmt.Errorf("wrapped: %w", st)) {
		t.Fatal("cause not recognized")
	}
	if isTooLargeResourceVersionError(errors.New("x")) || isTooLargeResourceVersionError(apierrors.NewNotFound(schema.GroupResource{}, "x")) {
		t.Fatal("false positive")
	}
}
