package cache

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimepkg "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// benchPodList returns n pods shaped like real ones (labels, owner, one
// container with resources, a node, a status).
func benchPodList(n int) *corev1.PodList {
	l := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1000000"}, Items: make([]corev1.Pod, n)}
	for i := range l.Items {
		l.Items[i] = corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:       fmt.Sprintf("ns-%d", i%100),
				Name:            fmt.Sprintf("web-%08d", i),
				UID:             "6b2a9f6c-0a0e-4c1e-9d52-1e0f3f1b2c3d",
				ResourceVersion: fmt.Sprint(1000 + i),
				Labels:          map[string]string{"app": "web", "pod-template-hash": "5d4f8c7b9"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-5d4f8c7b9", UID: "1b2a9f6c"}},
			},
			Spec: corev1.PodSpec{
				NodeName: fmt.Sprintf("node-%d", i%500),
				Containers: []corev1.Container{{
					Name: "web", Image: "nginx:1.27",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi"),
					}},
				}},
			},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1"},
		}
	}
	return l
}

// BenchmarkInformerSync measures a shared informer's initial sync of 50k
// pods from a fake ListWatch (list → DeltaFIFO → indexer with the
// namespace index → one handler), until the handler has seen every add.
// ns/obj and B/obj are per pod.
func BenchmarkInformerSync(b *testing.B) {
	const n = 50000
	list := benchPodList(n)
	var totalAlloc, mallocs uint64
	var ms runtime.MemStats
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		lw := &ListWatch{
			ListFunc: func(context.Context, metav1.ListOptions) (runtimepkg.Object, error) { return list, nil },
			WatchFunc: func(ctx context.Context, _ metav1.ListOptions) (watch.Interface, error) {
				return newFakeWatch(), nil
			},
		}
		inf := NewSharedIndexInformer(lw, &corev1.Pod{}, 0, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
		var seen atomic.Int64
		done := make(chan struct{})
		inf.AddEventHandler(ResourceEventHandlerFuncs{AddFunc: func(any) {
			if seen.Add(1) == n {
				close(done)
			}
		}})
		runtime.ReadMemStats(&ms)
		a0, m0 := ms.TotalAlloc, ms.Mallocs
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { inf.Run(ctx) })
		<-done
		runtime.ReadMemStats(&ms)
		totalAlloc += ms.TotalAlloc - a0
		mallocs += ms.Mallocs - m0
		b.StopTimer()
		cancel()
		wg.Wait()
		b.StartTimer()
	}
	objs := float64(b.N) * n
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/objs, "ns/obj")
	b.ReportMetric(float64(totalAlloc)/objs, "B/obj")
	b.ReportMetric(float64(mallocs)/objs, "allocs/obj")
}

// BenchmarkProcessorDistribute measures fanning a notification out to
// handlers and delivering it (per notification, all handlers included).
func BenchmarkProcessorDistribute(b *testing.B) {
	for _, listeners := range []int{1, 10} {
		b.Run(fmt.Sprintf("listeners=%d", listeners), func(b *testing.B) {
			p := &sharedProcessor{}
			var wg sync.WaitGroup
			target := int64(b.N)
			for range listeners {
				var count atomic.Int64
				wg.Add(1)
				h := ResourceEventHandlerFuncs{UpdateFunc: func(_, _ any) {
					if count.Add(1) == target {
						wg.Done()
					}
				}}
				p.addListener(newProcessorListener(h, 0, 0, epoch))
			}
			p.start()
			obj := pod("a", "1")
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				p.distribute(notification{kind: updateNotification, oldObj: obj, newObj: obj}, false)
			}
			wg.Wait()
			b.StopTimer()
			p.stop()
		})
	}
}
