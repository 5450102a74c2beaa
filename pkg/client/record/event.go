package record

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// client-go's defaults for writing events.
const (
	// DefaultMaxTries is how often an event is tried before it is dropped.
	DefaultMaxTries = 12
	// DefaultSleepDuration is the wait between tries (the first wait is a
	// random fraction of it, so that many recorders do not retry in step).
	DefaultSleepDuration = 10 * time.Second
	// DefaultQueueLength bounds the broadcaster's incoming queue and each
	// watcher's buffer.
	DefaultQueueLength = 1000
)

// EventSink is where recorded events are written (the Events API).
type EventSink interface {
	Create(ctx context.Context, event *corev1.Event) (*corev1.Event, error)
	Update(ctx context.Context, event *corev1.Event) (*corev1.Event, error)
	Patch(ctx context.Context, oldEvent *corev1.Event, data []byte) (*corev1.Event, error)
}

// EventRecorder records events about objects. It never blocks.
type EventRecorder interface {
	// Event records an event of eventtype (corev1.EventTypeNormal or
	// EventTypeWarning) about object. reason is a short UpperCamelCase
	// machine-readable word, message is for humans.
	Event(object runtime.Object, eventtype, reason, message string)
	// Eventf is Event with a formatted message.
	Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any)
	// AnnotatedEventf is Eventf with annotations on the event.
	AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any)
}

// EventBroadcaster fans recorded events out to watchers: the Events API
// sink, logs, or any handler.
type EventBroadcaster interface {
	// StartEventWatcher calls handler with each event, on its own
	// goroutine. The event is the handler's own copy.
	StartEventWatcher(handler func(*corev1.Event)) Watcher
	// StartRecordingToSink writes events to sink, correlated (aggregated,
	// deduplicated, spam-filtered) and retried.
	StartRecordingToSink(sink EventSink) Watcher
	// StartLogging passes a line per event to logf.
	StartLogging(logf func(format string, args ...any)) Watcher
	// StartStructuredLogging logs each event to logger at level.
	StartStructuredLogging(logger *slog.Logger, level slog.Level) Watcher
	// NewRecorder returns a recorder of events from source.
	NewRecorder(source corev1.EventSource) EventRecorder
	// Shutdown stops the broadcaster and all its watchers; events still
	// queued are dropped and later events are ignored.
	Shutdown()
}

// Watcher is a running handler started on a broadcaster.
type Watcher interface {
	// Stop stops delivering events to the handler; events still buffered
	// for it are dropped.
	Stop()
	// Done is closed when the handler's goroutine has returned (after Stop
	// or Shutdown, once the handler call in progress, if any, returns).
	Done() <-chan struct{}
}

// BroadcasterOption configures NewBroadcaster.
type BroadcasterOption func(*broadcasterConfig)

type broadcasterConfig struct {
	ctx           context.Context
	clock         clock.Clock
	logger        *slog.Logger
	correlator    CorrelatorOptions
	sleepDuration time.Duration
	maxTries      int
	queueLength   int
	scheme        *runtime.Scheme
	rand          func() float64
	writers       int
}

// WithContext ties the broadcaster to ctx: when it ends, the broadcaster
// shuts down.
func WithContext(ctx context.Context) BroadcasterOption {
	return func(c *broadcasterConfig) { c.ctx = ctx }
}

// WithClock sets the clock for event timestamps, the correlator and retry
// waits (default: real).
func WithClock(cl clock.Clock) BroadcasterOption {
	return func(c *broadcasterConfig) { c.clock = cl }
}

// WithLogger sets the logger for the broadcaster's own messages (default
// slog.Default()).
func WithLogger(l *slog.Logger) BroadcasterOption {
	return func(c *broadcasterConfig) { c.logger = l }
}

// WithCorrelatorOptions tunes the correlator of StartRecordingToSink.
func WithCorrelatorOptions(o CorrelatorOptions) BroadcasterOption {
	return func(c *broadcasterConfig) { c.correlator = o }
}

// WithSleepDuration sets the wait between tries to write an event
// (DefaultSleepDuration).
func WithSleepDuration(d time.Duration) BroadcasterOption {
	return func(c *broadcasterConfig) { c.sleepDuration = d }
}

// WithMaxTries sets how often an event is tried (DefaultMaxTries).
func WithMaxTries(n int) BroadcasterOption {
	return func(c *broadcasterConfig) { c.maxTries = n }
}

// WithQueueLength bounds the incoming queue and each watcher's buffer
// (DefaultQueueLength).
func WithQueueLength(n int) BroadcasterOption {
	return func(c *broadcasterConfig) { c.queueLength = n }
}

// WithConcurrentWrites lets StartRecordingToSink write up to n events at
// once (n < 2: one at a time, as client-go's tools/record). Correlation
// (aggregation, deduplication, spam filter) still sees the events in
// recording order; only the API calls overlap, as upstream's
// events.k8s.io library (kube-scheduler's) writes each event in its own
// goroutine: a component recording hundreds of events a second (a
// scheduler's Scheduled events) keeps up with them instead of dropping
// most once its queue is full. Writes in flight are abandoned when the
// broadcaster shuts down.
func WithConcurrentWrites(n int) BroadcasterOption {
	return func(c *broadcasterConfig) { c.writers = n }
}

// WithScheme lets recorders find the kind of typed objects that carry no
// TypeMeta (beyond the built-in types the client knows).
func WithScheme(s *runtime.Scheme) BroadcasterOption {
	return func(c *broadcasterConfig) { c.scheme = s }
}

// WithRand sets the source of the random first retry wait (a number in
// [0, 1); default math/rand/v2.Float64).
func WithRand(f func() float64) BroadcasterOption {
	return func(c *broadcasterConfig) { c.rand = f }
}

// broadcaster is the EventBroadcaster: recorders put events on a bounded
// incoming queue without blocking; one goroutine copies each to every
// watcher's bounded buffer without blocking; each watcher's goroutine runs
// its handler.
type broadcaster struct {
	cfg      broadcasterConfig
	ctx      context.Context
	cancel   context.CancelFunc
	incoming chan *corev1.Event
	loopDone chan struct{}
	names    *nameGenerator

	mu       sync.Mutex
	watchers map[*watcher]struct{}
}

// NewBroadcaster returns a running broadcaster.
func NewBroadcaster(opts ...BroadcasterOption) EventBroadcaster {
	cfg := broadcasterConfig{ctx: context.Background(), sleepDuration: DefaultSleepDuration, maxTries: DefaultMaxTries, queueLength: DefaultQueueLength}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.clock == nil {
		cfg.clock = clock.Real{}
	}
	if cfg.logger == nil {
		cfg.logger = slog.Default()
	}
	if cfg.correlator.Clock == nil {
		cfg.correlator.Clock = cfg.clock
	}
	if cfg.maxTries < 1 {
		cfg.maxTries = 1
	}
	if cfg.queueLength < 1 {
		cfg.queueLength = DefaultQueueLength
	}
	if cfg.rand == nil {
		cfg.rand = rand.Float64
	}
	b := &broadcaster{
		cfg:      cfg,
		incoming: make(chan *corev1.Event, cfg.queueLength),
		loopDone: make(chan struct{}),
		names:    &nameGenerator{},
		watchers: map[*watcher]struct{}{},
	}
	b.ctx, b.cancel = context.WithCancel(cfg.ctx)
	go b.loop()
	return b
}

// action queues an event for the watchers; false if the queue is full or
// the broadcaster is shut down (the event is dropped).
func (b *broadcaster) action(e *corev1.Event) bool {
	if b.ctx.Err() != nil {
		return false
	}
	select {
	case b.incoming <- e:
		return true
	default:
		return false
	}
}

func (b *broadcaster) loop() {
	defer close(b.loopDone)
	for {
		select {
		case <-b.ctx.Done():
			return
		case e := <-b.incoming:
			b.distribute(e)
		}
	}
}

// distribute gives every watcher its own copy of e, dropping it for
// watchers whose buffer is full.
func (b *broadcaster) distribute(e *corev1.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for w := range b.watchers {
		select {
		case w.events <- e.DeepCopy():
		default:
			b.cfg.logger.Debug("event watcher is behind, dropping event", "object", e.InvolvedObject.Name, "reason", e.Reason)
		}
	}
}

func (b *broadcaster) Shutdown() {
	b.cancel()
	<-b.loopDone
}

func (b *broadcaster) StartEventWatcher(handler func(*corev1.Event)) Watcher {
	w := &watcher{b: b, events: make(chan *corev1.Event, b.cfg.queueLength), stop: make(chan struct{}), done: make(chan struct{})}
	b.mu.Lock()
	if b.ctx.Err() != nil {
		b.mu.Unlock()
		close(w.done)
		return w
	}
	b.watchers[w] = struct{}{}
	b.mu.Unlock()
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			case <-b.ctx.Done():
				return
			case e := <-w.events:
				handler(e)
			}
		}
	}()
	return w
}

func (b *broadcaster) StartRecordingToSink(sink EventSink) Watcher {
	correlator := NewEventCorrelatorWithOptions(b.cfg.correlator)
	correlator.names = b.names
	if b.cfg.writers < 2 {
		return b.StartEventWatcher(func(e *corev1.Event) { b.recordToSink(sink, e, correlator) })
	}
	slots := make(chan struct{}, b.cfg.writers)
	return b.StartEventWatcher(func(e *corev1.Event) {
		result := b.correlate(e, correlator)
		if result == nil {
			return
		}
		select {
		case slots <- struct{}{}:
		case <-b.ctx.Done():
			return
		}
		go func() {
			defer func() { <-slots }()
			b.write(sink, result, correlator)
		}()
	})
}

func (b *broadcaster) StartLogging(logf func(format string, args ...any)) Watcher {
	return b.StartEventWatcher(func(e *corev1.Event) {
		logf("Event(%#v): type: '%v' reason: '%v' %v", e.InvolvedObject, e.Type, e.Reason, e.Message)
	})
}

func (b *broadcaster) StartStructuredLogging(logger *slog.Logger, level slog.Level) Watcher {
	return b.StartEventWatcher(func(e *corev1.Event) {
		o := e.InvolvedObject
		name := o.Name
		if o.Namespace != "" {
			name = o.Namespace + "/" + o.Name
		}
		logger.Log(b.ctx, level, "Event occurred", "object", name, "fieldPath", o.FieldPath,
			"kind", o.Kind, "apiVersion", o.APIVersion, "type", e.Type, "reason", e.Reason, "message", e.Message)
	})
}

func (b *broadcaster) NewRecorder(source corev1.EventSource) EventRecorder {
	return &recorder{b: b, source: source}
}

// recordToSink correlates e and writes the result, retrying failures that
// may pass (not API rejections) up to maxTries times.
func (b *broadcaster) recordToSink(sink EventSink, e *corev1.Event, correlator *EventCorrelator) {
	if result := b.correlate(e, correlator); result != nil {
		b.write(sink, result, correlator)
	}
}

// correlate runs e through the correlator: nil when nothing is to be
// written.
func (b *broadcaster) correlate(e *corev1.Event, correlator *EventCorrelator) *EventCorrelateResult {
	result, err := correlator.EventCorrelate(e)
	if err != nil {
		b.cfg.logger.Error("event correlation failed", "err", err)
	}
	if result == nil || result.Skip {
		return nil
	}
	return result
}

// write writes a correlated event, retrying failures that may pass.
func (b *broadcaster) write(sink EventSink, result *EventCorrelateResult, correlator *EventCorrelator) {
	ev := result.Event
	for tries := 1; ; tries++ {
		if b.writeEvent(sink, ev, result.Patch, correlator) {
			return
		}
		if tries >= b.cfg.maxTries {
			b.cfg.logger.Error("unable to write event (retry limit exceeded)", "event", eventRef(ev))
			return
		}
		delay := b.cfg.sleepDuration
		if tries == 1 {
			delay = time.Duration(float64(delay) * b.cfg.rand())
		}
		t := b.cfg.clock.NewTimer(delay)
		select {
		case <-b.ctx.Done():
			t.Stop()
			b.cfg.logger.Error("unable to write event (broadcaster is shut down)", "event", eventRef(ev))
			return
		case <-t.C():
		}
	}
}

// writeEvent writes one event: a repeat (count > 1) is patched, and
// created if the old event is gone. It reports whether to stop trying.
func (b *broadcaster) writeEvent(sink EventSink, ev *corev1.Event, patch []byte, correlator *EventCorrelator) bool {
	var written *corev1.Event
	var err error
	update := ev.Count > 1
	if update {
		written, err = sink.Patch(b.ctx, ev, patch)
	}
	if !update || apierrors.IsNotFound(err) {
		ev.ResourceVersion = ""
		written, err = sink.Create(b.ctx, ev)
	}
	if err == nil {
		correlator.UpdateState(written)
		return true
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		// The server answered: retrying will not change its mind.
		if apierrors.IsAlreadyExists(err) || apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			b.cfg.logger.Debug("server rejected event (will not retry)", "event", eventRef(ev), "err", err)
		} else {
			b.cfg.logger.Error("server rejected event (will not retry)", "event", eventRef(ev), "err", err)
		}
		return true
	}
	b.cfg.logger.Error("unable to write event (may retry after sleeping)", "event", eventRef(ev), "err", err)
	return false
}

func eventRef(e *corev1.Event) string {
	return fmt.Sprintf("%s/%s (%s %s: %s)", e.Namespace, e.Name, e.Type, e.Reason, e.Message)
}

// watcher is one handler's registration.
type watcher struct {
	b      *broadcaster
	events chan *corev1.Event
	stop   chan struct{}
	once   sync.Once
	done   chan struct{}
}

func (w *watcher) Stop() {
	w.once.Do(func() {
		w.b.mu.Lock()
		delete(w.b.watchers, w)
		w.b.mu.Unlock()
		close(w.stop)
	})
}

func (w *watcher) Done() <-chan struct{} { return w.done }
