package kubelet

import (
	"context"
	"time"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// task is periodic work of a node: run every period of the kubelet's
// clock (and at once with now).
type task struct {
	period time.Duration
	now    bool
	run    func(ctx context.Context)
}

// maxTasks is how many tasks one runTasks serves.
const maxTasks = 4

// runTasks runs up to maxTasks periodic tasks on one goroutine of the
// node (instead of one goroutine each: a hollow agent has 1,000 nodes),
// until ctx ends and the runs in progress are done. Each task has its own
// ticker; a run goes to the shared goroutines (WorkPool.goRun: the loop waits
// for a turn, not for the run), tasks run independently of each other,
// and one task's runs never overlap: a tick during a run makes one more
// run right after it (as a loop of its own would find the tick its ticker
// kept).
func (k *Kubelet) runTasks(ctx context.Context, tasks ...task) {
	if len(tasks) > maxTasks {
		panic("kubelet: too many tasks for one runTasks")
	}
	var ticks [maxTasks]<-chan time.Time
	var tickers [maxTasks]clock.Ticker
	for i, t := range tasks {
		tickers[i] = k.clock.NewTicker(t.period)
		ticks[i] = tickers[i].C()
	}
	defer func() {
		for _, t := range tickers[:len(tasks)] {
			t.Stop()
		}
	}()
	done := make(chan int, len(tasks))
	var running, again [maxTasks]bool
	start := func(i int) {
		if running[i] {
			again[i] = true
			return
		}
		running[i] = true
		k.pool.goRun(func() { tasks[i].run(ctx) }, func() { done <- i })
	}
	for i, t := range tasks {
		if t.now {
			start(i)
		}
	}
	for {
		select {
		case <-ctx.Done():
			for i := range tasks {
				for running[i] {
					running[<-done] = false
				}
			}
			return
		case i := <-done:
			running[i] = false
			if again[i] {
				again[i] = false
				start(i)
			}
		case <-ticks[0]:
			start(0)
		case <-ticks[1]:
			start(1)
		case <-ticks[2]:
			start(2)
		case <-ticks[3]:
			start(3)
		}
	}
}
