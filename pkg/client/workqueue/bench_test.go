package workqueue

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// benchKeys are controller-style "namespace/name" keys.
func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("namespace-%d/object-%d", i%10, i)
	}
	return keys
}

// BenchmarkQueue measures one Add/Get/Done cycle. Each worker adds an item,
// then gets whatever is next (possibly another worker's item) and marks it
// done, so every op is one full trip through the queue. Items are unique per
// cycle: a reused key could legitimately be deduplicated (or re-queued) while
// another worker still holds it, unbalancing the closed loop.
func BenchmarkQueue(b *testing.B) {
	for _, bc := range []struct {
		name    string
		workers int
		metrics bool
	}{
		{"workers=1", 1, false},
		{"workers=8", 8, false},
		{"workers=1/prometheus", 1, true},
		{"workers=8/prometheus", 8, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := TypedQueueConfig[int]{}
			if bc.metrics {
				mp, err := NewPrometheusMetricsProvider(prometheus.NewRegistry())
				if err != nil {
					b.Fatal(err)
				}
				cfg = TypedQueueConfig[int]{Name: "bench", MetricsProvider: mp}
			}
			q := NewTypedWithConfig(cfg)
			defer q.ShutDown()
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := 0; w < bc.workers; w++ {
				n := b.N / bc.workers
				if w < b.N%bc.workers {
					n++
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < n; i++ {
						q.Add(w + i*bc.workers)
						item, _ := q.Get()
						q.Done(item)
					}
				}()
			}
			wg.Wait()
		})
	}
}

// BenchmarkQueueStringKeys is BenchmarkQueue/workers=1 with controller-style
// "namespace/name" keys.
func BenchmarkQueueStringKeys(b *testing.B) {
	q := NewTyped[string]()
	defer q.ShutDown()
	keys := benchKeys(1024)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q.Add(keys[i&1023])
		item, _ := q.Get()
		q.Done(item)
	}
}

// BenchmarkQueueProducerConsumer: one producer adds distinct keys while
// workers drain them.
func BenchmarkQueueProducerConsumer(b *testing.B) {
	for _, workers := range []int{1, 8} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			q := NewTyped[int]()
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						item, shut := q.Get()
						if shut {
							return
						}
						q.Done(item)
					}
				}()
			}
			for i := 0; i < b.N; i++ {
				q.Add(i & 4095)
			}
			q.ShutDown()
			wg.Wait()
		})
	}
}

// BenchmarkRateLimitingQueueAddRateLimited measures AddRateLimited: the rate
// limiter's When plus the delaying queue's heap insert or dedup.
func BenchmarkRateLimitingQueueAddRateLimited(b *testing.B) {
	for _, bc := range []struct {
		name    string
		limiter func(clock.Clock) TypedRateLimiter[string]
		forget  bool
	}{
		{
			// Every retry of a key backs off further; the heap holds each key
			// once and later retries are deduplicated.
			name: "exponential",
			limiter: func(clock.Clock) TypedRateLimiter[string] {
				return NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 1000*time.Second)
			},
		},
		{
			// Forget after every retry: each AddRateLimited moves its key to
			// 5ms from now, re-inserting it in the heap.
			name: "exponential+forget",
			limiter: func(clock.Clock) TypedRateLimiter[string] {
				return NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 1000*time.Second)
			},
			forget: true,
		},
		{
			name: "default-controller",
			limiter: func(c clock.Clock) TypedRateLimiter[string] {
				return DefaultTypedControllerRateLimiterWithClock[string](c)
			},
		},
	} {
		b.Run(bc.name, func(b *testing.B) {
			// A fake clock that is never stepped: items only wait, so the
			// benchmark measures AddRateLimited itself.
			fc := clock.NewFake(t0)
			q := NewTypedRateLimitingQueueWithConfig(bc.limiter(fc), TypedRateLimitingQueueConfig[string]{Clock: fc})
			defer q.ShutDown()
			keys := benchKeys(4096)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := keys[i&4095]
				q.AddRateLimited(k)
				if bc.forget {
					q.Forget(k)
				}
			}
		})
	}
}

// BenchmarkDelayingQueueAddAfterZero: AddAfter(item, 0), then Get/Done.
func BenchmarkDelayingQueueAddAfterZero(b *testing.B) {
	q := NewTypedDelayingQueue[string]()
	defer q.ShutDown()
	keys := benchKeys(1024)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q.AddAfter(keys[i&1023], 0)
		item, _ := q.Get()
		q.Done(item)
	}
}
