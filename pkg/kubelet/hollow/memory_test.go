package hollow

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// The agent process of BenchmarkAgentMemory: the test binary run again
// with agentDirEnv set runs hollow nodes as `skiff kubelet --runtime=sim
// --nodes=N --record-events=false` does (its client settings included)
// against the server described in that directory, and on SIGUSR1 writes a
// heap profile and its memory statistics there.
const agentDirEnv = "SKIFF_HOLLOW_MEMORY_AGENT_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(agentDirEnv); dir != "" {
		runtime.MemProfileRate = 4096
		if err := runMemoryAgent(dir); err != nil {
			fmt.Fprintln(os.Stderr, "agent:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type agentSpec struct {
	Host                      string
	CAData, CertData, KeyData []byte
	Nodes                     int
}

func runMemoryAgent(dir string) error {
	var spec agentSpec
	b, err := os.ReadFile(filepath.Join(dir, "spec.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &spec); err != nil {
		return err
	}
	c, err := client.New(&client.Config{Host: spec.Host, CAData: spec.CAData, CertData: spec.CertData, KeyData: spec.KeyData,
		QPS: 50 * float32(spec.Nodes), Burst: 100 * spec.Nodes, UserAgent: "skiff-kubelet", ContentType: cmp.Or(os.Getenv("SKIFF_HOLLOW_MEMORY_CONTENT_TYPE"), client.ContentTypeProtobuf)})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	// The largest heap the run had (sampled), besides the state after a
	// collection at the end.
	var peakMu sync.Mutex
	var peakHeap, peakGoal, peakStack uint64
	go func() {
		samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/goal:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"}}
		var lastPeakProfile time.Time
		for range time.Tick(20 * time.Millisecond) {
			metrics.Read(samples)
			peakMu.Lock()
			newGoal := samples[1].Value.Uint64() > peakGoal
			peakHeap, peakGoal, peakStack = max(peakHeap, samples[0].Value.Uint64()), max(peakGoal, samples[1].Value.Uint64()), max(peakStack, samples[2].Value.Uint64())
			peakMu.Unlock()
			// The heap at the collection that set the highest goal (what
			// was live at the peak), at most once a second.
			if newGoal && time.Since(lastPeakProfile) > time.Second {
				lastPeakProfile = time.Now()
				if f, err := os.Create(filepath.Join(dir, "heap-peak.pprof")); err == nil {
					pprof.Lookup("heap").WriteTo(f, 0)
					f.Close()
				}
			}
		}
	}()
	var cpuProfile *os.File
	if os.Getenv("SKIFF_HOLLOW_MEMORY_CPU") != "" {
		if cpuProfile, err = os.Create(filepath.Join(dir, "cpu.pprof")); err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(cpuProfile); err != nil {
			return err
		}
	}
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	go func() {
		for n := 0; ; n++ {
			<-usr1
			if cpuProfile != nil && n == 0 {
				pprof.StopCPUProfile()
				cpuProfile.Close()
			}
			runtime.GC()
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("heap-%d.pprof", n)))
			if err == nil {
				pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
			if f, err := os.Create(filepath.Join(dir, fmt.Sprintf("goroutines-%d.txt", n))); err == nil {
				pprof.Lookup("goroutine").WriteTo(f, 1)
				f.Close()
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if os.Getenv("SKIFF_HOLLOW_MEMORY_GCS") != "" {
				for i := 0; i < 6; i++ {
					runtime.GC()
				}
				var ms2 runtime.MemStats
				runtime.ReadMemStats(&ms2)
				fmt.Fprintf(os.Stderr, "after 6 more GCs: stack %d heap %d\n", ms2.StackInuse, ms2.HeapAlloc)
			}
			peakMu.Lock()
			out, _ := json.Marshal(map[string]any{"HeapInuse": ms.HeapInuse, "HeapAlloc": ms.HeapAlloc, "StackInuse": ms.StackInuse,
				"Sys": ms.Sys, "Goroutines": runtime.NumGoroutine(), "NumGC": ms.NumGC, "TotalAlloc": ms.TotalAlloc,
				"PeakHeap": peakHeap, "PeakGoal": peakGoal, "PeakStack": peakStack, "HeapReleased": ms.HeapReleased, "HeapSys": ms.HeapSys, "HeapIdle": ms.HeapIdle,
				"StackSys": ms.StackSys, "MSpanSys": ms.MSpanSys, "GCSys": ms.GCSys, "OtherSys": ms.OtherSys, "BuckHashSys": ms.BuckHashSys})
			peakMu.Unlock()
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("mem-%d.json", n)), out, 0o600)
		}
	}()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg := Config{Client: c, Nodes: spec.Nodes, Logger: logger}
	cfg.Sim.StopLatency, cfg.Sim.RunDuration = time.Second, 5*time.Second
	return Run(ctx, cfg)
}

// BenchmarkAgentMemory measures the hollow agent's memory: an agent
// process of 200 nodes (SKIFF_HOLLOW_MEMORY_NODES) against an in-process
// API server, 2,000 pods (SKIFF_HOLLOW_MEMORY_PODS) of 20 ReplicaSet-like
// templates bound to them (spec.nodeName); once all run, the agent's RSS,
// peak RSS, CPU and its heap after a collection are reported, and its heap
// profile is kept in SKIFF_HOLLOW_MEMORY_OUT when set.
//
//	go test ./pkg/kubelet/hollow/ -run '^$' -bench AgentMemory -benchtime 1x
func BenchmarkAgentMemory(b *testing.B) {
	nodes, pods := envInt("SKIFF_HOLLOW_MEMORY_NODES", 200), envInt("SKIFF_HOLLOW_MEMORY_PODS", 2000)
	for i := 0; i < b.N; i++ {
		measureAgentMemory(b, nodes, pods)
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func measureAgentMemory(b *testing.B, nodes, pods int) {
	env := testenv.StartT(b)
	ctx := context.Background()
	if err := env.EnsureServiceAccount(ctx, "default", "default"); err != nil {
		b.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	spec, _ := json.Marshal(agentSpec{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, Nodes: nodes})
	if err := os.WriteFile(filepath.Join(dir, "spec.json"), spec, 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), agentDirEnv+"="+dir)
	logf, err := os.Create(filepath.Join(dir, "agent.log"))
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	b.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	wait := func(what string, timeout time.Duration, cond func() (bool, error)) {
		deadline := time.Now().Add(timeout)
		for {
			ok, err := cond()
			if ok {
				return
			}
			select {
			case err := <-done:
				b.Fatalf("agent exited: %v (log %s)", err, filepath.Join(dir, "agent.log"))
			default:
			}
			if time.Now().After(deadline) {
				b.Fatalf("timed out waiting for %s (last error %v)", what, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	nodeAPI := client.For[*corev1.Node, *corev1.NodeList](c)
	wait(fmt.Sprintf("%d ready nodes", nodes), 2*time.Minute, func() (bool, error) {
		l, err := nodeAPI.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready := 0
		for _, n := range l.Items {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready == nodes, fmt.Errorf("%d ready", ready)
	})
	idle := procMemory(b, cmd.Process.Pid)
	podAPI := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= pods {
					return
				}
				if _, err := podAPI.Create(ctx, memoryPod(i, nodes), metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	wait(fmt.Sprintf("%d running pods", pods), 5*time.Minute, func() (bool, error) {
		l, err := podAPI.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		running := 0
		for _, p := range l.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == pods, fmt.Errorf("%d running", running)
	})
	elapsed := time.Since(start)
	// A few PLEG relists and node status rounds with everything running.
	time.Sleep(3 * time.Second)
	m := procMemory(b, cmd.Process.Pid)
	cmd.Process.Signal(syscall.SIGUSR1)
	var stats map[string]float64
	wait("the agent's heap profile", 30*time.Second, func() (bool, error) {
		raw, err := os.ReadFile(filepath.Join(dir, "mem-0.json"))
		if err != nil {
			return false, err
		}
		return json.Unmarshal(raw, &stats) == nil, nil
	})
	if out := os.Getenv("SKIFF_HOLLOW_MEMORY_OUT"); out != "" {
		for _, f := range []string{"heap-0.pprof", "goroutines-0.txt", "agent.log", "mem-0.json", "cpu.pprof", "heap-peak.pprof"} {
			raw, err := os.ReadFile(filepath.Join(dir, f))
			if os.IsNotExist(err) && (f == "cpu.pprof" || f == "heap-peak.pprof") {
				continue
			}
			if err == nil {
				err = os.WriteFile(out+"."+f, raw, 0o644)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid))
		b.ReportMetric(float64(len(fds)), "fds")
	}
	mib := func(v float64) float64 { return v / (1 << 20) }
	b.ReportMetric(mib(idle.rss), "idle-rss-MiB")
	b.ReportMetric(mib(m.rss), "rss-MiB")
	b.ReportMetric(mib(m.peak), "peak-rss-MiB")
	b.ReportMetric(mib(stats["HeapInuse"]), "heap-inuse-MiB")
	b.ReportMetric(mib(stats["StackInuse"]), "stack-MiB")
	b.ReportMetric(mib(stats["HeapAlloc"]), "live-MiB")
	b.ReportMetric(stats["Goroutines"], "goroutines")
	b.ReportMetric(mib(stats["PeakHeap"]), "peak-heap-MiB")
	b.ReportMetric(mib(stats["PeakGoal"]), "peak-goal-MiB")
	b.ReportMetric(mib(stats["TotalAlloc"]), "alloc-MiB")
	b.ReportMetric(mib(stats["HeapSys"]), "heap-sys-MiB")
	b.ReportMetric(m.cpu, "agent-cpu-s")
	b.ReportMetric(elapsed.Seconds(), "s-to-running")
}

type procMem struct{ rss, peak, cpu float64 }

// procMemory reads a process's resident and peak resident memory (bytes)
// and CPU seconds from /proc.
func procMemory(b *testing.B, pid int) procMem {
	var m procMem
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 2 {
			continue
		}
		v, _ := strconv.ParseFloat(fields[1], 64)
		switch fields[0] {
		case "VmRSS:":
			m.rss = v * 1024
		case "VmHWM:":
			m.peak = v * 1024
		}
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	st := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	utime, _ := strconv.ParseFloat(st[11], 64)
	stime, _ := strconv.ParseFloat(st[12], 64)
	m.cpu = (utime + stime) / 100 // USER_HZ
	return m
}

// memoryPod is pod i of the workload: 20 templates (as ReplicaSets'
// pods), bound round-robin to the nodes.
func memoryPod(i, nodes int) *corev1.Pod {
	rs := fmt.Sprintf("kb-%04d-5d8f7c9b6", i%20)
	yes := true
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%05d", rs, i),
			Labels: map[string]string{"app": fmt.Sprintf("kb-%04d", i%20), "pod-template-hash": "5d8f7c9b6"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs,
				UID: types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i%20)), Controller: &yes, BlockOwnerDeletion: &yes}}},
		Spec: corev1.PodSpec{NodeName: fmt.Sprintf("sim-node-%d", i%nodes), Containers: []corev1.Container{{
			Name: "c", Image: "registry.k8s.io/pause:3.10", ImagePullPolicy: corev1.PullIfNotPresent,
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("1m"), corev1.ResourceMemory: resource.MustParse("4Mi")}},
		}}},
	}
}
