package cache

import (
	"sync"
	"sync/atomic"
	"time"
)

// notificationKind says which handler method a notification is for.
type notificationKind uint8

const (
	addNotification notificationKind = iota
	updateNotification
	deleteNotification
)

// notification is one event for a handler, stored by value in the
// listeners' buffers (no allocation per event and handler).
type notification struct {
	kind            notificationKind
	isInInitialList bool // add only
	oldObj, newObj  any  // add: newObj; update: both; delete: oldObj
}

// ring is an unbounded FIFO on a growing circular buffer. Once drained it
// gives memory back beyond its initial capacity, so that a burst does not
// pin a large buffer for the handler's lifetime.
type ring[T any] struct {
	buf   []T
	head  int // index of the oldest element
	count int
}

const initialRingSize = 1024

func (r *ring[T]) len() int { return r.count }

func (r *ring[T]) push(v T) {
	if r.count == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.count)%len(r.buf)] = v
	r.count++
}

func (r *ring[T]) grow() {
	n := 2 * len(r.buf)
	if n == 0 {
		n = initialRingSize
	}
	buf := make([]T, n)
	// Unwrap into the new buffer, oldest first.
	k := copy(buf, r.buf[r.head:])
	copy(buf[k:], r.buf[:r.head])
	r.buf, r.head = buf, 0
}

// pop removes and returns the oldest element; ok is false if empty.
func (r *ring[T]) pop() (v T, ok bool) {
	if r.count == 0 {
		return v, false
	}
	var zero T
	v, r.buf[r.head] = r.buf[r.head], zero // drop the reference for the GC
	r.head = (r.head + 1) % len(r.buf)
	r.count--
	if r.count == 0 {
		r.head = 0
		if len(r.buf) > initialRingSize {
			r.buf = nil
		}
	}
	return v, true
}

// reset drops everything.
func (r *ring[T]) reset() { *r = ring[T]{} }

// processorListener relays notifications to one handler. The distributor
// appends to buf (never blocking: buf is unbounded) and one goroutine,
// run, takes them out in order and calls the handler, so a slow handler
// only delays itself.
//
// It also tracks the handler's sync: HasSynced is true once the informer
// has synced and every notification marked isInInitialList that was
// queued for this handler has been handled.
type processorListener struct {
	handler ResourceEventHandler

	mu      sync.Mutex
	cond    sync.Cond
	buf     ring[notification]
	stopped bool
	done    chan struct{} // closed when run returns

	pendingInitial  atomic.Int64 // initial-list adds queued but not yet handled
	upstreamSynced  atomic.Bool
	syncedOnce      sync.Once
	synced          chan struct{}
	requestedResync time.Duration // as asked for (after the 1s minimum)

	// Guarded by the processor's lock.
	resyncPeriod time.Duration // effective; 0 = never
	nextResync   time.Time
	syncing      bool // receives sync (resync and unchanged relist) updates
}

func newProcessorListener(handler ResourceEventHandler, requestedResync, resync time.Duration, now time.Time) *processorListener {
	p := &processorListener{
		handler:         handler,
		done:            make(chan struct{}),
		synced:          make(chan struct{}),
		requestedResync: requestedResync,
		resyncPeriod:    resync,
		nextResync:      now.Add(resync),
		syncing:         true,
	}
	p.cond.L = &p.mu
	return p
}

// add queues n. It never blocks.
func (p *processorListener) add(n notification) {
	if n.kind == addNotification && n.isInInitialList {
		p.pendingInitial.Add(1)
	}
	p.mu.Lock()
	if !p.stopped {
		p.buf.push(n)
		if p.buf.len() == 1 {
			p.cond.Signal()
		}
	}
	p.mu.Unlock()
}

// run delivers notifications until stop.
func (p *processorListener) run() {
	defer close(p.done)
	for {
		p.mu.Lock()
		for p.buf.len() == 0 && !p.stopped {
			p.cond.Wait()
		}
		if p.stopped {
			p.mu.Unlock()
			return
		}
		n, _ := p.buf.pop()
		p.mu.Unlock()

		switch n.kind {
		case addNotification:
			p.handler.OnAdd(n.newObj, n.isInInitialList)
			if n.isInInitialList {
				p.initialHandled()
			}
		case updateNotification:
			p.handler.OnUpdate(n.oldObj, n.newObj)
		case deleteNotification:
			p.handler.OnDelete(n.oldObj)
		}
	}
}

// stop makes run return after the current handler call; undelivered
// notifications are dropped.
func (p *processorListener) stop() {
	p.mu.Lock()
	p.stopped = true
	p.buf.reset()
	p.cond.Signal()
	p.mu.Unlock()
}

func (p *processorListener) pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.len()
}

func (p *processorListener) initialHandled() {
	if p.pendingInitial.Add(-1) == 0 && p.upstreamSynced.Load() {
		p.markSynced()
	}
}

// upstreamHasSynced is called once the informer has synced and all the
// initial notifications meant for this listener have been queued.
func (p *processorListener) upstreamHasSynced() {
	p.upstreamSynced.Store(true)
	if p.pendingInitial.Load() == 0 {
		p.markSynced()
	}
}

func (p *processorListener) markSynced() { p.syncedOnce.Do(func() { close(p.synced) }) }

// HasSynced is true once the informer has synced and this handler has
// handled every object of the initial list (or, for a handler added
// later, of the cache as it was then).
func (p *processorListener) HasSynced() bool {
	select {
	case <-p.synced:
		return true
	default:
		return false
	}
}

// Synced is closed when HasSynced becomes true.
func (p *processorListener) Synced() <-chan struct{} { return p.synced }

// Stopped is closed once the handler goroutine has exited (after the
// handler was removed or the informer stopped).
func (p *processorListener) Stopped() <-chan struct{} { return p.done }

// shouldResync reports whether the listener's resync is due at now.
func (p *processorListener) shouldResync(now time.Time) bool {
	return p.resyncPeriod > 0 && !now.Before(p.nextResync)
}

// sharedProcessor fans notifications out to listeners.
//
// Sync notifications (resync, and relist updates that did not change the
// object) go only to listeners whose syncing flag is set: shouldResync
// sets it for the listeners whose resync is due and clears it for the
// others. Until the first check every listener is syncing, as in
// client-go (so without resync, unchanged relist updates reach everyone).
type sharedProcessor struct {
	mu             sync.RWMutex
	listeners      []*processorListener
	running        bool // listener goroutines are started as they come
	stopped        bool
	upstreamSynced bool
	wg             sync.WaitGroup
}

// addListener registers l, starting it if the processor runs, and tells
// it about an informer sync that already happened. The caller must have
// queued l's initial notifications already.
func (p *sharedProcessor) addListener(l *processorListener) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return false
	}
	p.listeners = append(p.listeners, l)
	if p.running {
		p.wg.Go(l.run)
	}
	if p.upstreamSynced {
		l.upstreamHasSynced()
	}
	return true
}

// removeListener unregisters and stops l; false if it was not registered.
func (p *sharedProcessor) removeListener(l *processorListener) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.listeners {
		if x == l {
			p.listeners = append(p.listeners[:i], p.listeners[i+1:]...)
			l.stop()
			if !p.running {
				// Never started: nothing will close done otherwise.
				close(l.done)
			}
			return true
		}
	}
	return false
}

// distribute queues n for every listener, or only for the syncing ones if
// sync.
func (p *sharedProcessor) distribute(n notification, sync bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, l := range p.listeners {
		if !sync || l.syncing {
			l.add(n)
		}
	}
}

// setUpstreamSynced tells every listener (and future ones) that the
// informer has synced.
func (p *sharedProcessor) setUpstreamSynced() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.upstreamSynced = true
	for _, l := range p.listeners {
		l.upstreamHasSynced()
	}
}

// start starts the listeners' goroutines.
func (p *sharedProcessor) start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running || p.stopped {
		return
	}
	p.running = true
	for _, l := range p.listeners {
		p.wg.Go(l.run)
	}
}

// stop stops every listener, waits for their goroutines (a handler call in
// progress finishes) and refuses new listeners.
func (p *sharedProcessor) stop() {
	p.mu.Lock()
	p.stopped = true
	wasRunning := p.running
	for _, l := range p.listeners {
		l.stop()
		if !wasRunning {
			close(l.done)
		}
	}
	p.listeners = nil
	p.running = false
	p.mu.Unlock()
	p.wg.Wait()
}

// shouldResync marks the listeners whose resync is due as syncing (and
// schedules their next one), the others as not, and reports whether any is
// due.
func (p *sharedProcessor) shouldResync(now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	due := false
	for _, l := range p.listeners {
		l.syncing = l.shouldResync(now)
		if l.syncing {
			due = true
			l.nextResync = now.Add(l.resyncPeriod)
		}
	}
	return due
}

// resyncCheckPeriodChanged re-derives every listener's effective period.
func (p *sharedProcessor) resyncCheckPeriodChanged(check time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.listeners {
		l.resyncPeriod = effectiveResyncPeriod(l.requestedResync, check)
	}
}

// effectiveResyncPeriod: a handler cannot resync more often than the
// informer checks, nor at all if the informer never does.
func effectiveResyncPeriod(desired, check time.Duration) time.Duration {
	switch {
	case desired == 0:
		return 0
	case check == 0:
		return 0
	case desired < check:
		return check
	}
	return desired
}
