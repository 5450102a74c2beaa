package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
)

// Runtimes of RunKubelet.
const (
	RuntimeSim        = "sim"
	RuntimeContainerd = "containerd"
)

// Workloads of RunKubelet: the pods are made by Deployments (through the
// controller manager's deployment and replicaset controllers) or created
// bare by the benchmark.
const (
	WorkloadDeployments = "deployments"
	WorkloadPods        = "pods"
)

// KubeletConfig configures RunKubelet. Zero fields take the defaults in
// the comments.
type KubeletConfig struct {
	// Runtime is RuntimeSim (default: hollow nodes of `skiff kubelet
	// --runtime=sim`) or RuntimeContainerd (one real node on a supervised
	// containerd).
	Runtime string
	// Nodes is how many hollow nodes (1000; containerd: always 1).
	Nodes int
	// Pods is how many pods are timed (sim 10000, containerd 100).
	Pods int
	// Workload is WorkloadDeployments (default for sim: Deployments of
	// Replicas pods, 100) or WorkloadPods (default for containerd: bare
	// pods, as upstream's node density test creates a batch).
	Workload string
	Replicas int
	// Storage is the API server's storage (memory).
	Storage string
	// Compare adds runs of other node agents on the same workload, each
	// against a fresh control plane: "kwok" (upstream's simulated nodes,
	// the Kwok binary with its "fast" node and pod stages). Sim only.
	Compare []string
	// Kwok is the kwok binary (default: $KWOK, else
	// ~/.cache/skiff-upstream-v1.34.4/kwok, what
	// ../shared/tools/build-upstream.sh builds); KwokStages a YAML file of
	// kwok Stages (default: kwok's kustomize/stage/{node,pod}/fast from the
	// Go module cache).
	Kwok       string
	KwokStages string
	// SimStartLatency is the hollow nodes' --sim-start-latency (0).
	SimStartLatency time.Duration
	// KubeletArgs are added to the `skiff kubelet` command line.
	KubeletArgs []string
	// Clients is how many concurrent clients create pods or Deployments
	// (32). CreateInterval paces them: pod (or Deployment) i is created no
	// earlier than i × CreateInterval after the first (0: all at once; as
	// the interval of upstream's node density test).
	Clients        int
	CreateInterval time.Duration
	// QPS and Burst are the controller manager's --kube-api-qps/-burst
	// (100000: client throttling off, as `skiff bench controllers`) and the
	// scheduler's clientConnection (capped at 5000, as scheduler_perf).
	QPS   float64
	Burst int
	// Timeout bounds the measured phase (10 min); NodesTimeout the nodes'
	// start until all are Ready (5 min); Settle the pause before the idle
	// memory reading (2 s).
	Timeout      time.Duration
	NodesTimeout time.Duration
	Settle       time.Duration

	// Containerd is the containerd binary (containerd on PATH);
	// BusyboxPath the static busybox packed as the pods' image
	// (/bin/busybox). Containerd runs only.
	Containerd  string
	BusyboxPath string

	JSON bool
	// CPUProfileDir, when set, receives CPU profiles of the whole run of
	// each skiff child process (`skiff --profile=cpu`):
	// <agent>-{apiserver,controller-manager,scheduler,kubelet}.pprof.
	CPUProfileDir string
	Keep          bool
	// Dir is where data directories and logs go (a new temporary
	// directory; for containerd a short one under /tmp, unix sockets).
	Dir string
	// Command is this executable (API server, controller manager,
	// scheduler, kubelet); Env is added to every child's environment.
	Command []string
	Env     []string

	Out      io.Writer
	Progress io.Writer
}

// DefaultKwok is where ../shared/tools/build-upstream.sh puts kwok, or
// $KWOK.
func DefaultKwok() string {
	if p := os.Getenv("KWOK"); p != "" {
		return p
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "skiff-upstream-v1.34.4", "kwok")
	}
	return ""
}

func (c *KubeletConfig) complete() error {
	switch c.Runtime {
	case "":
		c.Runtime = RuntimeSim
	case RuntimeSim, RuntimeContainerd:
	default:
		return fmt.Errorf("--runtime must be sim or containerd, not %q", c.Runtime)
	}
	sim := c.Runtime == RuntimeSim
	if c.Nodes == 0 {
		c.Nodes = 1000
	}
	if !sim {
		c.Nodes = 1
	}
	if c.Pods == 0 {
		c.Pods = 10000
		if !sim {
			c.Pods = 100
		}
	}
	if c.Nodes < 0 || c.Pods < 0 {
		return errors.New("--nodes and --pods must be positive")
	}
	switch c.Workload {
	case "":
		c.Workload = WorkloadDeployments
		if !sim {
			c.Workload = WorkloadPods
		}
	case WorkloadDeployments, WorkloadPods:
	default:
		return fmt.Errorf("--workload must be deployments or pods, not %q", c.Workload)
	}
	if c.Replicas == 0 {
		c.Replicas = 100
	}
	if c.Replicas < 0 {
		return errors.New("--replicas must be positive")
	}
	if c.CreateInterval < 0 {
		return errors.New("--create-interval must not be negative")
	}
	switch c.Storage {
	case "":
		c.Storage = "memory"
	case "memory", "etcd":
	default:
		return fmt.Errorf("--storage must be memory or etcd, not %q", c.Storage)
	}
	if c.Clients == 0 {
		c.Clients = 32
	}
	if c.QPS == 0 {
		c.QPS = 100000
	}
	if c.Burst == 0 {
		c.Burst = 100000
	}
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Minute
	}
	if c.NodesTimeout == 0 {
		c.NodesTimeout = 5 * time.Minute
	}
	if c.Settle == 0 {
		c.Settle = 2 * time.Second
	}
	for _, a := range c.Compare {
		if a != "kwok" {
			return fmt.Errorf("--compare: %q is not kwok", a)
		}
		if !sim {
			return errors.New("--compare=kwok compares simulated nodes: it needs --runtime=sim")
		}
		if c.Kwok == "" {
			c.Kwok = DefaultKwok()
		}
		if _, err := os.Stat(c.Kwok); err != nil {
			return fmt.Errorf("kwok: %w (build it with ../shared/tools/build-upstream.sh DIR kwok and pass --kwok)", err)
		}
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
	return nil
}

// KubeletReport is everything RunKubelet measured.
type KubeletReport struct {
	Date     string  `json:"date"`
	Machine  Machine `json:"machine"`
	Runtime  string  `json:"runtime"`
	Nodes    int     `json:"nodes"`
	Pods     int     `json:"pods"`
	Workload string  `json:"workload"`
	Replicas int     `json:"replicas,omitempty"`
	Storage  string  `json:"storage"`
	// CreateIntervalMS is KubeletConfig.CreateInterval.
	CreateIntervalMS float64 `json:"create_interval_ms,omitempty"`
	// Skipped says why nothing was measured (containerd or runc missing).
	Skipped string       `json:"skipped,omitempty"`
	Runs    []KubeletRun `json:"runs"`
	Targets []Target     `json:"targets,omitempty"`
	Errors  []string     `json:"errors,omitempty"`
}

// KubeletRun is one node agent (skiff's kubelet, or kwok) on the
// workload, against its own control plane.
type KubeletRun struct {
	// Agent is "skiff" or "kwok"; Command its command line.
	Agent   string `json:"agent"`
	Command string `json:"command"`
	// NodesReadySeconds: the agent's start until every node is Ready and
	// without taints (the node lifecycle controller lifts the not-ready
	// taint the API server puts on new nodes).
	NodesReadySeconds float64 `json:"nodes_ready_seconds"`
	// WarmupSeconds: a first pod created until it is Running (the
	// scheduler started and the whole path works).
	WarmupSeconds float64 `json:"warmup_seconds"`
	// Pods timed; Seconds from the first create request to the last pod
	// seen Running on the watch; PodsPerSec = Pods / Seconds.
	Pods       int     `json:"pods"`
	Seconds    float64 `json:"seconds"`
	PodsPerSec float64 `json:"pods_per_second"`
	// CreateSeconds is how long the creates took (of pods or
	// Deployments).
	CreateSeconds float64 `json:"create_seconds"`
	// Running1000Seconds: first create until the 1000th pod was seen
	// Running (kwok's CI gate: 1000 pods Running within 120 s); 0 with
	// fewer pods.
	Running1000Seconds float64 `json:"running_1000_seconds,omitempty"`
	// Throughput summarises the pods seen Running in each whole second.
	Throughput Throughput `json:"throughput"`
	// StartupLatency is per pod, from its ADDED event on the watch to the
	// event that shows it Running; ScheduleLatency from ADDED to the event
	// that shows it bound.
	StartupLatency  Latency `json:"startup_latency"`
	ScheduleLatency Latency `json:"schedule_latency"`
	// Resident memory, MiB: the agent process with its nodes ready and
	// before any pod (idle), at the end and its peak; the control plane's
	// processes at the end (peak for the API server); containerd's at the
	// end (containerd runs only; its shims are not counted).
	AgentIdleRSS   float64 `json:"agent_idle_rss_mib"`
	AgentEndRSS    float64 `json:"agent_end_rss_mib"`
	AgentPeakRSS   float64 `json:"agent_peak_rss_mib"`
	ServerRSS      float64 `json:"apiserver_rss_mib"`
	ServerPeakRSS  float64 `json:"apiserver_peak_rss_mib"`
	ManagerRSS     float64 `json:"controller_manager_rss_mib"`
	SchedulerRSS   float64 `json:"scheduler_rss_mib"`
	ContainerdRSS  float64 `json:"containerd_rss_mib,omitempty"`
	AgentBytesNode float64 `json:"agent_bytes_per_node"`
	// CPU seconds in the measured phase: the agent, API server,
	// controller manager, scheduler, this benchmark, and every other
	// process on the machine.
	AgentCPU     float64 `json:"agent_cpu_s"`
	ServerCPU    float64 `json:"apiserver_cpu_s"`
	ManagerCPU   float64 `json:"controller_manager_cpu_s"`
	SchedulerCPU float64 `json:"scheduler_cpu_s"`
	BenchCPU     float64 `json:"bench_cpu_s"`
	// RuntimeCPU (containerd runs): containerd and its shims, with the
	// children they waited for (runc, CNI plugins).
	RuntimeCPU float64 `json:"runtime_cpu_s,omitempty"`
	OtherCPU   float64 `json:"other_cpu_s"`
	// TeardownSeconds: deleting the pods until they are gone (containerd
	// runs only).
	TeardownSeconds float64  `json:"teardown_seconds,omitempty"`
	Notes           []string `json:"notes,omitempty"`
	Error           string   `json:"error,omitempty"`
}

// RunKubelet measures pod start-up on skiff's kubelet (and, with
// Compare, on kwok) and writes the report to cfg.Out.
func RunKubelet(ctx context.Context, cfg KubeletConfig) (*KubeletReport, error) {
	if err := cfg.complete(); err != nil {
		return nil, err
	}
	r := &KubeletReport{
		Date: time.Now().UTC().Format(time.RFC3339), Machine: machineInfo(),
		Runtime: cfg.Runtime, Nodes: cfg.Nodes, Pods: cfg.Pods, Workload: cfg.Workload, Storage: cfg.Storage,
		CreateIntervalMS: ms(cfg.CreateInterval),
	}
	if cfg.Workload == WorkloadDeployments {
		r.Replicas = cfg.Replicas
	}
	var rt *realRuntime
	if cfg.Runtime == RuntimeContainerd {
		if why := containerdMissing(&cfg); why != "" {
			r.Skipped = why
			fmt.Fprintf(cfg.Progress, "bench: skipped: %s\n", why)
			return r, r.write(&cfg, nil)
		}
	}
	root := cfg.Dir
	if root == "" {
		pattern := "skiff-bench-kubelet-"
		if cfg.Runtime == RuntimeContainerd {
			pattern = "skb" // unix socket paths stay short
		}
		d, err := os.MkdirTemp("", pattern)
		if err != nil {
			return nil, err
		}
		root = d
	}
	if cfg.CPUProfileDir != "" {
		d, err := filepath.Abs(cfg.CPUProfileDir)
		if err == nil {
			err = os.MkdirAll(d, 0o755)
		}
		if err != nil {
			return nil, err
		}
		cfg.CPUProfileDir = d
	}
	if cfg.Keep {
		defer fmt.Fprintf(cfg.Progress, "bench: kept data directories and logs in %s\n", root)
	} else if cfg.Dir == "" {
		defer os.RemoveAll(root)
	}
	if cfg.Runtime == RuntimeContainerd {
		var err error
		rt, err = startRealRuntime(ctx, &cfg, root)
		if err != nil {
			r.Errors = append(r.Errors, err.Error())
			return r, r.write(&cfg, nil)
		}
		defer rt.stop()
	}
	for _, agent := range append([]string{"skiff"}, cfg.Compare...) {
		res, err := runKubeletAgent(ctx, &cfg, root, agent, rt)
		if err != nil {
			res.Error = err.Error()
			r.Errors = append(r.Errors, agent+": "+err.Error())
		}
		r.Runs = append(r.Runs, res)
		if ctx.Err() != nil {
			break
		}
	}
	r.Targets = evaluateKubelet(r)
	return r, r.write(&cfg, nil)
}

func (r *KubeletReport) write(cfg *KubeletConfig, err error) error {
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
	return err
}

// Namespaces of the kubelet benchmark.
const (
	kubeletNamespace       = "kubelet-bench"
	kubeletWarmupNamespace = "kubelet-bench-warmup"
)

// kubeletPod is the pod template of the workload: for the sim a pause
// container with small requests (as `skiff bench controllers`), for
// containerd busybox sleeping, image IfNotPresent (nothing can be pulled)
// and a short grace period (sleep as PID 1 ignores SIGTERM).
func kubeletPod(cfg *KubeletConfig, image string, labels map[string]string) corev1.PodTemplateSpec {
	c := corev1.Container{
		Name: "c", Image: "registry.k8s.io/pause:3.10", ImagePullPolicy: corev1.PullIfNotPresent,
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("1m"), corev1.ResourceMemory: resource.MustParse("4Mi"),
		}},
	}
	var grace *int64
	if cfg.Runtime == RuntimeContainerd {
		c.Image, c.Command = image, []string{"sleep", "86400"}
		one := int64(1)
		grace = &one
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{c}, TerminationGracePeriodSeconds: grace},
	}
}

func kubeletBarePod(cfg *KubeletConfig, image, ns string, i int) *corev1.Pod {
	t := kubeletPod(cfg, image, map[string]string{"app": "kubelet-bench"})
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("kb-%06d", i), Namespace: ns, Labels: t.Labels}, Spec: t.Spec}
}

// kubeletDeployments are the Deployments making cfg.Pods pods: Replicas
// each, the last one the rest.
func kubeletDeployments(cfg *KubeletConfig, image, ns string) []map[string]any {
	var out []map[string]any
	for i, left := 0, cfg.Pods; left > 0; i++ {
		n := min(left, cfg.Replicas)
		left -= n
		name := fmt.Sprintf("kb-%04d", i)
		labels := map[string]string{"app": name}
		out = append(out, map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": name, "namespace": ns, "labels": labels},
			"spec": map[string]any{
				"replicas": n,
				"selector": map[string]any{"matchLabels": labels},
				"template": kubeletPod(cfg, image, labels),
			},
		})
	}
	return out
}

// kubeletCluster is one control plane of the benchmark: `skiff up` with
// every component disabled, and skiff's controller manager and scheduler
// as child processes (each one's memory and CPU read apart).
type kubeletCluster struct {
	s          *server
	dir        string
	kubeconfig string
	c          *client.Client
	manager    *managerProcess
	scheduler  *managerProcess
	agent      *managerProcess
	keep       bool
}

func (k *kubeletCluster) stop() {
	for _, p := range []*managerProcess{k.agent, k.scheduler, k.manager} {
		if p != nil {
			p.stop()
		}
	}
	if k.s != nil {
		k.s.stop()
	}
	if !k.keep && k.dir != "" {
		os.RemoveAll(k.dir)
		os.Remove(k.dir + ".log")
	}
}

// check reports the first child process that exited.
func (k *kubeletCluster) check() error {
	for _, p := range []*managerProcess{k.manager, k.scheduler, k.agent} {
		if p != nil {
			if err := p.check(); err != nil {
				return err
			}
		}
	}
	select {
	case <-k.s.exited:
		return fmt.Errorf("API server exited (%v): %s", k.s.waitErr, k.s.logTail())
	default:
	}
	return nil
}

func startKubeletCluster(ctx context.Context, cfg *KubeletConfig, root, name string) (*kubeletCluster, error) {
	k := &kubeletCluster{dir: filepath.Join(root, "server-"+name), keep: cfg.Keep}
	scfg := &Config{Command: cfg.Command, Env: cfg.Env, StartTimeout: time.Minute, CPUProfile: cfg.profileFile(name, "apiserver")}
	s, _, err := startServer(ctx, scfg, k.dir, cfg.Storage)
	if err != nil {
		return nil, fmt.Errorf("starting the API server: %w", err)
	}
	k.s = s
	k.kubeconfig = filepath.Join(k.dir, "kubeconfig")
	ccfg, err := client.LoadKubeconfig(k.kubeconfig, "")
	if err != nil {
		k.stop()
		return nil, err
	}
	ccfg.QPS, ccfg.ContentType = -1, client.ContentTypeProtobuf
	ccfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	ccfg.UserAgent = "skiff-bench-kubelet"
	if k.c, err = client.New(ccfg); err != nil {
		k.stop()
		return nil, err
	}
	mcfg := &ControllersConfig{Command: cfg.Command, Env: cfg.Env, QPS: cfg.QPS, Burst: cfg.Burst, CPUProfile: cfg.profileFile(name, "controller-manager")}
	if k.manager, err = startManager(mcfg, "skiff", k.dir, filepath.Join(root, name+"-controller-manager.log")); err != nil {
		k.stop()
		return nil, err
	}
	return k, nil
}

// startScheduler starts `skiff scheduler` with scheduler_perf's client
// settings.
func (k *kubeletCluster) startScheduler(cfg *KubeletConfig, root, name string) (string, error) {
	conf := filepath.Join(k.dir, "scheduler-config.yaml")
	qps, burst := min(cfg.QPS, 5000), min(cfg.Burst, 5000)
	if err := os.WriteFile(conf, []byte(schedulerConfigYAML(k.kubeconfig, qps, burst)), 0o600); err != nil {
		return "", err
	}
	port, err := freePort()
	if err != nil {
		return "", err
	}
	sc := &SchedulerConfig{Command: cfg.Command, SkiffArgs: DefaultSkiffSchedulerArgs}
	argv := append(sc.schedulerArgv("skiff", k.kubeconfig, conf, port), profileArgs(cfg.profileFile(name, "scheduler"))...)
	k.scheduler, err = startProcess(argv, cfg.Env, filepath.Join(root, name+"-scheduler.log"), "scheduler")
	return strings.Join(argv, " "), err
}

// kubeletArgv is `skiff kubelet`'s command line for the benchmark.
func kubeletArgv(cfg *KubeletConfig, kubeconfig string, rt *realRuntime) []string {
	argv := append([]string(nil), cfg.Command...)
	argv = append(argv, "kubelet", "--kubeconfig="+kubeconfig)
	if rt != nil {
		argv = append(argv, "--container-runtime-endpoint="+rt.endpoint(), "--hostname-override="+realNodeName,
			"--pod-log-dir="+filepath.Join(rt.base, "pods"), "--root-dir="+filepath.Join(rt.base, "kubelet"))
	} else {
		argv = append(argv, "--runtime=sim", "--nodes="+strconv.Itoa(cfg.Nodes), "--record-events=false",
			"--sim-start-latency="+cfg.SimStartLatency.String())
	}
	argv = append(argv, profileArgs(cfg.profileFile("skiff", "kubelet"))...)
	return append(argv, cfg.KubeletArgs...)
}

// profileFile is where the child process what of the run of agent writes
// its CPU profile ("" without CPUProfileDir).
func (cfg *KubeletConfig) profileFile(agent, what string) string {
	if cfg.CPUProfileDir == "" {
		return ""
	}
	return filepath.Join(cfg.CPUProfileDir, agent+"-"+what+".pprof")
}

func runKubeletAgent(ctx context.Context, cfg *KubeletConfig, root, agent string, rt *realRuntime) (KubeletRun, error) {
	res := KubeletRun{Agent: agent, Pods: cfg.Pods}
	progress := func(format string, args ...any) {
		fmt.Fprintf(cfg.Progress, "bench: %s: "+format+"\n", append([]any{agent}, args...)...)
	}
	k, err := startKubeletCluster(ctx, cfg, root, agent)
	if err != nil {
		return res, err
	}
	defer k.stop()
	c := k.c
	pctx, cancel := context.WithTimeout(ctx, cfg.Timeout+cfg.NodesTimeout)
	defer cancel()
	if err := waitFor(pctx, k.manager, func() (bool, error) {
		return exists(pctx, k.s.client, "/api/v1/namespaces/default/serviceaccounts/default")
	}); err != nil {
		return res, fmt.Errorf("waiting for the controller manager: %w", err)
	}
	progress("API server and controller manager ready")

	// The node agent.
	image := ""
	if rt != nil {
		image = rt.image
	}
	var argv []string
	t0 := time.Now()
	switch agent {
	case "kwok":
		if argv, err = startKwok(pctx, cfg, k, root); err != nil {
			return res, err
		}
	default:
		argv = kubeletArgv(cfg, k.kubeconfig, rt)
		if k.agent, err = startProcess(argv, cfg.Env, filepath.Join(root, agent+"-kubelet.log"), "kubelet"); err != nil {
			return res, err
		}
	}
	res.Command = strings.Join(argv, " ")
	nctx, ncancel := context.WithTimeout(pctx, cfg.NodesTimeout)
	err = waitNodesReady(nctx, k, cfg.Nodes)
	ncancel()
	if err != nil {
		return res, fmt.Errorf("waiting for %d Ready nodes: %w (end of the agent's log: %s)", cfg.Nodes, err, logTail(k.agent.log, 1500))
	}
	res.NodesReadySeconds = round(time.Since(t0).Seconds(), 2)
	progress("%d nodes Ready and schedulable %.1f s after the agent started", cfg.Nodes, res.NodesReadySeconds)

	// The scheduler, ready once a warm-up pod runs.
	if _, err := k.startScheduler(cfg, root, agent); err != nil {
		return res, err
	}
	for _, ns := range []string{kubeletWarmupNamespace, kubeletNamespace} {
		if err := k.s.client.CreateNamespace(pctx, ns); err != nil {
			return res, fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	t1 := time.Now()
	warm := client.For[*corev1.Pod, *corev1.PodList](c).Namespace(kubeletWarmupNamespace)
	if _, err := warm.Create(pctx, kubeletBarePod(cfg, image, kubeletWarmupNamespace, 0), metav1.CreateOptions{}); err != nil {
		return res, err
	}
	wctx, wcancel := context.WithTimeout(pctx, 2*time.Minute)
	err = waitFor(wctx, k.agent, func() (bool, error) {
		if err := k.check(); err != nil {
			return false, err
		}
		p, err := warm.Get(wctx, "kb-000000", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return p.Status.Phase == corev1.PodRunning, nil
	})
	wcancel()
	if err != nil {
		return res, fmt.Errorf("waiting for the warm-up pod to run: %w (end of the scheduler's log: %s)", err, logTail(k.scheduler.log, 1500))
	}
	res.WarmupSeconds = round(time.Since(t1).Seconds(), 2)
	sleep(ctx, cfg.Settle)
	if m, err := readMemory(k.agentPid()); err == nil {
		res.AgentIdleRSS = mib(m.RSS)
		if cfg.Nodes > 0 {
			res.AgentBytesNode = round(float64(m.RSS)/float64(cfg.Nodes), 0)
		}
	}
	progress("warm-up pod Running %.2f s after the scheduler started; agent RSS %.1f MiB", res.WarmupSeconds, res.AgentIdleRSS)

	// The measured phase.
	mctx, mcancel := context.WithTimeout(ctx, cfg.Timeout)
	defer mcancel()
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace(kubeletNamespace)
	list, err := pods.List(mctx, metav1.ListOptions{})
	if err != nil {
		return res, err
	}
	start := time.Now()
	pw := newPodWatch(start, cfg.Pods)
	pw.run(mctx, pods, list.ResourceVersion)
	defer pw.stop()
	type cpuMark struct{ agent, srv, mgr, sched, self, busy time.Duration }
	mark := func() cpuMark {
		m := cpuMark{self: selfCPU(), busy: machineBusy()}
		m.agent, _ = procCPU(k.agentPid())
		m.srv, _ = procCPU(k.s.cmd.Process.Pid)
		m.mgr, _ = procCPU(k.manager.cmd.Process.Pid)
		m.sched, _ = procCPU(k.scheduler.cmd.Process.Pid)
		return m
	}
	cpu0 := mark()
	var rt0 map[int]time.Duration
	if rt != nil {
		rt0 = rt.cpu()
	}
	var createErr error
	createDone := make(chan struct{})
	go func() {
		defer close(createDone)
		// Object i is sent no earlier than start + i × CreateInterval.
		pace := func(i int) {
			if cfg.CreateInterval > 0 {
				if d := time.Until(start.Add(time.Duration(i) * cfg.CreateInterval)); d > 0 {
					sleep(mctx, d)
				}
			}
		}
		if cfg.Workload == WorkloadPods {
			createErr = parallel(mctx, cfg.Pods, cfg.Clients, func(i int) error {
				pace(i)
				_, err := pods.Create(mctx, kubeletBarePod(cfg, image, kubeletNamespace, i), metav1.CreateOptions{})
				return err
			})
		} else {
			deps := kubeletDeployments(cfg, image, kubeletNamespace)
			bodies := make([][]byte, len(deps))
			for i, d := range deps {
				bodies[i], _ = json.Marshal(d)
			}
			createErr = parallel(mctx, len(bodies), cfg.Clients, func(i int) error {
				pace(i)
				return k.s.client.call(mctx, http.MethodPost, "/apis/apps/v1/namespaces/"+kubeletNamespace+"/deployments", bodies[i], http.StatusCreated, nil)
			})
		}
		res.CreateSeconds = round(time.Since(start).Seconds(), 2)
	}()
	var samples []float64
	sampDone, stopSampling := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampDone)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		prev := int64(0)
		for {
			select {
			case <-tick.C:
				n := pw.running.Load()
				samples = append(samples, float64(n-prev))
				prev = n
				if len(samples)%5 == 0 {
					progress("%d s: %d pods seen, %d bound, %d Running of %d", len(samples), pw.added.Load(), pw.bound.Load(), n, cfg.Pods)
				}
			case <-stopSampling:
				return
			}
		}
	}()
	err = waitFor(mctx, k.agent, func() (bool, error) {
		select {
		case <-createDone:
			if createErr != nil {
				return false, fmt.Errorf("creating the workload: %w", createErr)
			}
		default:
		}
		if err := pw.failed(); err != nil {
			return false, err
		}
		if err := k.check(); err != nil {
			return false, err
		}
		return pw.running.Load() >= int64(cfg.Pods), nil
	})
	close(stopSampling)
	<-sampDone
	if err != nil {
		mcancel()
		<-createDone
		return res, fmt.Errorf("%d of %d pods Running (%d seen, %d bound): %w", pw.running.Load(), cfg.Pods, pw.added.Load(), pw.bound.Load(), err)
	}
	<-createDone
	cpu1 := mark()
	var runtimeCPU time.Duration
	if rt != nil {
		for pid, c := range rt.cpu() {
			runtimeCPU += max(0, c-rt0[pid])
		}
		res.RuntimeCPU = round(runtimeCPU.Seconds(), 2)
	}
	pw.stop()
	elapsed := time.Duration(pw.last.Load())
	res.Seconds = round(elapsed.Seconds(), 3)
	if elapsed > 0 {
		res.PodsPerSec = round(float64(cfg.Pods)/elapsed.Seconds(), 1)
	}
	res.Throughput = summarizeThroughput(samples)
	startup, sched, at1000 := pw.latencies()
	res.StartupLatency, res.ScheduleLatency = Summarize(startup), Summarize(sched)
	if at1000 > 0 {
		res.Running1000Seconds = round(at1000.Seconds(), 2)
	}
	d := func(a, b time.Duration) float64 { return round(max(0, a-b).Seconds(), 2) }
	res.AgentCPU, res.ServerCPU = d(cpu1.agent, cpu0.agent), d(cpu1.srv, cpu0.srv)
	res.ManagerCPU, res.SchedulerCPU = d(cpu1.mgr, cpu0.mgr), d(cpu1.sched, cpu0.sched)
	res.BenchCPU = d(cpu1.self, cpu0.self)
	res.OtherCPU = round(max(0, (cpu1.busy-cpu0.busy)-(cpu1.agent-cpu0.agent)-(cpu1.srv-cpu0.srv)-(cpu1.mgr-cpu0.mgr)-(cpu1.sched-cpu0.sched)-(cpu1.self-cpu0.self)-runtimeCPU).Seconds(), 2)
	if m, err := readMemory(k.agentPid()); err == nil {
		res.AgentEndRSS, res.AgentPeakRSS = mib(m.RSS), mib(m.Peak)
	}
	if m, err := readMemory(k.s.cmd.Process.Pid); err == nil {
		res.ServerRSS, res.ServerPeakRSS = mib(m.RSS), mib(m.Peak)
	}
	if m, err := readMemory(k.manager.cmd.Process.Pid); err == nil {
		res.ManagerRSS = mib(m.RSS)
	}
	if m, err := readMemory(k.scheduler.cmd.Process.Pid); err == nil {
		res.SchedulerRSS = mib(m.RSS)
	}
	if rt != nil {
		if m, err := readMemory(rt.sup.Pid()); err == nil {
			res.ContainerdRSS = mib(m.RSS)
		}
	}
	progress("%d pods Running in %.2f s: %.0f pods/s; start-up latency p50 %.0f ms p90 %.0f ms p99 %.0f ms; agent RSS %.1f MiB (peak %.1f)",
		cfg.Pods, res.Seconds, res.PodsPerSec, res.StartupLatency.P50, res.StartupLatency.P90, res.StartupLatency.P99, res.AgentEndRSS, res.AgentPeakRSS)

	if rt != nil {
		// Clean up through the API, as a user would: the kubelet stops
		// and removes the containers; what is left the supervisor removes
		// when it stops.
		t2 := time.Now()
		if err := teardownPods(ctx, c, k, cfg.Workload); err != nil {
			res.Notes = append(res.Notes, "teardown: "+err.Error())
		} else {
			res.TeardownSeconds = round(time.Since(t2).Seconds(), 2)
			progress("pods deleted and gone in %.1f s", res.TeardownSeconds)
		}
	}
	return res, k.check()
}

// agentPid is the node agent's process id (0 when not started).
func (k *kubeletCluster) agentPid() int {
	if k.agent == nil {
		return 0
	}
	return k.agent.cmd.Process.Pid
}

// waitNodesReady waits until n nodes are Ready and untainted.
func waitNodesReady(ctx context.Context, k *kubeletCluster, n int) error {
	nodes := client.For[*corev1.Node, *corev1.NodeList](k.c)
	ready := 0
	for {
		if err := k.check(); err != nil {
			return err
		}
		l, err := nodes.List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil && ctx.Err() == nil {
			return err
		}
		if err == nil {
			ready = 0
			for i := range l.Items {
				if nodeSchedulable(&l.Items[i]) {
					ready++
				}
			}
			if ready >= n {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d Ready: %w", ready, n, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func nodeSchedulable(n *corev1.Node) bool {
	if n.Spec.Unschedulable || len(n.Spec.Taints) > 0 {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// teardownPods deletes the workload and waits until its pods are gone
// (2 min at most).
func teardownPods(ctx context.Context, c *client.Client, k *kubeletCluster, workload string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace(kubeletNamespace)
	if workload == WorkloadDeployments {
		if err := k.s.client.call(ctx, http.MethodDelete, "/apis/apps/v1/namespaces/"+kubeletNamespace+"/deployments", nil, http.StatusOK, nil); err != nil {
			return err
		}
	}
	if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return err
	}
	for _, ns := range []string{kubeletWarmupNamespace} {
		_ = client.For[*corev1.Pod, *corev1.PodList](c).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	}
	return waitFor(ctx, k.agent, func() (bool, error) {
		n := 0
		for _, ns := range []string{kubeletNamespace, kubeletWarmupNamespace} {
			l, err := client.For[*corev1.Pod, *corev1.PodList](c).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			n += len(l.Items)
		}
		return n == 0, nil
	})
}

// containerdMissing says why a containerd run cannot happen here ("" when
// it can).
func containerdMissing(cfg *KubeletConfig) string {
	bin := cfg.Containerd
	if bin == "" {
		bin = "containerd"
	}
	for _, b := range []string{bin, "runc", "ctr"} {
		if _, err := exec.LookPath(b); err != nil {
			return fmt.Sprintf("%s is not installed (apt-get install containerd runc containernetworking-plugins busybox-static): --runtime=containerd runs real containers", b)
		}
	}
	if os.Geteuid() != 0 {
		return "not root: containerd and runc need root here"
	}
	return ""
}
