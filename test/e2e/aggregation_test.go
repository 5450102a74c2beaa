package e2e

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skiff-sh/skiff/pkg/testenv"
)

// An aggregated API server, shaped like metrics-server, behind `skiff
// up`: the APIService becomes Available, `kubectl top node` and `kubectl
// get --raw` reach it through the API server, which presents the
// front-proxy client certificate from its data directory and the caller
// in X-Remote-User.
func TestAggregatedMetricsAPI(t *testing.T) {
	t.Parallel()
	// Without skiff's own metrics-server: this test serves metrics.k8s.io.
	c := ownCluster(t, "memory", "--disable=scheduler,controller-manager,metrics-server")
	k := c.k()

	frontProxyCA, err := os.ReadFile(filepath.Join(c.dataDir, "pki", "front-proxy-ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	users := make(chan string, 100)
	srv, err := testenv.NewAggregatedServer(frontProxyCA, "kube-system", "metrics-server", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case users <- r.Header.Get("X-Remote-User"):
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/apis/metrics.k8s.io/v1beta1":
			w.Write([]byte(`{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"metrics.k8s.io/v1beta1","resources":[` +
				`{"name":"nodes","singularName":"","namespaced":false,"kind":"NodeMetrics","verbs":["get","list"]},` +
				`{"name":"pods","singularName":"","namespaced":true,"kind":"PodMetrics","verbs":["get","list"]}]}`))
		case "/apis/metrics.k8s.io/v1beta1/nodes", "/apis/metrics.k8s.io/v1beta1/nodes/agg-node":
			item := `{"metadata":{"name":"agg-node"},"timestamp":"2026-01-01T00:00:00Z","window":"10s","usage":{"cpu":"250m","memory":"100Mi"}}`
			if strings.HasSuffix(r.URL.Path, "/agg-node") {
				w.Write([]byte(`{"kind":"NodeMetrics","apiVersion":"metrics.k8s.io/v1beta1",` + item[1:]))
				return
			}
			w.Write([]byte(`{"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[` + item + `]}`))
		default:
			http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`, http.StatusNotFound)
		}
	}))
	if errors.Is(err, testenv.ErrNoHostIP) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	manifest := "apiVersion: v1\nkind: Node\nmetadata: {name: agg-node}\n---\n" + srv.Manifest("metrics.k8s.io", "v1beta1")
	k.withStdin(manifest).ok(t, "apply", "-f", "-")
	eventually(t, 30*time.Second, "the APIService Available", func() (bool, string) {
		out, _, _ := k.run(t, "get", "apiservice", "v1beta1.metrics.k8s.io")
		return strings.Contains(out, "kube-system/metrics-server   True"), out
	})
	wantMatch(t, k.ok(t, "top", "node", "agg-node"), `(?m)^NAME\s+CPU\(cores\)\s+`, `(?m)^agg-node\s+250m\s+`)
	out := k.ok(t, "get", "--raw", "/apis/metrics.k8s.io/v1beta1/nodes")
	wantContains(t, out, `"kind":"NodeMetricsList"`, `"cpu":"250m"`)
	me := strings.TrimSpace(k.ok(t, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"))
	sawMe := false
	for len(users) > 0 {
		if u := <-users; u == me {
			sawMe = true
		}
	}
	if !sawMe {
		t.Errorf("the aggregated server never saw X-Remote-User %q", me)
	}
	wantContains(t, k.ok(t, "api-resources", "--api-group=metrics.k8s.io"), "nodes", "NodeMetrics", "pods", "PodMetrics")
}
