// Package workqueue provides the work queues skiff controllers put object keys
// on: a deduplicating FIFO queue, a delaying queue built on it, and a
// rate-limiting queue built on that, plus the rate limiters that decide how
// long a failed item waits before it is retried. The API mirrors client-go's
// util/workqueue (names, constructors and semantics) with generics as the
// primary API; Interface, Type, DelayingInterface, RateLimitingInterface and
// RateLimiter are the `any`-keyed aliases. RunWorkers is the worker loop
// every controller runs over its queue (Get, process, Forget or
// AddRateLimited, Done; shut down when the context ends).
//
// # Queue (Typed)
//
// A Typed queue keeps an ordered queue of items waiting to be handed out and,
// per item, whether it is dirty (needs processing) and whether it is
// processing (handed out by Get and not yet Done). It keeps these invariants:
//
//   - An item is never processed by two workers at once: Get never hands out
//     an item that is processing.
//   - Every item in the queue is dirty and not processing, and appears in the
//     queue once. Add of an item that is already dirty is a no-op, so an item
//     added many times before a worker gets to it is handed out once.
//   - Add of an item that is processing (and not dirty) marks it dirty without
//     queueing it; Done then puts it back at the tail of the queue, so the
//     change that arrived during processing is processed again, afterwards.
//     No Add is lost: after the last Add of an item returns, a Get of that
//     item begins.
//   - Items are handed out in FIFO order of (re-)queueing.
//   - Done of an item that is not processing is ignored.
//   - After ShutDown or ShutDownWithDrain, Add is a no-op and Get keeps
//     handing out the items still queued; once the queue is empty Get returns
//     shutdown=true at once (blocked Gets are woken). ShutDownWithDrain also
//     blocks until no item is processing (items still queued are not waited
//     for); a ShutDown during it releases it.
//   - Add, Get and Done, finding the lock held, spin for a bounded time
//     (tens of microseconds, pauses doubling) before blocking; with
//     GOMAXPROCS=1 they block at once. A Get on an empty queue sleeps on a
//     condition variable: an idle queue uses no CPU.
//
// # Delaying queue
//
// A delaying queue adds AddAfter(item, d): the item is added when d has
// passed on the queue's clock (at once if d <= 0). Waiting items live in a
// min-heap ordered by ready time (ties in AddAfter order), deduplicated: an
// item waits at most once, and adding it again keeps the earlier ready time.
// A single goroutine per queue moves due items into the queue; it is driven
// only by the injected clock (one reusable timer armed for the earliest ready
// time), so with a clock.Fake nothing is added before the clock is stepped to
// its ready time, and everything due is added once it is. Shutting down stops
// the goroutine and drops the items still waiting.
//
// # Rate-limiting queue and rate limiters
//
// A rate-limiting queue adds AddRateLimited (AddAfter with the delay its
// TypedRateLimiter returns), Forget and NumRequeues. The rate limiters are
// the client-go set: per-item exponential failure backoff, per-item
// fast-then-slow, a token bucket over golang.org/x/time/rate (reserved at the
// clock's time), max-of and with-max-wait combinators, and
// DefaultTypedControllerRateLimiter (max of exponential 5ms..1000s and a
// 10 qps / 100 burst bucket). Forget clears an item's failure count.
//
// # Metrics
//
// A queue with a Name and a MetricsProvider reports client-go's metric set:
// depth, adds, queue latency, work duration, unfinished work seconds and
// longest running processor seconds (both refreshed every 500ms of the
// queue's clock while it runs), and, for delaying queues, retries.
// NewPrometheusMetricsProvider registers them, under client-go's names with
// the label "name", on the registry the caller passes. Without a provider (or
// without a name) metrics cost nothing.
//
// The package has no package-level mutable state; all time is read from the
// pkg/clock Clock given in the config (clock.Real when nil).
package workqueue
