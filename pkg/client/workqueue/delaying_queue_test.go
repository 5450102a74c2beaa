package workqueue

import (
	"fmt"
	"testing"
	"time"

	"github.com/skiff-sh/skiff/pkg/clock"
)

func newFakeDelaying(t *testing.T) (*delayingType[string], *clock.Fake) {
	t.Helper()
	fc := clock.NewFake(t0)
	q := NewTypedDelayingQueueWithConfig(TypedDelayingQueueConfig[string]{Clock: fc}).(*delayingType[string])
	t.Cleanup(q.ShutDown)
	return q, fc
}

// waitingEntries returns the heap's items and ready times (as offsets from
// t0), in heap-pop order, without changing it.
func (q *delayingType[T]) waitingEntries() map[T]time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make(map[T]time.Duration, len(q.waiting))
	for i, w := range q.waiting {
		if q.index[w.item] != i {
			panic("heap index out of sync")
		}
		out[w.item] = w.readyAt.Sub(t0)
	}
	if len(q.index) != len(q.waiting) {
		panic("heap index size out of sync")
	}
	return out
}

func TestDelayingOrdering(t *testing.T) {
	type add struct {
		item  string
		after time.Duration
	}
	type step struct {
		by   time.Duration
		want []string // handed out after the step, in order
	}
	tests := []struct {
		name  string
		adds  []add
		steps []step
	}{
		{
			name: "by ready time",
			adds: []add{{"c", 3 * time.Second}, {"a", time.Second}, {"b", 2 * time.Second}},
			steps: []step{
				{999 * time.Millisecond, nil},
				{time.Millisecond, []string{"a"}},
				{time.Second, []string{"b"}},
				{time.Second, []string{"c"}},
			},
		},
		{
			name: "one step releases everything due, earliest first",
			adds: []add{{"x", 50 * time.Millisecond}, {"y", 10 * time.Millisecond}, {"late", time.Hour}, {"z", 30 * time.Millisecond}},
			steps: []step{
				{time.Second, []string{"y", "z", "x"}},
				{time.Hour, []string{"late"}},
			},
		},
		{
			name: "equal ready times in AddAfter order",
			adds: []add{{"1", time.Second}, {"2", time.Second}, {"3", time.Second}, {"0", 500 * time.Millisecond}},
			steps: []step{
				{time.Second, []string{"0", "1", "2", "3"}},
			},
		},
		{
			name: "non-positive delay is added at once",
			adds: []add{{"later", time.Second}, {"now", 0}, {"past", -time.Second}},
			steps: []step{
				{0, []string{"now", "past"}},
				{time.Second, []string{"later"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, fc := newFakeDelaying(t)
			for _, a := range tt.adds {
				q.AddAfter(a.item, a.after)
			}
			for i, s := range tt.steps {
				fc.Step(s.by)
				for _, w := range s.want {
					expectGet[string](t, q, w)
					q.Done(w)
				}
				// Nothing not yet due may be in the queue.
				if n := q.Len(); n != 0 {
					t.Fatalf("step %d: %d extra items queued", i, n)
				}
			}
			if w := q.waitingEntries(); len(w) != 0 {
				t.Fatalf("still waiting: %v", w)
			}
		})
	}
}

// The heap is updated synchronously by AddAfter, so dedup is checked on it.
func TestDelayingDedup(t *testing.T) {
	tests := []struct {
		name   string
		afters []time.Duration
		want   time.Duration
	}{
		{"sooner replaces later", []time.Duration{5 * time.Second, time.Second}, time.Second},
		{"later keeps sooner", []time.Duration{time.Second, 5 * time.Second}, time.Second},
		{"many", []time.Duration{9 * time.Second, 4 * time.Second, 7 * time.Second, 2 * time.Second, 3 * time.Second}, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, fc := newFakeDelaying(t)
			q.AddAfter("other", 3*time.Second)
			for _, d := range tt.afters {
				q.AddAfter("x", d)
			}
			got := q.waitingEntries()
			if len(got) != 2 || got["x"] != tt.want || got["other"] != 3*time.Second {
				t.Fatalf("waiting = %v, want x:%v other:3s", got, tt.want)
			}
			fc.Step(tt.want)
			if tt.want < 3*time.Second {
				expectGet[string](t, q, "x")
				fc.Step(3*time.Second - tt.want)
				expectGet[string](t, q, "other")
			} else {
				expectGet[string](t, q, "other")
				expectGet[string](t, q, "x")
			}
			// x waited once: stepping past its later times adds nothing.
			fc.Step(time.Minute)
			q.AddAfter("sentinel", time.Second)
			fc.Step(time.Second)
			expectGet[string](t, q, "sentinel")
			if n := q.Len(); n != 0 {
				t.Fatalf("Len = %d, want 0", n)
			}
		})
	}
}

// An item that becomes ready while it is already queued is not queued twice.
func TestDelayingReadyWhileQueued(t *testing.T) {
	q, fc := newFakeDelaying(t)
	q.Add("x")
	q.AddAfter("x", time.Second)
	fc.Step(time.Second)
	eventually(t, "x leaves the heap", func() bool { return len(q.waitingEntries()) == 0 })
	if n := q.Len(); n != 1 {
		t.Fatalf("Len = %d, want 1", n)
	}
}

// The waiting goroutine is driven by the clock alone, even when the clock is
// stepped before the goroutine has armed its timer, or concurrently with it.
func TestDelayingStepRacesArming(t *testing.T) {
	q, fc := newFakeDelaying(t)
	for i := 0; i < 300; i++ {
		item := fmt.Sprint(i)
		q.AddAfter(item, time.Duration(1+i%3)*time.Millisecond)
		fc.Step(time.Duration(1+i%3) * time.Millisecond)
		expectGet[string](t, q, item)
		q.Done(item)
	}
	// Arming against an earlier item, then a sooner one.
	q.AddAfter("late", time.Second)
	waiters(t, fc, 1)
	q.AddAfter("soon", time.Millisecond)
	fc.Step(time.Millisecond)
	expectGet[string](t, q, "soon")
	fc.Step(time.Second)
	expectGet[string](t, q, "late")
}

// After the timer is armed, the goroutine sleeps: no timer per AddAfter, no
// polling (the only clock waiter is its one timer).
func TestDelayingSingleTimer(t *testing.T) {
	q, fc := newFakeDelaying(t)
	for i := 0; i < 50; i++ {
		q.AddAfter(fmt.Sprint(i), time.Duration(50-i)*time.Second)
	}
	waiters(t, fc, 1)
	fc.Step(time.Second)
	expectGet[string](t, q, "49")
	waiters(t, fc, 1)
}

func TestDelayingShutDown(t *testing.T) {
	for _, drain := range []bool{false, true} {
		t.Run(fmt.Sprintf("drain=%v", drain), func(t *testing.T) {
			fc := clock.NewFake(t0)
			q := NewTypedDelayingQueueWithConfig(TypedDelayingQueueConfig[string]{Clock: fc}).(*delayingType[string])
			q.AddAfter("waiting", time.Second)
			q.Add("queued")
			waiters(t, fc, 1)
			if drain {
				q.ShutDownWithDrain()
			} else {
				q.ShutDown()
			}
			select {
			case <-q.loopDone:
			case <-timeAfter(t):
				t.Fatal("waiting goroutine did not stop")
			}
			if fc.Waiters() != 0 {
				t.Fatalf("%d clock waiters left after shutdown", fc.Waiters())
			}
			q.AddAfter("after", time.Second)
			q.AddAfter("after0", 0)
			fc.Step(time.Hour)
			expectGet[string](t, q, "queued")
			if item, shut := mustGet[string](t, q); !shut {
				t.Fatalf("Get = %q, want shutdown (waiting items are dropped)", item)
			}
			q.ShutDown() // idempotent
		})
	}
}

// The ShutDown of a wrapped queue is reached, and a given Queue is used.
func TestDelayingWrapsGivenQueue(t *testing.T) {
	fc := clock.NewFake(t0)
	inner := NewTyped[int]()
	q := NewTypedDelayingQueueWithConfig(TypedDelayingQueueConfig[int]{Clock: fc, Queue: inner})
	q.AddAfter(7, time.Second)
	fc.Step(time.Second)
	expectGet[int](t, inner, 7)
	q.ShutDown()
	if !inner.ShuttingDown() {
		t.Fatal("inner queue not shut down")
	}
}

// A random-ish workload leaves the heap consistent and releases items in
// ready-time order.
func TestDelayingHeapOrderMany(t *testing.T) {
	q, fc := newFakeDelaying(t)
	const n = 500
	delay := func(i int) time.Duration { return time.Duration((i*7919)%997+1) * time.Millisecond }
	for i := 0; i < n; i++ {
		q.AddAfter(fmt.Sprint(i), delay(i))
		if i%5 == 0 { // dedup updates: sooner and later
			q.AddAfter(fmt.Sprint(i/2), delay(i/2)/2+time.Millisecond)
			q.AddAfter(fmt.Sprint(i/3), time.Hour)
		}
	}
	entries := q.waitingEntries()
	if len(entries) != n {
		t.Fatalf("%d waiting, want %d", len(entries), n)
	}
	fc.Step(time.Second)
	var last time.Duration
	for i := 0; i < n; i++ {
		item, _ := mustGet[string](t, q)
		at, ok := entries[item]
		if !ok {
			t.Fatalf("unexpected item %q", item)
		}
		if at < last {
			t.Fatalf("item %q ready at %v handed out after one ready at %v", item, at, last)
		}
		last = at
		delete(entries, item)
	}
}
