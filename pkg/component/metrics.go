package component

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// NewRegistry is a component's default metrics registry: the Go and
// process collectors (go_*, process_*), as upstream's legacy registry.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// RegisterOrShare registers c, or returns the collector of the same
// description already registered (components sharing one registry in one
// process share it).
func RegisterOrShare[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
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
	return c, err
}

// LeaderGauge is upstream's leader_election_master_status{name} gauge
// (help text as upstream's, stability prefix included) for the component
// name, registered on reg (or shared with the one
// already there).
func LeaderGauge(reg prometheus.Registerer, name string) (prometheus.Gauge, error) {
	vec := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "leader_election_master_status",
		Help: "[ALPHA] Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
	}, []string{"name"})
	vec, err := RegisterOrShare(reg, vec)
	if err != nil {
		return nil, err
	}
	return vec.WithLabelValues(name), nil
}
