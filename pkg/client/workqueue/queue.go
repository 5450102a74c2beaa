package workqueue

import (
	"runtime"
	"sync"
	"time"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// TypedInterface is a work queue of items of type T. See the package
// documentation for the invariants every implementation in this package keeps.
type TypedInterface[T comparable] interface {
	// Add marks item as needing processing.
	Add(item T)
	// Len is the number of items waiting to be handed out by Get.
	Len() int
	// Get blocks until an item can be processed and returns it, marking it
	// processing; the caller must call Done with it. shutdown is true once
	// the queue is shutting down and empty.
	Get() (item T, shutdown bool)
	// Done marks item as done processing; if it was added again meanwhile it
	// is queued again.
	Done(item T)
	// ShutDown makes the queue ignore new items and Get return shutdown=true
	// once the queued items are handed out.
	ShutDown()
	// ShutDownWithDrain is ShutDown that also waits until no item is
	// processing.
	ShutDownWithDrain()
	// ShuttingDown reports whether ShutDown or ShutDownWithDrain was called.
	ShuttingDown() bool
}

// TypedQueueConfig configures NewTypedWithConfig.
type TypedQueueConfig[T comparable] struct {
	// Name labels the queue's metrics; without a name there are no metrics.
	Name string
	// MetricsProvider creates the queue's metrics; nil means none.
	MetricsProvider MetricsProvider
	// Clock is the queue's time source; nil means clock.Real.
	Clock clock.Clock
}

// defaultUnfinishedWorkUpdatePeriod is how often (on the queue's clock) the
// unfinished-work metrics are refreshed, as in client-go.
const defaultUnfinishedWorkUpdatePeriod = 500 * time.Millisecond

// Per-item state bits in Typed.state. An item absent from the map is neither.
const (
	stateDirty      uint8 = 1 << iota // needs processing (and is queued unless processing)
	stateProcessing                   // handed out by Get, not yet Done
)

// initialCapacity pre-sizes the ring buffer and state map.
const initialCapacity = 64

// Typed is the basic work queue (client-go's workqueue.Typed). Create it with
// NewTyped or NewTypedWithConfig.
type Typed[T comparable] struct {
	// mu guards everything below. Add, Get and Done take it through
	// TryLock/lockSlow (see lockSlow), the rest with mu.Lock.
	mu sync.Mutex
	// spinRounds is how many times lockSlow re-tries before blocking:
	// spinRounds when GOMAXPROCS was above 1 at construction (the holder of
	// a contended lock is then likely running), else 0. pause, if set,
	// replaces spinWait as the busy-wait step (tests observe the spin
	// through it).
	spinRounds int
	pause      func(int)
	// cond is signalled when an item is queued or the queue shuts down; Get
	// waits on it.
	cond sync.Cond
	// drained is broadcast when processing drops to zero during a drain, or
	// on ShutDown; ShutDownWithDrain waits on it.
	drained sync.Cond

	// queue holds the dirty, non-processing items in hand-out order.
	queue ring[T]
	// state holds the dirty/processing bits of every item that has either
	// (client-go's dirty and processing sets, merged so that each operation
	// costs one lookup).
	state      map[T]uint8
	processing int

	shuttingDown bool
	drain        bool

	metrics        *queueMetrics[T] // nil when metrics are off
	stopUnfinished chan struct{}    // closed on shutdown; nil when metrics are off
}

// NewTyped returns a queue without metrics on the real clock.
func NewTyped[T comparable]() *Typed[T] {
	return NewTypedWithConfig(TypedQueueConfig[T]{})
}

// NewTypedWithConfig returns a queue configured by config.
func NewTypedWithConfig[T comparable](config TypedQueueConfig[T]) *Typed[T] {
	return newTyped(config, defaultUnfinishedWorkUpdatePeriod)
}

func newTyped[T comparable](config TypedQueueConfig[T], updatePeriod time.Duration) *Typed[T] {
	clk := config.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	q := &Typed[T]{
		queue: newRing[T](initialCapacity),
		state: make(map[T]uint8, initialCapacity),
	}
	if runtime.GOMAXPROCS(0) > 1 {
		q.spinRounds = spinRounds
	}
	q.cond.L = &q.mu
	q.drained.L = &q.mu
	q.metrics = newQueueMetrics[T](config.Name, config.MetricsProvider, clk)
	if q.metrics != nil {
		// The ticker is made here, not in the goroutine, so that a Fake clock
		// stepped right after construction already drives it.
		t := clk.NewTicker(updatePeriod)
		q.stopUnfinished = make(chan struct{})
		go q.updateUnfinishedWorkLoop(t, q.stopUnfinished)
	}
	return q
}

// Add marks item as needing processing.
func (q *Typed[T]) Add(item T) {
	if !q.mu.TryLock() { // lockSlow's fast path, inlined
		q.lockSlow()
	}
	if q.shuttingDown {
		q.mu.Unlock()
		return
	}
	s := q.state[item]
	if s&stateDirty != 0 {
		q.mu.Unlock()
		return
	}
	if q.metrics != nil {
		q.metrics.add(item)
	}
	q.state[item] = s | stateDirty
	if s&stateProcessing != 0 {
		// Done queues it again.
		q.mu.Unlock()
		return
	}
	q.queue.push(item)
	q.mu.Unlock()
	// Signalled after unlocking so the woken Get does not block on the lock.
	q.cond.Signal()
}

// Len returns the number of items waiting to be handed out. Items that are
// processing, even if they were added again, are not counted.
func (q *Typed[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queue.n
}

// Get blocks until an item is queued and hands it out, marking it processing.
// When the queue is shutting down and empty it returns the zero T and
// shutdown=true.
func (q *Typed[T]) Get() (item T, shutdown bool) {
	if !q.mu.TryLock() { // lockSlow's fast path, inlined
		q.lockSlow()
	}
	defer q.mu.Unlock()
	for q.queue.n == 0 && !q.shuttingDown {
		q.cond.Wait()
	}
	if q.queue.n == 0 {
		return item, true
	}
	item = q.queue.pop()
	if q.metrics != nil {
		q.metrics.get(item)
	}
	q.state[item] = stateProcessing // no longer dirty
	q.processing++
	return item, false
}

// Done marks item as done processing. If it was added while processing it is
// queued again. Done of an item that is not processing is ignored.
func (q *Typed[T]) Done(item T) {
	if !q.mu.TryLock() { // lockSlow's fast path, inlined
		q.lockSlow()
	}
	s := q.state[item]
	if s&stateProcessing == 0 {
		q.mu.Unlock()
		return
	}
	if q.metrics != nil {
		q.metrics.done(item)
	}
	q.processing--
	requeue := s&stateDirty != 0
	if requeue {
		q.state[item] = stateDirty
		q.queue.push(item)
	} else {
		delete(q.state, item)
	}
	if q.processing == 0 && q.drain {
		q.drained.Broadcast()
	}
	q.mu.Unlock()
	if requeue {
		q.cond.Signal()
	}
}

// lockSlow takes q.mu for Add, Get and Done (the operations workers
// hammer) when TryLock failed.
//
// sync.Mutex parks a goroutine that finds it held (it spins only while the
// goroutine's P has nothing else to run, which is never the case with more
// workers than Ps), and every Unlock then wakes a parked waiter, which
// usually finds the mutex taken again and parks anew. With critical
// sections of a few tens of nanoseconds, that park/wake churn is what a busy
// queue spends its time on: 8 workers on 2 cores took ~500 ns per
// Add/Get/Done cycle against ~65 ns for one worker. So lockSlow busy-waits
// first, re-trying at exponentially growing intervals (from a few hundred
// nanoseconds): the holder's P keeps the mutex, and the queue's cache lines,
// for a run of operations instead of handing them over on every one, and
// waiters stay off the mutex's wait list while the holder is running. Only
// after a bounded spin (some tens of microseconds: the holder was probably
// descheduled) does it block in mu.Lock. With GOMAXPROCS=1 it blocks at
// once.
func (q *Typed[T]) lockSlow() {
	d := spinFirst
	for range q.spinRounds {
		if q.pause == nil {
			for i := range d {
				spinWait(i)
			}
		} else {
			for i := range d {
				q.pause(i)
			}
		}
		if q.mu.TryLock() {
			return
		}
		d = min(2*d, spinMax)
	}
	q.mu.Lock()
}

const (
	spinFirst  = 1 << 8  // busy-wait steps before the first retry
	spinMax    = 1 << 14 // cap on the steps between retries
	spinRounds = 8       // retries before blocking
)

// spinWait is one busy-wait step: a call the compiler cannot remove, which
// unlike a retry does not touch the mutex's cache line.
//
//go:noinline
func spinWait(int) {}

// ShutDown makes Add a no-op and Get return shutdown=true once the queue is
// empty. It does not wait for processing items; it releases a pending
// ShutDownWithDrain.
func (q *Typed[T]) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.drain = false
	q.shutdownLocked()
	q.drained.Broadcast()
}

// ShutDownWithDrain shuts the queue down like ShutDown, then blocks until no
// item is processing (every handed-out item is Done) or ShutDown is called.
// Items still queued are not waited for; workers calling Get still receive
// them.
func (q *Typed[T]) ShutDownWithDrain() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.drain = true
	q.shutdownLocked()
	for q.processing != 0 && q.drain {
		q.drained.Wait()
	}
}

func (q *Typed[T]) shutdownLocked() {
	if !q.shuttingDown {
		q.shuttingDown = true
		if q.stopUnfinished != nil {
			close(q.stopUnfinished)
		}
	}
	q.cond.Broadcast()
}

// ShuttingDown reports whether the queue is shutting down.
func (q *Typed[T]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}

// updateUnfinishedWorkLoop refreshes the unfinished-work metrics on every
// tick until the queue shuts down.
func (q *Typed[T]) updateUnfinishedWorkLoop(t clock.Ticker, stop <-chan struct{}) {
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C():
		}
		q.mu.Lock()
		if !q.shuttingDown {
			q.metrics.updateUnfinishedWork()
		}
		q.mu.Unlock()
	}
}

// ring is a FIFO on a power-of-two circular buffer; it grows by doubling and
// never allocates per item once grown.
type ring[T any] struct {
	buf  []T
	head int
	n    int
}

func newRing[T any](capacity int) ring[T] {
	c := 1
	for c < capacity {
		c <<= 1
	}
	return ring[T]{buf: make([]T, c)}
}

func (r *ring[T]) push(v T) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = v
	r.n++
}

func (r *ring[T]) pop() T {
	var zero T
	v := r.buf[r.head]
	r.buf[r.head] = zero // drop the reference
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	return v
}

func (r *ring[T]) grow() {
	c := 2 * len(r.buf)
	if c == 0 {
		c = initialCapacity
	}
	nb := make([]T, c)
	k := copy(nb, r.buf[r.head:])
	copy(nb[k:], r.buf[:r.head])
	r.buf = nb
	r.head = 0
}
