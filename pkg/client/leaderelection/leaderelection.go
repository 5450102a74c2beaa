package leaderelection

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// JitterFactor is how much longer than RetryPeriod, at most, a candidate
// waits between attempts to acquire (up to RetryPeriod*(1+JitterFactor)).
const JitterFactor = 1.2

// LeaderElectionConfig configures a LeaderElector.
type LeaderElectionConfig struct {
	// Lock is the resource the election runs on.
	Lock Lock
	// LeaseDuration is how long a candidate waits, after it last saw the
	// record change, before it may take the lock from its holder. It is
	// also the duration we write into our record. Core components use 15s.
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader keeps retrying a renewal before
	// it gives up leadership. Core components use 10s.
	RenewDeadline time.Duration
	// RetryPeriod is the wait between attempts. Core components use 2s.
	RetryPeriod time.Duration
	// Callbacks are called on leadership changes.
	Callbacks LeaderCallbacks
	// WatchDog, if set, is connected to the elector by RunOrDie.
	WatchDog *HealthzAdaptor
	// ReleaseOnCancel releases the lock when Run's context ends, so that
	// another candidate takes over at once instead of after LeaseDuration.
	// Only set it if all work guarded by the lock has stopped by the time
	// the context ends.
	ReleaseOnCancel bool
	// Name names the election in logs and health checks.
	Name string
	// Clock is the time source (default: the real clock).
	Clock clock.Clock
	// Rand returns a number in [0, 1) for the acquire jitter (default
	// math/rand/v2.Float64).
	Rand func() float64
	// Logger (default slog.Default()).
	Logger *slog.Logger
}

// LeaderCallbacks are called on leadership changes.
type LeaderCallbacks struct {
	// OnStartedLeading is called in a new goroutine when we become leader;
	// its context is cancelled when leadership ends.
	OnStartedLeading func(ctx context.Context)
	// OnStoppedLeading is called when Run returns, whether or not we led.
	OnStoppedLeading func()
	// OnNewLeader (optional) is called with each newly observed holder,
	// including the first one and ourselves.
	OnNewLeader func(identity string)
}

// LeaderElector runs one candidate's side of an election.
type LeaderElector struct {
	config LeaderElectionConfig
	clock  clock.Clock
	rand   func() float64
	logger *slog.Logger

	mu                sync.Mutex
	observedRecord    LeaderElectionRecord
	observedRawRecord []byte
	observedTime      time.Time // on our clock, when observedRecord last changed

	// reportedLeader is the holder last passed to OnNewLeader; only the
	// election goroutine touches it.
	reportedLeader string
	newLeader      *notifier
}

// NewLeaderElector validates cfg and returns an elector.
func NewLeaderElector(cfg LeaderElectionConfig) (*LeaderElector, error) {
	if err := validate(&cfg); err != nil {
		return nil, err
	}
	le := &LeaderElector{config: cfg, clock: cfg.Clock, rand: cfg.Rand, logger: cfg.Logger}
	if le.clock == nil {
		le.clock = clock.Real{}
	}
	if le.rand == nil {
		le.rand = rand.Float64
	}
	if le.logger == nil {
		le.logger = slog.Default()
	}
	le.logger = le.logger.With("lock", cfg.Lock.Describe(), "identity", cfg.Lock.Identity())
	if cfg.Callbacks.OnNewLeader != nil {
		le.newLeader = &notifier{fn: cfg.Callbacks.OnNewLeader}
	}
	return le, nil
}

func validate(cfg *LeaderElectionConfig) error {
	switch {
	case cfg.LeaseDuration <= cfg.RenewDeadline:
		return errors.New("leaseDuration must be greater than renewDeadline")
	case cfg.RenewDeadline <= time.Duration(JitterFactor*float64(cfg.RetryPeriod)):
		return errors.New("renewDeadline must be greater than retryPeriod*JitterFactor")
	case cfg.LeaseDuration < 1:
		return errors.New("leaseDuration must be greater than zero")
	case cfg.RenewDeadline < 1:
		return errors.New("renewDeadline must be greater than zero")
	case cfg.RetryPeriod < 1:
		return errors.New("retryPeriod must be greater than zero")
	case cfg.Callbacks.OnStartedLeading == nil:
		return errors.New("OnStartedLeading callback must not be nil")
	case cfg.Callbacks.OnStoppedLeading == nil:
		return errors.New("OnStoppedLeading callback must not be nil")
	case cfg.Lock == nil:
		return errors.New("lock must not be nil")
	case cfg.Lock.Identity() == "":
		return errors.New("lock identity is empty")
	}
	return nil
}

// RunOrDie builds an elector from cfg (panicking if cfg is invalid),
// connects cfg.WatchDog to it and runs it.
func RunOrDie(ctx context.Context, cfg LeaderElectionConfig) {
	le, err := NewLeaderElector(cfg)
	if err != nil {
		panic(err)
	}
	if cfg.WatchDog != nil {
		cfg.WatchDog.SetLeaderElection(le)
	}
	le.Run(ctx)
}

// Run campaigns until ctx ends or, once leading, until leadership is lost.
// It returns only then; call it again to campaign again.
func (le *LeaderElector) Run(ctx context.Context) {
	defer le.config.Callbacks.OnStoppedLeading()
	if !le.acquire(ctx) {
		return
	}
	leadCtx, cancel := context.WithCancel(ctx)
	go le.config.Callbacks.OnStartedLeading(leadCtx)
	le.renew(ctx)
	cancel()
	le.config.Lock.RecordEvent("stopped leading")
	if le.config.ReleaseOnCancel {
		le.release()
	}
}

// GetLeader is the last observed holder ("" if none was seen yet).
func (le *LeaderElector) GetLeader() string {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.observedRecord.HolderIdentity
}

// IsLeader reports whether the last observed holder is us.
func (le *LeaderElector) IsLeader() bool {
	return le.GetLeader() == le.config.Lock.Identity()
}

// acquire tries to take the lock every RetryPeriod (jittered) until it
// succeeds (true) or ctx ends (false).
func (le *LeaderElector) acquire(ctx context.Context) bool {
	le.logger.Info("attempting to acquire leader lease")
	for ctx.Err() == nil {
		ok := le.tryAcquireOrRenew(ctx)
		le.maybeReportTransition()
		if ok {
			le.config.Lock.RecordEvent("became leader")
			le.logger.Info("successfully acquired lease")
			return true
		}
		le.logger.Debug("failed to acquire lease")
		period := le.config.RetryPeriod
		wait := period + time.Duration(le.rand()*JitterFactor*float64(period))
		if !le.sleep(ctx, wait) {
			break
		}
	}
	return false
}

// renew renews the lock every RetryPeriod until a renewal round fails or
// ctx ends.
func (le *LeaderElector) renew(ctx context.Context) {
	for le.renewWithinDeadline(ctx) {
		if !le.sleep(ctx, le.config.RetryPeriod) {
			return
		}
	}
}

// renewWithinDeadline retries renewing every RetryPeriod for at most
// RenewDeadline; in-flight attempts are cancelled at the deadline.
func (le *LeaderElector) renewWithinDeadline(ctx context.Context) bool {
	deadline := le.clock.Now().Add(le.config.RenewDeadline)
	for {
		if ctx.Err() != nil {
			return false
		}
		left := deadline.Sub(le.clock.Now())
		if left <= 0 {
			le.logger.Info("failed to renew lease", "err", "renew deadline exceeded")
			return false
		}
		actx, cancel := context.WithTimeout(ctx, left)
		ok := le.tryAcquireOrRenew(actx)
		cancel()
		le.maybeReportTransition()
		if ok {
			return true
		}
		if !le.sleep(ctx, min(le.config.RetryPeriod, deadline.Sub(le.clock.Now()))) {
			return false
		}
	}
}

// sleep waits d on the clock; false if ctx ended first.
func (le *LeaderElector) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := le.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}

// tryAcquireOrRenew makes one attempt to take or renew the lock.
func (le *LeaderElector) tryAcquireOrRenew(ctx context.Context) bool {
	now := metav1.NewTime(le.clock.Now())
	desired := LeaderElectionRecord{
		HolderIdentity:       le.config.Lock.Identity(),
		LeaseDurationSeconds: int(le.config.LeaseDuration / time.Second),
		RenewTime:            now,
		AcquireTime:          now,
	}

	// 1. Fast path: we lead and the lease we last wrote is still valid;
	// update optimistically without reading first.
	if le.IsLeader() && le.isLeaseValid(now.Time) {
		old := le.getObservedRecord()
		desired.AcquireTime, desired.LeaderTransitions = old.AcquireTime, old.LeaderTransitions
		err := le.config.Lock.Update(ctx, desired)
		if err == nil {
			le.setObservedRecord(&desired)
			return true
		}
		le.logger.Debug("failed to update lease optimistically, falling back to slow path", "err", err)
	}

	// 2. Read the record, creating it if there is none.
	old, raw, err := le.config.Lock.Get(ctx)
	if err != nil {
		if !apierrors.IsNotFound(err) {
			le.logger.Error("error retrieving lease lock", "err", err)
			return false
		}
		if err := le.config.Lock.Create(ctx, desired); err != nil {
			le.logger.Error("error initially creating lease lock", "err", err)
			return false
		}
		le.setObservedRecord(&desired)
		return true
	}

	// 3. A changed record restarts the expiry clock (on our clock).
	le.mu.Lock()
	if !bytes.Equal(le.observedRawRecord, raw) {
		le.observedRecord, le.observedRawRecord, le.observedTime = *old, raw, le.clock.Now()
	}
	le.mu.Unlock()
	if old.HolderIdentity != "" && le.isLeaseValid(now.Time) && !le.IsLeader() {
		le.logger.Debug("lease is held and has not yet expired", "holder", old.HolderIdentity)
		return false
	}

	// 4. Take or renew it.
	if le.IsLeader() {
		desired.AcquireTime, desired.LeaderTransitions = old.AcquireTime, old.LeaderTransitions
	} else {
		desired.LeaderTransitions = old.LeaderTransitions + 1
	}
	if err := le.config.Lock.Update(ctx, desired); err != nil {
		le.logger.Error("failed to update lease", "err", err)
		return false
	}
	le.setObservedRecord(&desired)
	return true
}

// release gives the lock up if the stored record still names us: empty
// holder, 1 s duration. It retries on conflicts for up to RenewDeadline.
func (le *LeaderElector) release() bool {
	ctx, cancel := context.WithTimeout(context.Background(), le.config.RenewDeadline)
	defer cancel()
	for {
		if !le.IsLeader() {
			return true
		}
		old, _, err := le.config.Lock.Get(ctx)
		if err != nil {
			le.logger.Error("error retrieving lease lock for release", "err", err)
			return false
		}
		if old.HolderIdentity != le.config.Lock.Identity() {
			// Someone else took over since we last looked: not ours to clear.
			return true
		}
		now := metav1.NewTime(le.clock.Now())
		rec := LeaderElectionRecord{
			LeaderTransitions:    old.LeaderTransitions,
			LeaseDurationSeconds: 1,
			RenewTime:            now,
			AcquireTime:          now,
		}
		err = le.config.Lock.Update(ctx, rec)
		if err == nil {
			le.setObservedRecord(&rec)
			le.logger.Info("released lease")
			return true
		}
		if !apierrors.IsConflict(err) || ctx.Err() != nil {
			le.logger.Error("failed to release lease", "err", err)
			return false
		}
		le.logger.Debug("conflict when releasing lease, retrying")
	}
}

// maybeReportTransition tells OnNewLeader about a changed holder.
func (le *LeaderElector) maybeReportTransition() {
	holder := le.GetLeader()
	if holder == le.reportedLeader {
		return
	}
	le.reportedLeader = holder
	if le.newLeader != nil {
		le.newLeader.notify(holder)
	}
}

// Check fails when we believe we lead but have not renewed for longer
// than LeaseDuration+maxTolerableExpiredLease (a stuck elector).
func (le *LeaderElector) Check(maxTolerableExpiredLease time.Duration) error {
	if !le.IsLeader() {
		return nil // standbys are healthy
	}
	le.mu.Lock()
	last := le.observedTime
	le.mu.Unlock()
	if le.clock.Since(last) > le.config.LeaseDuration+maxTolerableExpiredLease {
		return fmt.Errorf("failed election to renew leadership on lease %s", le.config.Name)
	}
	return nil
}

func (le *LeaderElector) isLeaseValid(now time.Time) bool {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.observedTime.Add(time.Duration(le.observedRecord.LeaseDurationSeconds) * time.Second).After(now)
}

// setObservedRecord records rec, which we just wrote, as observed now. The
// raw record is left as last read, so the next read (which differs from it)
// counts as a change, as upstream.
func (le *LeaderElector) setObservedRecord(rec *LeaderElectionRecord) {
	le.mu.Lock()
	defer le.mu.Unlock()
	le.observedRecord, le.observedTime = *rec, le.clock.Now()
}

func (le *LeaderElector) getObservedRecord() LeaderElectionRecord {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.observedRecord
}

// notifier calls fn with each value, in order, on its own goroutine, so
// that a slow callback never blocks the election.
type notifier struct {
	fn      func(string)
	mu      sync.Mutex
	pending []string
	running bool
}

func (n *notifier) notify(v string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.pending = append(n.pending, v)
	if !n.running {
		n.running = true
		go n.drain()
	}
}

func (n *notifier) drain() {
	for {
		n.mu.Lock()
		if len(n.pending) == 0 {
			n.running = false
			n.mu.Unlock()
			return
		}
		v := n.pending[0]
		n.pending = n.pending[1:]
		n.mu.Unlock()
		n.fn(v)
	}
}
