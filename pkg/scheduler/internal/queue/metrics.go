package queue

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/sets"
)

// metrics are upstream's queue metrics: scheduler_pending_pods{queue},
// scheduler_queue_incoming_pods_total{event,queue} and
// scheduler_unschedulable_pods{plugin,profile}. A nil *metrics records
// nothing.
type metrics struct {
	pending       *prometheus.GaugeVec
	incoming      *prometheus.CounterVec
	unschedReason *prometheus.GaugeVec
	// the pending gauges by queue, resolved once
	active, backoff, unschedulable, gated prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	if reg == nil {
		return nil
	}
	m := &metrics{
		pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: "scheduler", Name: "pending_pods",
			Help: "[STABLE] Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated.",
		}, []string{"queue"}),
		incoming: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "scheduler", Name: "queue_incoming_pods_total",
			Help: "[STABLE] Number of pods added to scheduling queues by event and queue type.",
		}, []string{"queue", "event"}),
	}
	m.unschedReason = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: "scheduler", Name: "unschedulable_pods",
		Help: "[ALPHA] The number of unschedulable pods broken down by plugin name. A pod will increment the gauge for all plugins that caused it to not schedule and so this metric have meaning only when broken down by plugin.",
	}, []string{"plugin", "profile"})
	m.pending = register(reg, m.pending)
	m.unschedReason = register(reg, m.unschedReason)
	m.incoming = register(reg, m.incoming)
	m.active = m.pending.WithLabelValues("active")
	m.backoff = m.pending.WithLabelValues("backoff")
	m.unschedulable = m.pending.WithLabelValues("unschedulable")
	m.gated = m.pending.WithLabelValues("gated")
	return m
}

// register registers c, or returns the collector already registered
// under its name (two queues on one registry share the metrics).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
	}
	return c
}

func (m *metrics) incoming1(queue, event string) {
	if m != nil {
		m.incoming.WithLabelValues(queue, event).Inc()
	}
}

func (m *metrics) setPending(active, backoff, unschedulable, gated int) {
	if m == nil {
		return
	}
	m.active.Set(float64(active))
	m.backoff.Set(float64(backoff))
	m.unschedulable.Set(float64(unschedulable))
	m.gated.Set(float64(gated))
}

// reasons adds delta to scheduler_unschedulable_pods of each plugin.
func (m *metrics) reasons(profile string, delta float64, plugins ...sets.Set[string]) {
	if m == nil {
		return
	}
	for _, set := range plugins {
		for pl := range set {
			m.unschedReason.WithLabelValues(pl, profile).Add(delta)
		}
	}
}
