package defaultpreemption

import "github.com/prometheus/client_golang/prometheus"

// Upstream's preemption metrics (pkg/scheduler/metrics), shared by every
// instance of the plugin as upstream's globals are. The scheduler
// registers them with Register.
var (
	preemptionAttempts = prometheus.NewCounter(prometheus.CounterOpts{
		Subsystem: "scheduler", Name: "preemption_attempts_total",
		Help: "[STABLE] Total preemption attempts in the cluster till now",
	})
	preemptionVictims = prometheus.NewHistogram(prometheus.HistogramOpts{
		Subsystem: "scheduler", Name: "preemption_victims",
		Help:    "[STABLE] Number of selected preemption victims",
		Buckets: prometheus.ExponentialBuckets(1, 2, 7),
	})
)

// Register adds scheduler_preemption_attempts_total and
// scheduler_preemption_victims to r (already registered: no error).
func Register(r prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{preemptionAttempts, preemptionVictims} {
		if err := r.Register(c); err != nil {
			if _, ok := err.(prometheus.AlreadyRegisteredError); !ok {
				return err
			}
		}
	}
	return nil
}
