package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/kubelet"
	"github.com/skiff-sh/skiff/pkg/kubelet/hollow"
	"github.com/skiff-sh/skiff/pkg/kubelet/standalone"
	"github.com/skiff-sh/skiff/pkg/kubelet/volume"
)

// runChildKubelet is `skiff kubelet --runtime=sim` with the flags the
// kubelet benchmark passes: hollow nodes in this (child) process.
func runChildKubelet(args []string) int {
	fs := flag.NewFlagSet("kubelet", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "")
	runtime := fs.String("runtime", "", "")
	endpoint := fs.String("container-runtime-endpoint", "", "")
	name := fs.String("hostname-override", "", "")
	podLogDir := fs.String("pod-log-dir", "", "")
	rootDir := fs.String("root-dir", "", "")
	cfg := hollow.Config{}
	fs.IntVar(&cfg.Nodes, "nodes", 1, "")
	fs.BoolVar(&cfg.Events, "record-events", true, "")
	fs.DurationVar(&cfg.Sim.StartLatency, "sim-start-latency", 0, "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	remote := *endpoint != "" && *name != "" && *podLogDir != "" && *rootDir != ""
	if (*runtime != "sim" || cfg.Events) && !remote {
		fmt.Fprintf(os.Stderr, "child kubelet: want --runtime=sim --record-events=false, or a remote runtime's flags, got %q\n", args)
		return 2
	}
	cc, err := client.LoadKubeconfig(*kubeconfig, "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cc.QPS = -1
	if cfg.Client, err = client.New(cc); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if remote {
		err := standalone.Run(ctx, standalone.Config{Client: cfg.Client, Endpoint: *endpoint, Logger: cfg.Logger,
			Kubelet: kubelet.Config{NodeName: *name, PodLogDir: *podLogDir, RootDir: *rootDir, Volumes: &volume.Config{}}})
		if err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	if err := hollow.Run(ctx, cfg); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestRunKubeletEndToEnd runs `bench kubelet` (sim) with tiny sizes: a
// child API server, skiff's controller manager, a stand-in scheduler and
// hollow nodes in a child process; every pod must reach Running and the
// report must hold the figures. The numbers are only logged.
func TestRunKubeletEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		workload string
		pods     int
		interval time.Duration
	}{{WorkloadDeployments, 25, 0}, {WorkloadPods, 12, 20 * time.Millisecond}} {
		t.Run(tc.workload, func(t *testing.T) {
			var out, progress bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			r, err := RunKubelet(ctx, KubeletConfig{
				Nodes: 4, Pods: tc.pods, Replicas: 10, Workload: tc.workload, Clients: 4, CreateInterval: tc.interval,
				Settle: 10 * time.Millisecond, Timeout: time.Minute, NodesTimeout: time.Minute,
				JSON:    true,
				Command: []string{os.Args[0]}, Env: []string{childEnv + "=1"},
				Out: &out, Progress: &progress,
			})
			t.Log(progress.String())
			if err != nil {
				t.Fatalf("RunKubelet: %v\n%s", err, out.String())
			}
			var decoded KubeletReport
			if err := json.Unmarshal(out.Bytes(), &decoded); err != nil {
				t.Fatalf("report is not JSON: %v\n%s", err, out.String())
			}
			if decoded.Runtime != RuntimeSim || decoded.Nodes != 4 || decoded.Pods != tc.pods || decoded.Workload != tc.workload || len(decoded.Runs) != 1 {
				t.Fatalf("report: %+v", decoded)
			}
			run := r.Runs[0]
			if run.Agent != "skiff" || run.Error != "" || run.Pods != tc.pods || run.Seconds <= 0 || run.PodsPerSec <= 0 {
				t.Errorf("run: %+v", run)
			}
			for name, l := range map[string]Latency{"start-up": run.StartupLatency, "schedule": run.ScheduleLatency} {
				if l.Count != tc.pods || l.Max < l.P99 || l.P99 < l.P50 {
					t.Errorf("%s latency: %+v", name, l)
				}
			}
			if run.StartupLatency.P50 < run.ScheduleLatency.P50 {
				t.Errorf("start-up p50 %v below scheduling p50 %v", run.StartupLatency.P50, run.ScheduleLatency.P50)
			}
			if run.AgentIdleRSS <= 0 || run.AgentEndRSS <= 0 || run.AgentPeakRSS < run.AgentEndRSS || run.ServerRSS <= 0 || run.ManagerRSS <= 0 || run.SchedulerRSS <= 0 {
				t.Errorf("memory: %+v", run)
			}
			// Paced creates: the last pod is sent (pods-1) × interval
			// after the first.
			if minCreate := (time.Duration(tc.pods-1) * tc.interval).Seconds(); run.CreateSeconds < minCreate-0.01 {
				t.Errorf("creates took %v s, paced at %v they take at least %v s", run.CreateSeconds, tc.interval, minCreate)
			}
			if !strings.Contains(run.Command, "--runtime=sim") || !strings.Contains(run.Command, "--nodes=4") || !strings.Contains(run.Command, "--record-events=false") {
				t.Errorf("kubelet command: %s", run.Command)
			}
			if len(r.Targets) != 2 || r.Targets[0].Status != "n/a" {
				t.Errorf("targets at a tiny size: %+v", r.Targets)
			}
			var text bytes.Buffer
			r.WriteText(&text)
			for _, want := range []string{"pods/s to Running", "start-up ms created → Running", "agent RSS MiB", "--record-events=false"} {
				if !strings.Contains(text.String(), want) {
					t.Errorf("text report lacks %q:\n%s", want, text.String())
				}
			}
			t.Log("\n" + text.String())
		})
	}
}

// TestRunKubeletContainerd runs `bench kubelet --runtime=containerd`
// with 3 busybox pods on a real containerd (skipped without containerd,
// runc and root, as the bench itself): the pods run, the report holds the
// figures, and nothing of the benchmark's containerd is left running.
func TestRunKubeletContainerd(t *testing.T) {
	cfg := KubeletConfig{Runtime: RuntimeContainerd}
	if why := containerdMissing(&cfg); why != "" {
		t.Skip(why)
	}
	if _, err := os.Stat("/bin/busybox"); err != nil {
		t.Skip("no static busybox (apt-get install busybox-static)")
	}
	var out, progress bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "skbt")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	r, err := RunKubelet(ctx, KubeletConfig{
		Runtime: RuntimeContainerd, Pods: 3, Clients: 3,
		Settle: 10 * time.Millisecond, Timeout: 2 * time.Minute, NodesTimeout: time.Minute,
		Dir: dir, Command: []string{os.Args[0]}, Env: []string{childEnv + "=1"},
		Out: &out, Progress: &progress,
	})
	t.Log(progress.String())
	if err != nil {
		t.Fatalf("RunKubelet: %v\n%s", err, out.String())
	}
	if r.Skipped != "" || len(r.Runs) != 1 {
		t.Fatalf("report: %+v", r)
	}
	run := r.Runs[0]
	if run.Error != "" || run.Pods != 3 || run.StartupLatency.Count != 3 || run.StartupLatency.P50 <= 0 || run.ContainerdRSS <= 0 ||
		run.RuntimeCPU <= 0 || run.TeardownSeconds <= 0 || len(run.Notes) != 0 {
		t.Errorf("run: %+v", run)
	}
	if !strings.Contains(run.Command, "--container-runtime-endpoint=unix://") {
		t.Errorf("kubelet command: %s", run.Command)
	}
	if b, err := exec.Command("pgrep", "-f", dir).Output(); err == nil && len(bytes.TrimSpace(b)) > 0 {
		t.Errorf("processes of the benchmark's containerd left: %s", b)
	}
	t.Log("\n" + out.String())
}

func TestKubeletConfigDefaults(t *testing.T) {
	tests := []struct {
		in      KubeletConfig
		nodes   int
		pods    int
		work    string
		wantErr string
	}{
		{in: KubeletConfig{}, nodes: 1000, pods: 10000, work: WorkloadDeployments},
		{in: KubeletConfig{Runtime: RuntimeContainerd, Nodes: 50}, nodes: 1, pods: 100, work: WorkloadPods},
		{in: KubeletConfig{Runtime: RuntimeContainerd, Workload: WorkloadDeployments}, nodes: 1, pods: 100, work: WorkloadDeployments},
		{in: KubeletConfig{Runtime: "docker"}, wantErr: "--runtime must be sim or containerd"},
		{in: KubeletConfig{Workload: "jobs"}, wantErr: "--workload must be"},
		{in: KubeletConfig{Compare: []string{"kubemark"}}, wantErr: "is not kwok"},
		{in: KubeletConfig{Runtime: RuntimeContainerd, Compare: []string{"kwok"}}, wantErr: "needs --runtime=sim"},
		{in: KubeletConfig{Compare: []string{"kwok"}, Kwok: "/nonexistent/kwok"}, wantErr: "build-upstream.sh"},
	}
	for _, tt := range tests {
		c := tt.in
		c.Command = []string{"skiff"}
		err := c.complete()
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%+v: error %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || c.Nodes != tt.nodes || c.Pods != tt.pods || c.Workload != tt.work || c.Storage != "memory" {
			t.Errorf("%+v: %v, nodes %d pods %d workload %s storage %s", tt.in, err, c.Nodes, c.Pods, c.Workload, c.Storage)
		}
	}
}

func TestKubeletWorkload(t *testing.T) {
	cfg := &KubeletConfig{Runtime: RuntimeSim, Pods: 250, Replicas: 100}
	deps := kubeletDeployments(cfg, "", "ns")
	var got []any
	for _, d := range deps {
		got = append(got, d["spec"].(map[string]any)["replicas"])
	}
	if fmt.Sprint(got) != "[100 100 50]" {
		t.Errorf("replicas %v, want [100 100 50]", got)
	}
	if p := kubeletBarePod(cfg, "", "ns", 7); p.Name != "kb-000007" || p.Spec.Containers[0].Image != "registry.k8s.io/pause:3.10" || p.Spec.TerminationGracePeriodSeconds != nil {
		t.Errorf("sim pod: %+v", p)
	}
	cfg.Runtime = RuntimeContainerd
	p := kubeletBarePod(cfg, "docker.io/library/busybox:1.35.0", "ns", 0)
	c := p.Spec.Containers[0]
	if c.Image != "docker.io/library/busybox:1.35.0" || c.ImagePullPolicy != corev1.PullIfNotPresent || strings.Join(c.Command, " ") != "sleep 86400" ||
		p.Spec.TerminationGracePeriodSeconds == nil || *p.Spec.TerminationGracePeriodSeconds != 1 {
		t.Errorf("containerd pod: %+v", p.Spec)
	}
}

// The watch's bookkeeping: created → bound → Running per pod, each
// counted once, Running implying bound, the 1000th Running pod's time.
func TestPodWatchObserve(t *testing.T) {
	w := newPodWatch(time.Now(), 1200)
	pod := func(name, node string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
	}
	w.observe(pod("a", "", corev1.PodPending))
	w.observe(pod("a", "n1", corev1.PodPending))
	w.observe(pod("a", "n1", corev1.PodPending))
	w.observe(pod("b", "n2", corev1.PodRunning)) // first seen Running (a relist)
	if w.added.Load() != 2 || w.bound.Load() != 2 || w.running.Load() != 1 {
		t.Fatalf("added %d bound %d running %d", w.added.Load(), w.bound.Load(), w.running.Load())
	}
	w.observe(pod("a", "n1", corev1.PodRunning))
	w.observe(pod("a", "n1", corev1.PodRunning))
	if w.running.Load() != 2 || w.last.Load() <= 0 {
		t.Fatalf("running %d last %d", w.running.Load(), w.last.Load())
	}
	a := w.pods["a"]
	if !(a.added > 0 && a.added <= a.bound && a.bound <= a.running) {
		t.Errorf("a: %+v", a)
	}
	startup, sched, at1000 := w.latencies()
	if len(startup) != 2 || len(sched) != 2 || at1000 != 0 {
		t.Errorf("latencies %v %v %v", startup, sched, at1000)
	}
	for i := range 1000 {
		w.observe(pod(fmt.Sprintf("p%d", i), "n", corev1.PodRunning))
	}
	if _, _, at1000 = w.latencies(); at1000 <= 0 || at1000 > time.Duration(w.last.Load()) {
		t.Errorf("1000th Running at %v (last %v)", at1000, time.Duration(w.last.Load()))
	}
}

func TestEvaluateKubelet(t *testing.T) {
	r := &KubeletReport{Runtime: RuntimeSim, Nodes: 1000, Pods: 10000, Runs: []KubeletRun{
		{Agent: "skiff", Seconds: 25, PodsPerSec: 400, Running1000Seconds: 3, AgentPeakRSS: 500},
		{Agent: "kwok", Seconds: 50, PodsPerSec: 200, Running1000Seconds: 6, AgentPeakRSS: 250},
	}}
	ts := evaluateKubelet(r)
	if len(ts) != 4 || ts[0].Status != "met" || ts[1].Status != "met" || !strings.Contains(ts[2].Measured, "2.00×") || !strings.Contains(ts[3].Measured, "2.00×") {
		t.Errorf("sim targets: %+v", ts)
	}
	r.Runs[0].Seconds = 31
	if ts := evaluateKubelet(r); ts[0].Status != "missed" {
		t.Errorf("31 s: %+v", ts[0])
	}
	r = &KubeletReport{Runtime: RuntimeContainerd, Nodes: 1, Pods: 100, Runs: []KubeletRun{{Agent: "skiff", StartupLatency: Latency{P50: 700, P99: 1600}}}}
	if ts := evaluateKubelet(r); len(ts) != 1 || ts[0].Status != "missed" || ts[0].Upstream != "SLO ≤ 5 s" {
		t.Errorf("containerd targets: %+v", ts)
	}
}
