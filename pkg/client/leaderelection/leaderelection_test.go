package leaderelection

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/clock"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	leaseDuration = 15 * time.Second
	renewDeadline = 10 * time.Second
	retryPeriod   = 2 * time.Second
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// harness runs one elector on a fakeLock with a fake clock.
type harness struct {
	t     *testing.T
	fc    *clock.Fake
	store *fakeStore
	lock  *fakeLock
	le    *LeaderElector

	cancel  context.CancelFunc
	done    chan struct{} // Run returned
	started chan struct{} // OnStartedLeading was called
	stopped chan struct{} // OnStoppedLeading was called

	mu            sync.Mutex
	leadCtx       context.Context
	leaders       []string // OnNewLeader calls
	ctxDoneAtStop bool     // whether leadCtx was done when OnStoppedLeading ran
	stopTime      time.Time
}

func newHarness(t *testing.T, store *fakeStore, id string, release bool) *harness {
	t.Helper()
	h := &harness{
		t: t, fc: clock.NewFake(t0), store: store, lock: &fakeLock{store: store, id: id},
		done: make(chan struct{}), started: make(chan struct{}), stopped: make(chan struct{}),
	}
	le, err := NewLeaderElector(LeaderElectionConfig{
		Lock: h.lock, LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		ReleaseOnCancel: release, Name: "test", Clock: h.fc, Rand: func() float64 { return 0 }, Logger: quietLogger(),
		Callbacks: LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				h.mu.Lock()
				h.leadCtx = ctx
				h.mu.Unlock()
				close(h.started)
			},
			OnStoppedLeading: func() {
				h.mu.Lock()
				h.ctxDoneAtStop = h.leadCtx != nil && h.leadCtx.Err() != nil
				h.stopTime = h.fc.Now()
				h.mu.Unlock()
				close(h.stopped)
			},
			OnNewLeader: func(id string) {
				h.mu.Lock()
				h.leaders = append(h.leaders, id)
				h.mu.Unlock()
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	h.le = le
	return h
}

func (h *harness) run() {
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() {
		defer close(h.done)
		h.le.Run(ctx)
	}()
	h.t.Cleanup(func() {
		cancel()
		<-h.done
	})
}

// waitSleeping waits until the elector is blocked on its one timer.
func (h *harness) waitSleeping() {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for h.fc.Waiters() != 1 {
		if time.Now().After(deadline) {
			h.t.Fatalf("elector is not sleeping (waiters=%d) at %v; calls %v", h.fc.Waiters(), h.fc.Now().Sub(t0), h.lock.callLog())
		}
		time.Sleep(time.Millisecond)
	}
}

// advance lets the elector finish its current attempt, then moves the
// clock by d.
func (h *harness) advance(d time.Duration) {
	h.t.Helper()
	h.waitSleeping()
	h.fc.Step(d)
}

// advanceTo steps RetryPeriod at a time until the clock reads t0+at.
func (h *harness) advanceTo(at time.Duration) {
	h.t.Helper()
	for h.fc.Now().Sub(t0) < at {
		h.advance(retryPeriod)
	}
}

func (h *harness) leaderLog() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.leaders...)
}

func waitClosed(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestAcquireCreatesLease(t *testing.T) {
	store := &fakeStore{}
	h := newHarness(t, store, "me", false)
	h.run()
	waitClosed(t, h.started, "OnStartedLeading")
	if !h.le.IsLeader() || h.le.GetLeader() != "me" {
		t.Fatalf("IsLeader=%v GetLeader=%q", h.le.IsLeader(), h.le.GetLeader())
	}
	rec, _ := store.get()
	want := LeaderElectionRecord{HolderIdentity: "me", LeaseDurationSeconds: 15,
		AcquireTime: metav1.NewTime(t0), RenewTime: metav1.NewTime(t0)}
	if !reflect.DeepEqual(rec, want) {
		t.Fatalf("record = %+v, want %+v", rec, want)
	}
	// Leading starts with an immediate renewal, as upstream.
	h.waitSleeping()
	if got := h.lock.callLog(); !reflect.DeepEqual(got, []string{"get", "create", "update"}) {
		t.Fatalf("calls = %v", got)
	}
	waitFor(t, "OnNewLeader(me)", func() bool { return reflect.DeepEqual(h.leaderLog(), []string{"me"}) })
	if h.lock.events[0] != "became leader" {
		t.Fatalf("events = %v", h.lock.events)
	}
}

func TestRenewUpdatesRenewTimeOnly(t *testing.T) {
	store := &fakeStore{}
	h := newHarness(t, store, "me", false)
	h.run()
	waitClosed(t, h.started, "OnStartedLeading")
	// The renew loop's first round runs at once, as upstream's: let it
	// finish before counting (counted, it made 4 updates now and then).
	h.waitSleeping()
	h.lock.resetCalls()
	for i := 1; i <= 3; i++ {
		h.advance(retryPeriod)
		at := t0.Add(time.Duration(i) * retryPeriod)
		waitFor(t, "renewal", func() bool { r, _ := store.get(); return r.RenewTime.Time.Equal(at) })
	}
	rec, _ := store.get()
	if !rec.AcquireTime.Time.Equal(t0) || rec.LeaderTransitions != 0 || rec.HolderIdentity != "me" {
		t.Fatalf("record after renewals = %+v", rec)
	}
	// The leader renews optimistically: no reads while its lease is valid.
	h.waitSleeping()
	if got := h.lock.callLog(); !reflect.DeepEqual(got, []string{"update", "update", "update"}) {
		t.Fatalf("calls = %v", got)
	}
	if isClosed(h.stopped) {
		t.Fatal("stopped leading while renewals succeed")
	}
}

func TestLosesLeadershipAfterRenewDeadline(t *testing.T) {
	store := &fakeStore{}
	h := newHarness(t, store, "me", false)
	h.run()
	waitClosed(t, h.started, "OnStartedLeading")
	h.advance(retryPeriod) // one good renewal at 2s
	h.waitSleeping()
	h.lock.setFailures(errors.New("apiserver down"), errors.New("apiserver down"))
	// The round that starts at 4s fails at 4, 6, ..., 12 and gives up at
	// 14 = 4 + RenewDeadline.
	h.advanceTo(12 * time.Second)
	h.waitSleeping()
	if isClosed(h.stopped) {
		t.Fatal("gave up before RenewDeadline")
	}
	h.mu.Lock()
	if h.leadCtx.Err() != nil {
		t.Fatal("leading context cancelled before RenewDeadline")
	}
	h.mu.Unlock()
	h.fc.Step(retryPeriod)
	waitClosed(t, h.done, "Run to return")
	waitClosed(t, h.stopped, "OnStoppedLeading")
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.ctxDoneAtStop {
		t.Fatal("leading context not cancelled before OnStoppedLeading")
	}
	if got := h.stopTime.Sub(t0); got != 14*time.Second {
		t.Fatalf("stopped leading at %v, want 14s", got)
	}
	if got := h.lock.events; !reflect.DeepEqual(got, []string{"became leader", "stopped leading"}) {
		t.Fatalf("events = %v", got)
	}
}

func TestRenewDeadlineCutsTheLastWait(t *testing.T) {
	// RenewDeadline 5s with RetryPeriod 2s: attempts at 2, 4, then the
	// deadline at 7 — not a wait until 8.
	store := &fakeStore{}
	h := newHarness(t, store, "me", false)
	h.le.config.RenewDeadline = 5 * time.Second
	h.le.config.LeaseDuration = 6 * time.Second
	h.run()
	waitClosed(t, h.started, "OnStartedLeading")
	h.waitSleeping()
	h.lock.setFailures(errors.New("down"), errors.New("down"))
	h.advanceTo(6 * time.Second) // attempts at 2, 4, 6
	h.advance(time.Second)       // the wait is cut to the deadline at 7
	waitClosed(t, h.done, "Run to return")
	if got := h.stopTime.Sub(t0); got != 7*time.Second {
		t.Fatalf("stopped at %v, want 7s", got)
	}
}

func TestDoesNotStealUnexpiredLease(t *testing.T) {
	store := &fakeStore{}
	store.set(LeaderElectionRecord{HolderIdentity: "other", LeaseDurationSeconds: 15,
		AcquireTime: metav1.NewTime(t0.Add(-time.Hour)), RenewTime: metav1.NewTime(t0.Add(-time.Hour))})
	h := newHarness(t, store, "me", false)
	h.run()
	// The record's timestamps are an hour old, but expiry counts from when
	// WE saw it (t0): it is ours to take only after t0+15s.
	h.advanceTo(14 * time.Second)
	h.waitSleeping()
	if isClosed(h.started) || h.le.IsLeader() || h.le.GetLeader() != "other" {
		t.Fatalf("took an unexpired lease: leader=%q", h.le.GetLeader())
	}
	if rec, _ := store.get(); rec.HolderIdentity != "other" {
		t.Fatalf("record = %+v", rec)
	}
	h.advance(retryPeriod) // 16s: expired
	waitClosed(t, h.started, "OnStartedLeading after expiry")
	rec, _ := store.get()
	if rec.HolderIdentity != "me" || rec.LeaderTransitions != 1 || !rec.AcquireTime.Time.Equal(t0.Add(16*time.Second)) {
		t.Fatalf("record after takeover = %+v", rec)
	}
	waitFor(t, "OnNewLeader other, me", func() bool { return reflect.DeepEqual(h.leaderLog(), []string{"other", "me"}) })
}

func TestHolderRenewalPostponesExpiry(t *testing.T) {
	store := &fakeStore{}
	other := LeaderElectionRecord{HolderIdentity: "other", LeaseDurationSeconds: 15}
	store.set(other)
	h := newHarness(t, store, "me", false)
	h.run()
	h.advanceTo(10 * time.Second)
	h.waitSleeping()
	// The holder renews (any change of the record counts) just after our
	// attempt at 10s. We see the change at 12s, so on our clock the lease is
	// valid until 12+15 = 27s, and we take it at the attempt at 28s.
	other.RenewTime = metav1.NewTime(t0.Add(10 * time.Second))
	store.set(other)
	h.advanceTo(26 * time.Second)
	h.waitSleeping()
	if isClosed(h.started) {
		t.Fatal("took a lease its holder renewed")
	}
	h.advance(retryPeriod)
	waitClosed(t, h.started, "OnStartedLeading")
	rec, _ := store.get()
	if rec.HolderIdentity != "me" || !rec.AcquireTime.Time.Equal(t0.Add(28*time.Second)) {
		t.Fatalf("record = %+v", rec)
	}
}

func TestEmptyHolderIsTakenAtOnce(t *testing.T) {
	store := &fakeStore{}
	store.set(LeaderElectionRecord{LeaseDurationSeconds: 1, LeaderTransitions: 4})
	h := newHarness(t, store, "me", false)
	h.run()
	waitClosed(t, h.started, "OnStartedLeading")
	if rec, _ := store.get(); rec.HolderIdentity != "me" || rec.LeaderTransitions != 5 {
		t.Fatalf("record = %+v", rec)
	}
}

func TestReleaseOnCancel(t *testing.T) {
	store := &fakeStore{}
	h := newHarness(t, store, "me", true)
	h.run()
	waitClosed(t, h.started, "OnStartedLeading")
	h.advance(retryPeriod)
	h.waitSleeping()
	h.cancel()
	waitClosed(t, h.done, "Run to return")
	rec, _ := store.get()
	want := LeaderElectionRecord{LeaseDurationSeconds: 1, AcquireTime: metav1.NewTime(t0.Add(retryPeriod)),
		RenewTime: metav1.NewTime(t0.Add(retryPeriod))}
	if !reflect.DeepEqual(rec, want) {
		t.Fatalf("released record = %+v, want %+v", rec, want)
	}
	if h.le.IsLeader() || h.le.GetLeader() != "" {
		t.Fatalf("after release: leader %q", h.le.GetLeader())
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.ctxDoneAtStop {
		t.Fatal("leading context not cancelled before OnStoppedLeading")
	}
}

func TestNoReleaseWithoutOption(t *testing.T) {
	store := &fakeStore{}
	h := newHarness(t, store, "me", false)
	h.run()
	waitClosed(t, h.started, "OnStartedLeading")
	h.waitSleeping()
	h.cancel()
	waitClosed(t, h.done, "Run to return")
	if rec, _ := store.get(); rec.HolderIdentity != "me" {
		t.Fatalf("record = %+v", rec)
	}
}

func TestReleaseLeavesAnotherHoldersLease(t *testing.T) {
	// We lost the lease while partitioned and never saw the new holder;
	// releasing must not clear its record.
	store := &fakeStore{}
	h := newHarness(t, store, "me", true)
	h.run()
	waitClosed(t, h.started, "OnStartedLeading")
	h.waitSleeping()
	h.lock.setFailures(errors.New("down"), errors.New("down"))
	h.advanceTo(8 * time.Second)
	h.waitSleeping()
	theirs := LeaderElectionRecord{HolderIdentity: "other", LeaseDurationSeconds: 15, LeaderTransitions: 1}
	store.set(theirs)
	h.lock.setFailures(nil, nil)
	h.cancel()
	waitClosed(t, h.done, "Run to return")
	if rec, _ := store.get(); !reflect.DeepEqual(rec, theirs) {
		t.Fatalf("record = %+v, want %+v", rec, theirs)
	}
}

func TestStoppedLeadingCalledWithoutLeading(t *testing.T) {
	store := &fakeStore{}
	store.set(LeaderElectionRecord{HolderIdentity: "other", LeaseDurationSeconds: 15})
	h := newHarness(t, store, "me", true)
	h.run()
	h.waitSleeping()
	h.cancel()
	waitClosed(t, h.done, "Run to return")
	waitClosed(t, h.stopped, "OnStoppedLeading")
	if isClosed(h.started) {
		t.Fatal("OnStartedLeading called")
	}
	if rec, _ := store.get(); rec.HolderIdentity != "other" {
		t.Fatalf("a candidate that never led changed the record: %+v", rec)
	}
}

func TestTwoCandidatesOnOneStore(t *testing.T) {
	store := &fakeStore{}
	a := newHarness(t, store, "a", true)
	a.run()
	waitClosed(t, a.started, "a leads")
	b := newHarness(t, store, "b", false)
	b.run()
	b.advanceTo(6 * time.Second)
	b.waitSleeping()
	if isClosed(b.started) || b.le.GetLeader() != "a" {
		t.Fatalf("b: leader %q", b.le.GetLeader())
	}
	a.waitSleeping()
	a.cancel() // releases
	waitClosed(t, a.done, "a to stop")
	b.advance(retryPeriod)
	waitClosed(t, b.started, "b leads after a released")
	rec, _ := store.get()
	if rec.HolderIdentity != "b" || rec.LeaderTransitions != 1 {
		t.Fatalf("record = %+v", rec)
	}
	waitFor(t, "b saw a, then nobody, then itself", func() bool {
		return reflect.DeepEqual(b.leaderLog(), []string{"a", "b"}) || reflect.DeepEqual(b.leaderLog(), []string{"a", "", "b"})
	})
}

func TestHealthzAdaptor(t *testing.T) {
	store := &fakeStore{}
	h := newHarness(t, store, "me", false)
	hz := NewLeaderHealthzAdaptor(20 * time.Second)
	if err := hz.Check(nil); err != nil {
		t.Fatalf("unconnected check: %v", err)
	}
	hz.SetLeaderElection(h.le)
	if hz.Name() != "leaderElection" {
		t.Fatal(hz.Name())
	}
	h.run()
	waitClosed(t, h.started, "OnStartedLeading")
	h.waitSleeping()
	if err := hz.Check(nil); err != nil {
		t.Fatalf("healthy leader: %v", err)
	}
	// The elector gets stuck in a renewal that never returns.
	block := make(chan struct{})
	h.lock.mu.Lock()
	h.lock.block = block
	h.lock.mu.Unlock()
	h.fc.Step(retryPeriod)
	waitFor(t, "stuck update", func() bool { c := h.lock.callLog(); return c[len(c)-1] == "update" })
	h.fc.Step(leaseDuration + 20*time.Second - retryPeriod) // exactly at the limit: still healthy
	if err := hz.Check(nil); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	h.fc.Step(time.Second)
	if err := hz.Check(nil); err == nil || !strings.Contains(err.Error(), "failed election to renew leadership on lease test") {
		t.Fatalf("stuck leader check: %v", err)
	}
	close(block)
}

func TestHealthzStandbyIsHealthy(t *testing.T) {
	store := &fakeStore{}
	store.set(LeaderElectionRecord{HolderIdentity: "other", LeaseDurationSeconds: 15})
	h := newHarness(t, store, "me", false)
	h.run()
	h.waitSleeping()
	h.fc.Step(time.Hour) // no longer waiting on the loop: standby never fails
	if err := h.le.Check(0); err != nil {
		t.Fatal(err)
	}
}

func TestNewLeaderElectorValidation(t *testing.T) {
	lock := &fakeLock{store: &fakeStore{}, id: "me"}
	good := func() LeaderElectionConfig {
		return LeaderElectionConfig{
			Lock: lock, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
			Callbacks: LeaderCallbacks{OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {}},
		}
	}
	for _, tc := range []struct {
		name   string
		modify func(*LeaderElectionConfig)
		err    string
	}{
		{"valid", func(*LeaderElectionConfig) {}, ""},
		{"lease equals renew", func(c *LeaderElectionConfig) { c.LeaseDuration = c.RenewDeadline }, "leaseDuration must be greater than renewDeadline"},
		{"lease below renew", func(c *LeaderElectionConfig) { c.LeaseDuration = 5 * time.Second }, "leaseDuration must be greater than renewDeadline"},
		{"renew at retry*jitter", func(c *LeaderElectionConfig) { c.RenewDeadline = 2400 * time.Millisecond }, "renewDeadline must be greater than retryPeriod*JitterFactor"},
		{"renew just above retry*jitter", func(c *LeaderElectionConfig) { c.RenewDeadline = 2401 * time.Millisecond }, ""},
		{"renew below retry", func(c *LeaderElectionConfig) { c.RenewDeadline = time.Second }, "renewDeadline must be greater than retryPeriod*JitterFactor"},
		{"negative lease", func(c *LeaderElectionConfig) {
			c.LeaseDuration, c.RenewDeadline, c.RetryPeriod = -1, -3, -5
		}, "leaseDuration must be greater than zero"},
		{"zero renew", func(c *LeaderElectionConfig) { c.RenewDeadline, c.RetryPeriod = 0, -1 }, "renewDeadline must be greater than zero"},
		{"zero retry", func(c *LeaderElectionConfig) { c.RetryPeriod = 0 }, "retryPeriod must be greater than zero"},
		{"no started callback", func(c *LeaderElectionConfig) { c.Callbacks.OnStartedLeading = nil }, "OnStartedLeading callback must not be nil"},
		{"no stopped callback", func(c *LeaderElectionConfig) { c.Callbacks.OnStoppedLeading = nil }, "OnStoppedLeading callback must not be nil"},
		{"no lock", func(c *LeaderElectionConfig) { c.Lock = nil }, "lock must not be nil"},
		{"no identity", func(c *LeaderElectionConfig) { c.Lock = &fakeLock{store: &fakeStore{}} }, "lock identity is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := good()
			tc.modify(&cfg)
			le, err := NewLeaderElector(cfg)
			if tc.err == "" {
				if err != nil || le == nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err == nil || err.Error() != tc.err {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
		})
	}
}

func TestRunOrDiePanicsOnInvalidConfig(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	RunOrDie(context.Background(), LeaderElectionConfig{})
}

func TestNotifierKeepsOrder(t *testing.T) {
	var mu sync.Mutex
	var got []string
	release := make(chan struct{})
	n := &notifier{fn: func(s string) {
		<-release // a slow callback never blocks notify
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
	}}
	want := []string{"a", "b", "", "c"}
	for _, s := range want {
		n.notify(s)
	}
	close(release)
	waitFor(t, "all notifications", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == len(want)
	})
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v", got)
	}
}
