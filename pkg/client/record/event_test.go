package record

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/clock"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func testPod() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-0", UID: "pod-uid", ResourceVersion: "17"}}
}

// collect starts a watcher that sends every event to a channel.
func collect(b EventBroadcaster, n int) (<-chan *corev1.Event, Watcher) {
	ch := make(chan *corev1.Event, n)
	w := b.StartEventWatcher(func(e *corev1.Event) { ch <- e })
	return ch, w
}

func next(t *testing.T, ch <-chan *corev1.Event) *corev1.Event {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
		return nil
	}
}

func TestRecorderBuildsEvent(t *testing.T) {
	fc := clock.NewFake(t0)
	b := NewBroadcaster(WithClock(fc), WithLogger(quiet()))
	defer b.Shutdown()
	ch, _ := collect(b, 10)
	r := b.NewRecorder(corev1.EventSource{Component: "deployment-controller", Host: "cp-1"})

	r.AnnotatedEventf(testPod(), map[string]string{"a": "b"}, corev1.EventTypeWarning, "FailedMount", "volume %q: %d", "data", 3)
	e := next(t, ch)
	want := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-0.%x", t0.UnixNano()), Namespace: "ns", Annotations: map[string]string{"a": "b"}},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "ns", Name: "web-0",
			UID: "pod-uid", ResourceVersion: "17"},
		Reason: "FailedMount", Message: `volume "data": 3`, Type: corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: "deployment-controller", Host: "cp-1"},
		FirstTimestamp: metav1.NewTime(t0), LastTimestamp: metav1.NewTime(t0), Count: 1,
		ReportingController: "deployment-controller", ReportingInstance: "cp-1",
	}
	if !reflect.DeepEqual(e, want) {
		t.Fatalf("event =\n%v\nwant\n%v", e, want)
	}

	// A second event at the same instant still gets its own name.
	r.Event(testPod(), corev1.EventTypeNormal, "Pulled", "pulled")
	if e2 := next(t, ch); e2.Name == e.Name || e2.Annotations != nil || e2.Message != "pulled" {
		t.Fatalf("second event = %s %v %q", e2.Name, e2.Annotations, e2.Message)
	}
}

func TestRecorderReferences(t *testing.T) {
	scheme := runtime.NewScheme()
	gv := schema.GroupVersion{Group: "example.com", Version: "v1alpha1"}
	scheme.AddKnownTypeWithName(gv.WithKind("Widget"), &appsv1.ControllerRevision{}) // any typed object will do
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", UID: "n"}}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("example.com/v1")
	u.SetKind("Thing")
	u.SetNamespace("ns")
	u.SetName("t")
	typed := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{Kind: "Deployment", APIVersion: "apps/v1"}, ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d"}}
	for _, tc := range []struct {
		name    string
		scheme  *runtime.Scheme
		obj     runtime.Object
		want    corev1.ObjectReference
		wantNS  string
		dropped bool
	}{
		{name: "typed without TypeMeta", obj: &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rs"}},
			want: corev1.ObjectReference{Kind: "ReplicaSet", APIVersion: "apps/v1", Namespace: "ns", Name: "rs"}, wantNS: "ns"},
		{name: "typed with TypeMeta", obj: typed,
			want: corev1.ObjectReference{Kind: "Deployment", APIVersion: "apps/v1", Namespace: "ns", Name: "d"}, wantNS: "ns"},
		{name: "cluster-scoped goes to default", obj: node,
			want: corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: "node-a", UID: "n"}, wantNS: "default"},
		{name: "unstructured", obj: u,
			want: corev1.ObjectReference{Kind: "Thing", APIVersion: "example.com/v1", Namespace: "ns", Name: "t"}, wantNS: "ns"},
		{name: "object reference", obj: &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "ns", Name: "p", FieldPath: "spec.containers{c}"},
			want: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "ns", Name: "p", FieldPath: "spec.containers{c}"}, wantNS: "ns"},
		{name: "scheme wins over built-ins", scheme: scheme, obj: &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w"}},
			want: corev1.ObjectReference{Kind: "Widget", APIVersion: "example.com/v1alpha1", Namespace: "ns", Name: "w"}, wantNS: "ns"},
		{name: "unknown kind is dropped", obj: &metav1.Status{}, dropped: true},
		{name: "nil is dropped", obj: (*corev1.Pod)(nil), dropped: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := []BroadcasterOption{WithClock(clock.NewFake(t0)), WithLogger(quiet())}
			if tc.scheme != nil {
				opts = append(opts, WithScheme(tc.scheme))
			}
			b := NewBroadcaster(opts...)
			defer b.Shutdown()
			ch, _ := collect(b, 10)
			r := b.NewRecorder(corev1.EventSource{Component: "c"})
			r.Event(tc.obj, corev1.EventTypeNormal, "R", "m")
			r.Event(testPod(), corev1.EventTypeNormal, "Marker", "m") // proves the first was dropped
			e := next(t, ch)
			if tc.dropped {
				if e.Reason != "Marker" {
					t.Fatalf("event not dropped: %v", e.InvolvedObject)
				}
				return
			}
			if !reflect.DeepEqual(e.InvolvedObject, tc.want) || e.Namespace != tc.wantNS {
				t.Fatalf("involvedObject = %+v in %q, want %+v in %q", e.InvolvedObject, e.Namespace, tc.want, tc.wantNS)
			}
		})
	}
}

func TestRecorderRejectsUnknownType(t *testing.T) {
	var logs bytes.Buffer
	b := NewBroadcaster(WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	defer b.Shutdown()
	ch, _ := collect(b, 10)
	r := b.NewRecorder(corev1.EventSource{Component: "c"})
	r.Event(testPod(), "Error", "R", "m")
	r.Event(testPod(), corev1.EventTypeNormal, "Marker", "m")
	if e := next(t, ch); e.Reason != "Marker" {
		t.Fatalf("event of type %q recorded", e.Type)
	}
	if !strings.Contains(logs.String(), "unsupported event type") {
		t.Fatalf("logs: %s", logs.String())
	}
}

func TestEventNameFallsBackToUUID(t *testing.T) {
	long := strings.Repeat("a", 260)
	if n := generateEventName(long, 1); len(n) != 36 {
		t.Fatalf("name %q", n)
	}
	if n := generateEventName("pod", 255); n != "pod.ff" {
		t.Fatalf("name %q", n)
	}
	g := &nameGenerator{}
	if a, b := g.next("p", t0), g.next("p", t0); a == b || a != fmt.Sprintf("p.%x", t0.UnixNano()) {
		t.Fatalf("names %q %q", a, b)
	}
}

func TestBroadcasterDoesNotBlockOnStuckWatcher(t *testing.T) {
	b := NewBroadcaster(WithQueueLength(5), WithLogger(quiet()))
	defer b.Shutdown()
	stuck := make(chan struct{})
	defer close(stuck)
	b.StartEventWatcher(func(*corev1.Event) { <-stuck })
	var mu sync.Mutex
	var got []string
	healthy := b.StartEventWatcher(func(e *corev1.Event) {
		mu.Lock()
		got = append(got, e.Message)
		mu.Unlock()
	})
	r := b.NewRecorder(corev1.EventSource{Component: "c"})

	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			r.Eventf(testPod(), corev1.EventTypeNormal, "R", "%d", i)
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("recording blocked on a stuck watcher")
	}
	// The healthy watcher keeps receiving, in order. (With queues this
	// short, any one event may be dropped, so keep sending.)
	deadline := time.Now().Add(5 * time.Second)
	for {
		r.Event(testPod(), corev1.EventTypeNormal, "R", "last")
		mu.Lock()
		n := len(got)
		last := ""
		if n > 0 {
			last = got[n-1]
		}
		mu.Unlock()
		if last == "last" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("healthy watcher starved")
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	prev := -1
	for _, m := range got {
		if m == "last" {
			break
		}
		var i int
		fmt.Sscan(m, &i)
		if i <= prev {
			t.Fatalf("out of order: %v", got)
		}
		prev = i
	}
	mu.Unlock()
	healthy.Stop()
	<-healthy.Done()
}

func TestBroadcasterDropsWhenIncomingQueueIsFull(t *testing.T) {
	b := NewBroadcaster(WithQueueLength(3), WithLogger(quiet())).(*broadcaster)
	defer b.Shutdown()
	ch, _ := collect(b, 100)
	r := b.NewRecorder(corev1.EventSource{Component: "c"})
	// Hold the distributor: it blocks taking the lock for the first event,
	// so the incoming queue fills up.
	b.mu.Lock()
	r.Event(testPod(), corev1.EventTypeNormal, "R", "0")
	waitUntil(t, func() bool { return len(b.incoming) == 0 }) // the distributor holds event 0
	for i := 1; i <= 10; i++ {
		r.Eventf(testPod(), corev1.EventTypeNormal, "R", "%d", i) // returns at once
	}
	b.mu.Unlock()
	var got []string
	for range 4 {
		got = append(got, next(t, ch).Message)
	}
	if !reflect.DeepEqual(got, []string{"0", "1", "2", "3"}) {
		t.Fatalf("got %v", got)
	}
	r.Event(testPod(), corev1.EventTypeNormal, "R", "after")
	if m := next(t, ch).Message; m != "after" {
		t.Fatalf("got %q: events beyond the queue were not dropped", m)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestWatchersGetTheirOwnCopy(t *testing.T) {
	b := NewBroadcaster(WithLogger(quiet()))
	defer b.Shutdown()
	b.StartEventWatcher(func(e *corev1.Event) { e.Message = "scribbled" })
	ch, _ := collect(b, 1)
	b.NewRecorder(corev1.EventSource{}).Event(testPod(), corev1.EventTypeNormal, "R", "original")
	if m := next(t, ch).Message; m != "original" {
		t.Fatalf("message %q", m)
	}
}

func TestStopAndShutdown(t *testing.T) {
	b := NewBroadcaster(WithLogger(quiet()))
	ch, w := collect(b, 10)
	r := b.NewRecorder(corev1.EventSource{})
	w.Stop()
	w.Stop() // idempotent
	<-w.Done()
	other, w2 := collect(b, 10)
	r.Event(testPod(), corev1.EventTypeNormal, "R", "m")
	next(t, other)
	if len(ch) != 0 {
		t.Fatal("stopped watcher got an event")
	}
	b.Shutdown()
	<-w2.Done()
	r.Event(testPod(), corev1.EventTypeNormal, "R", "after shutdown") // no panic, dropped
	w3 := b.StartEventWatcher(func(*corev1.Event) {})
	select {
	case <-w3.Done():
	default:
		t.Fatal("watcher started after Shutdown is running")
	}
}

func TestWithContextShutsDown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	b := NewBroadcaster(WithContext(ctx), WithLogger(quiet()))
	_, w := collect(b, 1)
	cancel()
	select {
	case <-w.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("watcher survived the broadcaster's context")
	}
}

func TestStructuredLoggingAndLogging(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b := NewBroadcaster(WithLogger(quiet()))
	defer b.Shutdown()
	b.StartStructuredLogging(logger, slog.LevelInfo)
	lines := make(chan string, 1)
	b.StartLogging(func(format string, args ...any) { lines <- fmt.Sprintf(format, args...) })
	b.NewRecorder(corev1.EventSource{}).Event(testPod(), corev1.EventTypeWarning, "BackOff", "restarting")
	select {
	case l := <-lines:
		if !strings.Contains(l, "type: 'Warning' reason: 'BackOff' restarting") {
			t.Fatalf("line %q", l)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no log line")
	}
	waitUntil(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(buf.String(), "Event occurred")
	})
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"level=INFO", "object=ns/web-0", "kind=Pod", "apiVersion=v1", "type=Warning", "reason=BackOff", "message=restarting"} {
		if !strings.Contains(buf.String(), want) {
			t.Fatalf("log %q lacks %q", buf.String(), want)
		}
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// fakeSink records calls; fail decides the error of each call.
type fakeSink struct {
	mu    sync.Mutex
	calls []string
	fail  func(call string, n int) error // n counts calls so far
	rv    int
	store map[string]*corev1.Event
	wrote chan struct{}
}

func newFakeSink() *fakeSink {
	return &fakeSink{store: map[string]*corev1.Event{}, wrote: make(chan struct{}, 100)}
}

func (s *fakeSink) do(call string, e *corev1.Event) (*corev1.Event, error) {
	s.mu.Lock()
	defer func() { s.mu.Unlock(); s.wrote <- struct{}{} }()
	s.calls = append(s.calls, call+" "+e.Name)
	if s.fail != nil {
		if err := s.fail(call, len(s.calls)); err != nil {
			return nil, err
		}
	}
	s.rv++
	out := e.DeepCopy()
	out.ResourceVersion = fmt.Sprint(s.rv)
	s.store[e.Name] = out
	return out.DeepCopy(), nil
}

func (s *fakeSink) Create(_ context.Context, e *corev1.Event) (*corev1.Event, error) {
	return s.do("create", e)
}
func (s *fakeSink) Update(_ context.Context, e *corev1.Event) (*corev1.Event, error) {
	return s.do("update", e)
}
func (s *fakeSink) Patch(_ context.Context, e *corev1.Event, data []byte) (*corev1.Event, error) {
	return s.do("patch", e)
}

func (s *fakeSink) callLog() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

func TestRecordToSinkCreatesThenPatches(t *testing.T) {
	fc := clock.NewFake(t0)
	b := NewBroadcaster(WithClock(fc), WithLogger(quiet()))
	defer b.Shutdown()
	sink := newFakeSink()
	b.StartRecordingToSink(sink)
	r := b.NewRecorder(corev1.EventSource{Component: "c"})
	for range 3 {
		r.Event(testPod(), corev1.EventTypeNormal, "Pulled", "pulled")
		<-sink.wrote
	}
	name := fmt.Sprintf("web-0.%x", t0.UnixNano())
	if got, want := sink.callLog(), []string{"create " + name, "patch " + name, "patch " + name}; !reflect.DeepEqual(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
	if c := sink.store[name].Count; c != 3 {
		t.Fatalf("count %d", c)
	}
}

// blockingSink holds every Create until release is closed.
type blockingSink struct {
	fakeSink
	entered chan struct{}
	release chan struct{}
}

func (s *blockingSink) Create(ctx context.Context, e *corev1.Event) (*corev1.Event, error) {
	s.entered <- struct{}{}
	<-s.release
	return s.fakeSink.Create(ctx, e)
}

// With WithConcurrentWrites(n) up to n writes are in flight at once (one
// at a time without it), and every event is written once.
func TestConcurrentWrites(t *testing.T) {
	for _, tc := range []struct{ writers, wantInFlight int }{{0, 1}, {4, 4}} {
		b := NewBroadcaster(WithClock(clock.NewFake(t0)), WithLogger(quiet()), WithConcurrentWrites(tc.writers))
		sink := &blockingSink{fakeSink: *newFakeSink(), entered: make(chan struct{}, 100), release: make(chan struct{})}
		b.StartRecordingToSink(sink)
		r := b.NewRecorder(corev1.EventSource{Component: "c"})
		const n = 6
		for i := range n {
			p := testPod()
			p.Name = fmt.Sprint("p", i)
			r.Event(p, corev1.EventTypeNormal, "Scheduled", "assigned")
		}
		for range tc.wantInFlight {
			select {
			case <-sink.entered:
			case <-time.After(10 * time.Second):
				t.Fatalf("writers %d: fewer than %d writes in flight", tc.writers, tc.wantInFlight)
			}
		}
		select {
		case <-sink.entered:
			t.Fatalf("writers %d: more than %d writes in flight", tc.writers, tc.wantInFlight)
		case <-time.After(50 * time.Millisecond):
		}
		close(sink.release)
		for range n - tc.wantInFlight {
			<-sink.entered
		}
		for range n {
			select {
			case <-sink.wrote:
			case <-time.After(10 * time.Second):
				t.Fatalf("writers %d: not every event written: %v", tc.writers, sink.callLog())
			}
		}
		if got := len(sink.callLog()); got != n {
			t.Errorf("writers %d: %d writes, want %d: %v", tc.writers, got, n, sink.callLog())
		}
		b.Shutdown()
	}
}

func TestRecordToSinkRecreatesAVanishedEvent(t *testing.T) {
	b := NewBroadcaster(WithClock(clock.NewFake(t0)), WithLogger(quiet()))
	defer b.Shutdown()
	sink := newFakeSink()
	sink.fail = func(call string, n int) error {
		if call == "patch" {
			return apierrors.NewNotFound(schema.GroupResource{Resource: "events"}, "x")
		}
		return nil
	}
	b.StartRecordingToSink(sink)
	r := b.NewRecorder(corev1.EventSource{Component: "c"})
	r.Event(testPod(), corev1.EventTypeNormal, "R", "m")
	<-sink.wrote
	r.Event(testPod(), corev1.EventTypeNormal, "R", "m")
	<-sink.wrote
	<-sink.wrote
	got := sink.callLog()
	if len(got) != 3 || !strings.HasPrefix(got[1], "patch") || !strings.HasPrefix(got[2], "create") {
		t.Fatalf("calls %v", got)
	}
}

func TestRecordToSinkRetries(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		failures  int
		maxTries  int
		wantCalls int
	}{
		{name: "network errors are retried until success", err: errors.New("connection refused"), failures: 3, maxTries: 12, wantCalls: 4},
		{name: "retries stop at maxTries", err: errors.New("connection refused"), failures: 100, maxTries: 5, wantCalls: 5},
		{name: "API rejections are final", err: apierrors.NewBadRequest("invalid"), failures: 100, maxTries: 12, wantCalls: 1},
		{name: "AlreadyExists is final", err: apierrors.NewAlreadyExists(schema.GroupResource{Resource: "events"}, "x"), failures: 100, maxTries: 12, wantCalls: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := clock.NewFake(t0)
			b := NewBroadcaster(WithClock(fc), WithLogger(quiet()), WithSleepDuration(10*time.Second),
				WithMaxTries(tc.maxTries), WithRand(func() float64 { return 0.5 }))
			defer b.Shutdown()
			sink := newFakeSink()
			sink.fail = func(_ string, n int) error {
				if n <= tc.failures {
					return tc.err
				}
				return nil
			}
			b.StartRecordingToSink(sink)
			b.NewRecorder(corev1.EventSource{Component: "c"}).Event(testPod(), corev1.EventTypeNormal, "R", "m")
			<-sink.wrote
			// The first wait is randomized (0.5 * 10s), then 10s each.
			waits := []time.Duration{5 * time.Second}
			for len(waits) < tc.wantCalls {
				waits = append(waits, 10*time.Second)
			}
			for i := 1; i < tc.wantCalls; i++ {
				waitUntil(t, func() bool { return fc.Waiters() == 1 })
				fc.Step(waits[i-1] - time.Millisecond)
				if n := len(sink.callLog()); n != i {
					t.Fatalf("retried early: %d calls", n)
				}
				fc.Step(time.Millisecond)
				<-sink.wrote
			}
			// No further tries: the sink watcher moves on to the next event.
			b.NewRecorder(corev1.EventSource{Component: "c"}).Event(testPod(), corev1.EventTypeNormal, "R", "next")
			<-sink.wrote
			calls := sink.callLog()
			if len(calls) != tc.wantCalls+1 || calls[tc.wantCalls] == calls[0] {
				t.Fatalf("calls %v, want %d for the first event, then one for the next", calls, tc.wantCalls)
			}
		})
	}
}

func TestShutdownAbortsRetries(t *testing.T) {
	fc := clock.NewFake(t0)
	b := NewBroadcaster(WithClock(fc), WithLogger(quiet()))
	sink := newFakeSink()
	sink.fail = func(string, int) error { return errors.New("down") }
	w := b.StartRecordingToSink(sink)
	b.NewRecorder(corev1.EventSource{}).Event(testPod(), corev1.EventTypeNormal, "R", "m")
	<-sink.wrote
	waitUntil(t, func() bool { return fc.Waiters() == 1 })
	b.Shutdown()
	select {
	case <-w.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("sink watcher kept retrying after Shutdown")
	}
}

func TestSpamIsNotWritten(t *testing.T) {
	fc := clock.NewFake(t0)
	b := NewBroadcaster(WithClock(fc), WithLogger(quiet()), WithCorrelatorOptions(CorrelatorOptions{BurstSize: 2}))
	defer b.Shutdown()
	sink := newFakeSink()
	b.StartRecordingToSink(sink)
	seen, _ := collect(b, 10)
	r := b.NewRecorder(corev1.EventSource{})
	for i := range 4 {
		r.Eventf(testPod(), corev1.EventTypeNormal, "R", "%d", i)
		next(t, seen)
	}
	r.Event(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "other"}}, corev1.EventTypeNormal, "R", "x")
	next(t, seen)
	waitUntil(t, func() bool { return len(sink.callLog()) == 3 })
	got := sink.callLog()
	if !strings.HasPrefix(got[2], "create other.") {
		t.Fatalf("calls %v", got)
	}
}
