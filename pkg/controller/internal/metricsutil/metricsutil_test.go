package metricsutil

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func TestRegisterShares(t *testing.T) {
	reg := prometheus.NewRegistry()
	newC := func() *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "x_total", Help: "x"}, []string{"l"})
	}
	a, err := Register(reg, newC())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Register(reg, newC())
	if err != nil {
		t.Fatal(err)
	}
	a.WithLabelValues("v").Inc()
	b.WithLabelValues("v").Inc()
	var m dto.Metric
	if err := a.WithLabelValues("v").Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := m.GetCounter().GetValue(); got != 2 {
		t.Errorf("shared counter = %v, want 2", got)
	}
	// Same name, other labels: refused.
	if _, err := Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "x_total", Help: "x"}, []string{"other"})); err == nil {
		t.Error("a conflicting collector was accepted")
	}
	if c, err := Register[*prometheus.CounterVec](nil, newC()); err != nil || c == nil {
		t.Errorf("nil registry: %v", err)
	}
}
