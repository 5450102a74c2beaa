package volumebinding

import "github.com/prometheus/client_golang/prometheus"

// stageFailed is upstream's scheduler_volume_scheduling_stage_error_total
// (volumebinding/metrics): failures of FindPodVolumes ("predicate", in
// Filter), AssumePodVolumes ("assume", in Reserve) and BindPodVolumes
// ("bind", in PreBind). Shared by every instance of the plugin, as
// upstream's global; the scheduler registers it with Register.
var stageFailed = prometheus.NewCounterVec(prometheus.CounterOpts{
	Subsystem: "scheduler_volume", Name: "scheduling_stage_error_total",
	Help: "[ALPHA] Volume scheduling stage error count",
}, []string{"operation"})

// Register adds scheduler_volume_scheduling_stage_error_total to r
// (already registered: no error).
func Register(r prometheus.Registerer) error {
	if err := r.Register(stageFailed); err != nil {
		if _, ok := err.(prometheus.AlreadyRegisteredError); !ok {
			return err
		}
	}
	return nil
}
