package bench

import (
	"context"
	"encoding/json"
	"testing"
)

// benchmarkCreateQuota creates pods in a namespace with a ResourceQuota
// (observed, with room for all): every create is charged by the
// ResourceQuota admission plugin (a quota read and a status write per
// batch of concurrent requests).
func benchmarkCreateQuota(b *testing.B, storage string, clients int) {
	c := envClient(b, storage)
	ctx := context.Background()
	if err := c.CreateNamespace(ctx, "bench"); err != nil {
		b.Fatal(err)
	}
	var q struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	body := `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},"spec":{"hard":{"pods":"1000000"}}}`
	if err := c.call(ctx, "POST", "/api/v1/namespaces/bench/resourcequotas", []byte(body), 201, &q); err != nil {
		b.Fatal(err)
	}
	st, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ResourceQuota", "metadata": map[string]any{"name": "q", "resourceVersion": q.Metadata.ResourceVersion},
		"spec": map[string]any{"hard": map[string]any{"pods": "1000000"}}, "status": map[string]any{"hard": map[string]any{"pods": "1000000"}, "used": map[string]any{"pods": "0"}}})
	if err := c.call(ctx, "PUT", "/api/v1/namespaces/bench/resourcequotas/q/status", st, 200, nil); err != nil {
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

// BenchmarkCreatePodsWithQuota compares with BenchmarkCreatePods at 64
// clients.
func BenchmarkCreatePodsWithQuota(b *testing.B) {
	for _, s := range []string{"memory", "etcd"} {
		b.Run(s+"/clients=64", func(b *testing.B) { benchmarkCreateQuota(b, s, 64) })
	}
}
