package compat

// Side-by-side benchmarks of skiff's client library and client-go's. Each
// Benchmark<Thing> has the sub-benchmarks <Thing>/skiff and
// <Thing>/clientgo doing the same work, so that
//
//	go test -run '^$' -bench . -benchmem
//
// prints them next to each other. Nothing here talks to a server.

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
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	skiffcache "github.com/skiff-sh/skiff/pkg/client/cache"
	skiffwq "github.com/skiff-sh/skiff/pkg/client/workqueue"
)

// impls are the second-level sub-benchmark names.
var impls = []string{"skiff", "clientgo"}

// intQueue is what both libraries' typed queues offer.
type intQueue interface {
	Add(int)
	Get() (int, bool)
	Done(int)
	ShutDown()
}

// BenchmarkWorkqueue measures one Add/Get/Done cycle through a plain
// typed queue, with 1 and 8 workers. Each worker adds a unique item, then
// gets whatever is next (possibly another worker's item) and marks it
// done.
func BenchmarkWorkqueue(b *testing.B) {
	for _, impl := range impls {
		b.Run(impl, func(b *testing.B) {
			for _, workers := range []int{1, 8} {
				b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
					var q intQueue
					if impl == "skiff" {
						q = skiffwq.NewTyped[int]()
					} else {
						q = workqueue.NewTyped[int]()
					}
					defer q.ShutDown()
					b.ReportAllocs()
					b.ResetTimer()
					var wg sync.WaitGroup
					for w := range workers {
						n := b.N / workers
						if w < b.N%workers {
							n++
						}
						wg.Go(func() {
							for i := range n {
								q.Add(w + i*workers)
								item, _ := q.Get()
								q.Done(item)
							}
						})
					}
					wg.Wait()
				})
			}
		})
	}
}

// benchKeys are controller-style "namespace/name" keys.
func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("namespace-%d/object-%d", i%10, i)
	}
	return keys
}

// BenchmarkRateLimitingQueueAddRateLimited measures AddRateLimited with the
// default controller rate limiter (per-item exponential max'd with a 10
// qps / 100 burst bucket) over 1024 recurring keys: the limiter's
// bookkeeping plus the delaying queue's heap (where re-adding a waiting key
// is deduplicated).
func BenchmarkRateLimitingQueueAddRateLimited(b *testing.B) {
	keys := benchKeys(1024)
	for _, impl := range impls {
		b.Run(impl, func(b *testing.B) {
			var add func(string)
			if impl == "skiff" {
				q := skiffwq.NewTypedRateLimitingQueue(skiffwq.DefaultTypedControllerRateLimiter[string]())
				defer q.ShutDown()
				add = q.AddRateLimited
			} else {
				q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](), workqueue.TypedRateLimitingQueueConfig[string]{})
				defer q.ShutDown()
				add = q.AddRateLimited
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				add(keys[i%len(keys)])
			}
		})
	}
}

// benchPods returns n pods shaped like real ones (labels, owner, one
// container with resources, a node, a status) in 100 namespaces.
func benchPods(n int) *corev1.PodList {
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

// BenchmarkDeltaFIFO measures Add then Pop through a DeltaFIFO, in batches
// of 1000 distinct pods (add 1000, pop 1000); one op is one pod added and
// popped.
func BenchmarkDeltaFIFO(b *testing.B) {
	const batch = 1000
	pods := benchPods(batch).Items
	process := func(any, bool) error { return nil }
	for _, impl := range impls {
		b.Run(impl, func(b *testing.B) {
			var add func(any) error
			var pop func()
			if impl == "skiff" {
				f := skiffcache.NewDeltaFIFOWithOptions(skiffcache.DeltaFIFOOptions{KeyFunction: skiffcache.MetaNamespaceKeyFunc})
				add = f.Add
				pop = func() { f.Pop(process) }
			} else {
				f := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc})
				add = f.Add
				pop = func() { f.Pop(process) }
			}
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; done += batch {
				n := min(batch, b.N-done)
				for i := range n {
					if err := add(&pods[i]); err != nil {
						b.Fatal(err)
					}
				}
				for range n {
					pop()
				}
			}
		})
	}
}

// BenchmarkIndexerByIndex measures ByIndex on the namespace index of an
// indexer holding 100k pods in 100 namespaces (1000 pods per answer).
// index-B/pod is the heap the filled indexer holds per pod (after GC; the
// pods themselves are not counted).
func BenchmarkIndexerByIndex(b *testing.B) {
	const n, namespaces = 100000, 100
	pods := benchPods(n).Items
	nsNames := make([]string, namespaces)
	for i := range nsNames {
		nsNames[i] = fmt.Sprintf("ns-%d", i)
	}
	for _, impl := range impls {
		b.Run(impl, func(b *testing.B) {
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			heap0 := ms.HeapAlloc
			var byIndex func(name, value string) ([]any, error)
			if impl == "skiff" {
				idx := skiffcache.NewIndexer(skiffcache.MetaNamespaceKeyFunc, skiffcache.Indexers{skiffcache.NamespaceIndex: skiffcache.MetaNamespaceIndexFunc})
				for i := range pods {
					if err := idx.Add(&pods[i]); err != nil {
						b.Fatal(err)
					}
				}
				byIndex = idx.ByIndex
			} else {
				idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
				for i := range pods {
					if err := idx.Add(&pods[i]); err != nil {
						b.Fatal(err)
					}
				}
				byIndex = idx.ByIndex
			}
			runtime.GC()
			runtime.ReadMemStats(&ms)
			// The indexer's own memory (keys, maps, index); the pods are
			// shared with the benchmark.
			indexBytes := (float64(ms.HeapAlloc) - float64(heap0)) / n
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				objs, err := byIndex("namespace", nsNames[i%namespaces])
				if err != nil || len(objs) != n/namespaces {
					b.Fatalf("ByIndex: %d objects, %v", len(objs), err)
				}
			}
			b.ReportMetric(indexBytes, "index-B/pod") // after the loop: ResetTimer clears metrics
		})
	}
}

// noWatchList marks client-go's fake ListWatch as not supporting
// watch-list, so that its Reflector lists (as skiff's does by default)
// instead of waiting for initial events the fake never sends.
type noWatchList struct{ *cache.ListWatch }

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// syncer is one informer built for one BenchmarkInformerSync iteration.
type syncer struct {
	run  func(ctx context.Context)
	done chan struct{} // closed when the handler has seen every add
}

// BenchmarkInformerSync measures a SharedIndexInformer's initial sync of
// 50k pods from an in-memory ListWatch (one list, then an idle watch):
// list → FIFO → indexer (namespace index) → one handler, until the handler
// has seen every add. ns/pod is time per pod; B/pod is the heap the synced
// informer retains per pod (after GC, beyond the list itself, which the
// cache shares); alloc-B/pod is what the sync allocated per pod.
func BenchmarkInformerSync(b *testing.B) {
	const n = 50000
	list := benchPods(n)
	listFn := func(context.Context, metav1.ListOptions) (kruntime.Object, error) { return list, nil }
	watchFn := func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil }
	for _, impl := range impls {
		b.Run(impl, func(b *testing.B) {
			build := func() syncer {
				var seen atomic.Int64
				done := make(chan struct{})
				count := func(any) {
					if seen.Add(1) == n {
						close(done)
					}
				}
				if impl == "skiff" {
					lw := &skiffcache.ListWatch{ListFunc: listFn, WatchFunc: watchFn}
					inf := skiffcache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, skiffcache.Indexers{skiffcache.NamespaceIndex: skiffcache.MetaNamespaceIndexFunc})
					if _, err := inf.AddEventHandler(skiffcache.ResourceEventHandlerFuncs{AddFunc: count}); err != nil {
						b.Fatal(err)
					}
					return syncer{run: inf.Run, done: done}
				}
				lw := noWatchList{&cache.ListWatch{ListWithContextFunc: listFn, WatchFuncWithContext: watchFn}}
				inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
				if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: count}); err != nil {
					b.Fatal(err)
				}
				return syncer{run: inf.RunWithContext, done: done}
			}
			var retained, allocated float64
			var ms runtime.MemStats
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&ms)
				heap0, alloc0 := ms.HeapAlloc, ms.TotalAlloc
				s := build()
				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				b.StartTimer()
				wg.Go(func() { s.run(ctx) })
				<-s.done
				b.StopTimer()
				runtime.ReadMemStats(&ms)
				allocated += float64(ms.TotalAlloc - alloc0)
				runtime.GC()
				runtime.ReadMemStats(&ms)
				retained += float64(ms.HeapAlloc) - float64(heap0)
				cancel()
				wg.Wait()
				runtime.KeepAlive(s)
				b.StartTimer()
			}
			objs := float64(b.N) * n
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/objs, "ns/pod")
			b.ReportMetric(retained/objs, "B/pod")
			b.ReportMetric(allocated/objs, "alloc-B/pod")
		})
	}
}
