package clock

import (
	"testing"
	"time"
)

func TestFakeTimersAndTickers(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	timer := f.NewTimer(2 * time.Second)
	ticker := f.NewTicker(time.Second)
	after := f.After(3 * time.Second)
	fired := func(c <-chan time.Time) bool {
		select {
		case <-c:
			return true
		default:
			return false
		}
	}
	steps := []struct {
		step                 time.Duration
		timer, ticker, after bool
	}{
		{time.Second, false, true, false},
		{time.Second, true, true, false},
		{time.Second, false, true, true},
		{time.Second, false, true, false},
	}
	for i, s := range steps {
		f.Step(s.step)
		if got := fired(timer.C()); got != s.timer {
			t.Errorf("step %d: timer fired %v", i, got)
		}
		if got := fired(ticker.C()); got != s.ticker {
			t.Errorf("step %d: ticker fired %v", i, got)
		}
		if got := fired(after); got != s.after {
			t.Errorf("step %d: after fired %v", i, got)
		}
	}
	ticker.Stop()
	if n := f.Waiters(); n != 0 {
		t.Fatalf("waiters after everything fired or stopped: %d", n)
	}
	// Stop then Reset before the clock moves lists the timer once.
	tm := f.NewTimer(time.Second)
	tm.Stop()
	tm.Reset(time.Second)
	if n := f.Waiters(); n != 1 {
		t.Fatalf("stop+reset: %d waiters, want 1", n)
	}
	f.Step(time.Second)
	if !fired(tm.C()) {
		t.Fatal("reset timer did not fire")
	}
}
