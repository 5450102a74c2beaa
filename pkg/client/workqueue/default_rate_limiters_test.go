package workqueue

import (
	"fmt"
	"math"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/skiff-sh/skiff/pkg/clock"
)

const ms = time.Millisecond

// call is one step against a rate limiter.
type call struct {
	do   string // when, forget, step
	item string
	d    time.Duration // want for when; amount for step
	n    int           // want NumRequeues(item) after the step
}

func runLimiter(t *testing.T, r TypedRateLimiter[string], fc *clock.Fake, calls []call) {
	t.Helper()
	for i, c := range calls {
		switch c.do {
		case "when":
			if got := r.When(c.item); got != c.d {
				t.Fatalf("call %d: When(%q) = %v, want %v", i, c.item, got, c.d)
			}
		case "forget":
			r.Forget(c.item)
		case "step":
			fc.Step(c.d)
			continue
		}
		if got := r.NumRequeues(c.item); got != c.n {
			t.Fatalf("call %d: NumRequeues(%q) = %d, want %d", i, c.item, got, c.n)
		}
	}
}

func TestRateLimiters(t *testing.T) {
	tests := []struct {
		name    string
		limiter func(*clock.Fake) TypedRateLimiter[string]
		calls   []call
	}{
		{
			name: "exponential doubles up to max, per item, Forget resets",
			limiter: func(*clock.Fake) TypedRateLimiter[string] {
				return NewTypedItemExponentialFailureRateLimiter[string](ms, 1000*ms)
			},
			calls: []call{
				{"when", "a", 1 * ms, 1}, {"when", "a", 2 * ms, 2}, {"when", "a", 4 * ms, 3},
				{"when", "a", 8 * ms, 4}, {"when", "a", 16 * ms, 5}, {"when", "a", 32 * ms, 6},
				{"when", "a", 64 * ms, 7}, {"when", "a", 128 * ms, 8}, {"when", "a", 256 * ms, 9},
				{"when", "a", 512 * ms, 10}, {"when", "a", 1000 * ms, 11}, {"when", "a", 1000 * ms, 12},
				{"when", "b", 1 * ms, 1}, {"when", "b", 2 * ms, 2},
				{"forget", "a", 0, 0},
				{"when", "a", 1 * ms, 1},
				{"when", "b", 4 * ms, 3},
				{"forget", "never-seen", 0, 0},
			},
		},
		{
			name: "fast then slow, Forget resets",
			limiter: func(*clock.Fake) TypedRateLimiter[string] {
				return NewTypedItemFastSlowRateLimiter[string](5*ms, 10*time.Second, 3)
			},
			calls: []call{
				{"when", "a", 5 * ms, 1}, {"when", "a", 5 * ms, 2}, {"when", "a", 5 * ms, 3},
				{"when", "a", 10 * time.Second, 4}, {"when", "a", 10 * time.Second, 5},
				{"when", "b", 5 * ms, 1},
				{"forget", "a", 0, 0},
				{"when", "a", 5 * ms, 1},
			},
		},
		{
			name: "bucket: burst, then one token per 1/qps of the clock",
			limiter: func(fc *clock.Fake) TypedRateLimiter[string] {
				return &TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(10), 3), Clock: fc}
			},
			calls: []call{
				{"when", "a", 0, 0}, {"when", "b", 0, 0}, {"when", "a", 0, 0},
				{"when", "a", 100 * ms, 0}, {"when", "c", 200 * ms, 0}, {"when", "a", 300 * ms, 0},
				{"step", "", 150 * ms, 0},
				{"when", "a", 250 * ms, 0},
				{"step", "", 10 * time.Second, 0}, // refills to the burst
				{"when", "a", 0, 0}, {"when", "a", 0, 0}, {"when", "a", 0, 0}, {"when", "a", 100 * ms, 0},
				{"forget", "a", 0, 0},
			},
		},
		{
			name: "bucket that can never grant waits forever",
			limiter: func(fc *clock.Fake) TypedRateLimiter[string] {
				return &TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(10), 0), Clock: fc}
			},
			calls: []call{{"when", "a", rate.InfDuration, 0}},
		},
		{
			name: "max of: longest delay, largest requeues, Forget all",
			limiter: func(*clock.Fake) TypedRateLimiter[string] {
				return NewTypedMaxOfRateLimiter(
					NewTypedItemExponentialFailureRateLimiter[string](ms, time.Second),
					NewTypedItemFastSlowRateLimiter[string](5*ms, 3*time.Second, 3),
				)
			},
			calls: []call{
				{"when", "a", 5 * ms, 1}, {"when", "a", 5 * ms, 2}, {"when", "a", 5 * ms, 3},
				{"when", "a", 3 * time.Second, 4}, {"when", "a", 3 * time.Second, 5},
				{"forget", "a", 0, 0},
				{"when", "a", 5 * ms, 1},
			},
		},
		{
			name: "with max wait caps the delay",
			limiter: func(*clock.Fake) TypedRateLimiter[string] {
				return NewTypedWithMaxWaitRateLimiter(
					NewTypedItemExponentialFailureRateLimiter[string](time.Second, time.Hour), 3*time.Second)
			},
			calls: []call{
				{"when", "a", time.Second, 1}, {"when", "a", 2 * time.Second, 2},
				{"when", "a", 3 * time.Second, 3}, {"when", "a", 3 * time.Second, 4},
				{"forget", "a", 0, 0},
				{"when", "a", time.Second, 1},
			},
		},
		{
			name: "default controller: exponential 5ms..1000s within the bucket's burst",
			limiter: func(fc *clock.Fake) TypedRateLimiter[string] {
				return DefaultTypedControllerRateLimiterWithClock[string](fc)
			},
			calls: func() []call {
				var cs []call
				d := 5 * ms
				for i := 1; i <= 20; i++ {
					cs = append(cs, call{"when", "a", min(d, 1000*time.Second), i})
					d *= 2
				}
				cs = append(cs, call{"forget", "a", 0, 0}, call{"when", "a", 5 * ms, 1})
				return cs
			}(),
		},
		{
			name: "default controller: bucket of 100 at 10 qps bounds fresh items",
			limiter: func(fc *clock.Fake) TypedRateLimiter[string] {
				return DefaultTypedControllerRateLimiterWithClock[string](fc)
			},
			calls: func() []call {
				var cs []call
				for i := 0; i < 100; i++ {
					cs = append(cs, call{"when", fmt.Sprint("item-", i), 5 * ms, 1})
				}
				cs = append(cs,
					call{"when", "x", 100 * ms, 1},
					call{"when", "y", 200 * ms, 1},
					call{"step", "", 200 * ms, 0},
					call{"when", "z", 100 * ms, 1})
				return cs
			}(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc := clock.NewFake(t0)
			runLimiter(t, tt.limiter(fc), fc, tt.calls)
		})
	}
}

func TestExponentialBackoffNoOverflow(t *testing.T) {
	tests := []struct {
		base, max time.Duration
		exp       int
		want      time.Duration
	}{
		{1, math.MaxInt64, 0, 1},
		{1, math.MaxInt64, 62, 1 << 62},
		{1, math.MaxInt64, 63, math.MaxInt64},
		{1, math.MaxInt64, 1000, math.MaxInt64},
		{3, math.MaxInt64, 62, math.MaxInt64},
		{time.Second, time.Hour, 40, time.Hour},
		{time.Second, time.Hour, 11, 2048 * time.Second},
		{time.Second, time.Hour, 12, time.Hour},
		{time.Hour, time.Second, 0, time.Second}, // max below base wins, as client-go
		{0, time.Second, 5, 0},
	}
	for _, tt := range tests {
		if got := exponentialBackoff(tt.base, tt.max, tt.exp); got != tt.want {
			t.Errorf("exponentialBackoff(%v, %v, %d) = %v, want %v", tt.base, tt.max, tt.exp, got, tt.want)
		}
	}
	r := NewTypedItemExponentialFailureRateLimiter[int](time.Millisecond, 1000*time.Second)
	for i := 0; i < 200; i++ {
		if d := r.When(1); d <= 0 || d > 1000*time.Second {
			t.Fatalf("When #%d = %v", i, d)
		}
	}
}

func TestDefaultItemBasedRateLimiter(t *testing.T) {
	r := DefaultTypedItemBasedRateLimiter[string]()
	for i, want := range []time.Duration{ms, 2 * ms, 4 * ms} {
		if got := r.When("a"); got != want {
			t.Fatalf("When #%d = %v, want %v", i, got, want)
		}
	}
}
