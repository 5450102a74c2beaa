package cache

import (
	"fmt"
	"sync"
	"testing"
)

// TestThreadSafeStoreConcurrent exercises readers and writers together; run
// with -race.
func TestThreadSafeStoreConcurrent(t *testing.T) {
	ix := NewIndexer(MetaNamespaceKeyFunc, testIndexers())
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				p := newPod(fmt.Sprint("ns", i%3), fmt.Sprint("p", i%17), "app", fmt.Sprint("a", (i+w)%5))
				switch i % 4 {
				case 0, 1:
					_ = ix.Add(p)
				case 2:
					_ = ix.Update(p)
				case 3:
					_ = ix.Delete(p)
				}
				if i%50 == 0 && w == 0 {
					_ = ix.Replace([]any{p}, "")
				}
			}
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				_, _ = ix.ByIndex(NamespaceIndex, fmt.Sprint("ns", i%3))
				_, _ = ix.Index("app", newPod("x", "y", "app", "a1"))
				_, _ = ix.IndexKeys("app", "a2")
				_ = ix.ListIndexFuncValues("app")
				_ = ix.List()
				_ = ix.ListKeys()
				_ = ix.GetIndexers()
			}
		}()
	}
	wg.Wait()
	checkIndexer(t, ix)
}

func TestNewThreadSafeStoreDiscardsGivenIndices(t *testing.T) {
	indices := Indices{"stale": Index{"x": &KeySet{}}}
	s := NewThreadSafeStore(Indexers{NamespaceIndex: MetaNamespaceIndexFunc}, indices)
	if err := s.Add("a/p", newPod("a", "p")); err != nil {
		t.Fatal(err)
	}
	if _, ok := indices["stale"]; ok || indices[NamespaceIndex]["a"].Len() != 1 {
		t.Fatalf("indices = %v", indices)
	}
}

// BenchmarkThreadSafeStoreAdd: adding distinct pods to a store with a
// namespace index (100 namespaces).
func BenchmarkThreadSafeStoreAdd(b *testing.B) {
	const n = 100_000
	pods := make([]any, n)
	keys := make([]string, n)
	for i := range pods {
		p := newPod(fmt.Sprintf("ns-%d", i%100), fmt.Sprintf("pod-%d", i))
		pods[i] = p
		keys[i] = p.Namespace + "/" + p.Name
	}
	newStore := func() ThreadSafeStore {
		return NewThreadSafeStore(Indexers{NamespaceIndex: MetaNamespaceIndexFunc}, Indices{})
	}
	s := newStore()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i % n
		if j == 0 && i > 0 {
			b.StopTimer()
			s = newStore()
			b.StartTimer()
		}
		if err := s.Add(keys[j], pods[j]); err != nil {
			b.Fatal(err)
		}
	}
}
