package apiserver

import (
	"context"
	"time"
)

// statusInterval is how often the API server's own status keeping runs.
const statusInterval = 5 * time.Second

// statusLoop does, every statusInterval until ctx ends, what upstream's
// API server does in small controllers of its own: keep the flowcontrol
// bootstrap configuration and the FlowSchemas' Dangling conditions
// (bootstrap_flowcontrol.go), type-check ValidatingAdmissionPolicies
// (policies_status.go) and keep the local APIServices (a
// deleted one comes back, apiservices.go). The APIServices served by other
// servers have their own loop (aggregator.go).
func (s *Server) statusLoop(ctx context.Context) {
	t := s.cfg.Clock.NewTicker(statusInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		for _, job := range []struct {
			what string
			sync func(context.Context) error
		}{
			{"flowcontrol configuration", s.ensureFlowControl},
			{"ValidatingAdmissionPolicy status", s.syncPolicyStatus},
			{"local APIServices", func(ctx context.Context) error { return s.syncAPIServices(ctx, s.apiServices.woken.Load()) }},
		} {
			if err := job.sync(ctx); err != nil && ctx.Err() == nil {
				s.cfg.Logger.Debug("status keeping", "what", job.what, "err", err)
			}
		}
	}
}
