package eviction

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// Upstream's defaults.
const (
	MonitoringInterval              = 10 * time.Second
	DefaultPressureTransitionPeriod = 5 * time.Minute
)

// Config is the manager's I/O and knobs.
type Config struct {
	// Thresholds (nil: none: the manager only reports no pressure).
	Thresholds []Threshold
	// PressureTransitionPeriod (default 5 min).
	PressureTransitionPeriod time.Duration
	// MaxPodGracePeriodSeconds for soft evictions (upstream's
	// --eviction-max-pod-grace-period, default 0: the pod's own).
	MaxPodGracePeriodSeconds int64
	DedicatedImageFs         bool
	Clock                    clock.Clock
	Logger                   *slog.Logger
	// Observe gathers the signals and the pods' usage.
	Observe func(ctx context.Context) (Observations, StatsFunc, error)
	// ActivePods are the pods that are not terminated.
	ActivePods func() []*corev1.Pod
	// ReclaimDisk frees disk without evicting (container GC's
	// DeleteAllUnusedContainers, image GC's DeleteUnusedImages), tried
	// before evicting for a disk signal.
	ReclaimDisk []func(ctx context.Context) error
	// Evict kills the pod with the grace period and marks it Failed,
	// reason Evicted, with message (and the DisruptionTarget condition
	// when disruptionTarget: threshold evictions, as upstream's).
	Evict func(ctx context.Context, pod *corev1.Pod, gracePeriod int64, message string, disruptionTarget bool) error
	// LocalStorageCapacityIsolation: pods over their local storage limits
	// (emptyDir sizeLimit, ephemeral-storage limits) are evicted
	// (upstream's default).
	LocalStorageCapacityIsolation bool
	// Event records an event: about pod, or about the node when pod is nil.
	Event func(pod *corev1.Pod, eventtype, reason, message string)
}

// Manager is the eviction manager: Synchronize every MonitoringInterval.
type Manager struct {
	cfg Config

	mu         sync.RWMutex
	state      State
	conditions []corev1.NodeConditionType
}

// New returns a manager.
func New(cfg Config) (*Manager, error) {
	if cfg.Observe == nil || cfg.ActivePods == nil || cfg.Evict == nil {
		return nil, errors.New("eviction: Observe, ActivePods and Evict are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.PressureTransitionPeriod <= 0 {
		cfg.PressureTransitionPeriod = DefaultPressureTransitionPeriod
	}
	return &Manager{cfg: cfg}, nil
}

// Conditions are the pressure conditions the node reports True.
func (m *Manager) Conditions() []corev1.NodeConditionType {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return append([]corev1.NodeConditionType(nil), m.conditions...)
}

// Under reports whether condition c is True.
func (m *Manager) Under(c corev1.NodeConditionType) bool { return hasCondition(m.Conditions(), c) }

// Admit is the admit handler (see the package function).
func (m *Manager) Admit(p *corev1.Pod) (bool, string, string) { return Admit(m.Conditions(), p) }

// Synchronize is one pass: observe, decide, reclaim node-level resources
// for a disk signal, else evict the chosen pod. It returns the evicted pod.
func (m *Manager) Synchronize(ctx context.Context) (*corev1.Pod, error) {
	if len(m.cfg.Thresholds) == 0 && !m.cfg.LocalStorageCapacityIsolation {
		return nil, nil
	}
	pods := m.cfg.ActivePods()
	obs, stats, err := m.cfg.Observe(ctx)
	if err != nil {
		return nil, fmt.Errorf("eviction manager: observing: %w", err)
	}
	m.mu.RLock()
	prev := m.state
	m.mu.RUnlock()
	d, next := Decide(Input{Thresholds: m.cfg.Thresholds, Observations: obs, Pods: pods, Stats: stats,
		PressureTransitionPeriod: m.cfg.PressureTransitionPeriod, MaxPodGracePeriodSeconds: m.cfg.MaxPodGracePeriodSeconds,
		DedicatedImageFs: m.cfg.DedicatedImageFs}, prev, m.cfg.Clock.Now())
	m.mu.Lock()
	m.state, m.conditions = next, d.Conditions
	m.mu.Unlock()
	if m.cfg.LocalStorageCapacityIsolation {
		var first *corev1.Pod
		for _, e := range LocalStorageEvictions(pods, stats, m.cfg.DedicatedImageFs) {
			m.event(e.Pod, corev1.EventTypeWarning, Reason, e.Message)
			if err := m.cfg.Evict(ctx, e.Pod, ImmediateGracePeriodSeconds, e.Message, false); err != nil {
				m.cfg.Logger.Warn("eviction manager: pod failed to evict", "pod", e.Pod.Namespace+"/"+e.Pod.Name, "err", err)
				continue
			}
			if first == nil {
				first = e.Pod
			}
		}
		if first != nil {
			return first, nil
		}
	}
	if d.Signal == "" {
		return nil, nil
	}
	m.cfg.Logger.Info("eviction manager: attempting to reclaim", "resourceName", d.Resource)
	m.event(nil, corev1.EventTypeWarning, "EvictionThresholdMet", "Attempting to reclaim "+string(d.Resource))
	if m.reclaimNodeLevel(ctx, d.Signal) {
		m.cfg.Logger.Info("eviction manager: able to reduce resource pressure without evicting pods", "resourceName", d.Resource)
		return nil, nil
	}
	if d.Evict == nil {
		m.cfg.Logger.Info("eviction manager: unable to evict any pods from the node")
		return nil, nil
	}
	p := d.Evict
	m.event(p, corev1.EventTypeWarning, Reason, d.Message)
	if err := m.cfg.Evict(ctx, p, d.GracePeriod, d.Message, true); err != nil {
		return nil, fmt.Errorf("eviction manager: evicting %s/%s: %w", p.Namespace, p.Name, err)
	}
	m.cfg.Logger.Info("eviction manager: pod is evicted", "pod", p.Namespace+"/"+p.Name)
	return p, nil
}

// reclaimNodeLevel runs the disk reclaim functions for a disk signal and
// reports whether the thresholds are then all back within bounds.
func (m *Manager) reclaimNodeLevel(ctx context.Context, s Signal) bool {
	if s == SignalMemoryAvailable || s == SignalAllocatableMemoryAvailable || s == SignalPIDAvailable || len(m.cfg.ReclaimDisk) == 0 {
		return false
	}
	for _, f := range m.cfg.ReclaimDisk {
		if err := f(ctx); err != nil {
			m.cfg.Logger.Info("eviction manager: unexpected error when attempting to reduce resource pressure", "err", err)
		}
	}
	obs, _, err := m.cfg.Observe(ctx)
	if err != nil {
		return false
	}
	return len(ThresholdsMet(m.cfg.Thresholds, obs, true)) == 0
}

func (m *Manager) event(p *corev1.Pod, eventtype, reason, msg string) {
	if m.cfg.Event != nil {
		m.cfg.Event(p, eventtype, reason, msg)
	}
}

// Run synchronizes every interval (MonitoringInterval when 0) until ctx
// ends; after an eviction it synchronizes again at the next tick (the
// evicted pod is no longer active).
func (m *Manager) Run(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = MonitoringInterval
	}
	t := m.cfg.Clock.NewTicker(interval)
	defer t.Stop()
	for {
		m.Tick(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// Tick is one round of Run: Synchronize, a failure logged.
func (m *Manager) Tick(ctx context.Context) {
	if _, err := m.Synchronize(ctx); err != nil && ctx.Err() == nil {
		m.cfg.Logger.Warn("eviction manager: failed to synchronize", "err", err)
	}
}
