package framework

import (
	"context"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// DefaultParallelism is upstream's default number of goroutines for
// filtering and scoring.
const DefaultParallelism = 16

// Parallelizer runs pieces of work over a bounded number of goroutines.
type Parallelizer struct {
	parallelism int
}

// NewParallelizer returns a Parallelizer with n goroutines (n < 1: 1).
func NewParallelizer(n int) Parallelizer {
	if n < 1 {
		n = 1
	}
	return Parallelizer{parallelism: n}
}

// Until calls do(i) for every i in [0, pieces) over at most
// parallelism goroutines, stopping early (pieces not yet started are
// skipped) when ctx ends. Workers take chunks of about sqrt(pieces)
// pieces, as upstream's.
func (p Parallelizer) Until(ctx context.Context, pieces int, do func(i int), operation string) {
	p.until(ctx, pieces, min(p.parallelism, pieces), do)
}

// UntilCPU is Until for pieces that only compute (no I/O, no waiting):
// more goroutines than the Go scheduler runs at once (GOMAXPROCS) only
// add switches, so at most that many work, the caller's goroutine among
// them. Results are those of Until.
func (p Parallelizer) UntilCPU(ctx context.Context, pieces int, do func(i int), operation string) {
	p.until(ctx, pieces, min(p.parallelism, pieces, runtime.GOMAXPROCS(0)), do)
}

func (p Parallelizer) until(ctx context.Context, pieces, workers int, do func(i int)) {
	if pieces <= 0 {
		return
	}
	chunk := chunkSize(pieces, workers)
	if workers <= 1 || pieces <= chunk {
		for i := 0; i < pieces; i++ {
			if ctx.Err() != nil {
				return
			}
			do(i)
		}
		return
	}
	var next atomic.Int64
	work := func() {
		for {
			if ctx.Err() != nil {
				return
			}
			start := int(next.Add(int64(chunk))) - chunk
			if start >= pieces {
				return
			}
			for i := start; i < min(start+chunk, pieces); i++ {
				do(i)
			}
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// chunkSize is upstream's: about sqrt(pieces), at most
// pieces/workers+1.
func chunkSize(pieces, workers int) int {
	s := int(math.Sqrt(float64(pieces)))
	if r := pieces/workers + 1; s > r {
		s = r
	}
	return max(1, s)
}
