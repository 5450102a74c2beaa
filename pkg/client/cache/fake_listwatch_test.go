package cache

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// waitTimeout bounds every wait for a condition in these tests.
const waitTimeout = 20 * time.Second

// eventually waits until cond holds, failing the test after waitTimeout.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// listResult is one scripted answer to List.
type listResult struct {
	obj runtime.Object
	err error
}

// fakeLW is a scripted ListerWatcher. List answers with the queued results
// in order (waiting for one if none is queued), or with listFn if set.
// Watch fails with the queued watch errors first; otherwise it returns a
// new fakeWatch the test drives.
type fakeLW struct {
	mu         sync.Mutex
	changed    chan struct{} // closed and replaced on every change
	lists      []listResult
	listFn     func(metav1.ListOptions) (runtime.Object, error)
	watchErrs  []error
	listCalls  []metav1.ListOptions
	watchCalls []metav1.ListOptions
	watches    []*fakeWatch
}

func newFakeLW() *fakeLW { return &fakeLW{changed: make(chan struct{})} }

func (f *fakeLW) notifyLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeLW) pushList(obj runtime.Object, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists = append(f.lists, listResult{obj, err})
	f.notifyLocked()
}

func (f *fakeLW) pushWatchError(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watchErrs = append(f.watchErrs, err)
}

func (f *fakeLW) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	f.mu.Lock()
	f.listCalls = append(f.listCalls, opts)
	f.notifyLocked()
	f.mu.Unlock()
	for {
		f.mu.Lock()
		if f.listFn != nil {
			fn := f.listFn
			f.mu.Unlock()
			return fn(opts)
		}
		if len(f.lists) > 0 {
			r := f.lists[0]
			f.lists = f.lists[1:]
			f.mu.Unlock()
			return r.obj, r.err
		}
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (f *fakeLW) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watchCalls = append(f.watchCalls, opts)
	defer f.notifyLocked()
	if len(f.watchErrs) > 0 {
		err := f.watchErrs[0]
		f.watchErrs = f.watchErrs[1:]
		return nil, err
	}
	w := newFakeWatch()
	f.watches = append(f.watches, w)
	return w, nil
}

func (f *fakeLW) listCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.listCalls)
}

func (f *fakeLW) listCall(i int) metav1.ListOptions {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.listCalls[i]
}

func (f *fakeLW) watchCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.watchCalls)
}

func (f *fakeLW) watchCall(i int) metav1.ListOptions {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.watchCalls[i]
}

// waitForList waits until List has been called n times.
func (f *fakeLW) waitForList(t testing.TB, n int) {
	t.Helper()
	eventually(t, fmt.Sprintf("list call #%d", n), func() bool { return f.listCount() >= n })
}

// waitForWatch waits until the n-th (1-based) successful watch exists and
// returns it.
func (f *fakeLW) waitForWatch(t testing.TB, n int) *fakeWatch {
	t.Helper()
	var w *fakeWatch
	eventually(t, fmt.Sprintf("watch #%d", n), func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.watches) >= n {
			w = f.watches[n-1]
			return true
		}
		return false
	})
	return w
}

// fakeWatch is a watch.Interface driven by the test: it queues events
// (buffered, so sends never block) and closes its channel on close().
type fakeWatch struct {
	ch        chan watch.Event
	stopOnce  sync.Once
	stopped   chan struct{}
	closeOnce sync.Once
}

func newFakeWatch() *fakeWatch {
	return &fakeWatch{ch: make(chan watch.Event, 10000), stopped: make(chan struct{})}
}

func (w *fakeWatch) ResultChan() <-chan watch.Event { return w.ch }
func (w *fakeWatch) Stop()                          { w.stopOnce.Do(func() { close(w.stopped) }) }
func (w *fakeWatch) close()                         { w.closeOnce.Do(func() { close(w.ch) }) }

func (w *fakeWatch) isStopped() bool {
	select {
	case <-w.stopped:
		return true
	default:
		return false
	}
}

func (w *fakeWatch) send(t watch.EventType, obj runtime.Object) {
	w.ch <- watch.Event{Type: t, Object: obj}
}

func (w *fakeWatch) add(obj runtime.Object)    { w.send(watch.Added, obj) }
func (w *fakeWatch) modify(obj runtime.Object) { w.send(watch.Modified, obj) }
func (w *fakeWatch) delete(obj runtime.Object) { w.send(watch.Deleted, obj) }

func (w *fakeWatch) bookmark(rv string, initialEventsEnd bool) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}
	if initialEventsEnd {
		p.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	}
	w.ch <- watch.Event{Type: watch.Bookmark, Object: p}
}
func (w *fakeWatch) fail(err *apierrors.StatusError) {
	st := err.Status()
	w.ch <- watch.Event{Type: watch.Error, Object: &st}
}

// pod returns a pod ns/name at resourceVersion rv.
func pod(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

// podList returns a list at rv with continue token cont.
func podList(rv, cont string, pods ...*corev1.Pod) *corev1.PodList {
	l := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: rv, Continue: cont}}
	for _, p := range pods {
		l.Items = append(l.Items, *p)
	}
	return l
}

// recorder is a ResourceEventHandler writing down what it is told as
// strings: "add ns/a 1 initial", "update ns/a 1->2", "delete ns/a 2",
// "delete ns/a 2 tombstone".
type recorder struct {
	mu     sync.Mutex
	events []string
}

func describeObj(obj any) string {
	if tomb, ok := obj.(DeletedFinalStateUnknown); ok {
		rv := "?"
		if p, ok := tomb.Obj.(*corev1.Pod); ok {
			rv = p.ResourceVersion
		}
		return tomb.Key + " " + rv + " tombstone"
	}
	p := obj.(*corev1.Pod)
	return p.Namespace + "/" + p.Name + " " + p.ResourceVersion
}

func (r *recorder) record(s string) {
	r.mu.Lock()
	r.events = append(r.events, s)
	r.mu.Unlock()
}

func (r *recorder) OnAdd(obj any, initial bool) {
	s := "add " + describeObj(obj)
	if initial {
		s += " initial"
	}
	r.record(s)
}

func (r *recorder) OnUpdate(oldObj, newObj any) {
	o, n := oldObj.(*corev1.Pod), newObj.(*corev1.Pod)
	r.record(fmt.Sprintf("update %s/%s %s->%s", n.Namespace, n.Name, o.ResourceVersion, n.ResourceVersion))
}

func (r *recorder) OnDelete(obj any) { r.record("delete " + describeObj(obj)) }

func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// wait waits for n events and returns all of them.
func (r *recorder) wait(t testing.TB, n int) []string {
	t.Helper()
	eventually(t, fmt.Sprintf("%d events (have %v)", n, r.get()), func() bool { return r.len() >= n })
	return r.get()
}

func (r *recorder) reset() {
	r.mu.Lock()
	r.events = nil
	r.mu.Unlock()
}

// expectEvents fails unless got equals want.
func expectEvents(t testing.TB, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n  got  %s\n  want %s", strings.Join(got, " | "), strings.Join(want, " | "))
	}
}

// expectEventSet fails unless got has the same elements as want.
func expectEventSet(t testing.TB, got []string, want ...string) {
	t.Helper()
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Fatalf("events (any order):\n  got  %s\n  want %s", strings.Join(g, " | "), strings.Join(w, " | "))
	}
}

// fixedRand returns v as every random number.
func fixedRand(v float64) func() float64 { return func() float64 { return v } }

// quietLogger discards the logs of the code under test.
var quietLogger = slog.New(slog.DiscardHandler)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newFakeClock returns a fake clock at a fixed instant.
func newFakeClock() *clock.Fake { return clock.NewFake(epoch) }

// waitForTimers waits until the fake clock has n pending timers (a
// goroutine under test has armed its wait).
func waitForTimers(t testing.TB, c *clock.Fake, n int) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d pending timers", n), func() bool { return c.Waiters() == n })
}

// run starts fn in a goroutine, cancelling and waiting for it at the end of
// the test.
func run(t testing.TB, fn func(ctx context.Context)) context.CancelFunc {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(waitTimeout):
			t.Errorf("goroutine did not stop")
		}
	})
	return cancel
}

// recordingStore is a ReflectorStore writing down its calls.
type recordingStore struct {
	Store
	mu      sync.Mutex
	calls   []string
	resyncs int
}

func newRecordingStore() *recordingStore {
	return &recordingStore{Store: NewStore(MetaNamespaceKeyFunc)}
}

func (s *recordingStore) rec(c string) {
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.mu.Unlock()
}

func (s *recordingStore) Add(obj any) error {
	s.rec("add " + describeObj(obj))
	return s.Store.Add(obj)
}

func (s *recordingStore) Update(obj any) error {
	s.rec("update " + describeObj(obj))
	return s.Store.Update(obj)
}

func (s *recordingStore) Delete(obj any) error {
	s.rec("delete " + describeObj(obj))
	return s.Store.Delete(obj)
}

func (s *recordingStore) Replace(list []any, rv string) error {
	names := make([]string, len(list))
	for i, o := range list {
		names[i] = describeObj(o)
	}
	slices.Sort(names)
	s.rec(fmt.Sprintf("replace %s [%s]", rv, strings.Join(names, ",")))
	return s.Store.Replace(list, rv)
}

func (s *recordingStore) Resync() error {
	s.mu.Lock()
	s.resyncs++
	s.mu.Unlock()
	return nil
}

func (s *recordingStore) getCalls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

func (s *recordingStore) waitCalls(t testing.TB, n int) []string {
	t.Helper()
	eventually(t, fmt.Sprintf("%d store calls (have %v)", n, s.getCalls()), func() bool { return len(s.getCalls()) >= n })
	return s.getCalls()
}

func (s *recordingStore) resyncCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resyncs
}
