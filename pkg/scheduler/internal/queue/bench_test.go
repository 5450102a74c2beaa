package queue

import (
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkAddPopDone is the queue's share of a scheduling cycle that
// succeeds: Add, Pop, Done.
func BenchmarkAddPopDone(b *testing.B) {
	pods := make([]*corev1.Pod, 1000)
	for i := range pods {
		pods[i] = mkPod(fmt.Sprintf("p%d", i), withPriority(int32(i%7)))
	}
	q := New(Config{LessFunc: prioritySort})
	defer q.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q.Add(nil, pods[i%len(pods)])
		pi, _ := q.Pop(nil)
		q.Done(pi.Pod.UID)
	}
}

// Concurrent producers, schedulers and event sources: at the end every
// pod is in exactly one place and nothing is left in flight.
func TestConcurrentInvariants(t *testing.T) {
	f := newFixture(t)
	const n = 200
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = mkPod(fmt.Sprintf("p%d", i), withPriority(int32(i%5)))
	}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		for _, p := range pods {
			f.q.Add(nil, p)
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < n; i++ {
			f.q.MoveAllToActiveOrBackoffQueue(nil, nodeAdd, nil, nil, nil)
			f.q.NominatedPodsForNode("n1")
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < n; i++ {
			pi, err := f.q.Pop(nil)
			if err != nil || pi == nil {
				t.Errorf("Pop = %v, %v", pi, err)
				return
			}
			if i%2 == 0 {
				f.q.Done(pi.Pod.UID) // bound
				continue
			}
			f.fail(t, pi, "Fit")
		}
	}()
	wg.Wait()
	seen := 0
	for _, p := range pods {
		switch w := f.where(p); w {
		case "", "active", "backoff", "unschedulable":
			if w != "" {
				seen++
			}
		default:
			t.Errorf("%s in %q", p.Name, w)
		}
	}
	if len(f.q.inFlightPods) != 0 || f.q.inFlightEvents.Len() != 0 {
		t.Errorf("in flight left: %d pods, %d entries", len(f.q.inFlightPods), f.q.inFlightEvents.Len())
	}
	if seen != n/2 {
		t.Errorf("%d pods queued, want %d (the failed half)", seen, n/2)
	}
}
