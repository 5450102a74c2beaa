package prober

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
)

// Kind is the kind of a probe.
type Kind int

const (
	Liveness Kind = iota
	Readiness
	Startup
)

func (k Kind) String() string {
	switch k {
	case Liveness:
		return "Liveness"
	case Readiness:
		return "Readiness"
	}
	return "Startup"
}

// Result is a probe's current verdict.
type Result int

const (
	Unknown Result = iota
	Success
	Failure
)

func (r Result) String() string {
	switch r {
	case Success:
		return "Success"
	case Failure:
		return "Failure"
	}
	return "Unknown"
}

// initial is the result a probe has before it ran (upstream's).
func initial(k Kind) Result {
	switch k {
	case Readiness:
		return Failure
	case Liveness:
		return Success
	}
	return Unknown
}

// Outcome is one probe run's result: Success, Failure, or a Warning
// (success with something to say); Err set means the probe could not be
// run and is thrown away.
type Outcome struct {
	Result  Result
	Warning bool
	Output  string
	Err     error
}

// Runner runs one probe of a container.
type Runner interface {
	Run(ctx context.Context, kind Kind, p *corev1.Probe, target Target) Outcome
}

// Target is what a probe runs against.
type Target struct {
	Pod         *corev1.Pod
	Container   *corev1.Container
	ContainerID string // the runtime's ID (no scheme)
	PodIP       string
}

// Config configures a Manager.
type Config struct {
	// Runtime runs exec probes (ExecSync); used by the default Runner.
	Runtime cri.RuntimeService
	// Runner runs probes; nil: the real one (exec, httpGet, tcpSocket, grpc).
	Runner Runner
	Clock  clock.Clock
	// Event records an event on pod about container (nil: none).
	Event func(pod *corev1.Pod, container, eventtype, reason, message string)
	// OnChange is called (not under the manager's lock) with the UID of
	// a pod one of whose results changed.
	OnChange func(types.UID)
}

// Manager keeps the probe workers and their results.
type Manager struct {
	cfg Config

	mu      sync.Mutex
	workers map[workerKey]*worker
	results map[resultKey]Result
}

type workerKey struct {
	uid       types.UID
	container string
	kind      Kind
}

type resultKey struct {
	containerID string
	kind        Kind
}

// New returns a Manager with no workers.
func New(cfg Config) *Manager {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Runner == nil {
		cfg.Runner = &realRunner{runtime: cfg.Runtime}
	}
	return &Manager{cfg: cfg, workers: map[workerKey]*worker{}, results: map[resultKey]Result{}}
}

// Running describes a running container of a pod for Update.
type Running struct {
	ID        string
	StartedAt time.Time
}

// Update makes the workers match pod: one per probe of each container in
// running (by container name), started afresh for a new container ID;
// workers of containers no longer running stop. ctx bounds the workers.
func (m *Manager) Update(ctx context.Context, pod *corev1.Pod, podIP string, running map[string]Running) {
	type want struct {
		c    *corev1.Container
		kind Kind
		p    *corev1.Probe
	}
	wanted := map[workerKey]want{}
	add := func(cs []corev1.Container, sidecarsOnly bool) {
		for i := range cs {
			c := &cs[i]
			if sidecarsOnly && (c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways) {
				continue // probes of init containers other than sidecars never run
			}
			if _, ok := running[c.Name]; !ok {
				continue
			}
			for kind, p := range map[Kind]*corev1.Probe{Liveness: c.LivenessProbe, Readiness: c.ReadinessProbe, Startup: c.StartupProbe} {
				if p != nil {
					wanted[workerKey{pod.UID, c.Name, kind}] = want{c, kind, p}
				}
			}
		}
	}
	add(pod.Spec.InitContainers, true)
	add(pod.Spec.Containers, false)

	m.mu.Lock()
	defer m.mu.Unlock()
	for k, w := range m.workers {
		if k.uid != pod.UID {
			continue
		}
		_, ok := wanted[k]
		if !ok || w.containerID != running[k.container].ID {
			w.stop()
			delete(m.workers, k)
			delete(m.results, resultKey{w.containerID, k.kind})
			continue
		}
		w.setPodIP(podIP)
		delete(wanted, k)
	}
	for k, wt := range wanted {
		r := running[k.container]
		hasStartup := wt.c.StartupProbe != nil
		w := &worker{m: m, key: k, kind: wt.kind, probe: wt.p, pod: pod, container: wt.c, containerID: r.ID,
			startedAt: r.StartedAt, podIP: podIP, hasStartup: hasStartup,
			state: probeState{result: initial(wt.kind)}, quit: make(chan struct{})}
		m.workers[k] = w
		m.results[resultKey{r.ID, wt.kind}] = w.state.result
		go w.run(ctx)
	}
}

// Remove stops the workers of the pod uid and forgets their results.
func (m *Manager) Remove(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, w := range m.workers {
		if k.uid == uid {
			w.stop()
			delete(m.workers, k)
			delete(m.results, resultKey{w.containerID, k.kind})
		}
	}
}

// Result is the current result of the kind's probe of the container with
// runtime ID id; ok is false when no such probe runs.
func (m *Manager) Result(id string, kind Kind) (Result, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.results[resultKey{id, kind}]
	return r, ok
}

// Ready reports whether the running container id of c reads ready: no
// readiness probe, or its result is Success; and its startup, if any,
// has succeeded.
func (m *Manager) Ready(c *corev1.Container, id string) bool {
	if c.StartupProbe != nil && !m.Started(c, id) {
		return false
	}
	if c.ReadinessProbe == nil {
		return true
	}
	r, ok := m.Result(id, Readiness)
	return ok && r == Success
}

// Started reports whether the running container id of c counts as
// started: no startup probe, or its result is Success.
func (m *Manager) Started(c *corev1.Container, id string) bool {
	if c.StartupProbe == nil {
		return true
	}
	r, ok := m.Result(id, Startup)
	return ok && r == Success
}

// Unhealthy reports why the running container id of c must be restarted
// ("" when it need not): its liveness or startup probe failed.
func (m *Manager) Unhealthy(c *corev1.Container, id string) string {
	if r, ok := m.Result(id, Liveness); ok && r == Failure {
		return fmt.Sprintf("Container %s failed liveness probe, will be restarted", c.Name)
	}
	if r, ok := m.Result(id, Startup); ok && r == Failure {
		return fmt.Sprintf("Container %s failed startup probe, will be restarted", c.Name)
	}
	return ""
}

// set records a worker's new result and reports whether it changed.
func (m *Manager) set(w *worker, r Result) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.workers[w.key] != w {
		return false // replaced or removed meanwhile
	}
	k := resultKey{w.containerID, w.kind}
	if m.results[k] == r {
		return false
	}
	m.results[k] = r
	return true
}
