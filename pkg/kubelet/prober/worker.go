package prober

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// probeState is a worker's memory between rounds.
type probeState struct {
	result Result // the current verdict
	last   Result // the last round's outcome
	count  int    // consecutive rounds with outcome last
	onHold bool   // liveness/startup failed: no more rounds for this container
}

// observe folds one round's outcome into s (upstream's thresholds) and
// reports whether the verdict changed.
func (s *probeState) observe(kind Kind, p *corev1.Probe, out Result) bool {
	if s.last == out {
		s.count++
	} else {
		s.last, s.count = out, 1
	}
	success, failure := int(p.SuccessThreshold), int(p.FailureThreshold)
	if success < 1 {
		success = 1
	}
	if failure < 1 {
		failure = 3
	}
	if out == Failure && s.count < failure || out == Success && s.count < success {
		return false
	}
	changed := s.result != out
	s.result = out
	if out == Failure && (kind == Liveness || kind == Startup) {
		// The container will be restarted; a new worker probes the new one.
		s.onHold = true
		s.count = 0
	}
	return changed
}

type worker struct {
	m           *Manager
	key         workerKey
	kind        Kind
	probe       *corev1.Probe
	container   *corev1.Container
	containerID string
	startedAt   time.Time
	hasStartup  bool

	mu    sync.Mutex
	pod   *corev1.Pod
	podIP string
	state probeState

	quit     chan struct{}
	stopOnce sync.Once
}

func (w *worker) stop() { w.stopOnce.Do(func() { close(w.quit) }) }

func (w *worker) setPodIP(ip string) {
	w.mu.Lock()
	w.podIP = ip
	w.mu.Unlock()
}

func (w *worker) period() time.Duration {
	if w.probe.PeriodSeconds < 1 {
		return 10 * time.Second
	}
	return time.Duration(w.probe.PeriodSeconds) * time.Second
}

func (w *worker) run(ctx context.Context) {
	t := w.m.cfg.Clock.NewTicker(w.period())
	defer t.Stop()
	for {
		if !w.round(ctx) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-w.quit:
			return
		case <-t.C():
		}
	}
}

// round runs one probe when it is due and reports whether to go on.
func (w *worker) round(ctx context.Context) bool {
	w.mu.Lock()
	if w.state.onHold {
		w.mu.Unlock()
		return true
	}
	if w.kind == Startup && w.state.result == Success {
		w.mu.Unlock()
		return false // a startup probe that succeeded is done
	}
	pod, ip := w.pod, w.podIP
	w.mu.Unlock()
	if w.kind != Startup && w.hasStartup && !w.m.Started(w.container, w.containerID) {
		return true // liveness and readiness wait for startup
	}
	now := w.m.cfg.Clock.Now()
	if now.Before(w.startedAt.Add(time.Duration(w.probe.InitialDelaySeconds) * time.Second)) {
		return true
	}
	timeout := time.Duration(w.probe.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = time.Second
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	out := w.m.cfg.Runner.Run(pctx, w.kind, w.probe, Target{Pod: pod, Container: w.container, ContainerID: w.containerID, PodIP: ip})
	cancel()
	select {
	case <-w.quit:
		return false
	default:
	}
	if out.Err != nil {
		return true // the probe could not run: thrown away, as upstream
	}
	if ev := w.m.cfg.Event; ev != nil {
		switch {
		case out.Result == Failure:
			ev(pod, w.container.Name, corev1.EventTypeWarning, "Unhealthy", fmt.Sprintf("%s probe failed: %s", w.kind, out.Output))
		case out.Warning:
			ev(pod, w.container.Name, corev1.EventTypeWarning, "ProbeWarning", fmt.Sprintf("%s probe warning: %s", w.kind, out.Output))
		}
	}
	w.mu.Lock()
	changed := w.state.observe(w.kind, w.probe, out.Result)
	r := w.state.result
	w.mu.Unlock()
	if changed && w.m.set(w, r) && w.m.cfg.OnChange != nil {
		w.m.cfg.OnChange(pod.UID)
	}
	return true
}
