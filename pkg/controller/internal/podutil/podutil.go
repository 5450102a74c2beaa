package podutil

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// ReadyCondition returns the pod's Ready condition, if any.
func ReadyCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// IsPodReady reports whether the pod's Ready condition is True.
func IsPodReady(p *corev1.Pod) bool {
	c := ReadyCondition(p)
	return c != nil && c.Status == corev1.ConditionTrue
}

// IsPodAvailable reports whether the pod has been ready for minReadySeconds
// at now (upstream's podutil.IsPodAvailable).
func IsPodAvailable(p *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	if !IsPodReady(p) {
		return false
	}
	if minReadySeconds == 0 {
		return true
	}
	c := ReadyCondition(p)
	d := time.Duration(minReadySeconds) * time.Second
	return !c.LastTransitionTime.IsZero() && c.LastTransitionTime.Add(d).Before(now)
}

// IsPodTerminal: Succeeded or Failed.
func IsPodTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// IsPodActive: not terminated and not being deleted.
func IsPodActive(p *corev1.Pod) bool {
	return !IsPodTerminal(p) && p.DeletionTimestamp == nil
}

// SlowStartBatch calls fn count times in batches of 1, 2, 4, ... (starting
// at initial, each call given its index), stopping after the first batch
// with an error. It returns the number of successful calls and the first
// error.
func SlowStartBatch(count, initial int, fn func(i int) error) (int, error) {
	remaining, successes, next := count, 0, 0
	for batch := min(remaining, initial); batch > 0; batch = min(2*batch, remaining) {
		errCh := make(chan error, batch)
		var wg sync.WaitGroup
		for range batch {
			i := next
			next++
			wg.Go(func() {
				if err := fn(i); err != nil {
					errCh <- err
				}
			})
		}
		wg.Wait()
		successes += batch - len(errCh)
		if len(errCh) > 0 {
			return successes, <-errCh
		}
		remaining -= batch
	}
	return successes, nil
}
