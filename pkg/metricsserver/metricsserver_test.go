package metricsserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// resourceMetrics renders a kubelet's /metrics/resource as the kubelet
// does: node, and container app of default/web, at time ts.
func resourceMetrics(ts time.Time, nodeCPU, nodeMem, cpu, mem float64) string {
	ms := ts.UnixMilli()
	return fmt.Sprintf(`# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="app",namespace="default",pod="web"} %g %d
# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in bytes
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="app",namespace="default",pod="web"} %g %d
# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total %g %d
# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes %g %d
# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE resource_scrape_error gauge
resource_scrape_error 0
`, cpu, ms, mem, ms, nodeCPU, ms, nodeMem, ms)
}

func TestRate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		prev, cur  sample
		ok         bool
		cpu, mem   string
		wantWindow time.Duration
	}{
		{name: "half a core", prev: sample{cpu: 10, hasCPU: true, ts: t0}, cur: sample{cpu: 17.5, hasCPU: true, mem: 64 << 20, ts: t0.Add(15 * time.Second)},
			ok: true, cpu: "500m", mem: "64Mi", wantWindow: 15 * time.Second},
		{name: "first sample", cur: sample{cpu: 1, hasCPU: true, ts: t0}},
		{name: "counter reset (restarted container)", prev: sample{cpu: 10, hasCPU: true, ts: t0}, cur: sample{cpu: 1, hasCPU: true, ts: t0.Add(time.Second)}},
		{name: "same timestamp", prev: sample{cpu: 1, hasCPU: true, ts: t0}, cur: sample{cpu: 2, hasCPU: true, ts: t0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, ok := rate(tt.prev, tt.cur)
			if ok != tt.ok {
				t.Fatalf("ok %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if u.cpu.String() != tt.cpu || u.mem.String() != tt.mem || u.window != tt.wantWindow {
				t.Errorf("cpu %s mem %s window %v, want %s %s %v", u.cpu.String(), u.mem.String(), u.window, tt.cpu, tt.mem, tt.wantWindow)
			}
		})
	}
}

func TestParseResourceMetrics(t *testing.T) {
	ts := time.UnixMilli(1_780_000_000_123)
	sc, err := parseResourceMetrics(strings.NewReader(resourceMetrics(ts, 100, 2e9, 3.5, 1e6)), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if sc.node.cpu != 100 || sc.node.mem != 2e9 || !sc.node.ts.Equal(ts) {
		t.Errorf("node %+v", sc.node)
	}
	c := sc.containers[podKey{"default", "web"}]["app"]
	if c.cpu != 3.5 || c.mem != 1e6 || !c.ts.Equal(ts) {
		t.Errorf("container %+v", c)
	}
}

// fakeKubelet serves /metrics/resource with figures the test sets.
type fakeKubelet struct {
	mu   sync.Mutex
	body string
}

func (k *fakeKubelet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/metrics/resource" {
		http.NotFound(w, r)
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	_, _ = io.WriteString(w, k.body)
}

func (k *fakeKubelet) set(s string) { k.mu.Lock(); k.body = s; k.mu.Unlock() }

// TestServe: a node whose kubelet is a test server, scraped twice, is
// served through the API server's aggregation as upstream's
// metrics-server serves it.
func TestServe(t *testing.T) {
	if testenv.HostIPv4() == "" {
		t.Skip("no non-loopback IPv4 address to serve an aggregated API on")
	}
	env := testenv.StartT(t)
	ctx := context.Background()
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	kubelet := &fakeKubelet{}
	ks := httptest.NewTLSServer(kubelet)
	defer ks.Close()
	host, portStr, _ := net.SplitHostPort(strings.TrimPrefix(ks.URL, "https://"))
	port, _ := strconv.Atoi(portStr)

	nodes := client.For[*corev1.Node, *corev1.NodeList](c)
	n, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"zone": "a"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: host}}
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(port)
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	if _, err := nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := env.EnsureServiceAccount(ctx, "default", "default"); err != nil {
		t.Fatal(err)
	}
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s, err := New(Config{Client: c, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	// The informers only: the test scrapes itself (Run would scrape at
	// once, concurrently with the test's rounds).
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.factory.Start(rctx)
	defer s.factory.Shutdown()

	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Wait until the informers know the node and the pod, then scrape twice.
	deadline := time.Now().Add(10 * time.Second)
	for {
		node, errN := s.nodes.Get("n1")
		_, errP := s.pods.Namespace("default").Get("web")
		if errN == nil && errP == nil && nodeReady(node) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("informers never saw the node and pod")
		}
		time.Sleep(5 * time.Millisecond)
	}
	kubelet.set(resourceMetrics(t0, 1000, 4<<30, 10, 50<<20))
	s.Scrape(ctx)
	kubelet.set(resourceMetrics(t0.Add(15*time.Second), 1030, 4<<30, 13, 60<<20)) // 2 cores; 200m
	s.Scrape(ctx)

	if _, err := env.ServeAggregatedAPI(ctx, Group, Version, "metrics-server", s.Handler()); err != nil {
		t.Fatal(err)
	}
	hc := env.HTTPClient()
	get := func(path string, into any) int {
		t.Helper()
		resp, err := hc.Get(env.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatalf("%s: %v: %s", path, err, b)
		}
		return resp.StatusCode
	}
	var nl NodeMetricsList
	if code := get("/apis/metrics.k8s.io/v1beta1/nodes", &nl); code != 200 || len(nl.Items) != 1 {
		t.Fatalf("nodes: %d %+v", code, nl)
	}
	nm := nl.Items[0]
	if nm.Name != "n1" || nm.Usage.Cpu().String() != "2" || nm.Usage.Memory().String() != "4Gi" ||
		nm.Window.Duration != 15*time.Second || !nm.Timestamp.Time.Equal(t0.Add(15*time.Second)) || nm.Labels["zone"] != "a" || nm.Kind != "NodeMetrics" {
		t.Errorf("node metrics %+v", nm)
	}
	var pl PodMetricsList
	if code := get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dweb", &pl); code != 200 || len(pl.Items) != 1 {
		t.Fatalf("pods: %d %+v", code, pl)
	}
	if c := pl.Items[0].Containers; len(c) != 1 || c[0].Name != "app" || c[0].Usage.Cpu().String() != "200m" || c[0].Usage.Memory().String() != "60Mi" {
		t.Errorf("pod metrics %+v", pl.Items[0])
	}
	if code := get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dother", &pl); code != 200 || len(pl.Items) != 0 {
		t.Errorf("pods of another selector: %d %+v", code, pl)
	}
	var st metav1.Status
	if code := get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/nope", &st); code != 404 || st.Message != `podmetrics.metrics.k8s.io "default/nope" not found` {
		t.Errorf("missing pod: %d %q", code, st.Message)
	}
	if code := get("/apis/metrics.k8s.io/v1beta1/nodes/nope", &st); code != 404 || st.Message != `nodemetrics.metrics.k8s.io "nope" not found` {
		t.Errorf("missing node: %d %q", code, st.Message)
	}
	// The kubelet restarting its counters: no figure until two new samples.
	kubelet.set(resourceMetrics(t0.Add(30*time.Second), 5, 4<<30, 1, 60<<20))
	s.Scrape(ctx)
	if code := get("/apis/metrics.k8s.io/v1beta1/nodes", &nl); code != 200 || len(nl.Items) != 0 {
		t.Errorf("after a counter reset: %d %+v", code, nl)
	}
}

// TestUpdate: a scrape whose sample is no newer keeps the last two
// samples (a runtime's cached stats); a newer one moves them on; a
// container the scrape no longer reports is dropped.
func TestUpdate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	k := podKey{"default", "web"}
	scrape := func(ts time.Time, cpu float64, containers bool) *nodeScrape {
		sc := &nodeScrape{node: sample{cpu: cpu, hasCPU: true, ts: ts}, containers: map[podKey]map[string]sample{}}
		if containers {
			sc.containers[k] = map[string]sample{"app": {cpu: cpu, hasCPU: true, mem: 1 << 20, ts: ts}}
		}
		return sc
	}
	st := update(nil, scrape(t0, 10, true))
	st = update(st, scrape(t0.Add(10*time.Second), 15, true))
	st = update(st, scrape(t0.Add(10*time.Second), 15, true)) // cached: same sample again
	u, ok := st.nodeUsage()
	if !ok || u.cpu.String() != "500m" || u.window != 10*time.Second {
		t.Fatalf("node usage after a repeated sample: %v %+v", ok, u)
	}
	if cs, _, _, ok := st.podUsage(k); !ok || cs[0].Usage.Cpu().String() != "500m" {
		t.Fatalf("pod usage after a repeated sample: %v %+v", ok, cs)
	}
	st = update(st, scrape(t0.Add(20*time.Second), 25, false))
	if u, _ := st.nodeUsage(); u.cpu.String() != "1" {
		t.Errorf("node usage after a newer sample: %s, want 1", u.cpu.String())
	}
	if _, _, _, ok := st.podUsage(k); ok {
		t.Error("a pod the last scrape did not report still has metrics")
	}
}
