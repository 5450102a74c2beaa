package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skiff-sh/skiff/pkg/cluster"
	"github.com/skiff-sh/skiff/pkg/controllermanager"
)

// childEnv makes the test binary act as `skiff up` (see TestMain), so the
// end-to-end test spawns a real child server without building cmd/skiff.
const childEnv = "SKIFF_BENCH_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(runChild(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// runChild is `skiff up` with the flags the benchmark passes.
func runChild(args []string) int {
	if len(args) > 0 && args[0] == "controller-manager" {
		return runChildManager(args[1:])
	}
	if len(args) > 0 && args[0] == "scheduler" {
		return runFakeScheduler(args[1:])
	}
	if len(args) > 0 && args[0] == "kubelet" {
		return runChildKubelet(args[1:])
	}
	if len(args) == 0 || args[0] != "up" {
		fmt.Fprintln(os.Stderr, "child: want `up` flags, got", args)
		return 2
	}
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	cfg := cluster.UpConfig{Out: os.Stdout, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	fs.StringVar(&cfg.DataDir, "data-dir", "", "")
	fs.IntVar(&cfg.SecurePort, "secure-port", 0, "")
	fs.StringVar(&cfg.Storage, "storage", "", "")
	disable := fs.String("disable", "", "")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *disable != "" {
		cfg.Disable = strings.Split(*disable, ",")
	}
	up, err := cluster.NewUp(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := up.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestRunEndToEnd runs the whole tool with tiny sizes against a child
// server on each storage: every phase must work and verify; the numbers
// are only logged.
func TestRunEndToEnd(t *testing.T) {
	for _, storage := range []string{"memory", "etcd"} {
		t.Run(storage, func(t *testing.T) {
			var out, progress bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cfg := Config{
				Storage: storage, Pods: 50, Clients: []int{1, 2}, Watchers: 3, WatchEvents: 20, WatchWriters: 2,
				StartRepeats: 1, StartStorages: []string{storage}, ListRepeats: 2, Settle: 10 * time.Millisecond,
				JSON:    true,
				Command: []string{os.Args[0]}, Env: []string{childEnv + "=1"},
				Out: &out, Progress: &progress,
			}
			r, err := Run(ctx, cfg)
			t.Log(progress.String())
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, out.String())
			}
			var decoded Report
			if err := json.Unmarshal(out.Bytes(), &decoded); err != nil {
				t.Fatalf("report is not JSON: %v\n%s", err, out.String())
			}
			if len(decoded.Startup) != 1 || len(decoded.Startup[0].Runs) != 1 || decoded.Startup[0].Median <= 0 {
				t.Errorf("startup: %+v", decoded.Startup)
			}
			if len(r.Create) != 2 || r.Create[0].Created != 5 || r.Create[1].Created != 45 || r.Pods != 50 {
				t.Errorf("creates: %+v (pods %d)", r.Create, r.Pods)
			}
			for _, c := range r.Create {
				if c.Errors != 0 || c.Latency.Count != c.Created {
					t.Errorf("create phase: %+v", c)
				}
			}
			if len(r.List) != 4 {
				t.Fatalf("lists: %+v", r.List)
			}
			for _, l := range r.List {
				if l.Latency.Count != 2 || l.Bytes == 0 || (l.Decode && l.Items != 50) {
					t.Errorf("list: %+v", l)
				}
			}
			if r.Watch == nil || !r.Watch.Verified || r.Watch.Delivered != 60 || r.Watch.EventsPerSecond <= 0 {
				t.Errorf("watch: %+v", r.Watch)
			}
			if r.Memory == nil || r.Memory.IdleRSS <= 0 || r.Memory.AfterPodsRSS <= 0 {
				t.Errorf("memory: %+v", r.Memory)
			}
			if len(r.Targets) != 6 {
				t.Errorf("targets: %+v", r.Targets)
			}
			var text bytes.Buffer
			r.WriteText(&text)
			t.Log("\n" + text.String())
		})
	}
}

func TestPodPlan(t *testing.T) {
	cases := []struct {
		total, serial int
		clients       []int
		want          []int
	}{
		{10000, 1000, []int{1, 16, 64}, []int{1000, 4500, 4500}},
		{50, 5, []int{1, 2}, []int{5, 45}},
		{10, 1000, []int{1}, []int{10}},
		{7, 1, []int{16, 64}, []int{4, 3}},
		{3, 1, []int{1, 1}, []int{1, 2}},
	}
	for _, c := range cases {
		got := podPlan(c.total, c.serial, c.clients)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("podPlan(%d, %d, %v) = %v, want %v", c.total, c.serial, c.clients, got, c.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	l := Summarize(ds)
	if l.Count != 100 || l.P50 != 50 || l.P90 != 90 || l.P99 != 99 || l.Max != 100 || l.Mean != 50.5 {
		t.Fatalf("%+v", l)
	}
	if m := median([]time.Duration{3, 1, 2}); m != 2 {
		t.Fatalf("median %v", m)
	}
}

// runChildManager is `skiff controller-manager` with the flags the
// controllers benchmark passes.
func runChildManager(args []string) int {
	fs := flag.NewFlagSet("controller-manager", flag.ContinueOnError)
	cfg := controllermanager.DefaultConfig()
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	fs.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "")
	fs.BoolVar(&cfg.LeaderElection.LeaderElect, "leader-elect", false, "")
	fs.IntVar(&cfg.Serving.SecurePort, "secure-port", 0, "")
	fs.StringVar(&cfg.RootCAFile, "root-ca-file", "", "")
	qps := fs.Float64("kube-api-qps", 20, "")
	fs.IntVar(&cfg.KubeAPIBurst, "kube-api-burst", 30, "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg.KubeAPIQPS = float32(*qps)
	m, err := controllermanager.New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := m.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestRunControllersEndToEnd runs `bench controllers` with tiny sizes
// against skiff's manager: every phase must complete and report.
func TestRunControllersEndToEnd(t *testing.T) {
	var out, progress bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := RunControllers(ctx, ControllersConfig{
		Deployments: 3, Replicas: 4, MemoryPods: 20, Managers: []string{"skiff"},
		Settle: 10 * time.Millisecond, Timeout: time.Minute,
		Command: []string{os.Args[0]}, Env: []string{childEnv + "=1"},
		Out: &out, Progress: &progress,
	})
	t.Log(progress.String())
	if err != nil {
		t.Fatalf("RunControllers: %v\n%s", err, out.String())
	}
	if len(r.Runs) != 1 {
		t.Fatalf("runs: %+v", r.Runs)
	}
	m := r.Runs[0]
	if m.Manager != "skiff" || m.Pods != 12 || m.PodsPerSec <= 0 || m.IdleRSS <= 0 || m.AfterRSS <= 0 || m.MemoryPodsRSS <= 0 || m.ServerRSS <= 0 {
		t.Errorf("result: %+v", m)
	}
	if len(r.Targets) != 0 {
		t.Errorf("targets without an upstream run: %+v", r.Targets)
	}
	t.Log("\n" + out.String())
}
