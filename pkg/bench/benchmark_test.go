package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/skiff-sh/skiff/pkg/testenv"
)

// In-process benchmarks: the same request code as `skiff bench apiserver`
// against a pkg/testenv server (memory storage unless noted), so a CPU
// profile covers client and server:
//
//	go test -run '^$' -bench . -cpuprofile cpu.out ./pkg/bench
//	go tool pprof -top pkg/bench.test cpu.out

func envClient(b *testing.B, storage string) *Client {
	b.Helper()
	env := testenv.StartT(b, testenv.Config{Storage: storage})
	c := NewClient(env.URL, env.TLSConfig())
	b.Cleanup(c.Close)
	return c
}

func benchmarkCreate(b *testing.B, storage string, clients int) {
	c := envClient(b, storage)
	ctx := context.Background()
	if err := c.CreateNamespace(ctx, "bench"); err != nil {
		b.Fatal(err)
	}
	bodies := podBodies("bench", b.N)
	b.ResetTimer()
	res, err := createBodies(ctx, c, "/api/v1/namespaces/bench/pods", bodies, clients, CreateResult{})
	b.StopTimer()
	if err != nil || res.Errors > 0 {
		b.Fatalf("%v; %d errors, first: %s", err, res.Errors, res.FirstError)
	}
	b.ReportMetric(res.PerSecond, "creates/s")
	b.ReportMetric(res.Latency.P99, "p99-ms")
}

func BenchmarkCreatePods(b *testing.B) {
	for _, storage := range []string{"memory", "etcd"} {
		for _, clients := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/clients=%d", storage, clients), func(b *testing.B) { benchmarkCreate(b, storage, clients) })
		}
	}
}

// listEnv is a memory-storage server holding pods pods.
func listEnv(b *testing.B, pods int) *Client {
	c := envClient(b, "memory")
	ctx := context.Background()
	if err := c.CreateNamespace(ctx, "bench"); err != nil {
		b.Fatal(err)
	}
	res, err := CreatePods(ctx, c, "bench", pods, 16)
	if err != nil || res.Errors > 0 {
		b.Fatalf("%v; %d errors, first: %s", err, res.Errors, res.FirstError)
	}
	return c
}

func benchmarkList(b *testing.B, path string, decode bool) {
	const pods = 2000
	c := listEnv(b, pods)
	ctx := context.Background()
	b.ResetTimer()
	var bytes int64
	for b.Loop() {
		n, items, err := listOnce(ctx, c, path, decode)
		if err != nil {
			b.Fatal(err)
		}
		if decode && items != pods {
			b.Fatalf("%d items", items)
		}
		bytes = n
	}
	b.SetBytes(bytes)
}

func BenchmarkListFromCache(b *testing.B) {
	b.Run("last-byte", func(b *testing.B) { benchmarkList(b, "/api/v1/pods?resourceVersion=0", false) })
	b.Run("decode", func(b *testing.B) { benchmarkList(b, "/api/v1/pods?resourceVersion=0", true) })
}

func BenchmarkListConsistent(b *testing.B) {
	b.Run("last-byte", func(b *testing.B) { benchmarkList(b, "/api/v1/pods", false) })
}

func BenchmarkWatchFanout(b *testing.B) {
	c := envClient(b, "memory")
	ctx := context.Background()
	var round atomic.Int64
	const watchers = 20
	b.ResetTimer()
	for b.Loop() {
		// A fresh namespace per round so names never collide.
		ns := fmt.Sprintf("watch-%d", round.Add(1))
		b.StopTimer()
		if err := c.CreateNamespace(ctx, ns); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := WatchFanout(ctx, c, ns, watchers, 200, 4, 0)
		if err != nil || !res.Verified {
			b.Fatalf("%v %v", err, res.Problems)
		}
		b.ReportMetric(res.EventsPerSecond, "events/s")
	}
}
