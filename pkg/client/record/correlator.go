package record

import (
	"container/list"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// client-go's correlator defaults.
const (
	// DefaultLRUCacheSize bounds each of the correlator's caches.
	DefaultLRUCacheSize = 4096
	// DefaultAggregateMaxEvents distinct messages for one aggregate key
	// make the correlator emit combined events.
	DefaultAggregateMaxEvents = 10
	// DefaultAggregateInterval is how long an aggregate key is remembered
	// after its last event.
	DefaultAggregateInterval = 10 * time.Minute
	// DefaultSpamBurst events per source+object pass the spam filter at
	// once ...
	DefaultSpamBurst = 25
	// ... and then DefaultSpamQPS per second (one per 5 minutes).
	DefaultSpamQPS = 1. / 300.
)

// EventAggregatorKeyFunc returns the key that groups similar events and the
// key (usually the message) that tells them apart.
type EventAggregatorKeyFunc func(event *corev1.Event) (aggregateKey, localKey string)

// EventAggregatorMessageFunc returns the message of a combined event.
type EventAggregatorMessageFunc func(event *corev1.Event) string

// EventSpamKeyFunc returns the key the spam filter rate-limits by.
type EventSpamKeyFunc func(event *corev1.Event) string

// EventAggregatorByReasonFunc groups events by source, involved object,
// type, reason and reporter; the message tells them apart.
func EventAggregatorByReasonFunc(e *corev1.Event) (string, string) {
	return strings.Join([]string{
		e.Source.Component, e.Source.Host,
		e.InvolvedObject.Kind, e.InvolvedObject.Namespace, e.InvolvedObject.Name,
		string(e.InvolvedObject.UID), e.InvolvedObject.APIVersion,
		e.Type, e.Reason, e.ReportingController, e.ReportingInstance,
	}, ""), e.Message
}

// EventAggregatorByReasonMessageFunc prefixes the message of a combined
// event.
func EventAggregatorByReasonMessageFunc(e *corev1.Event) string {
	return "(combined from similar events): " + e.Message
}

// getEventKey identifies identical events (the message included).
func getEventKey(e *corev1.Event) string {
	return strings.Join([]string{
		e.Source.Component, e.Source.Host,
		e.InvolvedObject.Kind, e.InvolvedObject.Namespace, e.InvolvedObject.Name,
		e.InvolvedObject.FieldPath, string(e.InvolvedObject.UID), e.InvolvedObject.APIVersion,
		e.Type, e.Reason, e.Message,
	}, "")
}

// getSpamKey identifies a source+object pair (and event type).
func getSpamKey(e *corev1.Event) string {
	return strings.Join([]string{
		e.Source.Component, e.Source.Host,
		e.InvolvedObject.Kind, e.InvolvedObject.Namespace, e.InvolvedObject.Name,
		string(e.InvolvedObject.UID), e.InvolvedObject.APIVersion, e.Type,
	}, "")
}

// CorrelatorOptions tunes an EventCorrelator; zero fields take client-go's
// defaults.
type CorrelatorOptions struct {
	// LRUCacheSize bounds each cache (DefaultLRUCacheSize).
	LRUCacheSize int
	// BurstSize and QPS are the spam filter's token bucket per spam key
	// (DefaultSpamBurst, DefaultSpamQPS).
	BurstSize int
	QPS       float64
	// KeyFunc groups similar events (EventAggregatorByReasonFunc).
	KeyFunc EventAggregatorKeyFunc
	// MessageFunc makes a combined event's message
	// (EventAggregatorByReasonMessageFunc).
	MessageFunc EventAggregatorMessageFunc
	// MaxEvents distinct messages in a group start aggregation
	// (DefaultAggregateMaxEvents).
	MaxEvents int
	// MaxInterval forgets a group this long after its last event
	// (DefaultAggregateInterval).
	MaxInterval time.Duration
	// Clock (the broadcaster's, or the real clock).
	Clock clock.Clock
	// SpamKeyFunc is what the spam filter limits by (source + object +
	// type).
	SpamKeyFunc EventSpamKeyFunc
}

func (o CorrelatorOptions) withDefaults() CorrelatorOptions {
	if o.LRUCacheSize <= 0 {
		o.LRUCacheSize = DefaultLRUCacheSize
	}
	if o.BurstSize <= 0 {
		o.BurstSize = DefaultSpamBurst
	}
	if o.QPS <= 0 {
		o.QPS = DefaultSpamQPS
	}
	if o.KeyFunc == nil {
		o.KeyFunc = EventAggregatorByReasonFunc
	}
	if o.MessageFunc == nil {
		o.MessageFunc = EventAggregatorByReasonMessageFunc
	}
	if o.MaxEvents <= 0 {
		o.MaxEvents = DefaultAggregateMaxEvents
	}
	if o.MaxInterval <= 0 {
		o.MaxInterval = DefaultAggregateInterval
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.SpamKeyFunc == nil {
		o.SpamKeyFunc = getSpamKey
	}
	return o
}

// EventCorrelator decides what happens to each event before it is written:
// aggregation of similar events, deduplication of identical ones, and the
// spam filter, in that order (client-go's EventCorrelator).
type EventCorrelator struct {
	opts  CorrelatorOptions
	names *nameGenerator // shared with the broadcaster's recorders

	mu         sync.Mutex
	aggregates *lru[*aggregateRecord] // aggregate key → distinct local keys
	observed   *lru[eventLog]         // event key → what was written for it
	spam       *lru[*rate.Limiter]    // spam key → token bucket
}

// EventCorrelateResult is the correlator's verdict on an event.
type EventCorrelateResult struct {
	// Event is what to write (possibly a combined event, or one with a
	// higher count).
	Event *corev1.Event
	// Patch, when Event.Count > 1, updates the existing event (count,
	// lastTimestamp, message).
	Patch []byte
	// Skip drops the event (spam).
	Skip bool
}

// NewEventCorrelator returns a correlator with client-go's defaults.
func NewEventCorrelator(c clock.Clock) *EventCorrelator {
	return NewEventCorrelatorWithOptions(CorrelatorOptions{Clock: c})
}

// NewEventCorrelatorWithOptions returns a correlator with opts.
func NewEventCorrelatorWithOptions(opts CorrelatorOptions) *EventCorrelator {
	opts = opts.withDefaults()
	return &EventCorrelator{
		opts:       opts,
		names:      &nameGenerator{},
		aggregates: newLRU[*aggregateRecord](opts.LRUCacheSize),
		observed:   newLRU[eventLog](opts.LRUCacheSize),
		spam:       newLRU[*rate.Limiter](opts.LRUCacheSize),
	}
}

// EventCorrelate runs an event through aggregation, deduplication and the
// spam filter. It does not modify e.
func (c *EventCorrelator) EventCorrelate(e *corev1.Event) (*EventCorrelateResult, error) {
	if e == nil {
		return nil, errors.New("event is nil")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.opts.Clock.Now()
	aggregated, key := c.aggregate(e, now)
	observed, patch, err := c.observe(aggregated, key)
	if c.filtered(observed, now) {
		return &EventCorrelateResult{Skip: true}, nil
	}
	return &EventCorrelateResult{Event: observed, Patch: patch}, err
}

// UpdateState records what the server stored for an event written to it
// (its name, count and resourceVersion) for the next deduplication.
func (c *EventCorrelator) UpdateState(e *corev1.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.observed.add(getEventKey(e), logOf(e))
}

// aggregateRecord is a group of similar events: the distinct local keys
// seen (with the order they were last seen in) and when the last came.
type aggregateRecord struct {
	localKeys map[string]uint64
	seq       uint64
	last      time.Time
}

// aggregate returns e, or a combined event once the group of events
// similar to e has MaxEvents distinct messages, with the key to
// deduplicate the result by.
func (c *EventCorrelator) aggregate(e *corev1.Event, now time.Time) (*corev1.Event, string) {
	aggregateKey, localKey := c.opts.KeyFunc(e)
	rec, ok := c.aggregates.get(aggregateKey)
	if !ok || now.Sub(rec.last) > c.opts.MaxInterval {
		rec = &aggregateRecord{localKeys: map[string]uint64{}}
		c.aggregates.add(aggregateKey, rec)
	}
	rec.seq++
	rec.localKeys[localKey] = rec.seq
	rec.last = now
	if len(rec.localKeys) < c.opts.MaxEvents {
		return e, getEventKey(e)
	}
	// Keep the group just below the threshold, so that every further
	// distinct message is combined too (client-go drops an arbitrary key;
	// we drop the least recently seen).
	oldest, oldestSeq := "", rec.seq+1
	for k, s := range rec.localKeys {
		if s < oldestSeq {
			oldest, oldestSeq = k, s
		}
	}
	delete(rec.localKeys, oldest)
	t := metav1.NewTime(now)
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:      c.names.next(e.InvolvedObject.Name, now),
			Namespace: e.Namespace,
		},
		InvolvedObject:      e.InvolvedObject,
		Reason:              e.Reason,
		Message:             c.opts.MessageFunc(e),
		Source:              e.Source,
		FirstTimestamp:      t,
		LastTimestamp:       t,
		Count:               1,
		Type:                e.Type,
		ReportingController: e.ReportingController,
		ReportingInstance:   e.ReportingInstance,
	}, aggregateKey
}

// eventLog is what was last written under an event key.
type eventLog struct {
	count           int32
	firstTimestamp  metav1.Time
	name            string
	resourceVersion string
}

func logOf(e *corev1.Event) eventLog {
	return eventLog{count: e.Count, firstTimestamp: e.FirstTimestamp, name: e.Name, resourceVersion: e.ResourceVersion}
}

// observe deduplicates: an event whose key was written before becomes an
// update of that event (same name, first timestamp; count+1) with a patch.
func (c *EventCorrelator) observe(e *corev1.Event, key string) (*corev1.Event, []byte, error) {
	out := e.DeepCopy()
	var patch []byte
	var err error
	if last, ok := c.observed.get(key); ok && last.count > 0 {
		out.Name = last.name
		out.ResourceVersion = last.resourceVersion
		out.FirstTimestamp = last.firstTimestamp
		out.Count = last.count + 1
		patch, err = json.Marshal(struct {
			Count         int32       `json:"count"`
			LastTimestamp metav1.Time `json:"lastTimestamp"`
			Message       string      `json:"message"`
		}{out.Count, out.LastTimestamp, out.Message})
	}
	c.observed.add(key, logOf(out))
	return out, patch, err
}

// filtered reports whether e is spam: its source+object token bucket is
// empty.
func (c *EventCorrelator) filtered(e *corev1.Event, now time.Time) bool {
	key := c.opts.SpamKeyFunc(e)
	lim, ok := c.spam.get(key)
	if !ok {
		lim = rate.NewLimiter(rate.Limit(c.opts.QPS), c.opts.BurstSize)
		c.spam.add(key, lim)
	}
	return !lim.AllowN(now, 1)
}

// lru is a size-bounded map that evicts the least recently used key. Not
// safe for concurrent use.
type lru[V any] struct {
	max   int
	order *list.List // of *lruEntry[V], most recent first
	items map[string]*list.Element
}

type lruEntry[V any] struct {
	key string
	val V
}

func newLRU[V any](max int) *lru[V] {
	return &lru[V]{max: max, order: list.New(), items: map[string]*list.Element{}}
}

func (l *lru[V]) get(key string) (V, bool) {
	el, ok := l.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	l.order.MoveToFront(el)
	return el.Value.(*lruEntry[V]).val, true
}

func (l *lru[V]) add(key string, val V) {
	if el, ok := l.items[key]; ok {
		el.Value.(*lruEntry[V]).val = val
		l.order.MoveToFront(el)
		return
	}
	l.items[key] = l.order.PushFront(&lruEntry[V]{key: key, val: val})
	if l.order.Len() > l.max {
		oldest := l.order.Back()
		l.order.Remove(oldest)
		delete(l.items, oldest.Value.(*lruEntry[V]).key)
	}
}

func (l *lru[V]) len() int { return l.order.Len() }
