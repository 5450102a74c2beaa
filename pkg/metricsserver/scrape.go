package metricsserver

import (
	"fmt"
	"io"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// sample is one reading of a series: cumulative CPU seconds and the
// memory working set at a time.
type sample struct {
	cpu    float64 // cumulative core seconds
	hasCPU bool
	mem    float64 // bytes
	hasMem bool
	ts     time.Time // of the CPU reading (the memory one when there is none)
}

// podKey names a pod.
type podKey struct{ namespace, name string }

// nodeScrape is what one scrape of a kubelet's /metrics/resource held.
type nodeScrape struct {
	node       sample
	containers map[podKey]map[string]sample // pod → container → sample
}

// parseResourceMetrics reads the kubelet's resource metrics (Prometheus
// text format): node_ and container_ cpu_usage_seconds_total and
// memory_working_set_bytes, each sample with its timestamp (scrapedAt
// when it has none).
func parseResourceMetrics(r io.Reader, scrapedAt time.Time) (*nodeScrape, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parsing resource metrics: %w", err)
	}
	out := &nodeScrape{containers: map[podKey]map[string]sample{}}
	at := func(m *dto.Metric) time.Time {
		if m.TimestampMs != nil {
			return time.UnixMilli(*m.TimestampMs)
		}
		return scrapedAt
	}
	value := func(m *dto.Metric) float64 {
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Untyped != nil:
			return m.Untyped.GetValue()
		}
		return 0
	}
	label := func(m *dto.Metric, name string) string {
		for _, l := range m.Label {
			if l.GetName() == name {
				return l.GetValue()
			}
		}
		return ""
	}
	container := func(m *dto.Metric) (podKey, string, bool) {
		k := podKey{label(m, "namespace"), label(m, "pod")}
		c := label(m, "container")
		return k, c, k.namespace != "" && k.name != "" && c != ""
	}
	set := func(m *dto.Metric, cpu bool) {
		k, c, ok := container(m)
		if !ok {
			return
		}
		pod := out.containers[k]
		if pod == nil {
			pod = map[string]sample{}
			out.containers[k] = pod
		}
		s := pod[c]
		if cpu {
			s.cpu, s.hasCPU, s.ts = value(m), true, at(m)
		} else {
			s.mem, s.hasMem = value(m), true
			if !s.hasCPU {
				s.ts = at(m)
			}
		}
		pod[c] = s
	}
	if f := fams["node_cpu_usage_seconds_total"]; f != nil && len(f.Metric) > 0 {
		out.node.cpu, out.node.hasCPU, out.node.ts = value(f.Metric[0]), true, at(f.Metric[0])
	}
	if f := fams["node_memory_working_set_bytes"]; f != nil && len(f.Metric) > 0 {
		out.node.mem, out.node.hasMem = value(f.Metric[0]), true
		if !out.node.hasCPU {
			out.node.ts = at(f.Metric[0])
		}
	}
	if f := fams["container_cpu_usage_seconds_total"]; f != nil {
		for _, m := range f.Metric {
			set(m, true)
		}
	}
	if f := fams["container_memory_working_set_bytes"]; f != nil {
		for _, m := range f.Metric {
			set(m, false)
		}
	}
	return out, nil
}
