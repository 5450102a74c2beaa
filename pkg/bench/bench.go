package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Config configures Run. Zero fields take the defaults in the comments.
type Config struct {
	// Storage is the backend of the server that the create, list, watch
	// and memory phases run against: "etcd" (embedded, default) or
	// "memory".
	Storage string
	// Pods is the total number of pods created across all create phases
	// (10000); the list and memory phases see all of them.
	Pods int
	// Clients are the create phases' concurrencies (1, 16, 64), one phase
	// (and namespace) each. A phase with one client creates at most
	// SerialPods pods (min(1000, Pods/10)); the other phases share the
	// rest equally.
	Clients    []int
	SerialPods int
	// Watchers, WatchEvents and WatchWriters shape the watch fan-out
	// (100 watchers, 2000 events, 4 writers).
	Watchers     int
	WatchEvents  int
	WatchWriters int
	// StartRepeats is how many cold starts to time per storage (3);
	// StartStorages which storages (memory and etcd).
	StartRepeats  int
	StartStorages []string
	// ListRepeats is how many timed lists per variant (10).
	ListRepeats int
	// Settle is the pause before each memory reading (1 s).
	Settle time.Duration
	// StartTimeout bounds each server start (60 s); WatchTimeout the
	// delivery of all watch events (120 s).
	StartTimeout time.Duration
	WatchTimeout time.Duration

	// CreateAs is who creates the pods: "admin" (the admin kubeconfig,
	// system:masters; default), "serviceaccount" (a service account
	// token RBAC allows to create pods, each phase in a namespace of its
	// own) or "both" (each create phase twice, admin and service
	// account, the order alternating between phases, on the same
	// server). Unless "admin", the server runs with
	// --authorization-mode=Node,RBAC.
	CreateAs string

	// JSON prints the report as JSON instead of text.
	JSON bool
	// Keep keeps the data directories (and server logs).
	Keep bool
	// Dir is where the data directories go (a new temporary directory).
	Dir string

	// Command starts the server: Command[0] is the executable, the rest
	// arguments before "up" (default: this executable). Env is added to
	// the child's environment.
	Command []string
	Env     []string
	// CPUProfile, when set, is the file the server writes a CPU profile of
	// its whole run to (`skiff --profile=cpu --profile-output`).
	CPUProfile string

	// Out receives the report (stdout); Progress one line per step
	// (stderr; nil is silent).
	Out      io.Writer
	Progress io.Writer
}

func (c *Config) complete() error {
	switch c.CreateAs {
	case "":
		c.CreateAs = "admin"
	case "admin", "serviceaccount", "both":
	default:
		return fmt.Errorf("--create-as must be admin, serviceaccount or both, not %q", c.CreateAs)
	}
	switch c.Storage {
	case "":
		c.Storage = "etcd"
	case "etcd", "memory":
	default:
		return fmt.Errorf("--storage must be etcd or memory, not %q", c.Storage)
	}
	if c.Pods == 0 {
		c.Pods = 10000
	}
	if c.Pods < 0 {
		return errors.New("--pods must be positive")
	}
	if len(c.Clients) == 0 {
		c.Clients = []int{1, 16, 64}
	}
	for _, n := range c.Clients {
		if n < 1 {
			return fmt.Errorf("--clients: %d is not a positive number", n)
		}
	}
	if c.SerialPods == 0 {
		c.SerialPods = min(1000, max(1, c.Pods/10))
	}
	if c.Watchers == 0 {
		c.Watchers = 100
	}
	if c.WatchEvents == 0 {
		c.WatchEvents = 2000
	}
	if c.WatchWriters == 0 {
		c.WatchWriters = 4
	}
	if c.Watchers < 0 || c.WatchEvents < 0 || c.WatchWriters < 0 {
		return errors.New("--watchers, --watch-events and --watch-writers must be positive")
	}
	if c.StartRepeats == 0 {
		c.StartRepeats = 3
	}
	if c.StartStorages == nil {
		c.StartStorages = []string{"memory", "etcd"}
	}
	if c.ListRepeats == 0 {
		c.ListRepeats = 10
	}
	if c.Settle == 0 {
		c.Settle = time.Second
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = 60 * time.Second
	}
	if c.WatchTimeout == 0 {
		c.WatchTimeout = 120 * time.Second
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

// podPlan splits cfg.Pods between the create phases.
func podPlan(total, serialCap int, clients []int) []int {
	plan := make([]int, len(clients))
	var parallel []int
	left := total
	for i, c := range clients {
		if c == 1 {
			plan[i] = min(serialCap, left)
			left -= plan[i]
		} else {
			parallel = append(parallel, i)
		}
	}
	if len(parallel) == 0 {
		// Only serial phases: give the remainder to the last one.
		plan[len(plan)-1] += left
		return plan
	}
	for k, i := range parallel {
		plan[i] = left / len(parallel)
		if k < left%len(parallel) {
			plan[i]++
		}
	}
	return plan
}

// Run measures a freshly started server and writes the report to
// cfg.Out. It returns the report, and an error when a phase failed or
// produced wrong results (the report is still written when it can be).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.complete(); err != nil {
		return nil, err
	}
	root := cfg.Dir
	if root == "" {
		d, err := os.MkdirTemp("", "skiff-bench-")
		if err != nil {
			return nil, err
		}
		root = d
	}
	if cfg.Keep {
		defer fmt.Fprintf(cfg.Progress, "bench: kept data directories in %s\n", root)
	} else if cfg.Dir == "" {
		defer os.RemoveAll(root)
	}
	r := &Report{
		Date: time.Now().UTC().Format(time.RFC3339), Machine: machineInfo(),
		Storage: cfg.Storage, Pods: cfg.Pods,
	}
	err := run(ctx, &cfg, root, r)
	if err != nil {
		r.Errors = append(r.Errors, err.Error())
	}
	r.Targets = evaluate(r)
	if cfg.JSON {
		enc := json.NewEncoder(cfg.Out)
		enc.SetIndent("", "  ")
		if werr := enc.Encode(r); werr != nil && err == nil {
			err = werr
		}
	} else {
		r.WriteText(cfg.Out)
	}
	if err == nil && len(r.Errors) > 0 {
		err = errors.New(strings.Join(r.Errors, "; "))
	}
	return r, err
}

func run(ctx context.Context, cfg *Config, root string, r *Report) error {
	progress := func(format string, args ...any) {
		fmt.Fprintf(cfg.Progress, "bench: "+format+"\n", args...)
	}
	removeDir := func(dir string) {
		if !cfg.Keep {
			os.RemoveAll(dir)
			os.Remove(dir + ".log")
		}
	}

	// 1. Cold starts.
	for _, st := range cfg.StartStorages {
		res := StartResult{Storage: st}
		var ds []time.Duration
		for i := range cfg.StartRepeats {
			dir := filepath.Join(root, fmt.Sprintf("start-%s-%d", st, i+1))
			s, d, err := startServer(ctx, cfg, dir, st)
			if err != nil {
				return fmt.Errorf("cold start (%s): %w", st, err)
			}
			s.stop()
			removeDir(dir)
			progress("cold start %s #%d: %v", st, i+1, d.Round(time.Millisecond))
			res.Runs = append(res.Runs, ms(d))
			ds = append(ds, d)
		}
		res.Median = ms(median(ds))
		r.Startup = append(r.Startup, res)
	}

	// The server under test for everything else.
	dir := filepath.Join(root, "server-"+cfg.Storage)
	s, d, err := startServer(ctx, cfg, dir, cfg.Storage)
	if err != nil {
		return fmt.Errorf("starting the server under test: %w", err)
	}
	defer removeDir(dir)
	defer s.stop()
	pid := s.cmd.Process.Pid
	progress("server under test (%s storage, pid %d) ready in %v; data in %s", cfg.Storage, pid, d.Round(time.Millisecond), dir)
	c := s.client
	r.Memory = &MemoryResult{}
	sleep(ctx, cfg.Settle)
	if m, err := readMemory(pid); err == nil {
		r.Memory.IdleRSS = mib(m.RSS)
	} else {
		r.Memory.Note = err.Error()
	}

	// 2. Creates.
	plan := podPlan(cfg.Pods, cfg.SerialPods, cfg.Clients)
	created := 0
	var identities []string
	switch cfg.CreateAs {
	case "both":
		identities = []string{"admin", "serviceaccount"}
	default:
		identities = []string{cfg.CreateAs}
	}
	for i, n := range cfg.Clients {
		order := identities
		if len(identities) == 2 && i%2 == 1 {
			// Alternate which goes first, so that neither always meets
			// the fuller store.
			order = []string{identities[1], identities[0]}
		}
		for _, id := range order {
			ns := fmt.Sprintf("bench-create-%d-c%d", i+1, n)
			if id == "serviceaccount" {
				ns += "-sa"
			}
			if err := c.CreateNamespace(ctx, ns); err != nil {
				return fmt.Errorf("creating namespace %s: %w", ns, err)
			}
			creator := c
			if id == "serviceaccount" {
				if creator, err = c.ServiceAccountClient(ctx, ns); err != nil {
					return fmt.Errorf("service account client: %w", err)
				}
			}
			res, err := CreatePods(ctx, creator, ns, plan[i], n)
			if creator != c {
				creator.Close()
			}
			if len(identities) > 1 || id != "admin" {
				res.Identity = id
			}
			created += res.Created
			r.Create = append(r.Create, res)
			progress("create %d pods with %d clients as %s: %.0f/s, p99 %.1f ms, %d errors", res.Requested, n, id, res.PerSecond, res.Latency.P99, res.Errors)
			if err != nil {
				return err
			}
			if res.Errors > 0 {
				r.Errors = append(r.Errors, fmt.Sprintf("%d of %d creates with %d clients as %s failed; first: %s", res.Errors, res.Requested, n, id, res.FirstError))
			}
		}
	}
	r.Pods = created
	sleep(ctx, cfg.Settle)
	if m, err := readMemory(pid); err == nil {
		r.Memory.AfterPodsRSS = mib(m.RSS)
		r.Memory.PeakRSS = mib(m.Peak)
		if created > 0 && m.RSS > 0 && r.Memory.IdleRSS > 0 {
			idle := uint64(r.Memory.IdleRSS * (1 << 20))
			r.Memory.BytesPerPod = round((float64(m.RSS)-float64(idle))/float64(created), 0)
		}
		r.Memory.Pods = created
	}

	// 3. Lists.
	for _, v := range []struct {
		name, path string
		decode     bool
	}{
		{"consistent", "/api/v1/pods", false},
		{"cache (rv=0)", "/api/v1/pods?resourceVersion=0", false},
		{"consistent + decode", "/api/v1/pods", true},
		{"cache (rv=0) + decode", "/api/v1/pods?resourceVersion=0", true},
	} {
		res, err := ListPods(ctx, c, v.name, v.path, v.decode, cfg.ListRepeats, created)
		if err != nil {
			return fmt.Errorf("list %s: %w", v.name, err)
		}
		r.List = append(r.List, res)
		progress("list %s: %d bytes, p50 %.1f ms, p99 %.1f ms", v.name, res.Bytes, res.Latency.P50, res.Latency.P99)
	}

	// 4. Watch fan-out.
	if cfg.Watchers > 0 {
		ns := "bench-watch"
		if err := c.CreateNamespace(ctx, ns); err != nil {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
		res, err := WatchFanout(ctx, c, ns, cfg.Watchers, cfg.WatchEvents, cfg.WatchWriters, cfg.WatchTimeout)
		r.Watch = &res
		if err != nil {
			return fmt.Errorf("watch fan-out: %w", err)
		}
		progress("watch: %d watchers × %d events in %.2f s = %.0f events/s, verified %v",
			res.Watchers, res.EventsPerWatcher, res.Seconds, res.EventsPerSecond, res.Verified)
		if !res.Verified {
			r.Errors = append(r.Errors, "watch fan-out: "+strings.Join(res.Problems, "; "))
		}
	}

	// 5. Memory at the end.
	if m, err := readMemory(pid); err == nil {
		r.Memory.EndRSS = mib(m.RSS)
		r.Memory.PeakRSS = mib(m.Peak)
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func mib(b uint64) float64 { return round(float64(b)/(1<<20), 1) }

// machineInfo describes where the benchmark ran.
func machineInfo() Machine {
	m := Machine{CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			var kb uint64
			if _, err := fmt.Sscanf(line, "MemTotal: %d kB", &kb); err == nil {
				m.MemoryGiB = round(float64(kb)/(1<<20), 1)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			m.LoadAvg = strings.Join(f[:3], " ")
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}
