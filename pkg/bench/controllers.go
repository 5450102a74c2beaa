package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ControllersConfig configures RunControllers. Zero fields take the
// defaults in the comments.
type ControllersConfig struct {
	// Deployments × Replicas pods are created by the throughput phase
	// (100 × 100).
	Deployments int
	Replicas    int
	// MemoryPods is the pod count at which the manager's memory is read
	// again (50,000; more Deployments of Replicas pods are created to
	// reach it); 0 after defaulting (negative) skips that phase.
	MemoryPods int
	// Managers are the controller managers measured, one after the other,
	// each against a fresh API server: "skiff" (`<Command> controller-manager`)
	// and "upstream" (UpstreamKCM). Default: both, upstream only when
	// UpstreamKCM exists.
	Managers []string
	// UpstreamKCM is upstream's kube-controller-manager binary (default:
	// the cache ../shared/tools/build-upstream.sh fills,
	// ~/.cache/skiff-upstream-v1.34.4/kube-controller-manager).
	UpstreamKCM string
	// QPS and Burst are both managers' --kube-api-qps/--kube-api-burst
	// (100000: client-side throttling off, as the issue asks).
	QPS   float64
	Burst int
	// Timeout bounds each phase (10 min); Settle is the pause before each
	// memory reading (2 s).
	Timeout time.Duration
	Settle  time.Duration

	JSON bool
	Keep bool
	Dir  string
	// Command is this executable (the server and skiff's manager); Env is
	// added to every child's environment.
	Command []string
	Env     []string
	// CPUProfile, when set, is where `skiff controller-manager` writes a
	// CPU profile of its run.
	CPUProfile string
	Out        io.Writer
	// Progress receives one line per step (nil: silent).
	Progress io.Writer
}

// ControllersReport is the result of RunControllers.
type ControllersReport struct {
	Date        string          `json:"date"`
	Machine     Machine         `json:"machine"`
	Deployments int             `json:"deployments"`
	Replicas    int             `json:"replicas"`
	MemoryPods  int             `json:"memory_pods"`
	Runs        []ManagerResult `json:"runs"`
	Targets     []Target        `json:"targets,omitempty"`
	Errors      []string        `json:"errors,omitempty"`
}

// ManagerResult is one controller manager's figures.
type ManagerResult struct {
	Manager string `json:"manager"`
	// ReadySeconds: process start → the default ServiceAccount of the
	// "default" namespace exists (the manager's caches synced and its
	// controllers working).
	ReadySeconds float64 `json:"ready_seconds"`
	// Pods created by the throughput phase, the time from the first
	// Deployment create to the last pod's ADDED event, and the rate.
	Pods       int     `json:"pods"`
	Seconds    float64 `json:"seconds"`
	PodsPerSec float64 `json:"pods_per_second"`
	// ManagerCPU is the manager's CPU time (user+system) in that phase.
	ManagerCPU float64 `json:"manager_cpu_seconds"`
	// Resident memory of the manager: idle (ready), after the throughput
	// phase, at MemoryPods, and its peak; ServerRSS the API server's at
	// the end (for the record: it is not the thing measured).
	IdleRSS       float64 `json:"idle_rss_mib"`
	AfterRSS      float64 `json:"after_rss_mib"`
	MemoryPodsRSS float64 `json:"memory_pods_rss_mib,omitempty"`
	PeakRSS       float64 `json:"peak_rss_mib"`
	ServerRSS     float64 `json:"server_rss_mib"`
	Error         string  `json:"error,omitempty"`
}

func (c *ControllersConfig) complete() error {
	if c.Deployments == 0 {
		c.Deployments = 100
	}
	if c.Replicas == 0 {
		c.Replicas = 100
	}
	if c.Deployments < 0 || c.Replicas < 0 {
		return errors.New("--deployments and --replicas must be positive")
	}
	switch {
	case c.MemoryPods == 0:
		c.MemoryPods = 50000
	case c.MemoryPods < 0:
		c.MemoryPods = 0
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
	if c.Settle == 0 {
		c.Settle = 2 * time.Second
	}
	if len(c.Command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		c.Command = []string{exe}
	}
	if c.UpstreamKCM == "" {
		if d, err := os.UserCacheDir(); err == nil {
			c.UpstreamKCM = filepath.Join(d, "skiff-upstream-v1.34.4", "kube-controller-manager")
		}
	}
	if len(c.Managers) == 0 {
		c.Managers = []string{"skiff"}
		if _, err := os.Stat(c.UpstreamKCM); err == nil {
			c.Managers = append(c.Managers, "upstream")
		}
	}
	for _, m := range c.Managers {
		if m != "skiff" && m != "upstream" {
			return fmt.Errorf("--managers: %q is neither skiff nor upstream", m)
		}
		if m == "upstream" {
			if _, err := os.Stat(c.UpstreamKCM); err != nil {
				return fmt.Errorf("upstream kube-controller-manager: %w (build it with ../shared/tools/build-upstream.sh DIR kube-controller-manager and pass --upstream-kube-controller-manager)", err)
			}
		}
	}
	if c.Out == nil {
		c.Out = os.Stdout
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return nil
}

// RunControllers measures controller managers on the same workload, each
// attached to a fresh `skiff up --storage=memory` with every skiff
// component disabled, and writes the report to cfg.Out.
func RunControllers(ctx context.Context, cfg ControllersConfig) (*ControllersReport, error) {
	if err := cfg.complete(); err != nil {
		return nil, err
	}
	root := cfg.Dir
	if root == "" {
		d, err := os.MkdirTemp("", "skiff-bench-controllers-")
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
	r := &ControllersReport{
		Date: time.Now().UTC().Format(time.RFC3339), Machine: machineInfo(),
		Deployments: cfg.Deployments, Replicas: cfg.Replicas, MemoryPods: cfg.MemoryPods,
	}
	for _, m := range cfg.Managers {
		res, err := runManager(ctx, &cfg, root, m)
		if err != nil {
			res.Error = err.Error()
			r.Errors = append(r.Errors, m+": "+err.Error())
		}
		r.Runs = append(r.Runs, res)
		if ctx.Err() != nil {
			break
		}
	}
	r.Targets = evaluateControllers(r)
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

// managerProcess is a controller manager child process.
type managerProcess struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
	log    string
	// what names the process in errors ("controller manager" when empty).
	what string
}

// startProcess starts argv as a child with env added, its output in
// logPath; what names it in errors.
func startProcess(argv, env []string, logPath, what string) (*managerProcess, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &managerProcess{cmd: cmd, exited: make(chan struct{}), log: logPath, what: what}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	return p, nil
}

func startManager(cfg *ControllersConfig, which, dataDir, logPath string) (*managerProcess, error) {
	kc := filepath.Join(dataDir, "kubeconfig")
	pki := filepath.Join(dataDir, "pki")
	throttle := []string{fmt.Sprintf("--kube-api-qps=%g", cfg.QPS), fmt.Sprintf("--kube-api-burst=%d", cfg.Burst)}
	var cmd *exec.Cmd
	switch which {
	case "skiff":
		args := append(append([]string(nil), cfg.Command[1:]...), "controller-manager",
			"--kubeconfig", kc, "--leader-elect=false", "--secure-port=0",
			"--root-ca-file", filepath.Join(pki, "ca.crt"))
		args = append(args, profileArgs(cfg.CPUProfile)...)
		cmd = exec.Command(cfg.Command[0], append(args, throttle...)...)
	default:
		// Upstream's flags as test/conformance/run.sh attaches it; no
		// serving (both managers serve nothing), one client identity.
		args := []string{"--kubeconfig", kc, "--leader-elect=false", "--secure-port=0",
			"--controllers=*", "--root-ca-file", filepath.Join(pki, "ca.crt"),
			"--service-account-private-key-file", filepath.Join(pki, "sa.key"),
			"--use-service-account-credentials=false",
			"--cluster-signing-cert-file", filepath.Join(pki, "ca.crt"),
			"--cluster-signing-key-file", filepath.Join(pki, "ca.key")}
		cmd = exec.Command(cfg.UpstreamKCM, append(args, throttle...)...)
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd.Env = append(os.Environ(), cfg.Env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &managerProcess{cmd: cmd, exited: make(chan struct{}), log: logPath}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	return p, nil
}

func (p *managerProcess) stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

func (p *managerProcess) check() error {
	select {
	case <-p.exited:
		b, _ := os.ReadFile(p.log)
		if len(b) > 2000 {
			b = b[len(b)-2000:]
		}
		what := p.what
		if what == "" {
			what = "controller manager"
		}
		return fmt.Errorf("%s exited (%v): %s", what, p.err, strings.TrimSpace(string(b)))
	default:
		return nil
	}
}

func runManager(ctx context.Context, cfg *ControllersConfig, root, which string) (ManagerResult, error) {
	res := ManagerResult{Manager: which}
	progress := func(format string, args ...any) {
		fmt.Fprintf(cfg.Progress, "bench: %s: "+format+"\n", append([]any{which}, args...)...)
	}
	dir := filepath.Join(root, "server-"+which)
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
	c := s.client
	t0 := time.Now()
	m, err := startManager(cfg, which, dir, filepath.Join(root, which+"-controller-manager.log"))
	if err != nil {
		return res, err
	}
	defer m.stop()
	pid := m.cmd.Process.Pid
	progress("API server ready; controller manager started (pid %d)", pid)

	pctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	// Ready: the service account controller made the default namespace's
	// ServiceAccount, so caches are synced and controllers run.
	if err := waitFor(pctx, m, func() (bool, error) {
		return exists(pctx, c, "/api/v1/namespaces/default/serviceaccounts/default")
	}); err != nil {
		return res, fmt.Errorf("waiting for the manager to create the default ServiceAccount: %w", err)
	}
	res.ReadySeconds = round(time.Since(t0).Seconds(), 2)
	sleep(ctx, cfg.Settle)
	if mem, err := readMemory(pid); err == nil {
		res.IdleRSS = mib(mem.RSS)
	}
	const ns = "bench-controllers"
	if err := createNamespaceOnly(pctx, c, ns); err != nil {
		return res, err
	}
	if err := waitFor(pctx, m, func() (bool, error) {
		return exists(pctx, c, "/api/v1/namespaces/"+ns+"/serviceaccounts/default")
	}); err != nil {
		return res, fmt.Errorf("waiting for %s's default ServiceAccount: %w", ns, err)
	}

	counter, err := watchPodAdds(pctx, c, ns)
	if err != nil {
		return res, err
	}
	defer counter.stop()

	// Throughput: Deployments × Replicas.
	want := cfg.Deployments * cfg.Replicas
	cpu0, _ := procCPU(pid)
	start := time.Now()
	if err := createDeployments(pctx, c, ns, 0, cfg.Deployments, cfg.Replicas); err != nil {
		return res, err
	}
	if err := counter.waitFor(pctx, m, want); err != nil {
		return res, fmt.Errorf("waiting for %d pods (%d seen): %w", want, counter.n.Load(), err)
	}
	el := time.Since(start)
	cpu1, _ := procCPU(pid)
	res.Pods, res.Seconds = want, round(el.Seconds(), 2)
	res.PodsPerSec = round(float64(want)/el.Seconds(), 0)
	res.ManagerCPU = round((cpu1 - cpu0).Seconds(), 2)
	progress("%d pods in %v (%.0f pods/s), manager CPU %v", want, el.Round(time.Millisecond), res.PodsPerSec, (cpu1 - cpu0).Round(time.Millisecond))
	sleep(ctx, cfg.Settle)
	if mem, err := readMemory(pid); err == nil {
		res.AfterRSS = mib(mem.RSS)
	}

	// Memory at MemoryPods.
	if cfg.MemoryPods > want && cfg.Replicas > 0 {
		more := (cfg.MemoryPods - want + cfg.Replicas - 1) / cfg.Replicas
		if err := createDeployments(pctx, c, ns, cfg.Deployments, more, cfg.Replicas); err != nil {
			return res, err
		}
		total := want + more*cfg.Replicas
		if err := counter.waitFor(pctx, m, total); err != nil {
			return res, fmt.Errorf("waiting for %d pods (%d seen): %w", total, counter.n.Load(), err)
		}
		progress("%d pods exist", total)
		if n := counter.rewatches.Load(); n > 0 {
			progress("the pod watch was opened again %d times (the API server drops a watcher that falls behind)", n)
		}
		sleep(ctx, cfg.Settle)
		if mem, err := readMemory(pid); err == nil {
			res.MemoryPodsRSS = mib(mem.RSS)
		}
	}
	if mem, err := readMemory(pid); err == nil {
		res.PeakRSS = mib(mem.Peak)
	}
	if mem, err := readMemory(s.cmd.Process.Pid); err == nil {
		res.ServerRSS = mib(mem.RSS)
	}
	return res, m.check()
}

// waitFor polls cond every 50 ms until it holds, the manager exits, or
// ctx ends.
func waitFor(ctx context.Context, m *managerProcess, cond func() (bool, error)) error {
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if err := m.check(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func exists(ctx context.Context, c *Client, path string) (bool, error) {
	err := c.call(ctx, http.MethodGet, path, nil, http.StatusOK, nil)
	var se *StatusError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &se) && se.Code == http.StatusNotFound:
		return false, nil
	default:
		return false, err
	}
}

// createNamespaceOnly creates a namespace and leaves its ServiceAccount
// to the manager under test.
func createNamespaceOnly(ctx context.Context, c *Client, name string) error {
	body, _ := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name},
	})
	return c.call(ctx, http.MethodPost, "/api/v1/namespaces", body, http.StatusCreated, nil)
}

// Deployment is the bench's Deployment i: replicas pods of one pause
// container, selected by app=bench-<i>.
func Deployment(ns string, i, replicas int) []byte {
	name := fmt.Sprintf("bench-%04d", i)
	labels := map[string]string{"app": name}
	b, _ := json.Marshal(map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": labels},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name": "pause", "image": "registry.k8s.io/pause:3.10",
					"resources": map[string]any{"requests": map[string]any{"cpu": "1m", "memory": "4Mi"}},
				}}},
			},
		},
	})
	return b
}

// createDeployments creates Deployments first … first+n-1 with 8
// concurrent clients.
func createDeployments(ctx context.Context, c *Client, ns string, first, n, replicas int) error {
	bodies := make([][]byte, n)
	for i := range n {
		bodies[i] = Deployment(ns, first+i, replicas)
	}
	_, err := createBodies(ctx, c, "/apis/apps/v1/namespaces/"+ns+"/deployments", bodies, 8, CreateResult{})
	return err
}

// podCounter counts distinct pods seen on a watch of one namespace. The
// API server drops a watcher that falls behind (a loaded machine slows
// the benchmark's decoding too): the counter then watches again from the
// last resourceVersion it saw, or lists the namespace again when that is
// gone (410), counting each pod name once.
type podCounter struct {
	n         atomic.Int64
	rewatches atomic.Int64
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	mu        sync.Mutex
	err       error
	seen      map[string]struct{} // the watch goroutine's (and the first list's)
}

// maxRewatches bounds the watches the counter opens again.
const maxRewatches = 100

var errWatchGone = errors.New("watch resourceVersion too old")

func watchPodAdds(ctx context.Context, c *Client, ns string) (*podCounter, error) {
	base := "/api/v1/namespaces/" + ns + "/pods"
	p := &podCounter{seen: map[string]struct{}{}}
	rv, err := p.list(ctx, c, base)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	resp, err := openPodWatch(wctx, c, base, rv)
	if err != nil {
		cancel()
		return nil, err
	}
	p.cancel = cancel
	p.wg.Go(func() { p.run(wctx, c, base, resp, rv) })
	return p, nil
}

// list counts the namespace's pods and returns the list's resourceVersion.
func (p *podCounter) list(ctx context.Context, c *Client, base string) (string, error) {
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := c.call(ctx, http.MethodGet, base, nil, http.StatusOK, &list); err != nil {
		return "", err
	}
	for _, it := range list.Items {
		p.add(it.Metadata.Name)
	}
	return list.Metadata.ResourceVersion, nil
}

func (p *podCounter) add(name string) {
	if _, ok := p.seen[name]; !ok {
		p.seen[name] = struct{}{}
		p.n.Add(1)
	}
}

func openPodWatch(ctx context.Context, c *Client, base, rv string) (*http.Response, error) {
	path := base + "?" + url.Values{"watch": {"true"}, "resourceVersion": {rv}, "allowWatchBookmarks": {"true"}}.Encode()
	resp, err := c.Do(ctx, http.MethodGet, path, nil)
	if err == nil && resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		if resp.StatusCode == http.StatusGone {
			return nil, errWatchGone
		}
		err = &StatusError{Method: "GET", Path: path, Code: resp.StatusCode, Body: string(b)}
	}
	return resp, err
}

func (p *podCounter) run(ctx context.Context, c *Client, base string, resp *http.Response, rv string) {
	for {
		var err error
		rv, err = p.consume(resp, rv)
		for ctx.Err() == nil {
			if p.rewatches.Add(1) > maxRewatches {
				p.fail(fmt.Errorf("pod watch ended %d times, last: %w", maxRewatches, err))
				return
			}
			if errors.Is(err, errWatchGone) {
				if rv, err = p.list(ctx, c, base); err != nil {
					continue
				}
			}
			if resp, err = openPodWatch(ctx, c, base, rv); err == nil {
				break
			}
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// consume reads one watch until it ends, counting added pods; it returns
// the last resourceVersion seen and why the watch ended.
func (p *podCounter) consume(resp *http.Response, rv string) (string, error) {
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var ev struct {
			Type   string `json:"type"`
			Object struct {
				Code     int `json:"code"` // of an ERROR event's Status
				Metadata struct {
					Name            string `json:"name"`
					ResourceVersion string `json:"resourceVersion"`
				} `json:"metadata"`
			} `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			return rv, fmt.Errorf("pod watch ended: %w", err)
		}
		switch ev.Type {
		case "ERROR":
			if ev.Object.Code == http.StatusGone {
				return rv, errWatchGone
			}
			return rv, fmt.Errorf("pod watch: error event, code %d", ev.Object.Code)
		case "ADDED":
			p.add(ev.Object.Metadata.Name)
		}
		if v := ev.Object.Metadata.ResourceVersion; v != "" {
			rv = v
		}
	}
}

func (p *podCounter) fail(err error) {
	p.mu.Lock()
	p.err = err
	p.mu.Unlock()
}

func (p *podCounter) waitFor(ctx context.Context, m *managerProcess, n int) error {
	return waitFor(ctx, m, func() (bool, error) {
		p.mu.Lock()
		err := p.err
		p.mu.Unlock()
		return p.n.Load() >= int64(n), err
	})
}

func (p *podCounter) stop() {
	p.cancel()
	p.wg.Wait()
}

// evaluateControllers compares skiff's run with upstream's: the issue's
// targets are ≥ 2× upstream's pods/s and ≤ ½ its memory at MemoryPods.
func evaluateControllers(r *ControllersReport) []Target {
	var sk, up *ManagerResult
	for i := range r.Runs {
		if r.Runs[i].Error != "" {
			continue
		}
		switch r.Runs[i].Manager {
		case "skiff":
			sk = &r.Runs[i]
		case "upstream":
			up = &r.Runs[i]
		}
	}
	if sk == nil || up == nil {
		return nil
	}
	var ts []Target
	if up.PodsPerSec > 0 {
		ratio := sk.PodsPerSec / up.PodsPerSec
		ts = append(ts, Target{Name: "pods/s vs upstream", Goal: "≥ 2× upstream",
			Upstream: fmt.Sprintf("%.0f", up.PodsPerSec), Measured: fmt.Sprintf("%.0f (%.2f×)", sk.PodsPerSec, ratio), Status: verdict(ratio >= 2)})
	}
	skm, upm := sk.MemoryPodsRSS, up.MemoryPodsRSS
	what := fmt.Sprintf("RSS at %d pods vs upstream", r.MemoryPods)
	if skm == 0 || upm == 0 {
		skm, upm = sk.AfterRSS, up.AfterRSS
		what = fmt.Sprintf("RSS at %d pods vs upstream", r.Deployments*r.Replicas)
	}
	if upm > 0 {
		ratio := skm / upm
		ts = append(ts, Target{Name: what, Goal: "≤ ½ upstream",
			Upstream: fmt.Sprintf("%.1f MiB", upm), Measured: fmt.Sprintf("%.1f MiB (%.2f×)", skm, ratio), Status: verdict(ratio <= 0.5)})
	}
	return ts
}

// WriteText writes the report as a table.
func (r *ControllersReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "skiff bench controllers — %s\n", r.Date)
	m := r.Machine
	fmt.Fprintf(w, "machine: %d CPUs (%s), %.0f GiB, %s %s, %s, load %s\n", m.CPUs, m.CPUModel, m.MemoryGiB, m.OS, m.Kernel, m.Go, m.LoadAvg)
	fmt.Fprintf(w, "workload: %d Deployments × %d replicas; memory read again at %d pods; API server: skiff up --storage=memory, every skiff component disabled\n\n",
		r.Deployments, r.Replicas, r.MemoryPods)
	fmt.Fprintf(w, "%-9s %8s %8s %9s %9s %10s %10s %10s %10s %10s %10s\n",
		"manager", "ready s", "pods", "seconds", "pods/s", "CPU s", "idle MiB", "after MiB", "at-N MiB", "peak MiB", "apisrv MiB")
	for _, m := range r.Runs {
		if m.Error != "" {
			fmt.Fprintf(w, "%-9s error: %s\n", m.Manager, m.Error)
			continue
		}
		fmt.Fprintf(w, "%-9s %8.2f %8d %9.2f %9.0f %10.2f %10.1f %10.1f %10.1f %10.1f %10.1f\n",
			m.Manager, m.ReadySeconds, m.Pods, m.Seconds, m.PodsPerSec, m.ManagerCPU,
			m.IdleRSS, m.AfterRSS, m.MemoryPodsRSS, m.PeakRSS, m.ServerRSS)
	}
	if len(r.Targets) > 0 {
		fmt.Fprintln(w)
		for _, t := range r.Targets {
			fmt.Fprintf(w, "%-34s %-24s upstream %-12s goal %-14s %s\n", t.Name, t.Measured, t.Upstream, t.Goal, t.Status)
		}
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "error: %s\n", e)
	}
}

// profileArgs are the flags that make a skiff child write a CPU profile of
// its whole run to file (none when file is empty).
func profileArgs(file string) []string {
	if file == "" {
		return nil
	}
	return []string{"--profile=cpu", "--profile-output=" + file}
}
