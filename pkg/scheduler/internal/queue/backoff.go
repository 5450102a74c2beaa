package queue

import (
	"time"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// backoffOrderingWindow is the granularity of back-off expiries when pods
// may be popped from backoffQ (upstream's backoffQOrderingWindowDuration):
// expiries are truncated to it, pods expiring in the same window are
// ordered by the QueueSort plugin, and the flusher runs on its boundaries.
const backoffOrderingWindow = time.Second

// backoffQueue holds pods waiting for their back-off to end, in two heaps
// ordered by back-off expiry: pods a plugin rejected (which Pop may take
// early when activeQ is empty) and pods that failed with an error (never
// popped early). Guarded by the PriorityQueue's lock.
type backoffQueue struct {
	now            func() time.Time
	initial, max   time.Duration
	less           framework.LessFunc
	popEarly       bool // SchedulerPopFromBackoffQ (on by default in 1.34)
	rejected, errs *keyedHeap[*framework.QueuedPodInfo]
}

func newBackoffQueue(now func() time.Time, initial, max time.Duration, less framework.LessFunc, popEarly bool) *backoffQueue {
	bq := &backoffQueue{now: now, initial: initial, max: max, less: less, popEarly: popEarly}
	byExpiry := func(a, b *framework.QueuedPodInfo) bool { return bq.backoffTime(a).Before(bq.backoffTime(b)) }
	rejectedLess := byExpiry
	if popEarly {
		rejectedLess = func(a, b *framework.QueuedPodInfo) bool {
			ea, eb := bq.backoffTime(a), bq.backoffTime(b)
			if !ea.Equal(eb) {
				return ea.Before(eb)
			}
			return bq.less(a, b)
		}
	}
	bq.rejected = newKeyedHeap(podKey, rejectedLess)
	bq.errs = newKeyedHeap(podKey, byExpiry)
	return bq
}

// backoffDuration is initial * 2^(count-1), capped at max; 0 for count 0.
func (bq *backoffQueue) backoffDuration(count int) time.Duration {
	if count <= 0 {
		return 0
	}
	shift := count - 1
	if shift >= 62 || bq.initial > bq.max>>shift {
		return bq.max
	}
	return bq.initial << shift
}

func (bq *backoffQueue) alignToWindow(t time.Time) time.Time {
	if !bq.popEarly {
		return t
	}
	return t.Truncate(backoffOrderingWindow)
}

// backoffTime is when the pod's back-off ends: counted from its last
// failure (Timestamp) by the number of consecutive errors if the last
// attempts failed with an error, else by the number of rejections; cached
// in BackoffExpiration until the pod fails again.
func (bq *backoffQueue) backoffTime(p *framework.QueuedPodInfo) time.Time {
	if bq.max == 0 {
		return time.Time{}
	}
	count := p.UnschedulableCount
	if p.ConsecutiveErrorsCount > 0 {
		count = p.ConsecutiveErrorsCount
	}
	if count == 0 {
		return time.Time{}
	}
	if p.BackoffExpiration.IsZero() {
		p.BackoffExpiration = bq.alignToWindow(p.Timestamp.Add(bq.backoffDuration(count)))
	}
	return p.BackoffExpiration
}

// isBackingOff reports whether the pod's back-off has not ended yet (with
// windows: its expiry window is not yet in the past).
func (bq *backoffQueue) isBackingOff(p *framework.QueuedPodInfo) bool {
	bo := bq.backoffTime(p)
	if bo.IsZero() {
		return false
	}
	return !bo.Before(bq.alignToWindow(bq.now()))
}

// add puts the pod in the heap its last failure selects (no rejecting
// plugin: an error).
func (bq *backoffQueue) add(p *framework.QueuedPodInfo) {
	k := podKey(p)
	if p.UnschedulablePlugins.Len() == 0 && p.PendingPlugins.Len() == 0 {
		bq.rejected.Delete(k)
		bq.errs.AddOrUpdate(p)
		return
	}
	bq.errs.Delete(k)
	bq.rejected.AddOrUpdate(p)
}

func (bq *backoffQueue) get(k string) (*framework.QueuedPodInfo, bool) {
	if p, ok := bq.rejected.Get(k); ok {
		return p, true
	}
	return bq.errs.Get(k)
}

func (bq *backoffQueue) has(k string) bool { return bq.rejected.Has(k) || bq.errs.Has(k) }

func (bq *backoffQueue) delete(k string) bool { return bq.rejected.Delete(k) || bq.errs.Delete(k) }

// fix restores the order after the pod with key k changed.
func (bq *backoffQueue) fix(k string) {
	if p, ok := bq.rejected.Get(k); ok {
		bq.rejected.AddOrUpdate(p)
	} else if p, ok := bq.errs.Get(k); ok {
		bq.errs.AddOrUpdate(p)
	}
}

func (bq *backoffQueue) len() int { return bq.rejected.Len() + bq.errs.Len() }

func (bq *backoffQueue) list() []*framework.QueuedPodInfo {
	return append(bq.rejected.List(), bq.errs.List()...)
}

// popAllCompleted removes and returns the pods whose back-off ended.
func (bq *backoffQueue) popAllCompleted() []*framework.QueuedPodInfo {
	var out []*framework.QueuedPodInfo
	for _, h := range []*keyedHeap[*framework.QueuedPodInfo]{bq.rejected, bq.errs} {
		for {
			p, ok := h.Peek()
			if !ok || bq.isBackingOff(p) {
				break
			}
			h.Pop()
			out = append(out, p)
		}
	}
	return out
}
