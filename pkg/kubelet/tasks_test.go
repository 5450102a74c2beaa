package kubelet

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// runTasks: each task on its own period (a now task at once too), runs of
// one task never overlap, ticks during a run make one run after it, and
// it returns once ctx ended and the run in progress is done.
func TestRunTasks(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	k := &Kubelet{clock: clk, log: slog.Default(), pool: NewWorkPool()}
	var a, b, c, inC, maxInC atomic.Int32
	release := make(chan struct{})
	tasks := []task{
		{period: 10 * time.Second, now: true, run: func(context.Context) { a.Add(1) }},
		{period: 5 * time.Second, run: func(context.Context) { b.Add(1) }},
		{period: 3 * time.Second, run: func(context.Context) {
			if n := inC.Add(1); n > maxInC.Load() {
				maxInC.Store(n)
			}
			c.Add(1)
			<-release
			inC.Add(-1)
		}},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); k.runTasks(ctx, tasks...) }()
	counts := func(wa, wb, wc int32) bool { return a.Load() == wa && b.Load() == wb && c.Load() == wc }
	waitFor(t, "the now task and three tickers", func() (bool, error) { return counts(1, 0, 0) && clk.Waiters() == 3, nil })
	clk.Step(3 * time.Second) // c starts and blocks
	waitFor(t, "c running", func() (bool, error) { return counts(1, 0, 1), nil })
	clk.Step(2 * time.Second) // b
	waitFor(t, "b", func() (bool, error) { return counts(1, 1, 1), nil })
	clk.Step(1 * time.Second) // c ticks while running
	clk.Step(3 * time.Second) // and again
	clk.Step(1 * time.Second) // a and b
	waitFor(t, "a and b again, c still once", func() (bool, error) { return counts(2, 2, 1), nil })
	release <- struct{}{} // the first c ends: one more c, not two
	waitFor(t, "c once more", func() (bool, error) { return counts(2, 2, 2), nil })
	cancel()
	select {
	case <-done:
		t.Fatal("returned while a run was in progress")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-done
	if c.Load() != 2 || maxInC.Load() != 1 {
		t.Errorf("c ran %d times, %d at once at most; want 2 and 1", c.Load(), maxInC.Load())
	}
}
