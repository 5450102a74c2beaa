package leaderelection

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// candidate is one elector against the test API server.
type candidate struct {
	id      string
	le      *LeaderElector
	cancel  context.CancelFunc
	done    chan struct{}
	started chan time.Time
}

func TestIntegrationTwoCandidatesOneLease(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server")
	}
	env := testenv.StartT(t)
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	const (
		lease = 2 * time.Second
		renew = 1500 * time.Millisecond
		retry = 200 * time.Millisecond
	)
	var leading atomic.Int32 // candidates whose leading context is live
	var maxLeading atomic.Int32
	var wg sync.WaitGroup
	start := func(id string) *candidate {
		cand := &candidate{id: id, done: make(chan struct{}), started: make(chan time.Time, 1)}
		le, err := NewLeaderElector(LeaderElectionConfig{
			Lock:          NewLeaseLock(c, "default", "skiff-test-lock", id),
			LeaseDuration: lease, RenewDeadline: renew, RetryPeriod: retry,
			ReleaseOnCancel: true, Name: "skiff-test-lock", Logger: quietLogger(),
			Callbacks: LeaderCallbacks{
				OnStartedLeading: func(ctx context.Context) {
					n := leading.Add(1)
					for {
						m := maxLeading.Load()
						if n <= m || maxLeading.CompareAndSwap(m, n) {
							break
						}
					}
					cand.started <- time.Now()
					<-ctx.Done()
					leading.Add(-1)
				},
				OnStoppedLeading: func() {},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		cand.le = le
		ctx, cancel := context.WithCancel(context.Background())
		cand.cancel = cancel
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(cand.done)
			le.Run(ctx)
		}()
		t.Cleanup(func() { cancel(); <-cand.done })
		return cand
	}
	a, b := start("candidate-a"), start("candidate-b")

	var leader, follower *candidate
	select {
	case <-a.started:
		leader, follower = a, b
	case <-b.started:
		leader, follower = b, a
	case <-time.After(10 * time.Second):
		t.Fatal("nobody became leader")
	}
	// The follower sees the leader and stays a follower while it renews.
	deadline := time.Now().Add(10 * time.Second)
	for follower.le.GetLeader() != leader.id {
		if time.Now().After(deadline) {
			t.Fatalf("follower sees leader %q, want %q", follower.le.GetLeader(), leader.id)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if follower.le.IsLeader() || !leader.le.IsLeader() {
		t.Fatal("both or neither lead")
	}
	leases := client.For[*coordinationv1.Lease, *coordinationv1.LeaseList](c).Namespace("default")
	l, err := leases.Get(context.Background(), "skiff-test-lock", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *l.Spec.HolderIdentity != leader.id || *l.Spec.LeaseDurationSeconds != 2 {
		t.Fatalf("lease spec = %+v", l.Spec)
	}
	transitions := *l.Spec.LeaseTransitions

	// Cancel the leader: it releases, and the follower takes over well
	// before the 2s lease would have expired.
	cancelled := time.Now()
	leader.cancel()
	<-leader.done
	var took time.Time
	select {
	case took = <-follower.started:
	case <-time.After(10 * time.Second):
		t.Fatal("follower did not take over")
	}
	if d := took.Sub(cancelled); d >= lease {
		t.Fatalf("takeover took %v, want < %v (release did not work)", d, lease)
	}
	l, err = leases.Get(context.Background(), "skiff-test-lock", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *l.Spec.HolderIdentity != follower.id || *l.Spec.LeaseTransitions != transitions+1 {
		t.Fatalf("lease spec after takeover = holder %q transitions %d (before %d)", *l.Spec.HolderIdentity, *l.Spec.LeaseTransitions, transitions)
	}
	if m := maxLeading.Load(); m != 1 {
		t.Fatalf("%d candidates led at once", m)
	}
	follower.cancel()
	wg.Wait()
	l, err = leases.Get(context.Background(), "skiff-test-lock", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" {
		t.Fatalf("last leader did not release: holder %q", *l.Spec.HolderIdentity)
	}
}
