package workqueue

import (
	"github.com/skiff-sh/skiff/pkg/clock"
)

// TypedRateLimitingInterface is a delaying queue whose retries are delayed by
// a rate limiter.
type TypedRateLimitingInterface[T comparable] interface {
	TypedDelayingInterface[T]
	// AddRateLimited adds item after the delay the rate limiter gives it.
	AddRateLimited(item T)
	// Forget tells the rate limiter to stop tracking item (its retries are
	// over, whether it succeeded or was given up on). It does not remove
	// item from the queue.
	Forget(item T)
	// NumRequeues is how many times item was rate limited since its last
	// Forget.
	NumRequeues(item T) int
}

// TypedRateLimitingQueueConfig configures NewTypedRateLimitingQueueWithConfig.
type TypedRateLimitingQueueConfig[T comparable] struct {
	// Name labels the queue's metrics; without a name there are no metrics.
	Name string
	// MetricsProvider creates the queue's metrics; nil means none.
	MetricsProvider MetricsProvider
	// Clock is the queue's time source; nil means clock.Real. (A
	// TypedBucketRateLimiter takes its own clock.)
	Clock clock.Clock
	// DelayingQueue is the queue to wrap; nil means a new delaying queue with
	// the same Name, MetricsProvider and Clock.
	DelayingQueue TypedDelayingInterface[T]
}

// NewTypedRateLimitingQueue returns a rate-limiting queue without metrics on
// the real clock.
func NewTypedRateLimitingQueue[T comparable](rateLimiter TypedRateLimiter[T]) TypedRateLimitingInterface[T] {
	return NewTypedRateLimitingQueueWithConfig(rateLimiter, TypedRateLimitingQueueConfig[T]{})
}

// NewTypedRateLimitingQueueWithConfig returns a rate-limiting queue
// configured by config.
func NewTypedRateLimitingQueueWithConfig[T comparable](rateLimiter TypedRateLimiter[T], config TypedRateLimitingQueueConfig[T]) TypedRateLimitingInterface[T] {
	dq := config.DelayingQueue
	if dq == nil {
		dq = NewTypedDelayingQueueWithConfig(TypedDelayingQueueConfig[T]{
			Name:            config.Name,
			MetricsProvider: config.MetricsProvider,
			Clock:           config.Clock,
		})
	}
	return &rateLimitingType[T]{TypedDelayingInterface: dq, rateLimiter: rateLimiter}
}

type rateLimitingType[T comparable] struct {
	TypedDelayingInterface[T]
	rateLimiter TypedRateLimiter[T]
}

func (q *rateLimitingType[T]) AddRateLimited(item T) {
	q.TypedDelayingInterface.AddAfter(item, q.rateLimiter.When(item))
}

func (q *rateLimitingType[T]) NumRequeues(item T) int {
	return q.rateLimiter.NumRequeues(item)
}

func (q *rateLimitingType[T]) Forget(item T) {
	q.rateLimiter.Forget(item)
}
