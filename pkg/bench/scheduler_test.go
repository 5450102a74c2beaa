package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/skiff-sh/skiff/pkg/client"
)

// runFakeScheduler is a stand-in for `skiff scheduler` with the flags the
// scheduler benchmark passes: it binds every pending pod to the nodes in
// name order, round-robin, through the pods/binding subresource with
// pkg/client, and serves scheduler_scheduling_attempt_duration_seconds
// (the time of each decision) on plain HTTP at --secure-port.
func runFakeScheduler(args []string) int {
	fs := flag.NewFlagSet("scheduler", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "")
	config := fs.String("config", "", "")
	fs.Bool("leader-elect", true, "")
	port := fs.Int("secure-port", 0, "")
	fs.String("bind-address", "", "")
	fs.String("authorization-always-allow-paths", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if b, err := os.ReadFile(*config); err != nil || !bytes.Contains(b, []byte("kind: KubeSchedulerConfiguration")) {
		fmt.Fprintln(os.Stderr, "fake scheduler: bad --config:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := fakeSchedule(ctx, *kubeconfig, *port); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "fake scheduler:", err)
		return 1
	}
	return 0
}

// fakeBuckets are the attempt histogram's upper bounds, in seconds.
var fakeBuckets = []float64{0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024}

func fakeSchedule(ctx context.Context, kubeconfig string, port int) error {
	cfg, err := client.LoadKubeconfig(kubeconfig, "")
	if err != nil {
		return err
	}
	cfg.QPS, cfg.ContentType = -1, client.ContentTypeProtobuf
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := client.New(cfg)
	if err != nil {
		return err
	}
	var (
		mu     sync.Mutex
		counts = make([]int, len(fakeBuckets))
		total  int
		sum    float64
	)
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		const name = "scheduler_scheduling_attempt_duration_seconds"
		fmt.Fprintf(w, "# HELP %s fake\n# TYPE %s histogram\n", name, name)
		for i, le := range fakeBuckets {
			fmt.Fprintf(w, "%s_bucket{profile=\"default-scheduler\",result=\"scheduled\",le=\"%g\"} %d\n", name, le, counts[i])
		}
		fmt.Fprintf(w, "%s_bucket{profile=\"default-scheduler\",result=\"scheduled\",le=\"+Inf\"} %d\n", name, total)
		fmt.Fprintf(w, "%s_sum{profile=\"default-scheduler\",result=\"scheduled\"} %g\n", name, sum)
		fmt.Fprintf(w, "%s_count{profile=\"default-scheduler\",result=\"scheduled\"} %d\n", name, total)
		fmt.Fprintf(w, "%s_bucket{profile=\"default-scheduler\",result=\"error\",le=\"+Inf\"} 7\n", name)
	})}
	go srv.Serve(ln)
	defer srv.Close()

	nodeList, err := client.For[*corev1.Node, *corev1.NodeList](c).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	// Nodes by zone, in name order; each pod goes to the zone that has
	// the fewest of its namespace's pods from this scheduler (so the
	// spread constraint holds), round-robin over that zone's nodes.
	zones := map[string][]string{}
	var zoneNames []string
	for _, n := range nodeList.Items {
		z := n.Labels[zoneLabel]
		if len(zones[z]) == 0 {
			zoneNames = append(zoneNames, z)
		}
		zones[z] = append(zones[z], n.Name)
	}
	if len(zoneNames) == 0 {
		return errors.New("no nodes")
	}
	slices.Sort(zoneNames)
	for _, z := range zoneNames {
		slices.Sort(zones[z])
	}
	placed := map[string]map[string]int{} // namespace → zone → pods
	nextInZone := map[string]int{}
	pick := func(ns string) string {
		if placed[ns] == nil {
			placed[ns] = map[string]int{}
		}
		best := zoneNames[0]
		for _, z := range zoneNames[1:] {
			if placed[ns][z] < placed[ns][best] {
				best = z
			}
		}
		placed[ns][best]++
		n := zones[best][nextInZone[best]%len(zones[best])]
		nextInZone[best]++
		return n
	}
	pods := client.For[*corev1.Pod, *corev1.PodList](c)
	sel := metav1.ListOptions{FieldSelector: "spec.nodeName="}
	list, err := pods.List(ctx, sel)
	if err != nil {
		return err
	}
	bind := func(p *corev1.Pod) error {
		if p.Spec.NodeName != "" {
			return nil
		}
		// The attempt ends with the decision, before the binding (as
		// upstream's attempt duration), so a scrape that follows the
		// binding always counts it.
		t0 := time.Now()
		b := &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
			Target:     corev1.ObjectReference{Kind: "Node", Name: pick(p.Namespace)},
		}
		d := time.Since(t0).Seconds()
		mu.Lock()
		for i, le := range fakeBuckets {
			if d <= le {
				counts[i]++
			}
		}
		total++
		sum += d
		mu.Unlock()
		return pods.Namespace(p.Namespace).Subresource(ctx, p.Name, "binding", b, nil)
	}
	for i := range list.Items {
		if err := bind(&list.Items[i]); err != nil {
			return err
		}
	}
	sel.ResourceVersion = list.ResourceVersion
	w, err := pods.Watch(ctx, sel)
	if err != nil {
		return err
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if ev.Type != watch.Added {
			continue
		}
		if p, ok := ev.Object.(*corev1.Pod); ok {
			if err := bind(p); err != nil {
				return err
			}
		}
	}
	return ctx.Err()
}

// TestRunSchedulerEndToEnd runs `bench scheduler` at a tiny scale, both
// shapes, with the fake scheduler above standing in for both "skiff" and
// "upstream": every phase must complete, the numbers must be consistent.
func TestRunSchedulerEndToEnd(t *testing.T) {
	var out, progress bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r, err := RunScheduler(ctx, SchedulerConfig{
		Nodes: 10, Bound: 5, Pods: 20,
		Shapes:     []string{ShapeBasic, ShapeAffinity},
		Schedulers: []string{"skiff", "upstream"},
		// "upstream" is the fake too, started by a different code path.
		UpstreamScheduler: os.Args[0], UpstreamArgs: DefaultSkiffSchedulerArgs,
		Clients: 4, Settle: 10 * time.Millisecond, Timeout: time.Minute, ReadyTimeout: time.Minute,
		Precreate: true,
		JSON:      true,
		Command:   []string{os.Args[0]}, Env: []string{childEnv + "=1"},
		Out: &out, Progress: &progress,
	})
	t.Log(progress.String())
	if err != nil {
		t.Fatalf("RunScheduler: %v\n%s", err, out.String())
	}
	var decoded SchedulerReport
	if err := json.Unmarshal(out.Bytes(), &decoded); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out.String())
	}
	if len(decoded.Shapes) != 2 || decoded.Nodes != 10 || decoded.Bound != 5 || decoded.Pods != 20 {
		t.Fatalf("report: %+v", decoded)
	}
	for _, sr := range r.Shapes {
		if len(sr.Runs) != 4 {
			t.Fatalf("%s: runs %+v", sr.Shape, sr.Runs)
		}
		for i, run := range sr.Runs {
			name := sr.Shape + "/" + run.label()
			if wantMode := []string{"", "", ModePrecreated, ModePrecreated}[i]; run.Mode != wantMode {
				t.Errorf("%s: run %d has mode %q, want %q", name, i, run.Mode, wantMode)
			}
			if run.Error != "" || run.Pods != 20 || run.Seconds <= 0 || run.PodsPerSec <= 0 {
				t.Errorf("%s: %+v", name, run)
			}
			if run.Mode == ModePrecreated {
				// Created before the scheduler: no e2e latency, the phase
				// starts with the first binding.
				if run.Latency.Count != 0 || run.ReadySeconds <= 0 || run.CreateSeconds < 0 {
					t.Errorf("%s: latency %+v ready %v create %v", name, run.Latency, run.ReadySeconds, run.CreateSeconds)
				}
			} else if run.Latency.Count != 20 || run.Latency.P50 <= 0 || run.Latency.Max < run.Latency.P99 {
				t.Errorf("%s: e2e latency %+v", name, run.Latency)
			}
			if run.Attempt == nil || run.Attempt.Count != 20 || run.Attempt.P50 <= 0 || run.Attempt.P99 < run.Attempt.P50 {
				t.Errorf("%s: attempt histogram %+v (%s)", name, run.Attempt, run.MetricsNote)
			}
			if run.SLI != nil {
				t.Errorf("%s: SLI from a scheduler that has none: %+v", name, run.SLI)
			}
			if run.ReadyRSS <= 0 || run.PeakRSS < run.EndRSS || run.EndRSS <= 0 {
				t.Errorf("%s: memory ready %v end %v peak %v", name, run.ReadyRSS, run.EndRSS, run.PeakRSS)
			}
			zsum := 0
			for _, n := range run.Zones {
				zsum += n
			}
			if zsum != 20 || run.MaxSkew > 1 || len(run.Zones) != benchZones {
				t.Errorf("%s: zones %v skew %d", name, run.Zones, run.MaxSkew)
			}
			if !strings.Contains(run.Command, "--config=") || strings.Contains(run.Command, "{") {
				t.Errorf("%s: command %q", name, run.Command)
			}
		}
		if len(sr.Targets) != 3 || sr.Targets[2].Status != "info" || !strings.Contains(sr.Targets[2].Name, "created first") {
			t.Errorf("%s: targets %+v", sr.Shape, sr.Targets)
		}
	}
	var text bytes.Buffer
	r.WriteText(&text)
	for _, want := range []string{"shape basic", "shape affinity", "pods/s (average)", "skiff/upstream pods/s vs upstream", "pods per zone", "skiff (precreated)", "pods/s, pods created first"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	t.Log("\n" + text.String())
}

func TestSchedulerConfigChecks(t *testing.T) {
	cfg := SchedulerConfig{Schedulers: []string{"skiff"}, Command: []string{"false"}}
	err := cfg.complete()
	if err == nil || !strings.Contains(err.Error(), "--scheduler=upstream") || !strings.Contains(err.Error(), "false scheduler --help") {
		t.Errorf("skiff without a scheduler command: %v", err)
	}
	cfg = SchedulerConfig{Schedulers: []string{"upstream"}, UpstreamScheduler: "/nonexistent/kube-scheduler", Command: []string{"true"}}
	if err := cfg.complete(); err == nil || !strings.Contains(err.Error(), "KUBE_SCHEDULER") {
		t.Errorf("missing upstream binary: %v", err)
	}
	cfg = SchedulerConfig{Shapes: []string{"weird"}, Command: []string{"true"}}
	if err := cfg.complete(); err == nil {
		t.Error("unknown shape accepted")
	}
	cfg = SchedulerConfig{Schedulers: []string{"upstream"}, UpstreamScheduler: "/bin/sh", Command: []string{"/x/skiff"}}
	if err := cfg.complete(); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(cfg.schedulerArgv("upstream", "/d/kc", "/d/c.yaml", 1234), " ")
	want := "/bin/sh --kubeconfig=/d/kc --leader-elect=false --config=/d/c.yaml --secure-port=1234 --bind-address=127.0.0.1 --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics"
	if got != want {
		t.Errorf("upstream argv\n got %s\nwant %s", got, want)
	}
	got = strings.Join(cfg.schedulerArgv("skiff", "/d/kc", "/d/c.yaml", 1234), " ")
	want = "/x/skiff scheduler --kubeconfig=/d/kc --leader-elect=false --config=/d/c.yaml --secure-port=1234 --bind-address=127.0.0.1 --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics"
	if got != want {
		t.Errorf("skiff argv\n got %s\nwant %s", got, want)
	}
}

func TestHistogramQuantiles(t *testing.T) {
	const text = `# HELP x_seconds test
# TYPE x_seconds histogram
x_seconds_bucket{profile="a",result="scheduled",le="0.1"} 10
x_seconds_bucket{profile="a",result="scheduled",le="0.2"} 60
x_seconds_bucket{profile="a",result="scheduled",le="0.4"} 100
x_seconds_bucket{profile="a",result="scheduled",le="+Inf"} 100
x_seconds_bucket{profile="b",result="scheduled",le="0.1"} 0
x_seconds_bucket{profile="b",result="scheduled",le="0.2"} 0
x_seconds_bucket{profile="b",result="scheduled",le="0.4"} 0
x_seconds_bucket{profile="b",result="scheduled",le="+Inf"} 100
x_seconds_bucket{profile="a",result="error",le="+Inf"} 55
x_seconds_count{profile="a",result="scheduled"} 100
x_seconds_count{profile="b",result="scheduled"} 100
x_seconds_sum{profile="a",result="scheduled"} 21.5
x_seconds_other{le="1"} 3
`
	h, found, err := parseHistogram(strings.NewReader(text), "x_seconds", map[string]string{"result": "scheduled", "profile": "a"})
	if err != nil || !found {
		t.Fatal(found, err)
	}
	if h.Count != 100 || h.Sum != 21.5 || len(h.Buckets) != 4 {
		t.Fatalf("%+v", h)
	}
	cases := []struct{ q, want float64 }{
		{0.05, 0.05},  // inside the first bucket, from 0
		{0.5, 0.18},   // 50 of 60 at 0.2: 0.1 + 0.1×40/50
		{0.9, 0.35},   // 90: 0.2 + 0.2×30/40
		{0.99, 0.395}, // 99
	}
	for _, c := range cases {
		if got := h.quantile(c.q); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	all, _, _ := parseHistogram(strings.NewReader(text), "x_seconds", map[string]string{"result": "scheduled"})
	if got := all.quantile(0.99); got != 0.4 { // rank 198 of 200 falls in +Inf: the highest finite bound
		t.Errorf("+Inf quantile = %v", got)
	}
	d := h.sub(histogram{Buckets: map[float64]float64{0.1: 10, 0.2: 10, 0.4: 10, math.Inf(1): 10}, Count: 10})
	// After the subtraction: 0.1 → 0, 0.2 → 50, 0.4 → 90; rank 45 is
	// 0.1 + 0.1×45/50 = 0.19 s.
	if q := d.quantiles(); q == nil || q.Count != 90 || math.Abs(q.P50-190) > 1e-6 {
		t.Errorf("diff quantiles %+v", q)
	}
	empty := histogram{Buckets: map[float64]float64{0.1: 0, math.Inf(1): 0}}
	if q := empty.quantiles(); q != nil {
		t.Errorf("quantiles without observations: %+v", q)
	}
	if _, found, _ := parseHistogram(strings.NewReader(text), "y_seconds", nil); found {
		t.Error("found a histogram that is not there")
	}
}

func TestSummarizeThroughput(t *testing.T) {
	tp := summarizeThroughput([]float64{500, 100, 300, 200, 400})
	if tp.Samples != 5 || tp.Average != 300 || tp.P50 != 300 || tp.P90 != 500 || tp.P99 != 500 {
		t.Fatalf("%+v", tp)
	}
	if tp := summarizeThroughput(nil); tp != (Throughput{}) {
		t.Fatalf("%+v", tp)
	}
}

func TestSchedWorkload(t *testing.T) {
	n := SchedNode(4)
	if n.Name != "node-00004" || n.Labels[zoneLabel] != "zone-2" || n.Labels[hostnameLabel] != n.Name {
		t.Errorf("node labels %v", n.Labels)
	}
	if q := n.Status.Allocatable[corev1.ResourceCPU]; q.String() != "4" {
		t.Errorf("allocatable cpu %v", q.String())
	}
	if i, ok := nodeIndex(n.Name); !ok || i != 4 {
		t.Errorf("nodeIndex %d %v", i, ok)
	}
	b := SchedPod(ShapeBasic, pendingNamespace, 7, "")
	if b.Name != "pod-000007" || b.Spec.Affinity != nil || len(b.Spec.TopologySpreadConstraints) != 0 || len(b.Labels) != 0 {
		t.Errorf("basic pod %+v", b)
	}
	if q := b.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory]; q.String() != "500Mi" {
		t.Errorf("basic pod memory %v", q.String())
	}
	a := SchedPod(ShapeAffinity, boundNamespace, 3, "node-00001")
	if a.Spec.NodeName != "node-00001" || a.Labels["color"] != "blue" {
		t.Errorf("affinity pod %+v", a.ObjectMeta)
	}
	terms := a.Spec.Affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(terms) != 1 || terms[0].TopologyKey != zoneLabel || len(terms[0].Namespaces) != 2 {
		t.Errorf("affinity terms %+v", terms)
	}
	if tsc := a.Spec.TopologySpreadConstraints; len(tsc) != 1 || tsc[0].MaxSkew != 1 || tsc[0].WhenUnsatisfiable != corev1.DoNotSchedule {
		t.Errorf("spread %+v", tsc)
	}
}
