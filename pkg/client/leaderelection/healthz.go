package leaderelection

import (
	"net/http"
	"sync"
	"time"
)

// HealthzAdaptor is a health check that fails when the elector believes it
// leads but has not renewed for longer than LeaseDuration plus a timeout:
// an elector that is stuck (a deadlock) and should be restarted.
type HealthzAdaptor struct {
	mu      sync.Mutex
	le      *LeaderElector
	timeout time.Duration
}

// NewLeaderHealthzAdaptor returns a check tolerating timeout beyond the
// lease duration. Connect it with SetLeaderElection (RunOrDie does).
func NewLeaderHealthzAdaptor(timeout time.Duration) *HealthzAdaptor {
	return &HealthzAdaptor{timeout: timeout}
}

// Name is the check's name.
func (h *HealthzAdaptor) Name() string { return "leaderElection" }

// Check reports the elector's health (healthy while not connected).
func (h *HealthzAdaptor) Check(_ *http.Request) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.le == nil {
		return nil
	}
	return h.le.Check(h.timeout)
}

// SetLeaderElection connects the elector to check.
func (h *HealthzAdaptor) SetLeaderElection(le *LeaderElector) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.le = le
}
