package workqueue

// Non-generic conveniences, keyed by any (the dynamic values must be
// comparable). Prefer the Typed API.

type (
	// Interface is TypedInterface keyed by any.
	Interface = TypedInterface[any]
	// Type is Typed keyed by any.
	Type = Typed[any]
	// DelayingInterface is TypedDelayingInterface keyed by any.
	DelayingInterface = TypedDelayingInterface[any]
	// RateLimitingInterface is TypedRateLimitingInterface keyed by any.
	RateLimitingInterface = TypedRateLimitingInterface[any]
	// RateLimiter is TypedRateLimiter keyed by any.
	RateLimiter = TypedRateLimiter[any]
)

// New returns a queue keyed by any.
func New() *Type { return NewTyped[any]() }

// NewDelayingQueue returns a delaying queue keyed by any.
func NewDelayingQueue() DelayingInterface { return NewTypedDelayingQueue[any]() }

// NewRateLimitingQueue returns a rate-limiting queue keyed by any.
func NewRateLimitingQueue(rateLimiter RateLimiter) RateLimitingInterface {
	return NewTypedRateLimitingQueue(rateLimiter)
}

// DefaultControllerRateLimiter is DefaultTypedControllerRateLimiter keyed by any.
func DefaultControllerRateLimiter() RateLimiter { return DefaultTypedControllerRateLimiter[any]() }
