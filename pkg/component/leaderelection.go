package component

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/leaderelection"
	"github.com/skiff-sh/skiff/pkg/clock"
)

// ErrLeaderElectionLost ends RunLeaderElected when the component stops
// leading while its context is still live (upstream's "leaderelection
// lost" exit).
var ErrLeaderElectionLost = errors.New("leaderelection lost")

// LeaderElectionConfig is upstream's --leader-elect* flags.
type LeaderElectionConfig struct {
	LeaderElect       bool
	LeaseDuration     time.Duration // 15s
	RenewDeadline     time.Duration // 10s
	RetryPeriod       time.Duration // 2s
	ResourceLock      string        // "leases" (the only one)
	ResourceNamespace string        // "kube-system"
	ResourceName      string        // the component's: "kube-controller-manager", "kube-scheduler"
	// Identity is this candidate's name (empty: NewIdentity's).
	Identity string
}

// Upstream's leader election defaults.
const (
	DefaultLeaseDuration     = 15 * time.Second
	DefaultRenewDeadline     = 10 * time.Second
	DefaultRetryPeriod       = 2 * time.Second
	DefaultResourceLock      = "leases"
	DefaultResourceNamespace = "kube-system"
	// The lock names (and component names) of upstream's components.
	ControllerManagerName = "kube-controller-manager"
	SchedulerName         = "kube-scheduler"
)

// DefaultLeaderElectionConfig is upstream's defaults for the component
// whose lock is kube-system/name: leader election on, 15s/10s/2s.
func DefaultLeaderElectionConfig(name string) LeaderElectionConfig {
	return LeaderElectionConfig{LeaderElect: true}.WithDefaults(name)
}

// WithDefaults fills the unset durations, lock type and lock name (name)
// with upstream's defaults; LeaderElect and Identity are left as they are.
func (c LeaderElectionConfig) WithDefaults(name string) LeaderElectionConfig {
	if c.LeaseDuration == 0 {
		c.LeaseDuration = DefaultLeaseDuration
	}
	if c.RenewDeadline == 0 {
		c.RenewDeadline = DefaultRenewDeadline
	}
	if c.RetryPeriod == 0 {
		c.RetryPeriod = DefaultRetryPeriod
	}
	if c.ResourceLock == "" {
		c.ResourceLock = DefaultResourceLock
	}
	if c.ResourceNamespace == "" {
		c.ResourceNamespace = DefaultResourceNamespace
	}
	if c.ResourceName == "" {
		c.ResourceName = name
	}
	return c
}

// Validate checks the flags as upstream's validation does.
func (c *LeaderElectionConfig) Validate() []error {
	var errs []error
	if c.ResourceLock != DefaultResourceLock {
		errs = append(errs, fmt.Errorf("--leader-elect-resource-lock: only %q is supported, not %q", DefaultResourceLock, c.ResourceLock))
	}
	if c.LeaderElect {
		if c.LeaseDuration <= c.RenewDeadline {
			errs = append(errs, errors.New("leaseDuration must be greater than renewDeadline"))
		}
		if c.RenewDeadline <= time.Duration(leaderelection.JitterFactor*float64(c.RetryPeriod)) {
			errs = append(errs, errors.New("renewDeadline must be greater than retryPeriod*JitterFactor"))
		}
	}
	return errs
}

// NewIdentity is upstream's candidate identity: hostname_<uuid>.
func NewIdentity() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("unable to get hostname: %w", err)
	}
	return host + "_" + string(uuid.NewUUID()), nil
}

// NewWatchdog is upstream's leader election health check: it fails when
// the elector believes it leads but has not renewed for 20s past the
// lease. Give it to NewHealth and to LeaderElection.WatchDog.
func NewWatchdog() *leaderelection.HealthzAdaptor {
	return leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
}

// LeaderElection is what RunLeaderElected campaigns with.
type LeaderElection struct {
	// Config: with LeaderElect false, run runs at once, unguarded.
	// Identity must be set (NewIdentity).
	Config LeaderElectionConfig
	// Name is the component (kube-controller-manager, kube-scheduler): the
	// elector's name in logs.
	Name string
	// Client reaches the Lease.
	Client *client.Client
	// Recorder (optional) records the "<identity> became leader" events
	// on the Lease; give it the component as event source.
	Recorder leaderelection.EventRecorder
	// WatchDog (optional) is connected to the elector (NewWatchdog).
	WatchDog *leaderelection.HealthzAdaptor
	// IsLeader (optional) is set to 1 while leading and to 0 after
	// (LeaderGauge).
	IsLeader prometheus.Gauge
	Clock    clock.Clock
	// Rand returns a number in [0, 1) for the retry jitter (nil:
	// math/rand/v2).
	Rand   func() float64
	Logger *slog.Logger
	// ReleaseOnCancel gives the Lease up when ctx ends, once run has
	// returned, so that a standby takes over at once rather than after
	// the lease expires (upstream's kube-scheduler does; its controller
	// manager does not). The lease is never released while run may still
	// be running: when run takes longer than RenewDeadline to return, it
	// is left to expire.
	ReleaseOnCancel bool
}

// releaseAfterRun is a lock whose release (an update clearing the holder)
// waits for the guarded work to have returned.
type releaseAfterRun struct {
	leaderelection.Lock
	runDone <-chan struct{}
}

func (l releaseAfterRun) Update(ctx context.Context, ler leaderelection.LeaderElectionRecord) error {
	if ler.HolderIdentity == "" {
		select {
		case <-l.runDone:
		case <-ctx.Done():
			return fmt.Errorf("not released: the work it guards is still running: %w", ctx.Err())
		}
	}
	return l.Lock.Update(ctx, ler)
}

// RunLeaderElected runs run while this candidate leads the Lease
// le.Config.ResourceNamespace/ResourceName, as upstream's components do:
//   - it campaigns until ctx ends; run is called at most once, when this
//     candidate first leads, with a context that ends when leadership
//     ends (or ctx does);
//   - run returning an error ends the campaign: RunLeaderElected returns
//     that error (after run returned);
//   - leadership lost while ctx is live: run's context is cancelled and,
//     once run has returned, RunLeaderElected returns
//     ErrLeaderElectionLost (the component must exit, not campaign again);
//   - ctx ending: nil once run (if it started) returned. The lock is
//     released then with le.ReleaseOnCancel, else the next leader takes
//     over after the lease expires.
//
// Without le.Config.LeaderElect it returns run(ctx).
func RunLeaderElected(ctx context.Context, le LeaderElection, run func(context.Context) error) error {
	if !le.Config.LeaderElect {
		return run(ctx)
	}
	logger := le.Logger
	if logger == nil {
		logger = slog.Default()
	}
	cfg := le.Config
	lease := leaderelection.NewLeaseLock(le.Client, cfg.ResourceNamespace, cfg.ResourceName, cfg.Identity)
	lease.LockConfig.EventRecorder = le.Recorder
	runDone := make(chan struct{}) // closed once OnStartedLeading returned
	var lock leaderelection.Lock = lease
	if le.ReleaseOnCancel {
		lock = releaseAfterRun{Lock: lease, runDone: runDone}
	}
	setLeader := func(v float64) {
		if le.IsLeader != nil {
			le.IsLeader.Set(v)
		}
	}
	// run failing ends the campaign (electCtx).
	electCtx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		mu      sync.Mutex
		running chan struct{} // closed when run has returned
		ended   bool          // elector.Run returned: start nothing more
		runErr  error
	)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: cfg.LeaseDuration, RenewDeadline: cfg.RenewDeadline, RetryPeriod: cfg.RetryPeriod,
		Name: le.Name, Clock: le.Clock, Rand: le.Rand, Logger: logger, WatchDog: le.WatchDog, ReleaseOnCancel: le.ReleaseOnCancel,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) {
				defer close(runDone)
				mu.Lock()
				if ended {
					mu.Unlock()
					return
				}
				done := make(chan struct{})
				running = done
				mu.Unlock()
				defer close(done)
				setLeader(1)
				logger.Info("became leader", "identity", cfg.Identity)
				if err := run(lctx); err != nil {
					mu.Lock()
					runErr = err
					mu.Unlock()
					stop()
				}
			},
			OnStoppedLeading: func() { setLeader(0) },
			OnNewLeader: func(id string) {
				if id != cfg.Identity {
					logger.Info("new leader elected", "identity", id)
				}
			},
		},
	})
	if err != nil {
		return err
	}
	if le.WatchDog != nil {
		le.WatchDog.SetLeaderElection(elector)
	}
	elector.Run(electCtx)
	mu.Lock()
	ended = true
	r := running
	mu.Unlock()
	if r != nil {
		<-r
	}
	mu.Lock()
	err = runErr
	mu.Unlock()
	switch {
	case err != nil:
		return err
	case ctx.Err() != nil:
		return nil
	}
	logger.Error("leaderelection lost")
	return ErrLeaderElectionLost
}
