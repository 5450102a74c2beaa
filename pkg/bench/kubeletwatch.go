package bench

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/skiff-sh/skiff/pkg/client"
)

// podWatch follows one namespace's pods and records, per pod, when the
// watch first showed it (created), bound (spec.nodeName set) and Running
// (status.phase), in nanoseconds since start. Only its goroutine touches
// the per-pod map until stop returns; the counters are read meanwhile.
type podWatch struct {
	start time.Time
	want  int
	pods  map[string]*podTimes

	added   atomic.Int64
	bound   atomic.Int64
	running atomic.Int64
	last    atomic.Int64 // ns since start of the latest pod seen Running
	relists atomic.Int64

	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
	mu     sync.Mutex
	err    error
}

type podTimes struct {
	added, bound, running time.Duration // 0: not yet (added is at least 1 ns)
}

func newPodWatch(start time.Time, want int) *podWatch {
	return &podWatch{start: start, want: want, pods: make(map[string]*podTimes, want), done: make(chan struct{})}
}

// maxPodRewatches bounds how often the watch is opened again.
const maxPodRewatches = 100

func (w *podWatch) run(ctx context.Context, pods *client.Typed[*corev1.Pod, *corev1.PodList], rv string) {
	ctx, w.cancel = context.WithCancel(ctx)
	go func() {
		defer close(w.done)
		for opens := 0; ctx.Err() == nil; opens++ {
			if opens > maxPodRewatches {
				w.fail(fmt.Errorf("the pod watch ended %d times", maxPodRewatches))
				return
			}
			wi, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
			if err != nil {
				if ctx.Err() == nil {
					w.fail(fmt.Errorf("watching pods: %w", err))
				}
				return
			}
			gone := false
			for ev := range wi.ResultChan() {
				switch ev.Type {
				case watch.Error:
					if st, ok := ev.Object.(*metav1.Status); ok && st.Code == http.StatusGone {
						gone = true
						continue
					}
					wi.Stop()
					w.fail(fmt.Errorf("pod watch error: %v", ev.Object))
					return
				case watch.Added, watch.Modified, watch.Bookmark:
					pod, ok := ev.Object.(*corev1.Pod)
					if !ok {
						continue
					}
					rv = pod.ResourceVersion
					if ev.Type != watch.Bookmark {
						w.observe(pod)
					}
				}
			}
			wi.Stop()
			if gone && ctx.Err() == nil {
				// Fallen too far behind: list again (what happened
				// meanwhile is seen late, never lost).
				w.relists.Add(1)
				l, err := pods.List(ctx, metav1.ListOptions{})
				if err != nil {
					if ctx.Err() == nil {
						w.fail(fmt.Errorf("listing pods again: %w", err))
					}
					return
				}
				for i := range l.Items {
					w.observe(&l.Items[i])
				}
				rv = l.ResourceVersion
			}
		}
	}()
}

func (w *podWatch) observe(pod *corev1.Pod) {
	now := max(1, time.Since(w.start))
	t := w.pods[pod.Name]
	if t == nil {
		t = &podTimes{added: now}
		w.pods[pod.Name] = t
		w.added.Add(1)
	}
	if t.bound == 0 && pod.Spec.NodeName != "" {
		t.bound = now
		w.bound.Add(1)
	}
	if t.running == 0 && pod.Status.Phase == corev1.PodRunning {
		t.running = now
		if t.bound == 0 {
			t.bound = now
			w.bound.Add(1)
		}
		w.running.Add(1)
		for {
			l := w.last.Load()
			if int64(now) <= l || w.last.CompareAndSwap(l, int64(now)) {
				break
			}
		}
	}
}

func (w *podWatch) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

func (w *podWatch) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// stop ends the watch and waits for its goroutine; afterwards the
// per-pod times may be read.
func (w *podWatch) stop() {
	w.once.Do(func() {
		w.cancel()
		<-w.done
	})
}

// latencies are, after stop, the per-pod start-up (created → Running) and
// scheduling (created → bound) latencies of the pods seen Running, and
// when the 1000th pod was seen Running (0 with fewer).
func (w *podWatch) latencies() (startup, sched []time.Duration, at1000 time.Duration) {
	var runningAt []time.Duration
	for _, t := range w.pods {
		if t.running == 0 {
			continue
		}
		startup = append(startup, t.running-t.added)
		sched = append(sched, t.bound-t.added)
		runningAt = append(runningAt, t.running)
	}
	if len(runningAt) >= 1000 {
		slices.Sort(runningAt)
		at1000 = runningAt[999]
	}
	return startup, sched, at1000
}
