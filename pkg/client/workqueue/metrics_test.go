package workqueue

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiff-sh/skiff/pkg/clock"
)

func TestQueueMetrics(t *testing.T) {
	fc := clock.NewFake(t0)
	mp := newFakeProvider()
	q := NewTypedWithConfig(TypedQueueConfig[string]{Name: "q", MetricsProvider: mp, Clock: fc})
	defer q.ShutDown()
	depth, adds := mp.get("depth", "q"), mp.get("adds", "q")
	latency, work := mp.get("latency", "q"), mp.get("work", "q")
	unfinished, longest := mp.get("unfinished", "q"), mp.get("longest", "q")

	check := func(step string, m *fakeMetric, want float64) {
		t.Helper()
		if got := m.Value(); got != want {
			t.Fatalf("%s: got %v, want %v", step, got, want)
		}
	}
	// waitUnfinished waits for the ticker-driven refresh to report the values.
	waitUnfinished := func(total, oldest float64) {
		t.Helper()
		eventually(t, "unfinished work refresh", func() bool {
			return unfinished.Value() == total && longest.Value() == oldest
		})
	}

	q.Add("a")
	q.Add("b")
	q.Add("a") // no-op: not counted
	check("depth after adds", depth, 2)
	check("adds", adds, 2)

	fc.Step(time.Second) // ticker fires: nothing processing
	expectGet[string](t, q, "a")
	check("depth after get", depth, 1)

	fc.Step(2 * time.Second)
	waitUnfinished(2, 2)
	expectGet[string](t, q, "b")
	q.Add("a") // while processing: counts as an add and as depth
	check("adds", adds, 3)
	check("depth", depth, 1)

	fc.Step(time.Second)
	waitUnfinished(3+1, 3)

	q.Done("a") // a re-queued; work 3s
	fc.Step(500 * time.Millisecond)
	waitUnfinished(1.5, 1.5)
	expectGet[string](t, q, "a") // a re-added at t0+3s, got at t0+4.5s
	q.Done("a")
	q.Done("b")
	check("depth", depth, 0)
	fc.Step(500 * time.Millisecond)
	waitUnfinished(0, 0)

	if got, want := latency.Observations(), []float64{1, 3, 1.5}; !slices.Equal(got, want) {
		t.Fatalf("latency observations = %v, want %v", got, want)
	}
	if got, want := work.Observations(), []float64{3, 0, 1.5}; !slices.Equal(got, want) {
		t.Fatalf("work duration observations = %v, want %v", got, want)
	}

	// After shutdown the refresh goroutine stops and its ticker is released.
	q.ShutDown()
	waiters(t, fc, 0)
	sets := unfinished.Sets()
	fc.Step(time.Minute)
	if unfinished.Sets() != sets {
		t.Fatal("unfinished work refreshed after shutdown")
	}
}

func TestNoMetricsWithoutNameOrProvider(t *testing.T) {
	fc := clock.NewFake(t0)
	mp := newFakeProvider()
	for _, cfg := range []TypedQueueConfig[string]{
		{Clock: fc, MetricsProvider: mp}, // no name
		{Clock: fc, Name: "q"},           // no provider
	} {
		q := NewTypedWithConfig(cfg)
		if q.metrics != nil || q.stopUnfinished != nil {
			t.Fatalf("config %+v: metrics on", cfg)
		}
		q.Add("a")
		q.ShutDown()
	}
	if fc.Waiters() != 0 {
		t.Fatal("a queue without metrics started a ticker")
	}
	if len(mp.m) != 0 {
		t.Fatalf("metrics created: %v", mp.m)
	}
}

func TestRetriesMetric(t *testing.T) {
	fc := clock.NewFake(t0)
	mp := newFakeProvider()
	q := NewTypedRateLimitingQueueWithConfig(
		NewTypedItemFastSlowRateLimiter[string](time.Second, time.Minute, 1),
		TypedRateLimitingQueueConfig[string]{Name: "rq", MetricsProvider: mp, Clock: fc},
	)
	q.AddRateLimited("a")
	q.AddAfter("b", 0)
	q.AddAfter("c", time.Second)
	q.Add("d") // not a retry
	if got := mp.get("retries", "rq").Value(); got != 3 {
		t.Fatalf("retries = %v, want 3", got)
	}
	if got := mp.get("adds", "rq").Value(); got != 2 {
		t.Fatalf("adds = %v, want 2 (b, d)", got)
	}
	q.ShutDown()
	q.AddRateLimited("a") // after shutdown: not counted
	if got := mp.get("retries", "rq").Value(); got != 3 {
		t.Fatalf("retries after shutdown = %v, want 3", got)
	}
}

func TestPrometheusMetricsProvider(t *testing.T) {
	reg := prometheus.NewRegistry()
	mp, err := NewPrometheusMetricsProvider(reg)
	if err != nil {
		t.Fatal(err)
	}
	// A second provider on the same registry shares the vectors.
	mp2, err := NewPrometheusMetricsProvider(reg)
	if err != nil {
		t.Fatal(err)
	}
	fc := clock.NewFake(t0)
	q := NewTypedRateLimitingQueueWithConfig(
		NewTypedItemExponentialFailureRateLimiter[string](time.Second, time.Minute),
		TypedRateLimitingQueueConfig[string]{Name: "ctrl", MetricsProvider: mp, Clock: fc},
	)
	defer q.ShutDown()
	other := NewTypedWithConfig(TypedQueueConfig[string]{Name: "other", MetricsProvider: mp2, Clock: fc})
	defer other.ShutDown()

	q.Add("a")
	q.Add("b")
	other.Add("x")
	fc.Step(2 * time.Second)
	expectGet[string](t, q, "a")
	q.AddRateLimited("a")
	fc.Step(3 * time.Second)
	// gathered maps "metric{name}" to its value (counter, gauge, or
	// histogram sample count), and checks every series has just the name label.
	gathered := func() map[string]float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				if len(m.GetLabel()) != 1 || m.GetLabel()[0].GetName() != "name" {
					t.Fatalf("%s: labels %v, want just name", mf.GetName(), m.GetLabel())
				}
				k := mf.GetName() + "{" + m.GetLabel()[0].GetValue() + "}"
				switch {
				case m.GetCounter() != nil:
					out[k] = m.GetCounter().GetValue()
				case m.GetGauge() != nil:
					out[k] = m.GetGauge().GetValue()
				case m.GetHistogram() != nil:
					out[k] = float64(m.GetHistogram().GetSampleCount())
					out[k+"sum"] = m.GetHistogram().GetSampleSum()
				}
			}
		}
		return out
	}
	// Wait for the ticker-driven refresh and for the delaying queue to add
	// "a" back.
	eventually(t, "unfinished work refresh and retry", func() bool {
		g := gathered()
		return g["workqueue_unfinished_work_seconds{ctrl}"] == 3 && g["workqueue_depth{ctrl}"] == 2
	})
	got := gathered()
	// "a" became ready 1s after AddRateLimited, while processing: dirty, so
	// depth is b + a.
	want := map[string]float64{
		"workqueue_adds_total{ctrl}":                         3,
		"workqueue_adds_total{other}":                        1,
		"workqueue_depth{ctrl}":                              2,
		"workqueue_depth{other}":                             1,
		"workqueue_queue_duration_seconds{ctrl}":             1,
		"workqueue_queue_duration_seconds{ctrl}sum":          2,
		"workqueue_work_duration_seconds{ctrl}":              0,
		"workqueue_work_duration_seconds{ctrl}sum":           0,
		"workqueue_unfinished_work_seconds{ctrl}":            3,
		"workqueue_unfinished_work_seconds{other}":           0,
		"workqueue_longest_running_processor_seconds{ctrl}":  3,
		"workqueue_longest_running_processor_seconds{other}": 0,
		"workqueue_retries_total{ctrl}":                      1,
		"workqueue_queue_duration_seconds{other}":            0,
		"workqueue_queue_duration_seconds{other}sum":         0,
		"workqueue_work_duration_seconds{other}":             0,
		"workqueue_work_duration_seconds{other}sum":          0,
	}
	if !maps.Equal(got, want) {
		t.Fatalf("gathered:\n%v\nwant:\n%v", got, want)
	}

	if _, err := NewPrometheusMetricsProvider(nil); err == nil {
		t.Fatal("nil registerer: want error")
	}
	clash := prometheus.NewRegistry()
	clash.MustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{Name: "workqueue_depth", Help: "x"}, []string{"name"}))
	if _, err := NewPrometheusMetricsProvider(clash); err == nil {
		t.Fatal("conflicting registration: want error")
	}
}
