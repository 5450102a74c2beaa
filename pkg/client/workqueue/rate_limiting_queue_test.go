package workqueue

import (
	"testing"
	"time"

	"github.com/skiff-sh/skiff/pkg/clock"
)

func TestRateLimitingQueue(t *testing.T) {
	fc := clock.NewFake(t0)
	q := NewTypedRateLimitingQueueWithConfig(
		NewTypedItemExponentialFailureRateLimiter[string](time.Second, time.Minute),
		TypedRateLimitingQueueConfig[string]{Clock: fc},
	)
	defer q.ShutDown()

	// A worker's retry loop: fail twice, then succeed and Forget.
	q.Add("k")
	expectGet[string](t, q, "k")

	q.AddRateLimited("k") // 1st failure: 1s
	q.Done("k")
	if n := q.NumRequeues("k"); n != 1 {
		t.Fatalf("NumRequeues = %d, want 1", n)
	}
	fc.Step(time.Second)
	expectGet[string](t, q, "k")

	q.AddRateLimited("k") // 2nd failure: 2s
	q.Done("k")
	if n := q.NumRequeues("k"); n != 2 {
		t.Fatalf("NumRequeues = %d, want 2", n)
	}
	fc.Step(time.Second)
	if q.Len() != 0 {
		t.Fatal("retried before its 2s backoff")
	}
	fc.Step(time.Second)
	expectGet[string](t, q, "k")

	q.Forget("k")
	q.Done("k")
	if n := q.NumRequeues("k"); n != 0 {
		t.Fatalf("NumRequeues after Forget = %d, want 0", n)
	}
	q.AddRateLimited("k") // back to 1s
	fc.Step(time.Second)
	expectGet[string](t, q, "k")
}

// Wrapping a given delaying queue, and AddRateLimited on an item already
// waiting keeps the sooner time.
func TestRateLimitingQueueWrapsDelayingQueue(t *testing.T) {
	fc := clock.NewFake(t0)
	dq := NewTypedDelayingQueueWithConfig(TypedDelayingQueueConfig[string]{Clock: fc})
	q := NewTypedRateLimitingQueueWithConfig(
		NewTypedItemExponentialFailureRateLimiter[string](time.Second, time.Minute),
		TypedRateLimitingQueueConfig[string]{DelayingQueue: dq},
	)
	defer q.ShutDown()
	q.AddRateLimited("k") // 1s
	q.AddRateLimited("k") // 2s: the 1s wait stays
	q.AddRateLimited("k") // 4s
	fc.Step(time.Second)
	expectGet[string](t, dq, "k")
	if q.NumRequeues("k") != 3 {
		t.Fatalf("NumRequeues = %d, want 3", q.NumRequeues("k"))
	}
}
