package workqueue

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// t0 is where every Fake clock in these tests starts.
var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// failAfter bounds how long a test waits for something that must happen. It
// only turns a bug (a hang) into a failure; no test outcome depends on it.
const failAfter = 20 * time.Second

// eventually spins until cond holds (something another goroutine does must
// become visible), failing the test if it never does.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(failAfter)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		runtime.Gosched()
	}
}

// waitChan waits for ch to be closed (or to deliver), failing the test if
// it never is.
func waitChan(t testing.TB, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(failAfter):
		t.Fatal("timed out waiting for a goroutine")
	}
}

// mustGet gets an item, failing the test if Get does not return.
func mustGet[T comparable](t testing.TB, q TypedInterface[T]) (T, bool) {
	t.Helper()
	type res struct {
		item T
		shut bool
	}
	ch := make(chan res, 1)
	go func() {
		item, shut := q.Get()
		ch <- res{item, shut}
	}()
	select {
	case r := <-ch:
		return r.item, r.shut
	case <-time.After(failAfter):
		t.Fatalf("Get did not return")
		panic("unreachable")
	}
}

// expectGet gets an item and checks it.
func expectGet[T comparable](t testing.TB, q TypedInterface[T], want T) {
	t.Helper()
	got, shut := mustGet(t, q)
	if shut {
		t.Fatalf("Get: shutdown, want %v", want)
	}
	if got != want {
		t.Fatalf("Get = %v, want %v", got, want)
	}
}

// waiters waits until fc has exactly n pending timers/tickers.
func waiters(t testing.TB, fc *clock.Fake, n int) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d fake clock waiters", n), func() bool { return fc.Waiters() == n })
}

// fakeMetric records what a queue does to one metric.
type fakeMetric struct {
	mu           sync.Mutex
	value        float64
	sets         int
	observations []float64
}

func (m *fakeMetric) Inc() { m.mu.Lock(); m.value++; m.mu.Unlock() }
func (m *fakeMetric) Dec() { m.mu.Lock(); m.value--; m.mu.Unlock() }
func (m *fakeMetric) Set(v float64) {
	m.mu.Lock()
	m.value = v
	m.sets++
	m.mu.Unlock()
}
func (m *fakeMetric) Observe(v float64) {
	m.mu.Lock()
	m.observations = append(m.observations, v)
	m.mu.Unlock()
}
func (m *fakeMetric) Value() float64 { m.mu.Lock(); defer m.mu.Unlock(); return m.value }
func (m *fakeMetric) Sets() int      { m.mu.Lock(); defer m.mu.Unlock(); return m.sets }
func (m *fakeMetric) Observations() []float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]float64(nil), m.observations...)
}

// fakeProvider hands out fakeMetrics, one per (kind, queue name).
type fakeProvider struct {
	mu sync.Mutex
	m  map[string]*fakeMetric
}

func newFakeProvider() *fakeProvider { return &fakeProvider{m: map[string]*fakeMetric{}} }

func (p *fakeProvider) get(kind, name string) *fakeMetric {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := kind + "/" + name
	if p.m[k] == nil {
		p.m[k] = &fakeMetric{}
	}
	return p.m[k]
}

func (p *fakeProvider) NewDepthMetric(n string) GaugeMetric       { return p.get("depth", n) }
func (p *fakeProvider) NewAddsMetric(n string) CounterMetric      { return p.get("adds", n) }
func (p *fakeProvider) NewLatencyMetric(n string) HistogramMetric { return p.get("latency", n) }
func (p *fakeProvider) NewWorkDurationMetric(n string) HistogramMetric {
	return p.get("work", n)
}
func (p *fakeProvider) NewUnfinishedWorkSecondsMetric(n string) SettableGaugeMetric {
	return p.get("unfinished", n)
}
func (p *fakeProvider) NewLongestRunningProcessorSecondsMetric(n string) SettableGaugeMetric {
	return p.get("longest", n)
}
func (p *fakeProvider) NewRetriesMetric(n string) CounterMetric { return p.get("retries", n) }

// timeAfter is the failure deadline channel for a select.
func timeAfter(t testing.TB) <-chan time.Time {
	t.Helper()
	return time.After(failAfter)
}

// waitGroup waits for wg, failing the test if it never finishes.
func waitGroup(t testing.TB, wg *sync.WaitGroup) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(failAfter):
		t.Fatal("goroutines did not finish")
	}
}
