package workqueue

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// RunWorkers processes every key, retries failed ones rate-limited (and
// forgets them once they succeed), and returns after ctx ends.
func TestRunWorkers(t *testing.T) {
	q := NewTypedRateLimitingQueue(NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, time.Millisecond))
	var mu sync.Mutex
	seen := map[string]int{}
	var failures []string
	done := make(chan struct{})
	process := func(_ context.Context, key string) error {
		mu.Lock()
		defer mu.Unlock()
		seen[key]++
		if key == "flaky" && seen[key] < 3 {
			return errors.New("not yet")
		}
		if seen["a"] == 1 && seen["b"] == 1 && seen["flaky"] == 3 {
			close(done)
		}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan struct{})
	go func() {
		RunWorkers(ctx, q, 2, process, func(key string, err error) {
			mu.Lock()
			failures = append(failures, key+": "+err.Error())
			mu.Unlock()
		})
		close(returned)
	}()
	q.Add("a")
	q.Add("b")
	q.Add("flaky")
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("keys not processed within 10s")
	}
	cancel()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("RunWorkers did not return after its context ended")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failures) != 2 {
		t.Errorf("failures = %v, want two of flaky", failures)
	}
	if n := q.NumRequeues("flaky"); n != 0 {
		t.Errorf("flaky still has %d requeues after succeeding", n)
	}
	if !q.ShuttingDown() {
		t.Error("queue not shut down")
	}
}
