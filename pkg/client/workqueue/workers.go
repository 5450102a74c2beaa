package workqueue

import (
	"context"
	"sync"
)

// RunWorkers is a controller's worker loop: n workers take keys from q and
// hand each to process, until ctx ends; then q is shut down and RunWorkers
// returns once every worker has finished its key. A key whose process
// succeeds has its failures forgotten; one that fails is reported to
// onError (when not nil) and added back rate-limited. A key is never
// processed by two workers at once (the queue's guarantee).
func RunWorkers[T comparable](ctx context.Context, q TypedRateLimitingInterface[T], n int,
	process func(context.Context, T) error, onError func(T, error)) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for processNext(ctx, q, process, onError) {
			}
		})
	}
	<-ctx.Done()
	q.ShutDown()
	wg.Wait()
}

func processNext[T comparable](ctx context.Context, q TypedRateLimitingInterface[T],
	process func(context.Context, T) error, onError func(T, error)) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(key)
	if err := process(ctx, key); err != nil {
		if onError != nil {
			onError(key, err)
		}
		q.AddRateLimited(key)
		return true
	}
	q.Forget(key)
	return true
}
