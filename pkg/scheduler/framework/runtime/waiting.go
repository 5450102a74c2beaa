package runtime

import (
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// WaitingPods are the pods Permit plugins hold, shared by the profiles.
type WaitingPods struct {
	mu   sync.RWMutex
	pods map[types.UID]*waitingPod
}

// NewWaitingPods returns an empty set.
func NewWaitingPods() *WaitingPods { return &WaitingPods{pods: map[types.UID]*waitingPod{}} }

func (w *WaitingPods) add(wp *waitingPod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pods[wp.pod.UID] = wp
}

func (w *WaitingPods) remove(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.pods, uid)
}

func (w *WaitingPods) get(uid types.UID) *waitingPod {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.pods[uid]
}

func (w *WaitingPods) iterate(cb func(framework.WaitingPod)) {
	w.mu.RLock()
	list := make([]*waitingPod, 0, len(w.pods))
	for _, wp := range w.pods {
		list = append(list, wp)
	}
	w.mu.RUnlock()
	for _, wp := range list {
		cb(wp)
	}
}

// waitingPod waits for each of its plugins to Allow it; a Reject or a
// plugin's timeout ends the wait with Unschedulable.
type waitingPod struct {
	pod    *corev1.Pod
	result chan *framework.Status // one value, buffered

	mu      sync.Mutex
	pending map[string]clock.Timer
	done    bool
	stop    chan struct{}
}

func newWaitingPod(pod *corev1.Pod, waits map[string]time.Duration, c clock.Clock) *waitingPod {
	wp := &waitingPod{pod: pod, result: make(chan *framework.Status, 1), pending: map[string]clock.Timer{}, stop: make(chan struct{})}
	wp.mu.Lock()
	defer wp.mu.Unlock()
	for name, d := range waits {
		t := c.NewTimer(d)
		wp.pending[name] = t
		go func(name string, d time.Duration) {
			select {
			case <-t.C():
				wp.Reject(name, fmt.Sprintf("rejected due to timeout after waiting %v at plugin %v", d, name))
			case <-wp.stop:
			}
		}(name, d)
	}
	return wp
}

func (wp *waitingPod) GetPod() *corev1.Pod { return wp.pod }

func (wp *waitingPod) GetPendingPlugins() []string {
	wp.mu.Lock()
	defer wp.mu.Unlock()
	out := make([]string, 0, len(wp.pending))
	for n := range wp.pending {
		out = append(out, n)
	}
	return out
}

func (wp *waitingPod) Allow(plugin string) {
	wp.mu.Lock()
	defer wp.mu.Unlock()
	if wp.done {
		return
	}
	if t, ok := wp.pending[plugin]; ok {
		t.Stop()
		delete(wp.pending, plugin)
	}
	if len(wp.pending) == 0 {
		wp.finish(nil)
	}
}

func (wp *waitingPod) Reject(plugin, msg string) {
	wp.mu.Lock()
	defer wp.mu.Unlock()
	if wp.done {
		return
	}
	for _, t := range wp.pending {
		t.Stop()
	}
	wp.finish(framework.NewStatus(framework.Unschedulable, msg).WithPlugin(plugin))
}

func (wp *waitingPod) finish(s *framework.Status) {
	wp.done = true
	close(wp.stop)
	wp.result <- s
}
