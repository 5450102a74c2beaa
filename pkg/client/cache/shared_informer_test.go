package cache

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// newTestInformer returns a pod informer over lw with a fake clock and
// jitter fixed at 0.5, indexed by namespace.
func newTestInformer(lw ListerWatcher, resync time.Duration) (SharedIndexInformer, *clock.Fake) {
	fc := newFakeClock()
	inf := NewSharedIndexInformerWithOptions(lw, &corev1.Pod{}, SharedIndexInformerOptions{
		ResyncPeriod: resync,
		Indexers:     Indexers{NamespaceIndex: MetaNamespaceIndexFunc},
		Clock:        fc,
		Reflector:    ReflectorOptions{Rand: fixedRand(0.5), Logger: quietLogger},
	})
	return inf, fc
}

func addHandler(t testing.TB, inf SharedInformer, h ResourceEventHandler) ResourceEventHandlerRegistration {
	t.Helper()
	reg, err := inf.AddEventHandler(h)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func waitSynced(t testing.TB, what string, synced func() bool) {
	t.Helper()
	eventually(t, what+" synced", synced)
}

func TestSharedInformerListThenWatch(t *testing.T) {
	lw := newFakeLW()
	lw.pushList(podList("10", "", pod("a", "1"), pod("b", "2")), nil)
	inf, _ := newTestInformer(lw, 0)
	rec := &recorder{}
	reg := addHandler(t, inf, rec)
	if inf.HasSynced() || reg.HasSynced() || inf.LastSyncResourceVersion() != "" {
		t.Fatal("synced before Run")
	}
	run(t, inf.Run)
	waitSynced(t, "informer", inf.HasSynced)
	waitSynced(t, "handler", reg.HasSynced)
	expectEvents(t, rec.get(), "add ns/a 1 initial", "add ns/b 2 initial")

	w := lw.waitForWatch(t, 1)
	w.add(pod("c", "11"))
	w.modify(pod("a", "12"))
	w.delete(pod("b", "13"))
	expectEvents(t, rec.wait(t, 5)[2:], "add ns/c 11", "update ns/a 1->12", "delete ns/b 13")
	eventually(t, "resourceVersion 13", func() bool { return inf.LastSyncResourceVersion() == "13" })
	keys := inf.GetStore().ListKeys()
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"ns/a", "ns/c"}) {
		t.Fatalf("cache keys %v", keys)
	}
	got, _, _ := inf.GetIndexer().GetByKey("ns/a")
	if got.(*corev1.Pod).ResourceVersion != "12" {
		t.Fatalf("cached a at %s", got.(*corev1.Pod).ResourceVersion)
	}
}

func TestSharedInformerRelistDeliversServerTruth(t *testing.T) {
	lw := newFakeLW()
	lw.pushList(podList("10", "", pod("a", "1"), pod("b", "2"), pod("c", "3")), nil)
	inf, fc := newTestInformer(lw, 0)
	rec := &recorder{}
	addHandler(t, inf, rec)
	run(t, inf.Run)
	rec.wait(t, 3)
	rec.reset()

	// The watch expires; c is deleted and d created while we are not
	// watching, and b changes.
	lw.waitForWatch(t, 1).fail(apierrors.NewResourceExpired("too old resource version"))
	waitForTimers(t, fc, 1)
	lw.pushList(podList("20", "", pod("a", "1"), pod("b", "15"), pod("d", "16")), nil)
	fc.Step(1200 * time.Millisecond)
	// Listed objects already cached become updates (unchanged ones too),
	// new ones adds, and cached ones missing from the list deletes with a
	// DeletedFinalStateUnknown tombstone carrying the last known state.
	expectEvents(t, rec.wait(t, 4),
		"update ns/a 1->1", "update ns/b 2->15", "add ns/d 16", "delete ns/c 3 tombstone")
	lw.waitForWatch(t, 2)
	if rv := lw.watchCall(1).ResourceVersion; rv != "20" {
		t.Fatalf("watch after relist from %q", rv)
	}
	if _, exists, _ := inf.GetStore().GetByKey("ns/c"); exists {
		t.Fatal("c still cached")
	}
}

func TestSlowHandlerDoesNotBlockOthers(t *testing.T) {
	lw := newFakeLW()
	lw.pushList(podList("1", ""), nil)
	inf, _ := newTestInformer(lw, 0)
	release := make(chan struct{})
	var releaseOnce sync.Once
	slow := &recorder{}
	entered := make(chan struct{}, 1)
	addHandler(t, inf, ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-release
			slow.OnAdd(obj, initial)
		},
	})
	fast := &recorder{}
	addHandler(t, inf, fast)
	run(t, inf.Run)
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) }) // before the informer stops

	w := lw.waitForWatch(t, 1)
	const n = 5000
	var want []string
	for i := range n {
		p := pod(fmt.Sprintf("p%04d", i), fmt.Sprint(10+i))
		w.add(p)
		want = append(want, "add "+describeObj(p))
	}
	expectEvents(t, fast.wait(t, n), want...)
	<-entered // the slow handler is stuck in its first call
	if slow.len() != 0 {
		t.Fatal("slow handler was not blocked")
	}
	releaseOnce.Do(func() { close(release) })
	expectEvents(t, slow.wait(t, n), want...)
}

func TestLateHandlerGetsSyntheticAdds(t *testing.T) {
	lw := newFakeLW()
	lw.pushList(podList("10", "", pod("a", "1"), pod("b", "2")), nil)
	inf, _ := newTestInformer(lw, 0)
	first := &recorder{}
	addHandler(t, inf, first)
	run(t, inf.Run)
	w := lw.waitForWatch(t, 1)
	w.add(pod("c", "11"))
	first.wait(t, 3)

	late := &recorder{}
	reg := addHandler(t, inf, late)
	waitSynced(t, "late handler", reg.HasSynced)
	expectEventSet(t, late.get(), "add ns/a 1 initial", "add ns/b 2 initial", "add ns/c 11 initial")
	w.modify(pod("a", "12"))
	expectEvents(t, late.wait(t, 4)[3:], "update ns/a 1->12")
	expectEvents(t, first.wait(t, 4)[3:], "update ns/a 1->12")
}

func TestHandlerHasSyncedWaitsForItsOwnInitialList(t *testing.T) {
	lw := newFakeLW()
	lw.pushList(podList("10", "", pod("a", "1"), pod("b", "2")), nil)
	inf, _ := newTestInformer(lw, 0)
	release := make(chan struct{})
	var releaseOnce sync.Once
	blocking := ResourceEventHandlerFuncs{AddFunc: func(any) { <-release }}
	slowReg := addHandler(t, inf, blocking)
	fastReg := addHandler(t, inf, &recorder{})
	run(t, inf.Run)
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })

	waitSynced(t, "informer", inf.HasSynced)
	waitSynced(t, "fast handler", fastReg.HasSynced)
	if slowReg.HasSynced() {
		t.Fatal("blocked handler reports synced")
	}
	// A handler added now has to handle the whole cache first.
	lateReg := addHandler(t, inf, blocking)
	if lateReg.HasSynced() {
		t.Fatal("late handler synced before handling the cache")
	}
	releaseOnce.Do(func() { close(release) })
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if !WaitForSynced(ctx, slowReg.Synced(), lateReg.Synced()) {
		t.Fatal("handlers never synced")
	}
}

func TestEmptyInitialListSyncs(t *testing.T) {
	lw := newFakeLW()
	lw.pushList(podList("10", ""), nil)
	inf, _ := newTestInformer(lw, 0)
	reg := addHandler(t, inf, &recorder{})
	run(t, inf.Run)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if !WaitForCacheSync(ctx, inf.HasSynced, reg.HasSynced) {
		t.Fatal("not synced")
	}
}

func TestResyncOnlyForHandlersWhosePeriodElapsed(t *testing.T) {
	lw := newFakeLW()
	lw.pushList(podList("10", "", pod("a", "1"), pod("b", "2")), nil)
	inf, fc := newTestInformer(lw, 10*time.Second)
	every10, never, every20 := &recorder{}, &recorder{}, &recorder{}
	addHandler(t, inf, every10) // the informer's default period
	if _, err := inf.AddEventHandlerWithResyncPeriod(never, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := inf.AddEventHandlerWithResyncPeriod(every20, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	run(t, inf.Run)
	w := lw.waitForWatch(t, 1)
	for _, r := range []*recorder{every10, never, every20} {
		r.wait(t, 2)
		r.reset()
	}
	resync := []string{"update ns/a 1->1", "update ns/b 2->2"}

	waitForTimers(t, fc, 1) // the reflector's resync timer
	fc.Step(10 * time.Second)
	expectEventSet(t, every10.wait(t, 2), resync...)
	// A real change reaches everyone; had a resync been queued for the
	// others, they would have got it first.
	w.modify(pod("a", "11"))
	expectEvents(t, every10.wait(t, 3)[2:], "update ns/a 1->11")
	expectEvents(t, never.wait(t, 1), "update ns/a 1->11")
	expectEvents(t, every20.wait(t, 1), "update ns/a 1->11")

	waitForTimers(t, fc, 1)
	fc.Step(10 * time.Second) // t = 20s: both periodic handlers are due
	resync = []string{"update ns/a 11->11", "update ns/b 2->2"}
	expectEventSet(t, every10.wait(t, 5)[3:], resync...)
	expectEventSet(t, every20.wait(t, 3)[1:], resync...)
	w.modify(pod("b", "12"))
	expectEvents(t, never.wait(t, 2), "update ns/a 1->11", "update ns/b 2->12")
	expectEvents(t, every10.wait(t, 6)[5:], "update ns/b 2->12")
}

func TestResyncPeriodAdjustments(t *testing.T) {
	lw := newFakeLW()
	inf, _ := newTestInformer(lw, time.Minute)
	s := inf.(*sharedIndexInformer)
	// Before Run, a shorter handler period lowers the check period (not
	// below 1s) and the other handlers keep theirs.
	r1, _ := inf.AddEventHandler(&recorder{})
	r2, _ := inf.AddEventHandlerWithResyncPeriod(&recorder{}, 10*time.Millisecond)
	if s.resyncCheckPeriod != time.Second {
		t.Fatalf("check period %v, want 1s", s.resyncCheckPeriod)
	}
	if p := r1.(*processorListener).resyncPeriod; p != time.Minute {
		t.Fatalf("default handler period %v", p)
	}
	if p := r2.(*processorListener).resyncPeriod; p != time.Second {
		t.Fatalf("short handler period %v", p)
	}
	// An informer without resync never resyncs, whatever handlers ask.
	inf0, _ := newTestInformer(newFakeLW(), 0)
	r3, _ := inf0.AddEventHandlerWithResyncPeriod(&recorder{}, time.Minute)
	if p := r3.(*processorListener).resyncPeriod; p != 0 {
		t.Fatalf("period %v on an informer without resync", p)
	}
}

func TestRemoveEventHandler(t *testing.T) {
	lw := newFakeLW()
	lw.pushList(podList("10", "", pod("a", "1")), nil)
	inf, _ := newTestInformer(lw, 0)
	removed, kept := &recorder{}, &recorder{}
	reg := addHandler(t, inf, removed)
	addHandler(t, inf, kept)
	run(t, inf.Run)
	w := lw.waitForWatch(t, 1)
	removed.wait(t, 1)
	if err := inf.RemoveEventHandler(reg); err != nil {
		t.Fatal(err)
	}
	<-reg.Stopped()
	w.add(pod("b", "11"))
	kept.wait(t, 2)
	if n := removed.len(); n != 1 {
		t.Fatalf("removed handler got %d events", n)
	}
	if err := inf.RemoveEventHandler(reg); err != nil {
		t.Fatalf("second removal: %v", err)
	}
}

func TestInformerStopsHandlersAndRefusesNewOnes(t *testing.T) {
	lw := newFakeLW()
	lw.pushList(podList("10", ""), nil)
	inf, _ := newTestInformer(lw, 0)
	reg := addHandler(t, inf, &recorder{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(ctx) }()
	waitSynced(t, "informer", inf.HasSynced)
	inf.Run(ctx) // a second Run returns at once
	if err := inf.SetTransform(nil); err == nil {
		t.Fatal("SetTransform after start accepted")
	}
	cancel()
	<-done
	<-reg.Stopped()
	if !inf.IsStopped() {
		t.Fatal("not stopped")
	}
	if _, err := inf.AddEventHandler(&recorder{}); err == nil {
		t.Fatal("handler added to a stopped informer")
	}
}

func TestSharedInformerTransform(t *testing.T) {
	lw := newFakeLW()
	p := pod("a", "1")
	p.ManagedFields = nil
	p.Annotations = map[string]string{"big": "blob"}
	lw.pushList(podList("10", "", p), nil)
	inf, _ := newTestInformer(lw, 0)
	if err := inf.SetTransform(func(obj any) (any, error) {
		if p, ok := obj.(*corev1.Pod); ok {
			p.Annotations = nil
		}
		return obj, nil
	}); err != nil {
		t.Fatal(err)
	}
	run(t, inf.Run)
	waitSynced(t, "informer", inf.HasSynced)
	got, _, _ := inf.GetStore().GetByKey("ns/a")
	if got.(*corev1.Pod).Annotations != nil {
		t.Fatal("transform not applied")
	}
}

func TestTypedInformerHandlersAndLister(t *testing.T) {
	lw := newFakeLW()
	lw.pushList(podList("10", "", pod("a", "1"), pod("b", "2")), nil)
	raw, fc := newTestInformer(lw, 0)
	inf := WrapTypedInformer[*corev1.Pod](raw, podsResource)
	var mu sync.Mutex
	var deleted []DeletedObject[*corev1.Pod]
	var added []string
	if _, err := inf.AddEventHandler(TypedResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc: func(p *corev1.Pod, _ bool) {
			mu.Lock()
			added = append(added, p.Name)
			mu.Unlock()
		},
		DeleteFunc: func(d DeletedObject[*corev1.Pod]) {
			mu.Lock()
			deleted = append(deleted, d)
			mu.Unlock()
		},
	}); err != nil {
		t.Fatal(err)
	}
	run(t, inf.Run)
	waitSynced(t, "informer", inf.HasSynced)
	got, err := inf.Lister().Namespace("ns").Get("a")
	if err != nil || got.Name != "a" {
		t.Fatalf("lister get: %v", err)
	}
	if _, err := inf.Lister().Namespace("ns").Get("zz"); !apierrors.IsNotFound(err) {
		t.Fatalf("missing: %v", err)
	}
	all, _ := inf.Lister().List(labels.Everything())
	if len(all) != 2 {
		t.Fatalf("listed %d", len(all))
	}
	w := lw.waitForWatch(t, 1)
	w.delete(pod("a", "11"))
	w.fail(apierrors.NewGone("gone"))
	waitForTimers(t, fc, 1)
	lw.pushList(podList("20", ""), nil)
	fc.Step(1200 * time.Millisecond)
	eventually(t, "two deletes", func() bool { mu.Lock(); defer mu.Unlock(); return len(deleted) == 2 })
	mu.Lock()
	defer mu.Unlock()
	if d := deleted[0]; d.FinalStateUnknown != nil || d.Obj.ResourceVersion != "11" || d.Key() != "ns/a" {
		t.Fatalf("watch delete %+v", d)
	}
	if d := deleted[1]; d.FinalStateUnknown == nil || d.Obj.Name != "b" || d.Key() != "ns/b" {
		t.Fatalf("relist delete %+v", d)
	}
}

func TestIndexerInformer(t *testing.T) {
	lw := newFakeLW()
	lw.pushList(podList("10", "", pod("a", "1")), nil)
	rec := &recorder{}
	indexer, ctrl := NewIndexerInformer(lw, &corev1.Pod{}, 0, rec, Indexers{})
	run(t, ctrl.Run)
	waitSynced(t, "controller", ctrl.HasSynced)
	lw.waitForWatch(t, 1).add(pod("b", "11"))
	expectEvents(t, rec.wait(t, 2), "add ns/a 1 initial", "add ns/b 11")
	if n := len(indexer.List()); n != 2 {
		t.Fatalf("%d cached", n)
	}
}

func TestWaitForCacheSyncGivesUpWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if WaitForCacheSync(ctx, func() bool { return false }) {
		t.Fatal("reported synced")
	}
	if !WaitForCacheSync(ctx, func() bool { return true }) {
		t.Fatal("synced but reported not")
	}
	never := make(chan struct{})
	closed := make(chan struct{})
	close(closed)
	if WaitForSynced(ctx, closed, never) || !WaitForSynced(ctx, closed) {
		t.Fatal("WaitForSynced")
	}
}

func TestRingBuffer(t *testing.T) {
	var r ring[int]
	next := 0
	for round := range 3 {
		for i := range 3000 + round {
			r.push(i)
			if i%3 == 0 {
				v, _ := r.pop()
				if v != next {
					t.Fatalf("popped %d, want %d", v, next)
				}
				next++
			}
		}
		for r.len() > 0 {
			v, _ := r.pop()
			if v != next {
				t.Fatalf("popped %d, want %d", v, next)
			}
			next++
		}
		if r.buf != nil {
			t.Fatal("drained ring kept its grown buffer")
		}
		next = 0
	}
	if _, ok := r.pop(); ok {
		t.Fatal("pop from empty ring")
	}
}
