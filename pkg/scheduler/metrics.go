package scheduler

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiff-sh/skiff/pkg/component"
)

// metrics are the scheduler's own metrics, upstream's names and buckets.
type metrics struct {
	attempts          *prometheus.CounterVec   // scheduler_schedule_attempts_total{result,profile}
	attemptDuration   *prometheus.HistogramVec // scheduler_scheduling_attempt_duration_seconds{result,profile}
	sliDuration       *prometheus.HistogramVec // scheduler_pod_scheduling_sli_duration_seconds{attempts}
	podAttempts       prometheus.Histogram     // scheduler_pod_scheduling_attempts
	extensionDuration *prometheus.HistogramVec // scheduler_framework_extension_point_duration_seconds{extension_point,status,profile}
}

const (
	resultScheduled     = "scheduled"
	resultUnschedulable = "unschedulable"
	resultError         = "error"
)

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "scheduler", Name: "schedule_attempts_total",
			Help: "[STABLE] Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem."},
			[]string{"result", "profile"}),
		attemptDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "scheduler", Name: "scheduling_attempt_duration_seconds",
			Help: "[STABLE] Scheduling attempt latency in seconds (scheduling algorithm + binding)", Buckets: prometheus.ExponentialBuckets(0.001, 2, 15)},
			[]string{"result", "profile"}),
		sliDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "scheduler", Name: "pod_scheduling_sli_duration_seconds",
			Help: "[BETA] E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might involve multiple scheduling attempts.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 20)},
			[]string{"attempts"}),
		podAttempts: prometheus.NewHistogram(prometheus.HistogramOpts{Subsystem: "scheduler", Name: "pod_scheduling_attempts",
			Help: "[STABLE] Number of attempts to successfully schedule a pod.", Buckets: prometheus.ExponentialBuckets(1, 2, 5)}),
		extensionDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "scheduler", Name: "framework_extension_point_duration_seconds",
			Help: "[STABLE] Latency for running all plugins of a specific extension point.", Buckets: prometheus.ExponentialBuckets(0.0001, 2, 12)},
			[]string{"extension_point", "status", "profile"}),
	}
	var err error
	if m.attempts, err = component.RegisterOrShare(reg, m.attempts); err != nil {
		return nil, err
	}
	if m.attemptDuration, err = component.RegisterOrShare(reg, m.attemptDuration); err != nil {
		return nil, err
	}
	if m.sliDuration, err = component.RegisterOrShare(reg, m.sliDuration); err != nil {
		return nil, err
	}
	if m.podAttempts, err = component.RegisterOrShare(reg, m.podAttempts); err != nil {
		return nil, err
	}
	if m.extensionDuration, err = component.RegisterOrShare(reg, m.extensionDuration); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *metrics) observeAttempt(result, profile string, d time.Duration) {
	m.attempts.WithLabelValues(result, profile).Inc()
	m.attemptDuration.WithLabelValues(result, profile).Observe(d.Seconds())
}

// ObserveExtensionPoint implements runtime.MetricsRecorder.
func (m *metrics) ObserveExtensionPoint(point, status, profile string, d time.Duration) {
	m.extensionDuration.WithLabelValues(point, status, profile).Observe(d.Seconds())
}
