package intern_test

import (
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/skiff-sh/skiff/pkg/client/intern"
)

func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// heapPerPod is the live heap per pod of n pods of n/100 ReplicaSets,
// interned by in (none: nil).
func heapPerPod(t *testing.T, n int, in *intern.Interner) float64 {
	before := liveHeap()
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = benchPod(t, i/100, i, "registry.k8s.io/pause:3.10")
		if in != nil {
			in.Pod(pods[i])
		}
	}
	after := liveHeap()
	runtime.KeepAlive(pods)
	return float64(after-before) / float64(n)
}

func TestHeapPerPod(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap")
	}
	plain := heapPerPod(t, 20000, nil)
	in := intern.New()
	shared := heapPerPod(t, 20000, in)
	t.Logf("live heap per pod: %.0f B plain, %.0f B interned (%.2f×); %+v", plain, shared, shared/plain, in.Stats())
	if shared > 0.6*plain {
		t.Errorf("interned pods take %.0f B each, plain ones %.0f B: want at most 60%%", shared, plain)
	}
}

func BenchmarkPod(b *testing.B) {
	in := intern.New()
	pods := make([]*corev1.Pod, 1000)
	for i := range pods {
		pods[i] = benchPod(b, i/100, i, "registry.k8s.io/pause:3.10")
	}
	copies := make([]*corev1.Pod, b.N)
	for i := range copies {
		copies[i] = pods[i%len(pods)].DeepCopy()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		in.Pod(copies[i])
	}
}

func BenchmarkDecodePod(b *testing.B) {
	buf, _ := benchPodValue(1, 1, "registry.k8s.io/pause:3.10").Marshal()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		p := &corev1.Pod{}
		_ = p.Unmarshal(buf)
	}
}
