package compat

// client-go's leader election against skiff, and client-go and skiff
// candidates competing for the same Lease.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	skiffclient "github.com/skiff-sh/skiff/pkg/client"
	skiffle "github.com/skiff-sh/skiff/pkg/client/leaderelection"
)

// Short but valid timings: LeaseDuration > RenewDeadline >
// JitterFactor(1.2) * RetryPeriod, for both libraries.
const (
	leaseDuration = 2 * time.Second
	renewDeadline = 1 * time.Second
	retryPeriod   = 200 * time.Millisecond
)

// leadership tracks who leads and fails the test if two candidates ever
// lead at once.
type leadership struct {
	t       testing.TB
	mu      sync.Mutex
	leading map[string]bool
	starts  []string // identities in the order they started leading
}

func newLeadership(t testing.TB) *leadership {
	return &leadership{t: t, leading: map[string]bool{}}
}

func (l *leadership) started(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for other, on := range l.leading {
		if on && other != id {
			l.t.Errorf("%s started leading while %s still leads", id, other)
		}
	}
	l.leading[id] = true
	l.starts = append(l.starts, id)
}

func (l *leadership) stopped(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.leading[id] = false
}

// leader is the identity currently leading ("" if none).
func (l *leadership) leader() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, on := range l.leading {
		if on {
			return id
		}
	}
	return ""
}

func (l *leadership) history() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.starts...)
}

// candidate is one running elector.
type candidate struct {
	id     string
	cancel context.CancelFunc
	done   chan struct{}
	l      *leadership
}

// stop ends the candidate's Run (releasing the lease if it leads) and
// waits for it. Its leadership ends when its context is cancelled, before
// the release, so it is marked stopped first.
func (c *candidate) stop(t testing.TB) {
	t.Helper()
	c.l.stopped(c.id)
	c.cancel()
	select {
	case <-c.done:
	case <-time.After(waitTimeout):
		t.Fatalf("candidate %s did not stop", c.id)
	}
}

// onLeading is the OnStartedLeading of every candidate.
func (l *leadership) onLeading(id string) func(context.Context) {
	return func(ctx context.Context) {
		l.started(id)
		<-ctx.Done()
		l.stopped(id)
	}
}

// startClientGo runs a client-go candidate on ns/name.
func startClientGo(t testing.TB, cs kubernetes.Interface, ns, name, id string, l *leadership) *candidate {
	t.Helper()
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: ns, Name: name},
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		ReleaseOnCancel: true, Name: id,
		Callbacks: leaderelection.LeaderCallbacks{OnStartedLeading: l.onLeading(id), OnStoppedLeading: func() {}},
	})
	must(t, err, "client-go NewLeaderElector")
	ctx, cancel := context.WithCancel(context.Background())
	c := &candidate{id: id, cancel: cancel, done: make(chan struct{}), l: l}
	go func() { defer close(c.done); le.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-c.done })
	return c
}

// startSkiff runs a skiff candidate on ns/name.
func startSkiff(t testing.TB, sc *skiffclient.Client, ns, name, id string, l *leadership) *candidate {
	t.Helper()
	le, err := skiffle.NewLeaderElector(skiffle.LeaderElectionConfig{
		Lock: skiffle.NewLeaseLock(sc, ns, name, id), LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		ReleaseOnCancel: true, Name: id,
		Callbacks: skiffle.LeaderCallbacks{OnStartedLeading: l.onLeading(id), OnStoppedLeading: func() {}},
	})
	must(t, err, "skiff NewLeaderElector")
	ctx, cancel := context.WithCancel(context.Background())
	c := &candidate{id: id, cancel: cancel, done: make(chan struct{}), l: l}
	go func() { defer close(c.done); le.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-c.done })
	return c
}

// waitLeader waits until someone leads and returns who.
func waitLeader(t testing.TB, l *leadership, among ...string) string {
	t.Helper()
	var id string
	eventually(t, fmt.Sprintf("a leader among %v", among), func() bool {
		id = l.leader()
		return id != ""
	})
	return id
}

// holdsFor checks that id keeps leading (and nobody else starts) for d.
func holdsFor(t testing.TB, l *leadership, id string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if got := l.leader(); got != id {
			t.Fatalf("leader changed from %s to %q without a release", id, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkLease checks the Lease's holder and transitions count.
func checkLease(t testing.TB, cs kubernetes.Interface, ns, name, holder string, transitions int32) {
	t.Helper()
	lease, err := cs.CoordinationV1().Leases(ns).Get(context.Background(), name, metav1.GetOptions{})
	must(t, err, "get lease")
	s := lease.Spec
	if s.HolderIdentity == nil || *s.HolderIdentity != holder {
		t.Errorf("lease holder %v, want %s", derefStr(s.HolderIdentity), holder)
	}
	if s.LeaseTransitions == nil || *s.LeaseTransitions != transitions {
		t.Errorf("lease transitions %v, want %d", derefInt32(s.LeaseTransitions), transitions)
	}
	if s.LeaseDurationSeconds == nil || *s.LeaseDurationSeconds != int32(leaseDuration/time.Second) {
		t.Errorf("lease duration %v, want %d", derefInt32(s.LeaseDurationSeconds), int32(leaseDuration/time.Second))
	}
	if s.AcquireTime == nil || s.RenewTime == nil {
		t.Errorf("lease acquireTime %v renewTime %v, want both set", s.AcquireTime, s.RenewTime)
	}
}

func derefStr(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func derefInt32(p *int32) string {
	if p == nil {
		return "<nil>"
	}
	return fmt.Sprint(*p)
}

// TestClientGoLeaderElection: two client-go candidates, one leader; the
// leader's cancel releases the Lease and the other takes over at once
// (well before the lease would expire).
func TestClientGoLeaderElection(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	cs := clientset(t, restConfig(t, env))
	ns := createNamespace(t, cs, "le")
	l := newLeadership(t)
	cands := map[string]*candidate{
		"cg-a": startClientGo(t, cs, ns, "lock", "cg-a", l),
		"cg-b": startClientGo(t, cs, ns, "lock", "cg-b", l),
	}
	first := waitLeader(t, l, "cg-a", "cg-b")
	holdsFor(t, l, first, leaseDuration+retryPeriod) // the other does not steal a renewed lease
	checkLease(t, cs, ns, "lock", first, 0)

	second := map[string]string{"cg-a": "cg-b", "cg-b": "cg-a"}[first]
	released := time.Now()
	cands[first].stop(t)
	if got := waitLeader(t, l, second); got != second {
		t.Fatalf("leader after release = %s, want %s", got, second)
	}
	if d := time.Since(released); d > leaseDuration {
		t.Errorf("hand-over took %v; a released lease should be taken within a retry period or so", d)
	}
	checkLease(t, cs, ns, "lock", second, 1)

	// Releasing the last leader leaves an empty holder.
	cands[second].stop(t)
	lease, err := cs.CoordinationV1().Leases(ns).Get(context.Background(), "lock", metav1.GetOptions{})
	must(t, err, "get lease")
	if h := derefStr(lease.Spec.HolderIdentity); h != "" && h != "<nil>" {
		t.Errorf("holder after the last release = %q, want empty", h)
	}
	if h := l.history(); strings.Join(h, ",") != first+","+second {
		t.Errorf("leadership history %v", h)
	}
}

// TestMixedLeaderElection: skiff and client-go candidates on the same
// Lease understand each other's records: exactly one leads at a time, a
// renewed lease is never stolen, and a release hands over both ways.
func TestMixedLeaderElection(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	cs := clientset(t, restConfig(t, env))
	sc := skiffClient(t, env)
	ns := createNamespace(t, cs, "mixed")
	l := newLeadership(t)

	// skiff leads first; client-go must wait.
	sk1 := startSkiff(t, sc, ns, "lock", "skiff-1", l)
	if got := waitLeader(t, l, "skiff-1"); got != "skiff-1" {
		t.Fatalf("leader %s, want skiff-1", got)
	}
	cg := startClientGo(t, cs, ns, "lock", "client-go", l)
	holdsFor(t, l, "skiff-1", leaseDuration+2*retryPeriod)
	checkLease(t, cs, ns, "lock", "skiff-1", 0)

	// skiff releases; client-go takes over; a new skiff candidate waits.
	sk1.stop(t)
	if got := waitLeader(t, l, "client-go"); got != "client-go" {
		t.Fatalf("leader after skiff's release = %s, want client-go", got)
	}
	checkLease(t, cs, ns, "lock", "client-go", 1)
	sk2 := startSkiff(t, sc, ns, "lock", "skiff-2", l)
	holdsFor(t, l, "client-go", leaseDuration+2*retryPeriod)

	// client-go releases; skiff takes over.
	cg.stop(t)
	if got := waitLeader(t, l, "skiff-2"); got != "skiff-2" {
		t.Fatalf("leader after client-go's release = %s, want skiff-2", got)
	}
	checkLease(t, cs, ns, "lock", "skiff-2", 2)
	sk2.stop(t)
	if h := strings.Join(l.history(), ","); h != "skiff-1,client-go,skiff-2" {
		t.Errorf("leadership history %s", h)
	}
}

// TestMixedLeaderElectionExpiry: a leader that stops renewing without
// releasing (its process "dies") is replaced only after the lease
// duration, whichever library holds or takes the lease.
func TestMixedLeaderElectionExpiry(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	cs := clientset(t, restConfig(t, env))
	sc := skiffClient(t, env)
	ns := createNamespace(t, cs, "expiry")
	for _, tc := range []struct{ holder, taker string }{{"client-go", "skiff"}, {"skiff", "client-go"}} {
		name := "lock-" + tc.holder
		l := newLeadership(t)
		// The holder acquires, then is cut off from the API server without
		// a release: we simulate it by writing its record directly.
		var holder *candidate
		if tc.holder == "client-go" {
			holder = startClientGo(t, cs, ns, name, "old", l)
		} else {
			holder = startSkiff(t, sc, ns, name, "old", l)
		}
		waitLeader(t, l, "old")
		lease, err := cs.CoordinationV1().Leases(ns).Get(context.Background(), name, metav1.GetOptions{})
		must(t, err, "get lease")
		// Stop the holder without releasing: swap the lease back to its
		// record after the release.
		holder.stop(t)
		lease.ResourceVersion = ""
		cur, err := cs.CoordinationV1().Leases(ns).Get(context.Background(), name, metav1.GetOptions{})
		must(t, err, "get lease")
		cur.Spec = lease.Spec
		now := metav1.NewMicroTime(time.Now())
		cur.Spec.RenewTime = &now
		_, err = cs.CoordinationV1().Leases(ns).Update(context.Background(), cur, metav1.UpdateOptions{})
		must(t, err, "restore the holder's record")

		start := time.Now()
		if tc.taker == "client-go" {
			startClientGo(t, cs, ns, name, "new", l)
		} else {
			startSkiff(t, sc, ns, name, "new", l)
		}
		waitLeader(t, l, "new")
		// The taker judges expiry on its own clock from when it first saw
		// the record: at least LeaseDuration.
		if d := time.Since(start); d < leaseDuration-retryPeriod {
			t.Errorf("%s took %s's unexpired lease after %v (lease duration %v)", tc.taker, tc.holder, d, leaseDuration)
		}
		checkLease(t, cs, ns, name, "new", 1)
	}
}
