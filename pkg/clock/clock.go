package clock

import (
	"sort"
	"sync"
	"time"
)

// Clock tells time and makes timers.
type Clock interface {
	Now() time.Time
	Since(t time.Time) time.Duration
	NewTimer(d time.Duration) Timer
	NewTicker(d time.Duration) Ticker
	After(d time.Duration) <-chan time.Time
}

// Timer is a one-shot timer.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
	Reset(d time.Duration) bool
}

// Ticker fires every period.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// Real is the wall clock.
type Real struct{}

func (Real) Now() time.Time                         { return time.Now() }
func (Real) Since(t time.Time) time.Duration        { return time.Since(t) }
func (Real) After(d time.Duration) <-chan time.Time { return time.After(d) }
func (Real) NewTimer(d time.Duration) Timer         { return realTimer{time.NewTimer(d)} }
func (Real) NewTicker(d time.Duration) Ticker       { return realTicker{time.NewTicker(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time { return r.t.C }
func (r realTicker) Stop()               { r.t.Stop() }

// Fake is a manually driven clock.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	waiters []*fakeWaiter
}

type fakeWaiter struct {
	due    time.Time
	period time.Duration // > 0 for tickers
	c      chan time.Time
	active bool
	clock  *Fake
}

// NewFake returns a fake clock at t.
func NewFake(t time.Time) *Fake { return &Fake{now: t} }

func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *Fake) Since(t time.Time) time.Duration { return f.Now().Sub(t) }

func (f *Fake) add(d, period time.Duration) *fakeWaiter {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := &fakeWaiter{due: f.now.Add(d), period: period, c: make(chan time.Time, 1), active: true, clock: f}
	f.waiters = append(f.waiters, w)
	return w
}

func (f *Fake) After(d time.Duration) <-chan time.Time { return f.add(d, 0).c }
func (f *Fake) NewTimer(d time.Duration) Timer         { return f.add(d, 0) }
func (f *Fake) NewTicker(d time.Duration) Ticker       { return fakeTicker{f.add(d, d)} }

// Waiters is the number of pending timers and tickers (to wait until a
// goroutine under test has armed its timer).
func (f *Fake) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, w := range f.waiters {
		if w.active {
			n++
		}
	}
	return n
}

// HasOneShotDue reports whether a pending timer (not a ticker) falls due at
// t: a test's way to wait until a goroutine has armed a particular timer.
func (f *Fake) HasOneShotDue(t time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, w := range f.waiters {
		if w.active && w.period == 0 && w.due.Equal(t) {
			return true
		}
	}
	return false
}

// Step advances the clock by d, firing what falls due.
func (f *Fake) Step(d time.Duration) { f.SetTime(f.Now().Add(d)) }

// SetTime moves the clock to t, firing what falls due.
func (f *Fake) SetTime(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = t
	sort.SliceStable(f.waiters, func(i, j int) bool { return f.waiters[i].due.Before(f.waiters[j].due) })
	kept := f.waiters[:0]
	for _, w := range f.waiters {
		if !w.active {
			continue
		}
		if !w.due.After(t) {
			select {
			case w.c <- w.due:
			default: // a ticker whose reader is behind drops ticks, as time.Ticker does
			}
			if w.period > 0 {
				for !w.due.After(t) {
					w.due = w.due.Add(w.period)
				}
			} else {
				w.active = false
				continue
			}
		}
		kept = append(kept, w)
	}
	f.waiters = kept
}

func (w *fakeWaiter) C() <-chan time.Time { return w.c }

func (w *fakeWaiter) Stop() bool {
	w.clock.mu.Lock()
	defer w.clock.mu.Unlock()
	was := w.active
	w.active = false
	return was
}

func (w *fakeWaiter) Reset(d time.Duration) bool {
	w.clock.mu.Lock()
	defer w.clock.mu.Unlock()
	was := w.active
	w.due = w.clock.now.Add(d)
	w.active = true
	for _, x := range w.clock.waiters {
		if x == w {
			return was // still listed (stopped but not yet pruned)
		}
	}
	w.clock.waiters = append(w.clock.waiters, w)
	return was
}

type fakeTicker struct{ w *fakeWaiter }

func (t fakeTicker) C() <-chan time.Time { return t.w.c }
func (t fakeTicker) Stop()               { t.w.Stop() }
