package workqueue

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names, as client-go / k8s.io/component-base export them.
const (
	WorkQueueSubsystem         = "workqueue"
	DepthKey                   = "depth"
	AddsKey                    = "adds_total"
	QueueLatencyKey            = "queue_duration_seconds"
	WorkDurationKey            = "work_duration_seconds"
	UnfinishedWorkKey          = "unfinished_work_seconds"
	LongestRunningProcessorKey = "longest_running_processor_seconds"
	RetriesKey                 = "retries_total"
)

// PrometheusMetricsProvider is a MetricsProvider backed by Prometheus vectors
// (label "name") registered on the caller's registry.
type PrometheusMetricsProvider struct {
	depth          *prometheus.GaugeVec
	adds           *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	workDuration   *prometheus.HistogramVec
	unfinished     *prometheus.GaugeVec
	longestRunning *prometheus.GaugeVec
	retries        *prometheus.CounterVec
}

var _ MetricsProvider = (*PrometheusMetricsProvider)(nil)

// NewPrometheusMetricsProvider creates the workqueue metric vectors and
// registers them on reg. If reg already holds them (another provider on the
// same registry), the registered vectors are shared.
func NewPrometheusMetricsProvider(reg prometheus.Registerer) (*PrometheusMetricsProvider, error) {
	if reg == nil {
		return nil, errors.New("workqueue: NewPrometheusMetricsProvider: nil registerer")
	}
	labels := []string{"name"}
	buckets := prometheus.ExponentialBuckets(10e-9, 10, 10)
	p := &PrometheusMetricsProvider{
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: WorkQueueSubsystem, Name: DepthKey,
			Help: "[ALPHA] Current depth of workqueue",
		}, labels),
		adds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: WorkQueueSubsystem, Name: AddsKey,
			Help: "[ALPHA] Total number of adds handled by workqueue",
		}, labels),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: WorkQueueSubsystem, Name: QueueLatencyKey,
			Help:    "[ALPHA] How long in seconds an item stays in workqueue before being requested.",
			Buckets: buckets,
		}, labels),
		workDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: WorkQueueSubsystem, Name: WorkDurationKey,
			Help:    "[ALPHA] How long in seconds processing an item from workqueue takes.",
			Buckets: buckets,
		}, labels),
		unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: WorkQueueSubsystem, Name: UnfinishedWorkKey,
			Help: "[ALPHA] How many seconds of work has done that is in progress and hasn't been observed by work_duration. " +
				"Large values indicate stuck threads. One can deduce the number of stuck threads by observing " +
				"the rate at which this increases.",
		}, labels),
		longestRunning: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: WorkQueueSubsystem, Name: LongestRunningProcessorKey,
			Help: "[ALPHA] How many seconds has the longest running processor for workqueue been running.",
		}, labels),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: WorkQueueSubsystem, Name: RetriesKey,
			Help: "[ALPHA] Total number of retries handled by workqueue",
		}, labels),
	}
	var err error
	if p.depth, err = register(reg, p.depth); err != nil {
		return nil, err
	}
	if p.adds, err = register(reg, p.adds); err != nil {
		return nil, err
	}
	if p.latency, err = register(reg, p.latency); err != nil {
		return nil, err
	}
	if p.workDuration, err = register(reg, p.workDuration); err != nil {
		return nil, err
	}
	if p.unfinished, err = register(reg, p.unfinished); err != nil {
		return nil, err
	}
	if p.longestRunning, err = register(reg, p.longestRunning); err != nil {
		return nil, err
	}
	if p.retries, err = register(reg, p.retries); err != nil {
		return nil, err
	}
	return p, nil
}

// register registers c, or returns the equal collector already registered.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	var zero C
	return zero, fmt.Errorf("workqueue: registering metrics: %w", err)
}

func (p *PrometheusMetricsProvider) NewDepthMetric(name string) GaugeMetric {
	return p.depth.WithLabelValues(name)
}

func (p *PrometheusMetricsProvider) NewAddsMetric(name string) CounterMetric {
	return p.adds.WithLabelValues(name)
}

func (p *PrometheusMetricsProvider) NewLatencyMetric(name string) HistogramMetric {
	return p.latency.WithLabelValues(name)
}

func (p *PrometheusMetricsProvider) NewWorkDurationMetric(name string) HistogramMetric {
	return p.workDuration.WithLabelValues(name)
}

func (p *PrometheusMetricsProvider) NewUnfinishedWorkSecondsMetric(name string) SettableGaugeMetric {
	return p.unfinished.WithLabelValues(name)
}

func (p *PrometheusMetricsProvider) NewLongestRunningProcessorSecondsMetric(name string) SettableGaugeMetric {
	return p.longestRunning.WithLabelValues(name)
}

func (p *PrometheusMetricsProvider) NewRetriesMetric(name string) CounterMetric {
	return p.retries.WithLabelValues(name)
}
