package workqueue

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// TypedRateLimiter decides how long an item waits before it is retried.
type TypedRateLimiter[T comparable] interface {
	// When records a failure of item and returns how long to wait before
	// retrying it.
	When(item T) time.Duration
	// Forget clears item's failure history.
	Forget(item T)
	// NumRequeues is how many failures of item are recorded.
	NumRequeues(item T) int
}

// DefaultTypedControllerRateLimiter is client-go's default controller rate
// limiter, on the real clock: the max of per-item exponential backoff from 5ms
// to 1000s and an overall token bucket of 10 qps with a burst of 100.
func DefaultTypedControllerRateLimiter[T comparable]() TypedRateLimiter[T] {
	return DefaultTypedControllerRateLimiterWithClock[T](clock.Real{})
}

// DefaultTypedControllerRateLimiterWithClock is DefaultTypedControllerRateLimiter
// whose token bucket reads time from clk.
func DefaultTypedControllerRateLimiterWithClock[T comparable](clk clock.Clock) TypedRateLimiter[T] {
	return NewTypedMaxOfRateLimiter(
		NewTypedItemExponentialFailureRateLimiter[T](5*time.Millisecond, 1000*time.Second),
		// 10 qps, 100 bucket size: only the overall retry speed, not per item.
		&TypedBucketRateLimiter[T]{Limiter: rate.NewLimiter(rate.Limit(10), 100), Clock: clk},
	)
}

// DefaultTypedItemBasedRateLimiter is per-item exponential backoff from 1ms to
// 1000s, as client-go's.
func DefaultTypedItemBasedRateLimiter[T comparable]() TypedRateLimiter[T] {
	return NewTypedItemExponentialFailureRateLimiter[T](time.Millisecond, 1000*time.Second)
}

// TypedBucketRateLimiter limits the overall retry rate with a token bucket;
// every item shares the bucket, so Forget and NumRequeues do nothing.
type TypedBucketRateLimiter[T comparable] struct {
	*rate.Limiter
	// Clock is the time reservations are made at; nil means clock.Real.
	Clock clock.Clock
}

var _ TypedRateLimiter[string] = &TypedBucketRateLimiter[string]{}

// When reserves a token at the clock's time and returns how long until it is
// available (rate.InfDuration if the bucket can never grant it).
func (r *TypedBucketRateLimiter[T]) When(item T) time.Duration {
	var now time.Time
	if r.Clock != nil {
		now = r.Clock.Now()
	} else {
		now = clock.Real{}.Now()
	}
	return r.Limiter.ReserveN(now, 1).DelayFrom(now)
}

func (r *TypedBucketRateLimiter[T]) NumRequeues(item T) int { return 0 }

func (r *TypedBucketRateLimiter[T]) Forget(item T) {}

// TypedItemExponentialFailureRateLimiter waits baseDelay*2^failures for an
// item, capped at maxDelay.
type TypedItemExponentialFailureRateLimiter[T comparable] struct {
	failuresLock sync.Mutex
	failures     map[T]int

	baseDelay time.Duration
	maxDelay  time.Duration
}

var _ TypedRateLimiter[string] = &TypedItemExponentialFailureRateLimiter[string]{}

// NewTypedItemExponentialFailureRateLimiter returns a limiter whose n-th
// failure of an item (counting from 0) waits min(baseDelay*2^n, maxDelay).
func NewTypedItemExponentialFailureRateLimiter[T comparable](baseDelay, maxDelay time.Duration) TypedRateLimiter[T] {
	return &TypedItemExponentialFailureRateLimiter[T]{
		failures:  make(map[T]int, initialCapacity),
		baseDelay: baseDelay,
		maxDelay:  maxDelay,
	}
}

func (r *TypedItemExponentialFailureRateLimiter[T]) When(item T) time.Duration {
	r.failuresLock.Lock()
	r.failures[item]++
	exp := r.failures[item] - 1
	r.failuresLock.Unlock()
	return exponentialBackoff(r.baseDelay, r.maxDelay, exp)
}

// exponentialBackoff is min(base*2^exp, max) without overflow.
func exponentialBackoff(base, max time.Duration, exp int) time.Duration {
	if base <= 0 {
		return min(base, max)
	}
	if exp < 63 && base <= math.MaxInt64>>exp {
		if d := base << exp; d <= max {
			return d
		}
	}
	return max
}

func (r *TypedItemExponentialFailureRateLimiter[T]) NumRequeues(item T) int {
	r.failuresLock.Lock()
	defer r.failuresLock.Unlock()
	return r.failures[item]
}

func (r *TypedItemExponentialFailureRateLimiter[T]) Forget(item T) {
	r.failuresLock.Lock()
	defer r.failuresLock.Unlock()
	delete(r.failures, item)
}

// TypedItemFastSlowRateLimiter waits fastDelay for an item's first
// maxFastAttempts failures and slowDelay after that.
type TypedItemFastSlowRateLimiter[T comparable] struct {
	failuresLock sync.Mutex
	failures     map[T]int

	maxFastAttempts int
	fastDelay       time.Duration
	slowDelay       time.Duration
}

var _ TypedRateLimiter[string] = &TypedItemFastSlowRateLimiter[string]{}

// NewTypedItemFastSlowRateLimiter returns a fast-then-slow limiter.
func NewTypedItemFastSlowRateLimiter[T comparable](fastDelay, slowDelay time.Duration, maxFastAttempts int) TypedRateLimiter[T] {
	return &TypedItemFastSlowRateLimiter[T]{
		failures:        make(map[T]int, initialCapacity),
		fastDelay:       fastDelay,
		slowDelay:       slowDelay,
		maxFastAttempts: maxFastAttempts,
	}
}

func (r *TypedItemFastSlowRateLimiter[T]) When(item T) time.Duration {
	r.failuresLock.Lock()
	r.failures[item]++
	n := r.failures[item]
	r.failuresLock.Unlock()
	if n <= r.maxFastAttempts {
		return r.fastDelay
	}
	return r.slowDelay
}

func (r *TypedItemFastSlowRateLimiter[T]) NumRequeues(item T) int {
	r.failuresLock.Lock()
	defer r.failuresLock.Unlock()
	return r.failures[item]
}

func (r *TypedItemFastSlowRateLimiter[T]) Forget(item T) {
	r.failuresLock.Lock()
	defer r.failuresLock.Unlock()
	delete(r.failures, item)
}

// TypedMaxOfRateLimiter asks every limiter and waits the longest of their
// delays; NumRequeues is the largest of theirs and Forget forgets in all.
type TypedMaxOfRateLimiter[T comparable] struct {
	limiters []TypedRateLimiter[T]
}

// NewTypedMaxOfRateLimiter combines limiters.
func NewTypedMaxOfRateLimiter[T comparable](limiters ...TypedRateLimiter[T]) TypedRateLimiter[T] {
	return &TypedMaxOfRateLimiter[T]{limiters: append([]TypedRateLimiter[T](nil), limiters...)}
}

func (r *TypedMaxOfRateLimiter[T]) When(item T) time.Duration {
	var ret time.Duration
	for _, l := range r.limiters {
		if d := l.When(item); d > ret {
			ret = d
		}
	}
	return ret
}

func (r *TypedMaxOfRateLimiter[T]) NumRequeues(item T) int {
	ret := 0
	for _, l := range r.limiters {
		if n := l.NumRequeues(item); n > ret {
			ret = n
		}
	}
	return ret
}

func (r *TypedMaxOfRateLimiter[T]) Forget(item T) {
	for _, l := range r.limiters {
		l.Forget(item)
	}
}

// TypedWithMaxWaitRateLimiter caps another limiter's delays at maxDelay.
type TypedWithMaxWaitRateLimiter[T comparable] struct {
	limiter  TypedRateLimiter[T]
	maxDelay time.Duration
}

// NewTypedWithMaxWaitRateLimiter caps limiter's delays at maxDelay.
func NewTypedWithMaxWaitRateLimiter[T comparable](limiter TypedRateLimiter[T], maxDelay time.Duration) TypedRateLimiter[T] {
	return &TypedWithMaxWaitRateLimiter[T]{limiter: limiter, maxDelay: maxDelay}
}

func (w *TypedWithMaxWaitRateLimiter[T]) When(item T) time.Duration {
	return min(w.limiter.When(item), w.maxDelay)
}

func (w *TypedWithMaxWaitRateLimiter[T]) NumRequeues(item T) int {
	return w.limiter.NumRequeues(item)
}

func (w *TypedWithMaxWaitRateLimiter[T]) Forget(item T) {
	w.limiter.Forget(item)
}
