package workqueue

import (
	"sync"
	"time"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// TypedDelayingInterface is a queue that can add an item after a delay.
type TypedDelayingInterface[T comparable] interface {
	TypedInterface[T]
	// AddAfter adds item once duration has passed on the queue's clock, or
	// at once if duration <= 0. An item waits at most once: adding it again
	// while it waits keeps the earlier of the two ready times.
	AddAfter(item T, duration time.Duration)
}

// TypedDelayingQueueConfig configures NewTypedDelayingQueueWithConfig.
type TypedDelayingQueueConfig[T comparable] struct {
	// Name labels the queue's metrics; without a name there are no metrics.
	Name string
	// MetricsProvider creates the queue's metrics; nil means none.
	MetricsProvider MetricsProvider
	// Clock is the queue's time source; nil means clock.Real.
	Clock clock.Clock
	// Queue is the queue items are added to when ready; nil means a new
	// Typed queue with the same Name, MetricsProvider and Clock.
	Queue TypedInterface[T]
}

// NewTypedDelayingQueue returns a delaying queue without metrics on the real
// clock.
func NewTypedDelayingQueue[T comparable]() TypedDelayingInterface[T] {
	return NewTypedDelayingQueueWithConfig(TypedDelayingQueueConfig[T]{})
}

// NewTypedDelayingQueueWithConfig returns a delaying queue configured by
// config. It starts one goroutine, which ends on ShutDown or
// ShutDownWithDrain.
func NewTypedDelayingQueueWithConfig[T comparable](config TypedDelayingQueueConfig[T]) TypedDelayingInterface[T] {
	clk := config.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	inner := config.Queue
	if inner == nil {
		inner = NewTypedWithConfig(TypedQueueConfig[T]{
			Name:            config.Name,
			MetricsProvider: config.MetricsProvider,
			Clock:           clk,
		})
	}
	q := &delayingType[T]{
		TypedInterface: inner,
		clock:          clk,
		retries:        newRetriesMetric(config.Name, config.MetricsProvider),
		index:          make(map[T]int, initialCapacity),
		waiting:        make([]waitFor[T], 0, initialCapacity),
		wake:           make(chan struct{}, 1),
		stopCh:         make(chan struct{}),
		loopDone:       make(chan struct{}),
	}
	switch clk.(type) {
	case clock.Real, *clock.Real:
		q.realClock = true
	}
	go q.waitingLoop()
	return q
}

// waitFor is an item waiting in the heap until readyAt.
type waitFor[T comparable] struct {
	item    T
	readyAt time.Time
	seq     uint64 // insertion order, to break ties
}

// delayingType wraps a TypedInterface with a heap of waiting items.
type delayingType[T comparable] struct {
	TypedInterface[T]

	clock     clock.Clock
	realClock bool
	retries   CounterMetric // nil when metrics are off

	mu      sync.Mutex
	waiting []waitFor[T] // min-heap on (readyAt, seq)
	index   map[T]int    // item -> position in waiting
	seq     uint64
	stopped bool

	wake     chan struct{} // cap 1: the earliest ready time moved earlier
	stopCh   chan struct{}
	stopOnce sync.Once
	loopDone chan struct{} // closed when waitingLoop returns
}

// AddAfter adds item after duration (see TypedDelayingInterface).
func (q *delayingType[T]) AddAfter(item T, duration time.Duration) {
	if q.ShuttingDown() {
		return
	}
	if q.retries != nil {
		q.retries.Inc()
	}
	if duration <= 0 {
		q.Add(item)
		return
	}
	readyAt := q.clock.Now().Add(duration)
	q.mu.Lock()
	if q.stopped {
		q.mu.Unlock()
		return
	}
	first := q.insertLocked(item, readyAt)
	q.mu.Unlock()
	if first {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
}

// ShutDown stops the waiting goroutine, drops the waiting items and shuts
// the queue down.
func (q *delayingType[T]) ShutDown() {
	q.stop()
	q.TypedInterface.ShutDown()
}

// ShutDownWithDrain stops the waiting goroutine, drops the waiting items and
// shuts the queue down, waiting for processing items to be Done.
func (q *delayingType[T]) ShutDownWithDrain() {
	q.stop()
	q.TypedInterface.ShutDownWithDrain()
}

func (q *delayingType[T]) stop() {
	q.stopOnce.Do(func() {
		q.mu.Lock()
		q.stopped = true
		clear(q.index)
		clear(q.waiting)
		q.waiting = q.waiting[:0]
		q.mu.Unlock()
		close(q.stopCh)
	})
}

// waitingLoop moves due items into the queue, then sleeps on one reusable
// timer until the earliest ready time or until AddAfter wakes it.
func (q *delayingType[T]) waitingLoop() {
	defer close(q.loopDone)
	var timer clock.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		var timerC <-chan time.Time
		for try := 0; ; try++ {
			now := q.clock.Now()
			wait, pending := q.flush(now)
			if !pending {
				// An armed timer is left to fire unread; that only causes one
				// spurious pass later.
				break
			}
			if timer == nil {
				timer = q.clock.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			timerC = timer.C()
			// Timers are armed relative to the clock's time at arming. If
			// the clock moved between reading now and arming (a Fake being
			// stepped concurrently), the timer would fire late: re-arm from
			// the new time. The real clock's drift here is negligible.
			if q.realClock || try == 2 || !q.clock.Now().After(now) {
				break
			}
		}
		select {
		case <-q.stopCh:
			return
		case <-q.wake:
		case <-timerC:
		}
	}
}

// flush adds every item ready at now to the queue and returns how long until
// the next one is ready, if any.
func (q *delayingType[T]) flush(now time.Time) (wait time.Duration, pending bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.stopped && len(q.waiting) > 0 {
		top := &q.waiting[0]
		if top.readyAt.After(now) {
			return top.readyAt.Sub(now), true
		}
		item := top.item
		q.removeTopLocked()
		q.TypedInterface.Add(item)
	}
	return 0, false
}

// insertLocked adds item to the heap, or moves its ready time earlier if it
// is already waiting. It reports whether item is now the first to be ready.
func (q *delayingType[T]) insertLocked(item T, readyAt time.Time) bool {
	if i, ok := q.index[item]; ok {
		if readyAt.Before(q.waiting[i].readyAt) {
			q.waiting[i].readyAt = readyAt
			return q.up(i) == 0
		}
		return false
	}
	q.seq++
	q.waiting = append(q.waiting, waitFor[T]{item: item, readyAt: readyAt, seq: q.seq})
	i := len(q.waiting) - 1
	q.index[item] = i
	return q.up(i) == 0
}

func (q *delayingType[T]) removeTopLocked() {
	h := q.waiting
	last := len(h) - 1
	delete(q.index, h[0].item)
	if last > 0 {
		h[0] = h[last]
		q.index[h[0].item] = 0
	}
	h[last] = waitFor[T]{} // drop references
	q.waiting = h[:last]
	if last > 0 {
		q.down(0)
	}
}

func (q *delayingType[T]) less(i, j int) bool {
	a, b := &q.waiting[i], &q.waiting[j]
	if a.readyAt.Equal(b.readyAt) {
		return a.seq < b.seq
	}
	return a.readyAt.Before(b.readyAt)
}

func (q *delayingType[T]) swap(i, j int) {
	h := q.waiting
	h[i], h[j] = h[j], h[i]
	q.index[h[i].item] = i
	q.index[h[j].item] = j
}

// up restores the heap from i towards the root and returns i's final index.
func (q *delayingType[T]) up(i int) int {
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.swap(i, p)
		i = p
	}
	return i
}

func (q *delayingType[T]) down(i int) {
	n := len(q.waiting)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && q.less(r, l) {
			m = r
		}
		if !q.less(m, i) {
			return
		}
		q.swap(i, m)
		i = m
	}
}
