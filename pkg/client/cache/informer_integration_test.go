package cache_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

const timeout = 30 * time.Second

func newClient(t *testing.T) *client.Client {
	t.Helper()
	_, c := newEnvClient(t)
	return c
}

// newEnvClient starts a test server and returns it with a client of it.
func newEnvClient(t *testing.T) (*testenv.Environment, *client.Client) {
	t.Helper()
	env := testenv.StartT(t)
	// The tests create pods in "default" without a controller manager.
	if err := env.EnsureServiceAccount(context.Background(), "default", "default"); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return env, c
}

type podClient = client.Typed[*corev1.Pod, *corev1.PodList]

func podsOf(c *client.Client) *podClient {
	return client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
}

func newPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
}

func create(t *testing.T, pods *podClient, name string) *corev1.Pod {
	t.Helper()
	p, err := pods.Create(context.Background(), newPod(name), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return p
}

func label(t *testing.T, pods *podClient, name, value string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"labels":{"v":%q}}}`, value)
	if _, err := pods.Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch %s: %v", name, err)
	}
}

func remove(t *testing.T, pods *podClient, name string) {
	t.Helper()
	if err := pods.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete %s: %v", name, err)
	}
}

// events records a typed handler's notifications as strings.
type events struct {
	mu  sync.Mutex
	got []string
}

func (e *events) add(s string) {
	e.mu.Lock()
	e.got = append(e.got, s)
	e.mu.Unlock()
}

func (e *events) handler() cache.TypedResourceEventHandlerFuncs[*corev1.Pod] {
	return cache.TypedResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc: func(p *corev1.Pod, initial bool) {
			s := "add " + p.Name
			if initial {
				s += " initial"
			}
			e.add(s)
		},
		UpdateFunc: func(o, n *corev1.Pod) {
			if o.ResourceVersion == n.ResourceVersion {
				e.add("resync " + n.Name)
				return
			}
			e.add("update " + n.Name + " v=" + n.Labels["v"])
		},
		DeleteFunc: func(d cache.DeletedObject[*corev1.Pod]) {
			s := "delete " + d.Obj.Name
			if d.FinalStateUnknown != nil {
				s += " tombstone"
			}
			e.add(s)
		},
	}
}

func (e *events) get() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.got)
}

func (e *events) wait(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		e.mu.Lock()
		got := slices.Clone(e.got)
		e.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %d events, have %v", n, got)
		}
		time.Sleep(time.Millisecond)
	}
}

// withoutInitial drops the " initial" marks.
func withoutInitial(got []string) []string {
	out := make([]string, len(got))
	for i, s := range got {
		out[i] = strings.TrimSuffix(s, " initial")
	}
	return out
}

// waitKeys waits until store holds exactly keys.
func waitKeys(t *testing.T, store cache.Store, keys ...string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := store.ListKeys()
		slices.Sort(got)
		if slices.Equal(got, keys) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cached %v, want %v", got, keys)
		}
		time.Sleep(time.Millisecond)
	}
}

func expect(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n  got  %s\n  want %s", strings.Join(got, " | "), strings.Join(want, " | "))
	}
}

// start runs inf until the end of the test and waits for its sync.
func start(t *testing.T, inf cache.SharedInformer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	wctx, wcancel := context.WithTimeout(ctx, timeout)
	defer wcancel()
	if !cache.WaitForSynced(wctx, inf.Synced()) {
		t.Fatal("informer did not sync")
	}
}

// fastBackoff makes the real-clock tests relist quickly.
var fastBackoff = cache.Backoff{Initial: time.Millisecond, Max: 10 * time.Millisecond, Factor: 2, ResetAfter: time.Minute}

func TestPodInformerSeesCreatesUpdatesDeletes(t *testing.T) {
	c := newClient(t)
	pods := podsOf(c)
	create(t, pods, "pre")
	inf := cache.NewTypedInformer(client.For[*corev1.Pod, *corev1.PodList](c), nil, cache.SharedIndexInformerOptions{})
	ev := &events{}
	reg, err := inf.AddEventHandler(ev.handler())
	if err != nil {
		t.Fatal(err)
	}
	start(t, inf.Informer())
	if !reg.HasSynced() && !cache.WaitForCacheSync(context.Background(), reg.HasSynced) {
		t.Fatal("handler not synced")
	}
	// The first list reads at resourceVersion "0" (any, from the watch
	// cache) and may predate "pre": then it arrives as a watch event.
	expect(t, withoutInitial(ev.wait(t, 1)), "add pre")

	create(t, pods, "p1")
	label(t, pods, "p1", "2")
	remove(t, pods, "p1")
	expect(t, withoutInitial(ev.wait(t, 4)), "add pre", "add p1", "update p1 v=2", "delete p1")

	got, err := inf.Lister().Namespace("default").Get("pre")
	if err != nil || got.Name != "pre" {
		t.Fatalf("lister: %v", err)
	}
	if _, err := inf.Lister().Namespace("default").Get("p1"); !apierrors.IsNotFound(err) {
		t.Fatalf("deleted pod in lister: %v", err)
	}
	if rv := inf.Informer().LastSyncResourceVersion(); rv == "" {
		t.Fatal("no resourceVersion")
	}
}

// controlledLW wraps a ListerWatcher: it counts calls, can cut every watch
// after a number of events (dropping the rest of that stream, as a broken
// connection does), can cut the current watch on demand, and can make the
// next Watch wait at a gate and then either fail with a 410 Expired of its
// own making (expireNextWatch) or go on to the server (holdNextWatch). It
// also counts the watches the server answered with 410 Gone/Expired, as
// the response or as an ERROR event.
type controlledLW struct {
	inner cache.ListerWatcher

	mu        sync.Mutex
	cutAfter  int
	lists     int
	watches   int
	expired   int // 410s from the server
	current   *cutWatch
	gate      chan struct{} // if set, the next Watch waits for it
	gateFails bool          // and then fails with 410 instead of watching
	blocked   chan struct{} // closed when a Watch is waiting at the gate
}

func (l *controlledLW) List(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	l.mu.Lock()
	l.lists++
	l.mu.Unlock()
	return l.inner.List(ctx, o)
}

func (l *controlledLW) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	l.mu.Lock()
	l.watches++
	gate, fails, blocked, cutAfter := l.gate, l.gateFails, l.blocked, l.cutAfter
	l.gate = nil
	l.mu.Unlock()
	if gate != nil {
		close(blocked)
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if fails {
			return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %s", o.ResourceVersion))
		}
	}
	inner, err := l.inner.Watch(ctx, o)
	if err != nil {
		l.observe(err)
		return nil, err
	}
	w := newCutWatch(inner, cutAfter, l.observe)
	l.mu.Lock()
	l.current = w
	l.mu.Unlock()
	return w, nil
}

// observe counts err if it is a 410 Gone/Expired.
func (l *controlledLW) observe(err error) {
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		l.mu.Lock()
		l.expired++
		l.mu.Unlock()
	}
}

func (l *controlledLW) counts() (lists, watches int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lists, l.watches
}

// serverExpiries is the number of watches the server answered with 410.
func (l *controlledLW) serverExpiries() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.expired
}

// expireNextWatch makes the next Watch block until the returned release
// is called and then fail with 410; blocked is closed once it waits.
func (l *controlledLW) expireNextWatch() (blocked <-chan struct{}, release func()) {
	return l.gateNextWatch(true)
}

// holdNextWatch makes the next Watch block until the returned release is
// called and then go on to the server; blocked is closed once it waits.
func (l *controlledLW) holdNextWatch() (blocked <-chan struct{}, release func()) {
	return l.gateNextWatch(false)
}

func (l *controlledLW) gateNextWatch(fail bool) (blocked <-chan struct{}, release func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	gate := make(chan struct{})
	l.gate, l.gateFails, l.blocked = gate, fail, make(chan struct{})
	return l.blocked, func() { close(gate) }
}

// waitClosed waits until ch is closed.
func waitClosed(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(timeout):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// waitOpen waits until a watch is open.
func (l *controlledLW) waitOpen(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		l.mu.Lock()
		ok := l.current != nil && !l.current.ended()
		l.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no watch open")
		}
		time.Sleep(time.Millisecond)
	}
}

// cutCurrent ends the current watch.
func (l *controlledLW) cutCurrent() {
	l.mu.Lock()
	w := l.current
	l.mu.Unlock()
	w.cut()
}

type cutWatch struct {
	inner    watch.Interface
	out      chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
	cutCh    chan struct{}
	cutOnce  sync.Once
	finished chan struct{} // closed when the stream has ended
}

func (w *cutWatch) ended() bool {
	select {
	case <-w.finished:
		return true
	case <-w.stop:
		return true
	default:
		return false
	}
}

// newCutWatch relays inner's events until after of them (if > 0) went
// through, or until cut or stopped; it reports the errors of ERROR events
// to onError.
func newCutWatch(inner watch.Interface, after int, onError func(error)) *cutWatch {
	w := &cutWatch{inner: inner, out: make(chan watch.Event), stop: make(chan struct{}), cutCh: make(chan struct{}), finished: make(chan struct{})}
	go func() {
		defer close(w.finished)
		defer close(w.out)
		defer inner.Stop()
		n := 0
		for {
			select {
			case ev, ok := <-inner.ResultChan():
				if !ok {
					return
				}
				if ev.Type == watch.Error {
					onError(apierrors.FromObject(ev.Object))
				}
				select {
				case w.out <- ev:
				case <-w.stop:
					return
				}
				if n++; after > 0 && n >= after {
					return
				}
			case <-w.stop:
				return
			case <-w.cutCh:
				return
			}
		}
	}()
	return w
}

func (w *cutWatch) ResultChan() <-chan watch.Event { return w.out }
func (w *cutWatch) Stop()                          { w.stopOnce.Do(func() { close(w.stop) }) }
func (w *cutWatch) cut()                           { w.cutOnce.Do(func() { close(w.cutCh) }) }

func TestBrokenWatchesLoseNoEvent(t *testing.T) {
	c := newClient(t)
	pods := podsOf(c)
	lw := &controlledLW{inner: cache.NewListWatchFromTyped(pods, nil), cutAfter: 3}
	inf := cache.WrapTypedInformer[*corev1.Pod](
		cache.NewSharedIndexInformerWithOptions(lw, &corev1.Pod{}, cache.SharedIndexInformerOptions{
			Reflector: cache.ReflectorOptions{Backoff: &fastBackoff},
		}), corev1.Resource("pods"))
	ev := &events{}
	if _, err := inf.AddEventHandler(ev.handler()); err != nil {
		t.Fatal(err)
	}
	start(t, inf.Informer())

	// Every watch breaks after three events; the writes go on meanwhile.
	const n = 25
	var want []string
	for i := range n {
		name := fmt.Sprintf("p%02d", i)
		create(t, pods, name)
		label(t, pods, name, "a")
		want = append(want, "add "+name, "update "+name+" v=a")
		if i%2 == 0 {
			remove(t, pods, name)
			want = append(want, "delete "+name)
		}
	}
	expect(t, ev.wait(t, len(want)), want...)
	lists, watches := lw.counts()
	if lists != 1 {
		t.Fatalf("%d lists: a broken watch must resume, not relist", lists)
	}
	if watches < len(want)/3 {
		t.Fatalf("only %d watches: the wrapper did not cut them", watches)
	}
	// Nothing more arrives (no duplicates from overlapping watches).
	create(t, pods, "last")
	got := ev.wait(t, len(want)+1)
	expect(t, got[len(want):], "add last")
}

// startControlledPodInformer runs a pod informer whose watches the test
// controls, recording its events.
func startControlledPodInformer(t *testing.T, pods *podClient) (*controlledLW, *cache.TypedInformer[*corev1.Pod], *events) {
	t.Helper()
	lw := &controlledLW{inner: cache.NewListWatchFromTyped(pods, nil)}
	inf := cache.WrapTypedInformer[*corev1.Pod](
		cache.NewSharedIndexInformerWithOptions(lw, &corev1.Pod{}, cache.SharedIndexInformerOptions{
			Reflector: cache.ReflectorOptions{Backoff: &fastBackoff},
		}), corev1.Resource("pods"))
	ev := &events{}
	if _, err := inf.AddEventHandler(ev.handler()); err != nil {
		t.Fatal(err)
	}
	start(t, inf.Informer())
	return lw, inf, ev
}

// expectRelisted: after the expiry tests' script, the informer listed a
// second time, no longer caches the deleted b, and watches again.
func expectRelisted(t *testing.T, pods *podClient, lw *controlledLW, inf *cache.TypedInformer[*corev1.Pod], ev *events) {
	t.Helper()
	if lists, _ := lw.counts(); lists != 2 {
		t.Fatalf("%d lists, want a relist", lists)
	}
	if _, err := inf.Lister().Namespace("default").Get("b"); !apierrors.IsNotFound(err) {
		t.Fatalf("b still cached: %v", err)
	}
	label(t, pods, "d", "x")
	got := ev.wait(t, 8)
	expect(t, got[7:], "update d v=x")
}

func TestForcedExpiryRelistsAndTombstonesMissedDeletes(t *testing.T) {
	c := newClient(t)
	pods := podsOf(c)
	for _, name := range []string{"a", "b", "c"} {
		create(t, pods, name)
	}
	lw, inf, ev := startControlledPodInformer(t, pods)
	expect(t, withoutInitial(ev.wait(t, 3)), "add a", "add b", "add c")

	// Break the watch; the re-watch waits while the world changes, then
	// gets 410 Gone/Expired.
	lw.waitOpen(t)
	blocked, release := lw.expireNextWatch()
	lw.cutCurrent()
	waitClosed(t, "the re-watch", blocked)
	remove(t, pods, "b")
	label(t, pods, "a", "2")
	d := create(t, pods, "d")
	// Let the server's watch cache catch up with these writes, so that the
	// relist (at "not older than" the informer's last resourceVersion)
	// certainly sees them.
	if _, err := pods.List(context.Background(), metav1.ListOptions{
		ResourceVersion: d.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
	}); err != nil {
		t.Fatal(err)
	}
	release()

	got := ev.wait(t, 7)
	expect(t, got[3:], "update a v=2", "resync c", "add d", "delete b tombstone")
	expectRelisted(t, pods, lw, inf, ev)
}

func TestWatchListAgainstServer(t *testing.T) {
	c := newClient(t)
	pods := podsOf(c)
	create(t, pods, "a")
	create(t, pods, "b")
	lw := &controlledLW{inner: cache.NewListWatchFromTyped(pods, nil)}
	inf := cache.WrapTypedInformer[*corev1.Pod](
		cache.NewSharedIndexInformerWithOptions(lw, &corev1.Pod{}, cache.SharedIndexInformerOptions{
			Reflector: cache.ReflectorOptions{UseWatchList: true},
		}), corev1.Resource("pods"))
	ev := &events{}
	if _, err := inf.AddEventHandler(ev.handler()); err != nil {
		t.Fatal(err)
	}
	start(t, inf.Informer())
	got := ev.wait(t, 2)
	slices.Sort(got)
	expect(t, got, "add a initial", "add b initial")
	create(t, pods, "c")
	expect(t, ev.wait(t, 3)[2:], "add c")
	if lists, watches := lw.counts(); lists != 0 || watches != 1 {
		t.Fatalf("%d lists and %d watches, want the initial state streamed by the one watch", lists, watches)
	}
}

func TestListWatchSelectors(t *testing.T) {
	c := newClient(t)
	pods := podsOf(c)
	create(t, pods, "keep")
	create(t, pods, "skip")
	// A field selector through the filtered helper.
	lw1 := cache.NewListWatchFromClient[*corev1.Pod, *corev1.PodList](c, "default", fields.OneTermEqualSelector("metadata.name", "keep"))
	inf := cache.NewSharedIndexInformer(lw1, &corev1.Pod{}, 0, cache.Indexers{})
	start(t, inf)
	waitKeys(t, inf.GetStore(), "default/keep")
	// A label selector through tweak.
	label(t, pods, "skip", "yes")
	lw2 := cache.NewListWatchFromTyped(pods, func(o *metav1.ListOptions) { o.LabelSelector = "v=yes" })
	inf2 := cache.NewSharedIndexInformer(lw2, &corev1.Pod{}, 0, cache.Indexers{})
	start(t, inf2)
	waitKeys(t, inf2.GetStore(), "default/skip")
}

// TestServerExpiryRelistsAndTombstonesMissedDeletes is
// TestForcedExpiryRelistsAndTombstonesMissedDeletes with a real 410 Gone
// from the server: while the informer's re-watch is held back, objects
// change and the server forgets that history (its storage is compacted and
// its watch caches start over), so the re-watch from the informer's last
// resourceVersion is refused and the informer relists.
func TestServerExpiryRelistsAndTombstonesMissedDeletes(t *testing.T) {
	env, c := newEnvClient(t)
	pods := podsOf(c)
	for _, name := range []string{"a", "b", "c"} {
		create(t, pods, name)
	}
	lw, inf, ev := startControlledPodInformer(t, pods)
	expect(t, withoutInitial(ev.wait(t, 3)), "add a", "add b", "add c")

	// Break the watch and hold the re-watch while the world changes and
	// the server compacts; then let it reach the server.
	lw.waitOpen(t)
	blocked, release := lw.holdNextWatch()
	lw.cutCurrent()
	waitClosed(t, "the re-watch", blocked)
	last, err := strconv.ParseInt(inf.Informer().LastSyncResourceVersion(), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	remove(t, pods, "b")
	label(t, pods, "a", "2")
	create(t, pods, "d")
	compacted, err := env.Compact(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if compacted <= last {
		t.Fatalf("compacted at %d, not past the informer's resourceVersion %d", compacted, last)
	}
	release()

	got := ev.wait(t, 7)
	expect(t, got[3:], "update a v=2", "resync c", "add d", "delete b tombstone")
	if n := lw.serverExpiries(); n != 1 {
		t.Fatalf("the server answered %d watches with 410, want 1", n)
	}
	expectRelisted(t, pods, lw, inf, ev)
}

// TestSlowHandlerDoesNotDelayFastOneAgainstServer: a handler stuck in its
// first notification delays neither the informer nor the other handler,
// which sees every object created meanwhile; once it goes on, it gets
// every notification too, in order.
func TestSlowHandlerDoesNotDelayFastOneAgainstServer(t *testing.T) {
	c := newClient(t)
	cms := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](c).Namespace("default")
	// Only this test's objects, not the namespace's kube-root-ca.crt.
	const labelKey, labelValue = "test", "slow-handler"
	inf := cache.NewTypedInformer(cms, func(o *metav1.ListOptions) { o.LabelSelector = labelKey + "=" + labelValue }, cache.SharedIndexInformerOptions{})
	handler := func(e *events, first func()) cache.TypedResourceEventHandlerFuncs[*corev1.ConfigMap] {
		return cache.TypedResourceEventHandlerFuncs[*corev1.ConfigMap]{
			AddFunc: func(cm *corev1.ConfigMap, _ bool) {
				e.add("add " + cm.Name)
				if first != nil {
					first()
					first = nil // only this handler's goroutine calls it
				}
			},
			UpdateFunc: func(_, cm *corev1.ConfigMap) { e.add("update " + cm.Name) },
			DeleteFunc: func(d cache.DeletedObject[*corev1.ConfigMap]) { e.add("delete " + d.Obj.Name) },
		}
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	slow, fast := &events{}, &events{}
	for _, h := range []cache.TypedResourceEventHandlerFuncs[*corev1.ConfigMap]{
		handler(slow, func() { close(entered); <-release }),
		handler(fast, nil),
	} {
		if _, err := inf.AddEventHandler(h); err != nil {
			t.Fatal(err)
		}
	}
	start(t, inf.Informer())
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) }) // before the informer stops

	const n = 200
	want := make([]string, n)
	for i := range want {
		name := fmt.Sprintf("cm%03d", i)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{labelKey: labelValue}}}
		if _, err := cms.Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		want[i] = "add " + name
	}
	expect(t, fast.wait(t, n), want...)
	waitClosed(t, "the slow handler's first call", entered)
	// Still stuck in its first call.
	expect(t, slow.get(), want[:1]...)

	releaseOnce.Do(func() { close(release) })
	expect(t, slow.wait(t, n), want...)
	// Nothing more arrived for the fast one meanwhile.
	expect(t, fast.get(), want...)
}
