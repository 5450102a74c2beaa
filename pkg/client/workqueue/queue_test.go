package workqueue

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// op is one step of a single-goroutine queue script.
type op struct {
	do   string // add, get, done, shutdown
	item string
}

func TestQueueSequential(t *testing.T) {
	tests := []struct {
		name    string
		ops     []op
		wantLen int
		// wantRest is what Gets after the script hand out before the queue
		// (shut down at the end) reports shutdown.
		wantRest []string
	}{
		{
			name:     "fifo",
			ops:      []op{{"add", "a"}, {"add", "b"}, {"add", "c"}},
			wantLen:  3,
			wantRest: []string{"a", "b", "c"},
		},
		{
			name:     "add while queued is a no-op",
			ops:      []op{{"add", "a"}, {"add", "b"}, {"add", "a"}, {"add", "a"}},
			wantLen:  2,
			wantRest: []string{"a", "b"},
		},
		{
			name: "add while processing is not queued until done",
			ops: []op{
				{"add", "a"}, {"get", "a"}, {"add", "a"}, {"add", "a"},
			},
			wantLen:  0,
			wantRest: nil,
		},
		{
			name: "done re-queues an item added while processing, at the tail",
			ops: []op{
				{"add", "a"}, {"get", "a"}, {"add", "a"}, {"add", "b"}, {"done", "a"},
			},
			wantLen:  2,
			wantRest: []string{"b", "a"},
		},
		{
			name: "several adds while processing give exactly one re-queue after done",
			ops: []op{
				{"add", "a"}, {"get", "a"}, {"add", "a"}, {"add", "a"}, {"add", "a"}, {"done", "a"},
			},
			wantLen:  1,
			wantRest: []string{"a"},
		},
		{
			name:     "done without re-add forgets the item",
			ops:      []op{{"add", "a"}, {"get", "a"}, {"done", "a"}},
			wantLen:  0,
			wantRest: nil,
		},
		{
			name: "item can be added again after done",
			ops: []op{
				{"add", "a"}, {"get", "a"}, {"done", "a"}, {"add", "a"},
			},
			wantLen:  1,
			wantRest: []string{"a"},
		},
		{
			name: "done of an item not processing is ignored",
			ops: []op{
				{"done", "x"}, {"add", "a"}, {"done", "a"}, {"add", "b"},
			},
			wantLen:  2,
			wantRest: []string{"a", "b"},
		},
		{
			name: "second done is ignored",
			ops: []op{
				{"add", "a"}, {"get", "a"}, {"add", "a"}, {"done", "a"}, {"done", "a"},
			},
			wantLen:  1,
			wantRest: []string{"a"},
		},
		{
			name: "add after shutdown is a no-op, queued items still handed out",
			ops: []op{
				{"add", "a"}, {"add", "b"}, {"shutdown", ""}, {"add", "c"},
			},
			wantLen:  2,
			wantRest: []string{"a", "b"},
		},
		{
			name: "done after shutdown still re-queues an item added before it",
			ops: []op{
				{"add", "a"}, {"get", "a"}, {"add", "a"}, {"shutdown", ""}, {"done", "a"},
			},
			wantLen:  1,
			wantRest: []string{"a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := NewTyped[string]()
			for _, o := range tt.ops {
				switch o.do {
				case "add":
					q.Add(o.item)
				case "get":
					expectGet[string](t, q, o.item)
				case "done":
					q.Done(o.item)
				case "shutdown":
					q.ShutDown()
				}
			}
			if got := q.Len(); got != tt.wantLen {
				t.Fatalf("Len = %d, want %d", got, tt.wantLen)
			}
			q.ShutDown()
			for _, want := range tt.wantRest {
				expectGet[string](t, q, want)
			}
			if item, shut := mustGet[string](t, q); !shut {
				t.Fatalf("Get after draining = %q, want shutdown", item)
			}
		})
	}
}

func TestQueueRingGrows(t *testing.T) {
	q := NewTyped[int]()
	// Interleave to wrap the ring before it grows.
	next, want := 0, 0
	for round := 0; round < 5; round++ {
		for i := 0; i < 300; i++ {
			q.Add(next)
			next++
		}
		for i := 0; i < 200; i++ {
			expectGet[int](t, q, want)
			q.Done(want)
			want++
		}
	}
	if q.Len() != next-want {
		t.Fatalf("Len = %d, want %d", q.Len(), next-want)
	}
	for want < next {
		expectGet[int](t, q, want)
		want++
	}
}

// An item added while another worker processes it is handed out again only
// after Done, and never to two workers at once.
func TestQueueAddWhileProcessingNotConcurrent(t *testing.T) {
	q := NewTyped[string]()
	q.Add("a")
	expectGet[string](t, q, "a")

	// A second worker waits in Get.
	got := make(chan string, 1)
	go func() {
		item, _ := q.Get()
		got <- item
	}()
	q.Add("a") // while processing: marked dirty, not queued
	if n := q.Len(); n != 0 {
		t.Fatalf("Len while processing = %d, want 0", n)
	}
	select {
	case item := <-got:
		t.Fatalf("second worker got %q while it was processing", item)
	default:
	}
	q.Done("a")
	select {
	case item := <-got:
		if item != "a" {
			t.Fatalf("second worker got %q, want a", item)
		}
	case <-timeAfter(t):
		t.Fatal("item added while processing was not handed out after Done")
	}
	q.Done("a")
	if n := q.Len(); n != 0 {
		t.Fatalf("Len = %d, want 0", n)
	}
}

// Blocked Gets are woken by Add and, with nothing queued, by ShutDown.
func TestQueueShutDownWakesGetters(t *testing.T) {
	q := NewTyped[int]()
	const n = 5
	var wg sync.WaitGroup
	var shut atomic.Int32
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, s := q.Get(); s {
				shut.Add(1)
			}
		}()
	}
	q.Add(1) // wakes exactly one
	q.ShutDown()
	waitGroup(t, &wg)
	if got := shut.Load(); got != n-1 {
		t.Fatalf("%d Gets returned shutdown, want %d", got, n-1)
	}
	if !q.ShuttingDown() {
		t.Fatal("ShuttingDown = false")
	}
}

func TestQueueShutDownWithDrain(t *testing.T) {
	t.Run("nothing processing returns at once", func(t *testing.T) {
		q := NewTyped[string]()
		q.Add("queued") // queued items are not waited for
		q.ShutDownWithDrain()
		expectGet[string](t, q, "queued")
	})

	t.Run("waits until every processing item is done", func(t *testing.T) {
		q := NewTyped[string]()
		q.Add("a")
		q.Add("b")
		expectGet[string](t, q, "a")
		expectGet[string](t, q, "b")
		drained := make(chan struct{})
		go func() {
			q.ShutDownWithDrain()
			close(drained)
		}()
		eventually(t, "shutdown", q.ShuttingDown)
		q.Add("c") // ignored: shutting down
		q.Done("a")
		select {
		case <-drained:
			t.Fatal("ShutDownWithDrain returned while b was processing")
		default:
		}
		q.Done("b")
		select {
		case <-drained:
		case <-timeAfter(t):
			t.Fatal("ShutDownWithDrain did not return after the last Done")
		}
		if _, shut := mustGet[string](t, q); !shut {
			t.Fatal("Get after drain: want shutdown")
		}
	})

	t.Run("an item re-added before shutdown is queued again on done", func(t *testing.T) {
		q := NewTyped[string]()
		q.Add("a")
		expectGet[string](t, q, "a")
		q.Add("a")
		drained := make(chan struct{})
		go func() {
			q.ShutDownWithDrain()
			close(drained)
		}()
		eventually(t, "shutdown", q.ShuttingDown)
		q.Done("a")
		<-drained
		expectGet[string](t, q, "a") // still handed out after shutdown
		q.Done("a")
		if _, shut := mustGet[string](t, q); !shut {
			t.Fatal("want shutdown")
		}
	})

	t.Run("ShutDown releases a pending drain", func(t *testing.T) {
		q := NewTyped[string]()
		q.Add("a")
		expectGet[string](t, q, "a")
		drained := make(chan struct{})
		go func() {
			q.ShutDownWithDrain()
			close(drained)
		}()
		eventually(t, "shutdown", q.ShuttingDown)
		q.ShutDown()
		select {
		case <-drained:
		case <-timeAfter(t):
			t.Fatal("ShutDown did not release ShutDownWithDrain")
		}
	})
}

// Many producers and workers hammer one queue. No item is ever processed by
// two workers at once, and after the last Add of an item returns some Get of
// it follows (nothing is lost).
func TestQueueConcurrentHammer(t *testing.T) {
	for _, drain := range []bool{false, true} {
		t.Run(fmt.Sprintf("drain=%v", drain), func(t *testing.T) {
			const (
				producers = 4
				workers   = 8
				keys      = 64
				addsEach  = 3000
			)
			q := NewTyped[int]()
			var (
				busy    [keys]atomic.Int32 // 1 while a worker processes the key
				want    [keys]atomic.Int64 // highest sequence number of an Add of the key
				seen    [keys]atomic.Int64 // highest want a worker observed
				seq     atomic.Int64
				gets    atomic.Int64
				overlap atomic.Int64
			)
			var wg sync.WaitGroup
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						k, shut := q.Get()
						if shut {
							return
						}
						gets.Add(1)
						if !busy[k].CompareAndSwap(0, 1) {
							overlap.Add(1)
						}
						v := want[k].Load()
						if v > seen[k].Load() {
							seen[k].Store(v) // only the processing worker writes seen[k]
						}
						busy[k].Store(0)
						q.Done(k)
					}
				}()
			}
			var pw sync.WaitGroup
			for p := 0; p < producers; p++ {
				pw.Add(1)
				go func(p int) {
					defer pw.Done()
					for i := 0; i < addsEach; i++ {
						k := (i*7 + p*13) % keys
						// want only grows, so it ends at the latest Add's number.
						for v := seq.Add(1); ; {
							old := want[k].Load()
							if old >= v || want[k].CompareAndSwap(old, v) {
								break
							}
						}
						q.Add(k)
					}
				}(p)
			}
			waitGroup(t, &pw)
			if drain {
				q.ShutDownWithDrain()
			} else {
				q.ShutDown()
			}
			waitGroup(t, &wg)

			if n := overlap.Load(); n != 0 {
				t.Fatalf("%d times an item was processed by two workers at once", n)
			}
			for k := 0; k < keys; k++ {
				if seen[k].Load() != want[k].Load() {
					t.Errorf("key %d: last Add (seq %d) never processed (last seen %d)", k, want[k].Load(), seen[k].Load())
				}
			}
			if g := gets.Load(); g < keys || g > producers*addsEach {
				t.Errorf("gets = %d, want between %d and %d", g, keys, producers*addsEach)
			}
			if q.Len() != 0 {
				t.Errorf("Len = %d after shutdown and drain", q.Len())
			}
		})
	}
}

func TestAnyAliases(t *testing.T) {
	var q Interface = New()
	q.Add("a")
	q.Add(1)
	q.Add("a")
	if q.Len() != 2 {
		t.Fatalf("Len = %d, want 2", q.Len())
	}
	expectGet(t, q, any("a"))
	expectGet(t, q, any(1))
	q.ShutDown()

	rq := NewRateLimitingQueue(DefaultControllerRateLimiter())
	defer rq.ShutDown()
	rq.AddRateLimited("k")
	if rq.NumRequeues("k") != 1 {
		t.Fatalf("NumRequeues = %d, want 1", rq.NumRequeues("k"))
	}
	expectGet(t, rq, any("k")) // 5ms on the real clock
	rq.Forget("k")
	if rq.NumRequeues("k") != 0 {
		t.Fatalf("NumRequeues after Forget = %d", rq.NumRequeues("k"))
	}

	dq := NewDelayingQueue()
	dq.AddAfter(struct{ a, b int }{1, 2}, 0)
	expectGet(t, dq, any(struct{ a, b int }{1, 2}))
	dq.ShutDown()
}

// spinProbe replaces a queue's busy-wait step: it counts the steps and
// closes started at the first one, so a test knows a goroutine is spinning
// in lockSlow.
type spinProbe struct {
	started chan struct{}
	once    sync.Once
	steps   atomic.Int64
}

func newSpinProbe[T comparable](q *Typed[T], rounds int) *spinProbe {
	p := &spinProbe{started: make(chan struct{})}
	q.spinRounds = rounds
	q.pause = func(int) {
		p.once.Do(func() { close(p.started) })
		p.steps.Add(1)
	}
	return p
}

// spinBudget is the number of busy-wait steps lockSlow takes over rounds
// retries.
func spinBudget(rounds int) int64 {
	var n int64
	d := spinFirst
	for range rounds {
		n += int64(d)
		d = min(2*d, spinMax)
	}
	return n
}

// TestQueueLockSlow: Add, Get and Done, finding the lock held, wait for it
// and then run, whether it is released while they spin (caught by a retry),
// after they spent the whole spin budget (taken by mu.Lock), or with
// spinning off (GOMAXPROCS=1: straight to mu.Lock). Nothing runs while the
// lock is held.
func TestQueueLockSlow(t *testing.T) {
	tests := []struct {
		name   string
		rounds int
		// release is when the test lets go of the lock.
		release string // "spinning", "spent", "at once"
	}{
		{"released while spinning", 1 << 20, "spinning"},
		{"released after the spin budget", 3, "spent"},
		{"no spinning", 0, "at once"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := NewTyped[int]()
			defer q.ShutDown()
			probe := newSpinProbe(q, tt.rounds)
			step := func(f func()) {
				t.Helper()
				q.mu.Lock()
				done := make(chan struct{})
				go func() { f(); close(done) }()
				switch tt.release {
				case "spinning":
					<-probe.started
				case "spent":
					eventually(t, "the spin budget spent", func() bool { return probe.steps.Load() >= spinBudget(tt.rounds) })
				}
				select {
				case <-done:
					t.Fatal("ran while the lock was held")
				default:
				}
				before := probe.steps.Load()
				q.mu.Unlock()
				waitChan(t, done)
				if tt.release == "spent" && probe.steps.Load() != before {
					t.Fatal("spun past its budget")
				}
				probe.once = sync.Once{}
				probe.started = make(chan struct{})
				probe.steps.Store(0)
			}
			step(func() { q.Add(1) })
			var got int
			step(func() { got, _ = q.Get() })
			if got != 1 {
				t.Fatalf("Get = %d", got)
			}
			step(func() { q.Done(1) })
			if q.Len() != 0 {
				t.Fatalf("Len = %d after Done", q.Len())
			}
			if tt.rounds == 0 && probe.steps.Load() != 0 {
				t.Fatal("spun with spinning off")
			}
		})
	}
}

// TestQueueLockSlowThenWait: a Get that came in through lockSlow and found
// the queue empty waits on the condition variable and is woken by an Add;
// a ShutDown while others spin on the lock ends them cleanly.
func TestQueueLockSlowThenWait(t *testing.T) {
	q := NewTyped[int]()
	probe := newSpinProbe(q, 1<<20)
	q.mu.Lock()
	got := make(chan int, 1)
	go func() {
		v, _ := q.Get()
		got <- v
	}()
	<-probe.started // Get spins on the held lock
	q.mu.Unlock()
	// Get takes the lock, finds nothing and waits (or, if this Add wins
	// the lock first, finds 7 at once); either way Add must reach it.
	q.Add(7)
	select {
	case v := <-got:
		if v != 7 {
			t.Fatalf("Get = %d, want 7", v)
		}
	case <-time.After(failAfter):
		t.Fatal("Get was not woken by Add")
	}
	q.Done(7)

	// ShutDown while an Add and a Get spin on the held lock.
	probe = newSpinProbe(q, 1<<20)
	q.mu.Lock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); q.Add(8) }()
	go func() { defer wg.Done(); q.Get() }()
	<-probe.started
	q.mu.Unlock()
	q.ShutDown()
	waitGroup(t, &wg)
	// Either the Add came before the ShutDown (and Get received 8) or it
	// was dropped (and Get saw the shutdown); the queue is empty either way.
	if q.Len() != 0 {
		t.Fatalf("Len = %d after shutdown", q.Len())
	}
	if _, s := q.Get(); !s {
		t.Fatal("Get after ShutDown did not report shutdown")
	}
}
