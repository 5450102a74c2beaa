package workqueue

import (
	"time"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// GaugeMetric is a gauge moved by one (the queue depth).
type GaugeMetric interface {
	Inc()
	Dec()
}

// SettableGaugeMetric is a gauge that is set (the unfinished-work gauges).
type SettableGaugeMetric interface {
	Set(float64)
}

// CounterMetric is a monotonically increasing counter.
type CounterMetric interface {
	Inc()
}

// SummaryMetric observes values into a summary.
type SummaryMetric interface {
	Observe(float64)
}

// HistogramMetric observes values into a histogram.
type HistogramMetric interface {
	Observe(float64)
}

// MetricsProvider creates the metrics of a named queue (client-go's
// workqueue.MetricsProvider). Each method is called once per queue with the
// queue's name.
type MetricsProvider interface {
	// NewDepthMetric: items added (dirty) and not yet handed out.
	NewDepthMetric(name string) GaugeMetric
	// NewAddsMetric: Adds that were not no-ops.
	NewAddsMetric(name string) CounterMetric
	// NewLatencyMetric: seconds from Add to Get.
	NewLatencyMetric(name string) HistogramMetric
	// NewWorkDurationMetric: seconds from Get to Done.
	NewWorkDurationMetric(name string) HistogramMetric
	// NewUnfinishedWorkSecondsMetric: sum of the ages of items processing.
	NewUnfinishedWorkSecondsMetric(name string) SettableGaugeMetric
	// NewLongestRunningProcessorSecondsMetric: age of the oldest item processing.
	NewLongestRunningProcessorSecondsMetric(name string) SettableGaugeMetric
	// NewRetriesMetric: AddAfter calls (and so AddRateLimited calls).
	NewRetriesMetric(name string) CounterMetric
}

// queueMetrics records a Typed queue's metrics. It is only used under the
// queue's lock.
type queueMetrics[T comparable] struct {
	clock clock.Clock

	depth                   GaugeMetric
	adds                    CounterMetric
	latency                 HistogramMetric
	workDuration            HistogramMetric
	unfinishedWorkSeconds   SettableGaugeMetric
	longestRunningProcessor SettableGaugeMetric

	addTimes             map[T]time.Time
	processingStartTimes map[T]time.Time
}

// newQueueMetrics returns nil (metrics off) without a name or provider.
func newQueueMetrics[T comparable](name string, mp MetricsProvider, clk clock.Clock) *queueMetrics[T] {
	if name == "" || mp == nil {
		return nil
	}
	return &queueMetrics[T]{
		clock:                   clk,
		depth:                   mp.NewDepthMetric(name),
		adds:                    mp.NewAddsMetric(name),
		latency:                 mp.NewLatencyMetric(name),
		workDuration:            mp.NewWorkDurationMetric(name),
		unfinishedWorkSeconds:   mp.NewUnfinishedWorkSecondsMetric(name),
		longestRunningProcessor: mp.NewLongestRunningProcessorSecondsMetric(name),
		addTimes:                make(map[T]time.Time, initialCapacity),
		processingStartTimes:    make(map[T]time.Time, initialCapacity),
	}
}

func (m *queueMetrics[T]) add(item T) {
	m.adds.Inc()
	m.depth.Inc()
	if _, ok := m.addTimes[item]; !ok {
		m.addTimes[item] = m.clock.Now()
	}
}

func (m *queueMetrics[T]) get(item T) {
	now := m.clock.Now()
	m.depth.Dec()
	m.processingStartTimes[item] = now
	if start, ok := m.addTimes[item]; ok {
		m.latency.Observe(now.Sub(start).Seconds())
		delete(m.addTimes, item)
	}
}

func (m *queueMetrics[T]) done(item T) {
	if start, ok := m.processingStartTimes[item]; ok {
		m.workDuration.Observe(m.clock.Since(start).Seconds())
		delete(m.processingStartTimes, item)
	}
}

func (m *queueMetrics[T]) updateUnfinishedWork() {
	now := m.clock.Now()
	var total, oldest float64
	for _, start := range m.processingStartTimes {
		age := now.Sub(start).Seconds()
		total += age
		if age > oldest {
			oldest = age
		}
	}
	m.unfinishedWorkSeconds.Set(total)
	m.longestRunningProcessor.Set(oldest)
}

// newRetriesMetric returns nil (metrics off) without a name or provider.
func newRetriesMetric(name string, mp MetricsProvider) CounterMetric {
	if name == "" || mp == nil {
		return nil
	}
	return mp.NewRetriesMetric(name)
}
