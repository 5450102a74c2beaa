package intern_test

import (
	"fmt"
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

// statefulPod is benchPod with a StatefulSet pod's unique labels and a
// DaemonSet pod's per-node affinity.
func statefulPod(t testing.TB, rs, i int) *corev1.Pod {
	p := benchPodValue(rs, i, "registry.k8s.io/pause:3.10")
	p.Labels["statefulset.kubernetes.io/pod-name"] = p.Name
	p.Labels["apps.kubernetes.io/pod-index"] = fmt.Sprint(i)
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{fmt.Sprint("node-", i)}}}}}}}}
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	p = &corev1.Pod{}
	if err := p.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	return p
}

// heapPerPod is the live heap per pod of n pods made by mk, interned by
// in (none: nil).
func heapPerPod(n int, mk func(i int) *corev1.Pod, in *intern.Interner) float64 {
	before := liveHeap()
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = mk(i)
		if in != nil {
			in.Pod(pods[i])
		}
	}
	after := liveHeap()
	runtime.KeepAlive(pods)
	return float64(after-before) / float64(n)
}

// Interned pods of 100-pod ReplicaSets take less than half the heap of
// plain ones; so do pods with parts unique to each (whose entries would
// cost more than they save, were they entered).
func TestHeapPerPod(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap")
	}
	tests := []struct {
		name string
		mk   func(i int) *corev1.Pod
	}{
		{"ReplicaSet pods", func(i int) *corev1.Pod { return benchPod(t, i/100, i, "registry.k8s.io/pause:3.10") }},
		{"pods with unique labels and affinity", func(i int) *corev1.Pod { return statefulPod(t, i/100, i) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plain := heapPerPod(20000, tt.mk, nil)
			in := intern.New()
			shared := heapPerPod(20000, tt.mk, in)
			t.Logf("live heap per pod: %.0f B plain, %.0f B interned (%.2f×); %+v", plain, shared, shared/plain, in.Stats())
			if shared > 0.6*plain {
				t.Errorf("interned pods take %.0f B each, plain ones %.0f B: want at most 60%%", shared, plain)
			}
		})
	}
}

// Parts unique to one pod get no table entry.
func TestUniquePartsCostNoEntries(t *testing.T) {
	in := intern.New()
	var pods []*corev1.Pod
	entriesAfter := func(n int) int {
		for len(pods) < n {
			p := statefulPod(t, 0, len(pods))
			in.Pod(p)
			pods = append(pods, p)
		}
		return in.Stats().Entries
	}
	if a, b := entriesAfter(10), entriesAfter(200); a != b {
		t.Errorf("entries grew with unique pods: %d after 10 pods, %d after 200", a, b)
	}
	runtime.KeepAlive(pods)
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
