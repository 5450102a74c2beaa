package bench

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/skiff-sh/skiff/pkg/client"
)

// SchedulerConfig configures RunScheduler. Zero fields take the defaults
// in the comments.
type SchedulerConfig struct {
	// Nodes, Bound and Pods size the workload (5000, 1000, 10000):
	// Nodes nodes, Bound pods created already bound (spread round-robin
	// over the nodes), then Pods pending pods whose scheduling is timed.
	Nodes int
	Bound int
	Pods  int
	// Shapes are ShapeBasic and/or ShapeAffinity (default: basic).
	Shapes []string
	// Schedulers are the schedulers measured, one after the other, each
	// against a fresh API server: "skiff" (Command + SkiffArgs) and
	// "upstream" (UpstreamScheduler + UpstreamArgs). Default: both.
	Schedulers []string
	// UpstreamScheduler is upstream's kube-scheduler binary (default:
	// $KUBE_SCHEDULER, else ~/.cache/skiff-upstream-v1.34.4/kube-scheduler).
	UpstreamScheduler string
	// SkiffArgs and UpstreamArgs are the schedulers' command lines after
	// the executable, with {kubeconfig} (the admin kubeconfig), {config}
	// (a KubeSchedulerConfiguration file written for the run) and {port}
	// (a free port for /metrics) replaced. Defaults: DefaultSkiffSchedulerArgs
	// and DefaultUpstreamSchedulerArgs.
	SkiffArgs    []string
	UpstreamArgs []string
	// QPS and Burst are the schedulers' clientConnection qps/burst in the
	// configuration file (5000 and 5000, as scheduler_perf).
	QPS   float64
	Burst int
	// Precreate adds, per shape and scheduler, a run in which the pending
	// pods are created before the scheduler starts (Mode ModePrecreated):
	// the scheduler's throughput without pod creation competing for the
	// machine. It is reported beside the issue's runs, never instead.
	Precreate bool
	// ExtraConfig is YAML appended to the generated
	// KubeSchedulerConfiguration that both schedulers get (e.g. a
	// `profiles:` list disabling plugins one of them does not have yet).
	ExtraConfig string
	// Clients is how many concurrent clients create nodes and pods (32).
	Clients int
	// Timeout bounds each run's measured phase (30 min); ReadyTimeout the
	// scheduler's start until it bound a first pod (2 min); Settle is the
	// pause before the idle memory reading (1 s).
	Timeout      time.Duration
	ReadyTimeout time.Duration
	Settle       time.Duration

	// ProfileDir, when set, receives CPU profiles of the API server and
	// the scheduler over the first ProfileSeconds (default 5) of each
	// measured phase, from their /debug/pprof/profile:
	// <shape>-<scheduler>-apiserver.pprof and -scheduler.pprof, then their
	// allocation profiles (since start) as -apiserver-allocs.pprof and
	// -scheduler-allocs.pprof. The
	// schedulers' always-allowed paths then include /debug/pprof/*.
	ProfileDir     string
	ProfileSeconds int

	JSON bool
	Keep bool
	Dir  string
	// Command is this executable (the API server, and skiff's scheduler);
	// Env is added to every child's environment. SkiffBinary, when set,
	// replaces Command (the CLI's --skiff-binary).
	Command     []string
	SkiffBinary string
	Env         []string

	Out      io.Writer
	Progress io.Writer
}

// DefaultSkiffSchedulerArgs is `skiff scheduler`'s command line: the same
// flags as upstream's (it serves /metrics with upstream's authorization).
var DefaultSkiffSchedulerArgs = []string{
	"scheduler", "--kubeconfig={kubeconfig}", "--leader-elect=false", "--config={config}",
	"--secure-port={port}", "--bind-address=127.0.0.1",
	"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
}

// DefaultUpstreamSchedulerArgs is kube-scheduler's: with --config its
// --kubeconfig is ignored (the file names it); /metrics is served without
// authorization so that the benchmark can scrape it.
var DefaultUpstreamSchedulerArgs = []string{
	"--kubeconfig={kubeconfig}", "--leader-elect=false", "--config={config}",
	"--secure-port={port}", "--bind-address=127.0.0.1",
	"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
}

// DefaultUpstreamScheduler is where ../shared/tools/build-upstream.sh
// puts kube-scheduler, or $KUBE_SCHEDULER.
func DefaultUpstreamScheduler() string {
	if p := os.Getenv("KUBE_SCHEDULER"); p != "" {
		return p
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "skiff-upstream-v1.34.4", "kube-scheduler")
	}
	return ""
}

func (c *SchedulerConfig) complete() error {
	if c.Nodes == 0 {
		c.Nodes = 5000
	}
	if c.Bound == 0 {
		c.Bound = 1000
	}
	if c.Pods == 0 {
		c.Pods = 10000
	}
	if c.Nodes < 1 || c.Bound < 0 || c.Pods < 1 {
		return errors.New("--nodes and --pods must be positive, --bound not negative")
	}
	if c.Nodes > 99999 || c.Pods > 999999 || c.Bound > 999999 {
		return errors.New("at most 99999 nodes and 999999 pods")
	}
	if len(c.Shapes) == 0 {
		c.Shapes = []string{ShapeBasic}
	}
	for _, s := range c.Shapes {
		if s != ShapeBasic && s != ShapeAffinity {
			return fmt.Errorf("--shape: %q is neither %s nor %s", s, ShapeBasic, ShapeAffinity)
		}
	}
	if len(c.Schedulers) == 0 {
		c.Schedulers = []string{"skiff", "upstream"}
	}
	if c.UpstreamScheduler == "" {
		c.UpstreamScheduler = DefaultUpstreamScheduler()
	}
	if c.SkiffArgs == nil {
		c.SkiffArgs = DefaultSkiffSchedulerArgs
	}
	if c.UpstreamArgs == nil {
		c.UpstreamArgs = DefaultUpstreamSchedulerArgs
	}
	if c.QPS == 0 {
		c.QPS = 5000
	}
	if c.Burst == 0 {
		c.Burst = 5000
	}
	if c.Clients == 0 {
		c.Clients = 32
	}
	if c.Timeout == 0 {
		c.Timeout = 30 * time.Minute
	}
	if c.ReadyTimeout == 0 {
		c.ReadyTimeout = 2 * time.Minute
	}
	if c.Settle == 0 {
		c.Settle = time.Second
	}
	if c.ProfileSeconds == 0 {
		c.ProfileSeconds = 5
	}
	if c.SkiffBinary != "" {
		c.Command = []string{c.SkiffBinary}
	}
	if len(c.Command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		c.Command = []string{exe}
	}
	if c.Out == nil {
		c.Out = os.Stdout
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	for _, s := range c.Schedulers {
		switch s {
		case "upstream":
			if _, err := os.Stat(c.UpstreamScheduler); err != nil {
				return fmt.Errorf("upstream kube-scheduler: %w (build it with ../shared/tools/build-upstream.sh DIR kube-scheduler, then pass --upstream-scheduler or set KUBE_SCHEDULER)", err)
			}
		case "skiff":
			if err := c.checkSkiffScheduler(); err != nil {
				return err
			}
		default:
			return fmt.Errorf("--scheduler: %q is neither skiff nor upstream", s)
		}
	}
	return nil
}

// checkSkiffScheduler runs `<skiff> scheduler --help`: a skiff without the
// scheduler command cannot be measured.
func (c *SchedulerConfig) checkSkiffScheduler() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := append(append([]string(nil), c.Command[1:]...), c.SkiffArgs[0], "--help")
	cmd := exec.CommandContext(ctx, c.Command[0], args...)
	cmd.Env = append(os.Environ(), c.Env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		return fmt.Errorf("skiff's scheduler cannot be measured: `%s %s` failed (%v): %s; measure upstream's alone with --scheduler=upstream",
			c.Command[0], strings.Join(args, " "), err, msg)
	}
	return nil
}

// SchedulerReport is everything RunScheduler measured.
type SchedulerReport struct {
	Date    string        `json:"date"`
	Machine Machine       `json:"machine"`
	Nodes   int           `json:"nodes"`
	Bound   int           `json:"bound"`
	Pods    int           `json:"pods"`
	Shapes  []ShapeResult `json:"shapes"`
	Errors  []string      `json:"errors,omitempty"`
}

// ShapeResult is one workload shape measured with each scheduler.
type ShapeResult struct {
	Shape   string         `json:"shape"`
	Runs    []SchedulerRun `json:"runs"`
	Targets []Target       `json:"targets,omitempty"`
}

// ModePrecreated is a SchedulerRun whose pending pods all existed before
// the scheduler started (SchedulerConfig.Precreate).
const ModePrecreated = "precreated"

// SchedulerRun is one scheduler on one shape, against its own API server.
type SchedulerRun struct {
	Scheduler string `json:"scheduler"`
	// Mode is "" for the issue's shape (pods created while the scheduler
	// runs) or ModePrecreated: every pending pod is created before the
	// scheduler starts, there is no warm-up pod, and the measured phase
	// runs from the first binding seen to the last (pods/s over
	// Pods-1 intervals; ReadySeconds is the scheduler's start to its
	// first binding; no e2e latency).
	Mode    string `json:"mode,omitempty"`
	Command string `json:"command"`
	// SetupSeconds is creating the nodes and bound pods; ReadySeconds the
	// scheduler's start until it bound the warm-up pod.
	SetupSeconds float64 `json:"setup_seconds"`
	ReadySeconds float64 `json:"ready_seconds"`
	// Seconds is from the first pending pod's create request until the
	// watch saw the last one bound; PodsPerSec = Pods / Seconds.
	Pods       int     `json:"pods"`
	Seconds    float64 `json:"seconds"`
	PodsPerSec float64 `json:"pods_per_second"`
	// CreateSeconds is how long creating the pending pods took.
	CreateSeconds float64 `json:"create_seconds"`
	// Throughput summarises the pods bound in each whole second.
	Throughput Throughput `json:"throughput"`
	// Latency is per pod, from its create request to its binding seen on
	// the watch (queueing included).
	Latency Latency `json:"e2e_latency"`
	// Attempt and SLI are the scheduler's own histograms,
	// scheduler_scheduling_attempt_duration_seconds{result="scheduled"}
	// and scheduler_pod_scheduling_sli_duration_seconds, over the
	// measured phase; nil when /metrics was not reachable.
	Attempt     *HistQuantiles `json:"attempt_duration,omitempty"`
	SLI         *HistQuantiles `json:"sli_duration,omitempty"`
	MetricsNote string         `json:"metrics_note,omitempty"`
	// Resident memory of the scheduler process, MiB: after the warm-up
	// pod (caches full), at the end, and its peak (VmHWM).
	ReadyRSS float64 `json:"ready_rss_mib"`
	EndRSS   float64 `json:"end_rss_mib"`
	PeakRSS  float64 `json:"peak_rss_mib"`
	// CPU seconds during the measured phase: scheduler, API server, this
	// benchmark, and every other process on the machine (/proc/stat minus
	// the three; on a shared machine it says how contended the run was).
	// SchedulerCPUPerPod is the scheduler's CPU per pending pod, in ms,
	// which contention changes less than pods/s.
	SchedulerCPU       float64 `json:"scheduler_cpu_s"`
	ServerCPU          float64 `json:"server_cpu_s"`
	BenchCPU           float64 `json:"bench_cpu_s"`
	OtherCPU           float64 `json:"other_cpu_s"`
	SchedulerCPUPerPod float64 `json:"scheduler_cpu_ms_per_pod"`
	ServerCPUPerPod    float64 `json:"apiserver_cpu_ms_per_pod"`
	// Zones is how many pending pods landed in each zone; MaxSkew the
	// difference between the fullest and the emptiest.
	Zones   map[string]int `json:"zones,omitempty"`
	MaxSkew int            `json:"max_skew"`
	Error   string         `json:"error,omitempty"`
}

// Throughput is pods bound per second, sampled every second.
type Throughput struct {
	Samples int     `json:"samples"`
	Average float64 `json:"average"`
	P50     float64 `json:"p50"`
	P90     float64 `json:"p90"`
	P99     float64 `json:"p99"`
}

// HistQuantiles are quantiles estimated from a histogram, in ms.
type HistQuantiles struct {
	Count float64 `json:"count"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
}

// RunScheduler measures schedulers on scheduler_perf's SchedulingBasic
// shape (and the affinity shape) and writes the report to cfg.Out.
func RunScheduler(ctx context.Context, cfg SchedulerConfig) (*SchedulerReport, error) {
	if err := cfg.complete(); err != nil {
		return nil, err
	}
	root := cfg.Dir
	if root == "" {
		d, err := os.MkdirTemp("", "skiff-bench-scheduler-")
		if err != nil {
			return nil, err
		}
		root = d
	}
	if cfg.Keep {
		defer fmt.Fprintf(cfg.Progress, "bench: kept data directories and logs in %s\n", root)
	} else if cfg.Dir == "" {
		defer os.RemoveAll(root)
	}
	r := &SchedulerReport{
		Date: time.Now().UTC().Format(time.RFC3339), Machine: machineInfo(),
		Nodes: cfg.Nodes, Bound: cfg.Bound, Pods: cfg.Pods,
	}
	for _, shape := range cfg.Shapes {
		sr := ShapeResult{Shape: shape}
		modes := []bool{false}
		if cfg.Precreate {
			modes = append(modes, true)
		}
	runs:
		for _, precreate := range modes {
			for _, which := range cfg.Schedulers {
				res, err := runScheduler(ctx, &cfg, root, shape, which, precreate)
				if err != nil {
					res.Error = err.Error()
					r.Errors = append(r.Errors, shape+"/"+res.label()+": "+err.Error())
				}
				sr.Runs = append(sr.Runs, res)
				if ctx.Err() != nil {
					break runs
				}
			}
		}
		sr.Targets = evaluateScheduler(sr)
		r.Shapes = append(r.Shapes, sr)
		if ctx.Err() != nil {
			break
		}
	}
	var err error
	if cfg.JSON {
		enc := json.NewEncoder(cfg.Out)
		enc.SetIndent("", "  ")
		err = enc.Encode(r)
	} else {
		r.WriteText(cfg.Out)
	}
	if err == nil && len(r.Errors) > 0 {
		err = errors.New(strings.Join(r.Errors, "; "))
	}
	return r, err
}

// schedulerArgv is a scheduler's full command line for one run.
func (c *SchedulerConfig) schedulerArgv(which, kubeconfig, config string, port int) []string {
	var argv, tmpl []string
	if which == "skiff" {
		argv, tmpl = append(argv, c.Command...), c.SkiffArgs
	} else {
		argv, tmpl = append(argv, c.UpstreamScheduler), c.UpstreamArgs
	}
	r := strings.NewReplacer("{kubeconfig}", kubeconfig, "{config}", config, "{port}", strconv.Itoa(port))
	for _, a := range tmpl {
		a = r.Replace(a)
		if c.ProfileDir != "" && strings.HasPrefix(a, "--authorization-always-allow-paths=") {
			a += ",/debug/pprof/*"
		}
		argv = append(argv, a)
	}
	return argv
}

func runScheduler(ctx context.Context, cfg *SchedulerConfig, root, shape, which string, precreate bool) (SchedulerRun, error) {
	res := SchedulerRun{Scheduler: which, Pods: cfg.Pods}
	name := shape + "-" + which
	if precreate {
		res.Mode = ModePrecreated
		name += "-" + ModePrecreated
	}
	progress := func(format string, args ...any) {
		fmt.Fprintf(cfg.Progress, "bench: %s: "+format+"\n", append([]any{strings.ReplaceAll(name, "-", "/")}, args...)...)
	}
	dir := filepath.Join(root, "server-"+name)
	scfg := &Config{Command: cfg.Command, Env: cfg.Env, StartTimeout: time.Minute}
	s, _, err := startServer(ctx, scfg, dir, "memory")
	if err != nil {
		return res, fmt.Errorf("starting the API server: %w", err)
	}
	defer func() {
		s.stop()
		if !cfg.Keep {
			os.RemoveAll(dir)
			os.Remove(dir + ".log")
		}
	}()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	ccfg, err := client.LoadKubeconfig(kubeconfig, "")
	if err != nil {
		return res, err
	}
	ccfg.QPS, ccfg.ContentType = -1, client.ContentTypeProtobuf
	ccfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	ccfg.UserAgent = "skiff-bench-scheduler"
	c, err := client.New(ccfg)
	if err != nil {
		return res, err
	}

	// Cluster: nodes, then the bound pods.
	t0 := time.Now()
	for _, ns := range []string{boundNamespace, pendingNamespace, warmupNamespace} {
		if err := s.client.CreateNamespace(ctx, ns); err != nil {
			return res, fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	nodes := client.For[*corev1.Node, *corev1.NodeList](c)
	if err := parallel(ctx, cfg.Nodes, cfg.Clients, func(i int) error {
		_, err := nodes.Create(ctx, SchedNode(i), metav1.CreateOptions{})
		return err
	}); err != nil {
		return res, fmt.Errorf("creating nodes: %w", err)
	}
	// The API server taints new nodes node.kubernetes.io/not-ready (as
	// upstream's TaintNodesByCondition admission); the node lifecycle
	// controller that would lift it for Ready nodes is not running.
	untaint := []byte(`{"spec":{"taints":null}}`)
	if err := parallel(ctx, cfg.Nodes, cfg.Clients, func(i int) error {
		_, err := nodes.Patch(ctx, benchNodeName(i), types.MergePatchType, untaint, metav1.PatchOptions{})
		return err
	}); err != nil {
		return res, fmt.Errorf("removing the nodes' not-ready taint: %w", err)
	}
	n0, err := nodes.Get(ctx, benchNodeName(cfg.Nodes-1), metav1.GetOptions{})
	if err != nil {
		return res, err
	}
	if q := n0.Status.Allocatable[corev1.ResourcePods]; q.Value() != 110 || len(n0.Spec.Taints) > 0 {
		return res, fmt.Errorf("node %s has %v allocatable pods and taints %v, want 110 and none", n0.Name, q.String(), n0.Spec.Taints)
	}
	bound := client.For[*corev1.Pod, *corev1.PodList](c).Namespace(boundNamespace)
	if err := parallel(ctx, cfg.Bound, cfg.Clients, func(i int) error {
		_, err := bound.Create(ctx, SchedPod(shape, boundNamespace, i, benchNodeName(i%cfg.Nodes)), metav1.CreateOptions{})
		return err
	}); err != nil {
		return res, fmt.Errorf("creating bound pods: %w", err)
	}
	res.SetupSeconds = round(time.Since(t0).Seconds(), 2)
	progress("API server ready; %d nodes and %d bound pods created in %.1f s", cfg.Nodes, cfg.Bound, res.SetupSeconds)

	mctx, mcancel := context.WithTimeout(ctx, cfg.Timeout)
	defer mcancel()
	pending := client.For[*corev1.Pod, *corev1.PodList](c).Namespace(pendingNamespace)
	createPending := func(start time.Time, bw *bindWatch) error {
		err := parallel(mctx, cfg.Pods, cfg.Clients, func(i int) error {
			if bw != nil {
				bw.sent[i].Store(int64(time.Since(start)) + 1)
			}
			_, err := pending.Create(mctx, SchedPod(shape, pendingNamespace, i, ""), metav1.CreateOptions{})
			return err
		})
		res.CreateSeconds = round(time.Since(start).Seconds(), 2)
		return err
	}
	if precreate {
		// Every pending pod exists before the scheduler starts: the
		// measured phase is the scheduler's alone.
		if err := createPending(time.Now(), nil); err != nil {
			return res, fmt.Errorf("creating pending pods: %w", err)
		}
		progress("%d pending pods created in %.1f s before the scheduler starts", cfg.Pods, res.CreateSeconds)
	}

	// The scheduler.
	confPath := filepath.Join(dir, "scheduler-config.yaml")
	if err := os.WriteFile(confPath, []byte(schedulerConfigYAML(kubeconfig, cfg.QPS, cfg.Burst)+cfg.ExtraConfig), 0o600); err != nil {
		return res, err
	}
	port, err := freePort()
	if err != nil {
		return res, err
	}
	argv := cfg.schedulerArgv(which, kubeconfig, confPath, port)
	res.Command = strings.Join(argv, " ")
	var bw *bindWatch
	var start time.Time
	// watchBindings starts the clock and the watch counting bindings.
	watchBindings := func() error {
		list, err := pending.List(mctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		start = time.Now()
		bw = newBindWatch(start, cfg.Pods)
		bw.run(mctx, pending, list.ResourceVersion)
		return nil
	}
	defer func() {
		if bw != nil {
			bw.stop()
		}
	}()
	if precreate {
		// Bindings are watched from before the scheduler starts.
		if err := watchBindings(); err != nil {
			return res, err
		}
	}
	p, err := startProcess(argv, cfg.Env, filepath.Join(root, name+"-scheduler.log"), which+" scheduler")
	if err != nil {
		return res, err
	}
	defer p.stop()
	pid := p.cmd.Process.Pid
	metricsURL := fmt.Sprintf("127.0.0.1:%d/metrics", port)
	var before schedMetrics
	var berr error
	type cpuMark struct{ sched, srv, self, busy time.Duration }
	mark := func() cpuMark {
		m := cpuMark{self: selfCPU(), busy: machineBusy()}
		m.sched, _ = procCPU(pid)
		m.srv, _ = procCPU(s.cmd.Process.Pid)
		return m
	}
	var cpu0 cpuMark
	var profDone <-chan error
	firstBound := make(chan struct{})
	if precreate {
		// The measured phase starts with the first binding (the
		// scheduler has synced its informers and queued every pod).
		go func() {
			defer close(firstBound)
			for bw.n.Load() == 0 && mctx.Err() == nil {
				time.Sleep(2 * time.Millisecond)
			}
			cpu0 = mark()
			profDone = cfg.profile(mctx, s.client, fmt.Sprintf("127.0.0.1:%d", port), name)
			if m, err := readMemory(pid); err == nil {
				res.ReadyRSS = mib(m.RSS)
			}
		}()
	} else {
		t1 := time.Now()
		warm := client.For[*corev1.Pod, *corev1.PodList](c).Namespace(warmupNamespace)
		if _, err := warm.Create(ctx, SchedPod(ShapeBasic, warmupNamespace, 0, ""), metav1.CreateOptions{}); err != nil {
			return res, err
		}
		rctx, cancel := context.WithTimeout(ctx, cfg.ReadyTimeout)
		err = waitFor(rctx, p, func() (bool, error) {
			pod, err := warm.Get(rctx, benchPodName(0), metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return pod.Spec.NodeName != "", nil
		})
		cancel()
		if err != nil {
			return res, fmt.Errorf("waiting for the scheduler to bind a first pod: %w (end of its log: %s)", err, logTail(p.log, 1500))
		}
		res.ReadySeconds = round(time.Since(t1).Seconds(), 2)
		sleep(ctx, cfg.Settle)
		if m, err := readMemory(pid); err == nil {
			res.ReadyRSS = mib(m.RSS)
		}
		progress("scheduler (pid %d) bound the warm-up pod %.2f s after start; RSS %.1f MiB", pid, res.ReadySeconds, res.ReadyRSS)
		before, berr = scrapeSchedulerMetrics(ctx, metricsURL)

		// The measured phase.
		if err := watchBindings(); err != nil {
			return res, err
		}
		cpu0 = mark()
		profDone = cfg.profile(mctx, s.client, fmt.Sprintf("127.0.0.1:%d", port), name)
		close(firstBound)
	}
	defer func() {
		select {
		case <-firstBound:
		default:
			mcancel() // nothing bound: stop waiting for a first binding
			<-firstBound
		}
		if profDone == nil {
			return
		}
		if err := <-profDone; err != nil {
			progress("CPU profile: %v", err)
		}
	}()
	var samples []float64
	sampDone := make(chan struct{})
	stopSampling := make(chan struct{})
	go func() {
		defer close(sampDone)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		prev := int64(0)
		for {
			select {
			case <-tick.C:
				n := bw.n.Load()
				samples = append(samples, float64(n-prev))
				prev = n
				if len(samples)%10 == 0 {
					progress("%d s: %d of %d pods bound", len(samples), n, cfg.Pods)
				}
			case <-stopSampling:
				return
			}
		}
	}()
	var createErr error
	createDone := make(chan struct{})
	if precreate {
		close(createDone)
	} else {
		go func() {
			defer close(createDone)
			createErr = createPending(start, bw)
		}()
	}
	err = waitFor(mctx, p, func() (bool, error) {
		select {
		case <-createDone:
			if createErr != nil {
				return false, fmt.Errorf("creating pending pods: %w", createErr)
			}
		default:
		}
		if err := bw.failed(); err != nil {
			return false, err
		}
		return bw.n.Load() >= int64(cfg.Pods), nil
	})
	close(stopSampling)
	<-sampDone
	if err != nil {
		mcancel()
		<-createDone
		return res, fmt.Errorf("%d of %d pods bound: %w", bw.n.Load(), cfg.Pods, err)
	}
	<-createDone
	<-firstBound
	cpu1 := mark()
	elapsed := time.Duration(bw.last.Load())
	if precreate {
		// From the first binding to the last.
		first := time.Duration(bw.first())
		res.ReadySeconds = round(first.Seconds(), 2)
		elapsed -= first
		for len(samples) > 0 && samples[0] == 0 {
			samples = samples[1:]
		}
		progress("scheduler (pid %d) bound its first pod %.2f s after start", pid, res.ReadySeconds)
	}
	sched, srv, self := cpu1.sched-cpu0.sched, cpu1.srv-cpu0.srv, cpu1.self-cpu0.self
	res.SchedulerCPU = round(sched.Seconds(), 2)
	res.ServerCPU = round(srv.Seconds(), 2)
	res.BenchCPU = round(self.Seconds(), 2)
	res.OtherCPU = round(max(0, cpu1.busy-cpu0.busy-sched-srv-self).Seconds(), 2)
	res.SchedulerCPUPerPod = round(float64(sched)/float64(time.Millisecond)/float64(cfg.Pods), 2)
	res.ServerCPUPerPod = round(float64(srv)/float64(time.Millisecond)/float64(cfg.Pods), 2)
	res.Seconds = round(elapsed.Seconds(), 3)
	if elapsed > 0 {
		n := cfg.Pods
		if precreate {
			n-- // intervals between the first binding and the last
		}
		res.PodsPerSec = round(float64(n)/elapsed.Seconds(), 1)
	}
	res.Throughput = summarizeThroughput(samples)
	lat := make([]time.Duration, 0, cfg.Pods)
	zones := make([]int, benchZones)
	for i := range cfg.Pods {
		b, s := bw.bound[i].Load(), bw.sent[i].Load()
		if s > 0 && b > 0 {
			lat = append(lat, time.Duration(b-(s-1)))
		}
		ni := int(bw.node[i].Load())
		if ni < 0 || ni >= cfg.Nodes {
			return res, fmt.Errorf("pod %s was bound to %q, not a benchmark node", benchPodName(i), bw.nodeName(i))
		}
		zones[ni%benchZones]++
	}
	if len(lat) > 0 {
		res.Latency = Summarize(lat)
	}
	res.Zones = map[string]int{}
	for z, n := range zones {
		res.Zones[zoneName(z)] = n
	}
	res.MaxSkew = slices.Max(zones) - slices.Min(zones)
	if m, err := readMemory(pid); err == nil {
		res.EndRSS, res.PeakRSS = mib(m.RSS), mib(m.Peak)
	}
	progress("%d pods bound in %.2f s: %.0f pods/s (per second p50 %.0f, p99 %.0f), e2e latency p50 %.0f ms p99 %.0f ms, scheduler CPU %.1f s, RSS end %.1f MiB peak %.1f MiB",
		cfg.Pods, res.Seconds, res.PodsPerSec, res.Throughput.P50, res.Throughput.P99, res.Latency.P50, res.Latency.P99, res.SchedulerCPU, res.EndRSS, res.PeakRSS)

	after, aerr := scrapeSchedulerMetrics(ctx, metricsURL)
	switch {
	case berr != nil:
		res.MetricsNote = berr.Error()
	case aerr != nil:
		res.MetricsNote = aerr.Error()
	default:
		res.Attempt = after.attempt.sub(before.attempt).quantiles()
		res.SLI = after.sli.sub(before.sli).quantiles()
		if res.Attempt == nil && res.SLI == nil {
			res.MetricsNote = "/metrics has neither scheduler_scheduling_attempt_duration_seconds nor scheduler_pod_scheduling_sli_duration_seconds observations"
		}
	}
	if shape == ShapeAffinity && res.MaxSkew > 1 {
		return res, fmt.Errorf("pending pods per zone %v: skew %d violates the spread constraint's maxSkew 1", res.Zones, res.MaxSkew)
	}
	return res, p.check()
}

// profile fetches CPU profiles of the API server (through srv) and the
// scheduler (at hostPort) over ProfileSeconds into ProfileDir, in the
// background; the channel yields the errors once both ended (nil when
// profiling is off).
func (c *SchedulerConfig) profile(ctx context.Context, srv *Client, hostPort, name string) <-chan error {
	done := make(chan error, 1)
	if c.ProfileDir == "" {
		done <- nil
		return done
	}
	if err := os.MkdirAll(c.ProfileDir, 0o755); err != nil {
		done <- err
		return done
	}
	path := fmt.Sprintf("/debug/pprof/profile?seconds=%d", c.ProfileSeconds)
	save := func(file string, resp *http.Response, err error) error {
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
			return fmt.Errorf("%s: HTTP %d: %s", file, resp.StatusCode, b)
		}
		f, err := os.Create(filepath.Join(c.ProfileDir, file))
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, resp.Body); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	wg.Go(func() {
		resp, err := srv.Do(ctx, http.MethodGet, path, nil)
		errs[0] = save(name+"-apiserver.pprof", resp, err)
		if errs[0] == nil {
			resp, err := srv.Do(ctx, http.MethodGet, "/debug/pprof/allocs", nil)
			errs[0] = save(name+"-apiserver-allocs.pprof", resp, err)
		}
	})
	wg.Go(func() {
		hc := &http.Client{Transport: &http.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback, our own child
		}}
		defer hc.CloseIdleConnections()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+hostPort+path, nil)
		if err != nil {
			errs[1] = err
			return
		}
		resp, err := hc.Do(req)
		errs[1] = save(name+"-scheduler.pprof", resp, err)
		if errs[1] == nil {
			// The allocations so far (start-up included).
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+hostPort+"/debug/pprof/allocs", nil)
			if err == nil {
				resp, err := hc.Do(req)
				errs[1] = save(name+"-scheduler-allocs.pprof", resp, err)
			}
		}
	})
	go func() {
		wg.Wait()
		done <- errors.Join(errs...)
	}()
	return done
}

// parallel runs fn(0) … fn(n-1) on `workers` goroutines and returns the
// first error (the others stop taking work).
func parallel(ctx context.Context, n, workers int, fn func(i int) error) error {
	var (
		next     atomic.Int64
		firstErr error
		once     sync.Once
		failed   atomic.Bool
		wg       sync.WaitGroup
	)
	for range max(1, min(workers, n)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || failed.Load() || ctx.Err() != nil {
					return
				}
				if err := fn(i); err != nil {
					once.Do(func() { firstErr = err })
					failed.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// bindWatch follows the pending namespace's pods and records, per pod
// index, when its create request was sent and when its binding was seen,
// both in nanoseconds since start plus one (0: not yet).
type bindWatch struct {
	start time.Time
	sent  []atomic.Int64
	bound []atomic.Int64
	node  []atomic.Int32 // node index, -1 before binding or for a foreign node
	names sync.Map       // pod index → foreign node name
	n     atomic.Int64   // pods bound
	last  atomic.Int64   // ns since start of the latest binding seen

	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	err    error
}

func newBindWatch(start time.Time, pods int) *bindWatch {
	b := &bindWatch{start: start, sent: make([]atomic.Int64, pods), bound: make([]atomic.Int64, pods),
		node: make([]atomic.Int32, pods), done: make(chan struct{})}
	for i := range b.node {
		b.node[i].Store(-1)
	}
	return b
}

func (b *bindWatch) run(ctx context.Context, pods *client.Typed[*corev1.Pod, *corev1.PodList], rv string) {
	ctx, b.cancel = context.WithCancel(ctx)
	go func() {
		defer close(b.done)
		for ctx.Err() == nil {
			// Only bound pods: a pod enters the selection (ADDED) when it
			// is bound, so the benchmark decodes one event per pod, not
			// its creation too.
			w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true, FieldSelector: "spec.nodeName!="})
			if err != nil {
				b.fail(fmt.Errorf("watching pods: %w", err))
				return
			}
			for ev := range w.ResultChan() {
				switch ev.Type {
				case watch.Error:
					w.Stop()
					b.fail(fmt.Errorf("pod watch error: %v", ev.Object))
					return
				case watch.Added, watch.Modified, watch.Bookmark:
					pod, ok := ev.Object.(*corev1.Pod)
					if !ok {
						continue
					}
					rv = pod.ResourceVersion
					if ev.Type != watch.Bookmark {
						b.observe(pod)
					}
				}
			}
			w.Stop()
		}
	}()
}

func (b *bindWatch) observe(pod *corev1.Pod) {
	if pod.Spec.NodeName == "" {
		return
	}
	i, ok := podIndex(pod.Name)
	if !ok || i < 0 || i >= len(b.bound) {
		return
	}
	now := int64(time.Since(b.start))
	if !b.bound[i].CompareAndSwap(0, now+1) {
		return
	}
	if ni, ok := nodeIndex(pod.Spec.NodeName); ok {
		b.node[i].Store(int32(ni))
	} else {
		b.node[i].Store(math.MaxInt32)
		b.names.Store(i, pod.Spec.NodeName)
	}
	for {
		l := b.last.Load()
		if now <= l || b.last.CompareAndSwap(l, now) {
			break
		}
	}
	b.n.Add(1)
}

// first is when the first binding was seen, in ns since start.
func (b *bindWatch) first() int64 {
	first := int64(math.MaxInt64)
	for i := range b.bound {
		if v := b.bound[i].Load(); v > 0 && v-1 < first {
			first = v - 1
		}
	}
	if first == math.MaxInt64 {
		return 0
	}
	return first
}

func (b *bindWatch) nodeName(i int) string {
	if v, ok := b.names.Load(i); ok {
		return v.(string)
	}
	return benchNodeName(int(b.node[i].Load()))
}

func (b *bindWatch) fail(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil {
		b.err = err
	}
}

func (b *bindWatch) failed() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

func (b *bindWatch) stop() {
	b.cancel()
	<-b.done
}

// summarizeThroughput is the average and nearest-rank percentiles of the
// per-second samples.
func summarizeThroughput(samples []float64) Throughput {
	t := Throughput{Samples: len(samples)}
	if len(samples) == 0 {
		return t
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	var sum float64
	for _, v := range s {
		sum += v
	}
	at := func(p float64) float64 {
		rank := int(math.Ceil(p / 100 * float64(len(s))))
		return s[max(1, min(rank, len(s)))-1]
	}
	t.Average = round(sum/float64(len(s)), 1)
	t.P50, t.P90, t.P99 = at(50), at(90), at(99)
	return t
}

// schedMetrics are the histograms scraped from a scheduler's /metrics.
type schedMetrics struct {
	attempt, sli histogram
}

// scrapeSchedulerMetrics GETs hostPath over HTTPS (any certificate; the
// schedulers serve self-signed ones), falling back to plain HTTP.
func scrapeSchedulerMetrics(ctx context.Context, hostPath string) (schedMetrics, error) {
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback, our own child
	}}
	defer hc.CloseIdleConnections()
	var body []byte
	var errs []error
	for _, scheme := range []string{"https://", "http://"} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+hostPath, nil)
		if err != nil {
			return schedMetrics{}, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if resp.StatusCode != http.StatusOK {
			errs = append(errs, fmt.Errorf("GET %s%s: HTTP %d: %.200s", scheme, hostPath, resp.StatusCode, b))
			continue
		}
		body = b
		break
	}
	if body == nil {
		return schedMetrics{}, fmt.Errorf("scheduler metrics not reachable: %w", errors.Join(errs...))
	}
	var m schedMetrics
	var err error
	if m.attempt, _, err = parseHistogram(strings.NewReader(string(body)), "scheduler_scheduling_attempt_duration_seconds", map[string]string{"result": "scheduled"}); err != nil {
		return m, err
	}
	if m.sli, _, err = parseHistogram(strings.NewReader(string(body)), "scheduler_pod_scheduling_sli_duration_seconds", nil); err != nil {
		return m, err
	}
	return m, nil
}

// quantiles of h in ms; nil without observations.
func (h histogram) quantiles() *HistQuantiles {
	q50 := h.quantile(0.5)
	if math.IsNaN(q50) {
		return nil
	}
	n := h.Count
	if n == 0 {
		n = h.Buckets[math.Inf(1)]
	}
	return &HistQuantiles{Count: n, P50: round(q50*1000, 2), P90: round(h.quantile(0.9)*1000, 2), P99: round(h.quantile(0.99)*1000, 2)}
}

// evaluateScheduler compares skiff's run with upstream's on one shape:
// the issue's targets are ≥ 3× upstream's pods/s (basic), ≥ 2× (affinity)
// and less memory.
func evaluateScheduler(sr ShapeResult) []Target {
	pick := func(mode string) (sk, up *SchedulerRun) {
		for i := range sr.Runs {
			if sr.Runs[i].Error != "" || sr.Runs[i].Mode != mode {
				continue
			}
			switch sr.Runs[i].Scheduler {
			case "skiff":
				sk = &sr.Runs[i]
			case "upstream":
				up = &sr.Runs[i]
			}
		}
		return sk, up
	}
	sk, up := pick("")
	ts := evaluateIssueTargets(sr.Shape, sk, up)
	// Beside the issue's targets (never instead): the scheduler's own
	// throughput with the pods created first.
	if sk, up := pick(ModePrecreated); sk != nil && up != nil && up.PodsPerSec > 0 {
		ts = append(ts, Target{Name: "pods/s, pods created first", Goal: "(information)",
			Upstream: fmt.Sprintf("%.0f", up.PodsPerSec), Measured: fmt.Sprintf("%.0f (%.2f×)", sk.PodsPerSec, sk.PodsPerSec/up.PodsPerSec), Status: "info"})
	}
	return ts
}

// evaluateIssueTargets compares skiff's run of the issue's shape with
// upstream's.
func evaluateIssueTargets(shape string, sk, up *SchedulerRun) []Target {
	if sk == nil || up == nil {
		return nil
	}
	var ts []Target
	goal := 3.0
	if shape == ShapeAffinity {
		goal = 2
	}
	if up.PodsPerSec > 0 {
		ratio := sk.PodsPerSec / up.PodsPerSec
		ts = append(ts, Target{Name: "pods/s vs upstream", Goal: fmt.Sprintf("≥ %g× upstream", goal),
			Upstream: fmt.Sprintf("%.0f", up.PodsPerSec), Measured: fmt.Sprintf("%.0f (%.2f×)", sk.PodsPerSec, ratio), Status: verdict(ratio >= goal)})
	}
	if up.PeakRSS > 0 {
		ratio := sk.PeakRSS / up.PeakRSS
		ts = append(ts, Target{Name: "peak RSS vs upstream", Goal: "< upstream",
			Upstream: fmt.Sprintf("%.1f MiB", up.PeakRSS), Measured: fmt.Sprintf("%.1f MiB (%.2f×)", sk.PeakRSS, ratio), Status: verdict(ratio < 1)})
	}
	return ts
}

// WriteText writes the report as tables, one per shape, schedulers side
// by side.
func (r *SchedulerReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "skiff bench scheduler — %s\n", r.Date)
	m := r.Machine
	fmt.Fprintf(w, "machine: %d CPUs (%s), %.0f GiB, %s %s, %s, load %s\n", m.CPUs, m.CPUModel, m.MemoryGiB, m.OS, m.Kernel, m.Go, m.LoadAvg)
	fmt.Fprintf(w, "workload: %d nodes (4 CPU, 32Gi, 110 pods, %d zones), %d pods bound, then %d pending pods timed; API server: skiff up --storage=memory, every skiff component disabled\n",
		r.Nodes, benchZones, r.Bound, r.Pods)
	for _, sr := range r.Shapes {
		fmt.Fprintf(w, "\nshape %s", sr.Shape)
		if sr.Shape == ShapeAffinity {
			fmt.Fprint(w, " (required pod affinity to color=blue in the zone + zone spread maxSkew 1 DoNotSchedule on every pod)")
		} else {
			fmt.Fprint(w, " (scheduler_perf SchedulingBasic: pause pods requesting 100m / 500Mi)")
		}
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "\t"+strings.Join(runNames(sr.Runs), "\t")+"\t")
		row := func(label string, f func(r *SchedulerRun) string) {
			cells := []string{label}
			for i := range sr.Runs {
				if sr.Runs[i].Error != "" && sr.Runs[i].Seconds == 0 {
					cells = append(cells, "—")
					continue
				}
				cells = append(cells, f(&sr.Runs[i]))
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
		}
		row("pods/s (average)", func(r *SchedulerRun) string { return fmt.Sprintf("%.0f", r.PodsPerSec) })
		row("seconds to bind all", func(r *SchedulerRun) string { return fmt.Sprintf("%.2f", r.Seconds) })
		row("per-second p50 / p90 / p99", func(r *SchedulerRun) string {
			if r.Throughput.Samples == 0 {
				return "n/a (< 1 s)"
			}
			return fmt.Sprintf("%.0f / %.0f / %.0f", r.Throughput.P50, r.Throughput.P90, r.Throughput.P99)
		})
		row("e2e latency ms p50 / p90 / p99", func(r *SchedulerRun) string {
			if r.Mode == ModePrecreated {
				return "n/a"
			}
			return fmt.Sprintf("%.0f / %.0f / %.0f", r.Latency.P50, r.Latency.P90, r.Latency.P99)
		})
		row("attempt ms p50 / p90 / p99", func(r *SchedulerRun) string { return r.Attempt.String() })
		row("SLI ms p50 / p90 / p99", func(r *SchedulerRun) string { return r.SLI.String() })
		row("RSS MiB ready / end / peak", func(r *SchedulerRun) string {
			return fmt.Sprintf("%.1f / %.1f / %.1f", r.ReadyRSS, r.EndRSS, r.PeakRSS)
		})
		row("CPU s scheduler / apiserver / bench / other", func(r *SchedulerRun) string {
			return fmt.Sprintf("%.1f / %.1f / %.1f / %.1f", r.SchedulerCPU, r.ServerCPU, r.BenchCPU, r.OtherCPU)
		})
		row("CPU ms per pod scheduler / apiserver", func(r *SchedulerRun) string {
			return fmt.Sprintf("%.2f / %.2f", r.SchedulerCPUPerPod, r.ServerCPUPerPod)
		})
		row("pending pods created in s", func(r *SchedulerRun) string { return fmt.Sprintf("%.2f", r.CreateSeconds) })
		row("setup s / scheduler ready s (precreated: first binding)", func(r *SchedulerRun) string {
			return fmt.Sprintf("%.1f / %.2f", r.SetupSeconds, r.ReadySeconds)
		})
		if sr.Shape == ShapeAffinity {
			row("pods per zone (skew)", func(r *SchedulerRun) string {
				var parts []string
				for z := range benchZones {
					parts = append(parts, strconv.Itoa(r.Zones[zoneName(z)]))
				}
				return fmt.Sprintf("%s (%d)", strings.Join(parts, "/"), r.MaxSkew)
			})
		}
		tw.Flush()
		for _, run := range sr.Runs {
			if run.MetricsNote != "" {
				fmt.Fprintf(w, "%s: %s\n", run.label(), run.MetricsNote)
			}
		}
		for _, t := range sr.Targets {
			fmt.Fprintf(w, "skiff/upstream %-22s %-22s upstream %-12s goal %-16s %s\n", t.Name, t.Measured, t.Upstream, t.Goal, strings.ToUpper(t.Status))
		}
		for _, run := range sr.Runs {
			if run.Error != "" {
				fmt.Fprintf(w, "%s: ERROR: %s\n", run.label(), run.Error)
			}
		}
	}
}

func runNames(runs []SchedulerRun) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.label()
	}
	return out
}

// label names the run in reports: the scheduler, and the mode if any.
func (r *SchedulerRun) label() string {
	if r.Mode != "" {
		return r.Scheduler + " (" + r.Mode + ")"
	}
	return r.Scheduler
}

func (q *HistQuantiles) String() string {
	if q == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f / %.1f / %.1f", q.P50, q.P90, q.P99)
}

// logTail is the last n bytes of the file at path, trimmed.
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	b = []byte(strings.TrimSpace(string(b)))
	if len(b) > n {
		b = b[len(b)-n:]
	}
	if len(b) == 0 {
		return "(empty)"
	}
	return string(b)
}
