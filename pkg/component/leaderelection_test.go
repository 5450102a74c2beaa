package component_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/component"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

func mustClient(t *testing.T, env *testenv.Environment) *client.Client {
	t.Helper()
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// candidate is one RunLeaderElected on the Lease kube-system/<lock>,
// whose run closes running and waits for its context.
type candidate struct {
	cancel  context.CancelFunc
	done    chan error
	running chan struct{}
	stopped chan struct{}
	gauge   prometheus.Gauge
}

func campaign(t *testing.T, env *testenv.Environment, lock, id string, lease, renew, retry time.Duration) *candidate {
	t.Helper()
	c := mustClient(t, env)
	broadcaster := record.NewBroadcaster()
	t.Cleanup(broadcaster.Shutdown)
	broadcaster.StartRecordingToSink(record.NewClientSink(c))
	gauge, err := component.LeaderGauge(component.NewRegistry(), lock)
	if err != nil {
		t.Fatal(err)
	}
	in := &candidate{done: make(chan error, 1), running: make(chan struct{}), stopped: make(chan struct{}), gauge: gauge}
	ctx, cancel := context.WithCancel(context.Background())
	in.cancel = cancel
	le := component.LeaderElection{
		Config: component.LeaderElectionConfig{LeaderElect: true, LeaseDuration: lease, RenewDeadline: renew, RetryPeriod: retry,
			ResourceNamespace: "kube-system", ResourceName: lock, Identity: id},
		Name: lock, Client: c, Recorder: broadcaster.NewRecorder(corev1.EventSource{Component: lock}),
		WatchDog: component.NewWatchdog(), IsLeader: gauge,
	}
	go func() {
		in.done <- component.RunLeaderElected(ctx, le, func(ctx context.Context) error {
			close(in.running)
			<-ctx.Done()
			close(in.stopped)
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-in.done
	})
	return in
}

func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(timeout):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func holder(t *testing.T, env *testenv.Environment, lock string) string {
	l, err := client.For[*coordinationv1.Lease, *coordinationv1.LeaseList](mustClient(t, env)).Namespace("kube-system").
		Get(context.Background(), lock, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// TestLeaderHandover: two candidates campaign for the Lease; only the
// leader runs; when it dies (stops renewing without releasing), the other
// takes over within the lease duration. Each became-leader is an event on
// the Lease, and the leader's gauge is 1.
func TestLeaderHandover(t *testing.T) {
	env := testenv.StartT(t)
	const lease, retry = 3 * time.Second, 250 * time.Millisecond
	a := campaign(t, env, "kube-scheduler", "a", lease, 2*time.Second, retry)
	wait(t, a.running, "the first candidate to lead")
	if h := holder(t, env, "kube-scheduler"); h != "a" {
		t.Fatalf("lease holder %q, want a", h)
	}
	if v := value(t, a.gauge); v != 1 {
		t.Errorf("leader's gauge = %v, want 1", v)
	}
	b := campaign(t, env, "kube-scheduler", "b", lease, 2*time.Second, retry)
	// b must not lead while a renews: give it several retry periods.
	select {
	case <-b.running:
		t.Fatal("the standby ran while the leader renews")
	case <-time.After(4 * retry):
	}
	if v := value(t, b.gauge); v != 0 {
		t.Errorf("standby's gauge = %v, want 0", v)
	}
	a.cancel() // a dies: it stops renewing and does not release
	if err := <-a.done; err != nil {
		t.Fatalf("a: RunLeaderElected = %v, want nil after its context ended", err)
	}
	a.done <- nil // for the cleanup
	wait(t, a.stopped, "the first candidate's run to stop")
	if v := value(t, a.gauge); v != 0 {
		t.Errorf("gauge after stopping = %v, want 0", v)
	}
	died := time.Now()
	wait(t, b.running, "the standby to take over")
	if took := time.Since(died); took > lease+time.Second {
		t.Errorf("took over after %v, want within %v", took, lease+time.Second)
	}
	if h := holder(t, env, "kube-scheduler"); h != "b" {
		t.Fatalf("lease holder %q, want b", h)
	}
	events := client.For[*corev1.Event, *corev1.EventList](mustClient(t, env)).Namespace("kube-system")
	for _, id := range []string{"a", "b"} {
		eventually(t, id+"'s LeaderElection event", func() bool {
			l, err := events.List(context.Background(), metav1.ListOptions{})
			if err != nil {
				return false
			}
			for _, e := range l.Items {
				if e.Reason == "LeaderElection" && e.Message == id+" became leader" && e.InvolvedObject.Kind == "Lease" &&
					e.InvolvedObject.Name == "kube-scheduler" && e.Source.Component == "kube-scheduler" {
					return true
				}
			}
			return false
		})
	}
}

// TestLeadershipLost: when another candidate takes the Lease from under
// the leader, run's context ends within the renew deadline and
// RunLeaderElected returns ErrLeaderElectionLost after run returned.
func TestLeadershipLost(t *testing.T) {
	env := testenv.StartT(t)
	me := campaign(t, env, "lost-lock", "me", 3*time.Second, time.Second, 200*time.Millisecond)
	wait(t, me.running, "leading")
	leases := client.For[*coordinationv1.Lease, *coordinationv1.LeaseList](mustClient(t, env)).Namespace("kube-system")
	eventually(t, "the lease stolen", func() bool {
		l, err := leases.Get(context.Background(), "lost-lock", metav1.GetOptions{})
		if err != nil {
			return false
		}
		thief, long := "thief", int32(3600)
		l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds = &thief, &long
		_, err = leases.Update(context.Background(), l, metav1.UpdateOptions{})
		return err == nil
	})
	stolen := time.Now()
	select {
	case err := <-me.done:
		me.done <- err // for the cleanup
		if !errors.Is(err, component.ErrLeaderElectionLost) {
			t.Fatalf("RunLeaderElected = %v, want ErrLeaderElectionLost", err)
		}
	case <-time.After(timeout):
		t.Fatal("RunLeaderElected did not end after the lease was stolen")
	}
	select {
	case <-me.stopped:
	default:
		t.Fatal("RunLeaderElected returned before run returned")
	}
	if took := time.Since(stolen); took > 3*time.Second {
		t.Errorf("stopped leading %v after the lease was taken, want within about the renew deadline", took)
	}
	if v := value(t, me.gauge); v != 0 {
		t.Errorf("gauge after losing = %v, want 0", v)
	}
}

// TestRunLeaderElectedRunError: run failing ends the campaign with its
// error; without leader election run runs at once, unguarded.
func TestRunLeaderElectedRunError(t *testing.T) {
	env := testenv.StartT(t)
	boom := errors.New("boom")
	le := component.LeaderElection{
		Config: component.DefaultLeaderElectionConfig("err-lock"), Name: "err-lock", Client: mustClient(t, env),
	}
	le.Config.Identity = "me"
	var calls atomic.Int32
	err := component.RunLeaderElected(context.Background(), le, func(ctx context.Context) error {
		calls.Add(1)
		return boom
	})
	if !errors.Is(err, boom) || calls.Load() != 1 {
		t.Fatalf("RunLeaderElected = %v after %d runs, want boom after 1", err, calls.Load())
	}
	if h := holder(t, env, "err-lock"); h != "me" {
		t.Errorf("lease holder %q, want me (run ran while leading)", h)
	}

	le.Config.LeaderElect, le.Client = false, nil
	err = component.RunLeaderElected(context.Background(), le, func(ctx context.Context) error {
		calls.Add(1)
		return boom
	})
	if !errors.Is(err, boom) || calls.Load() != 2 {
		t.Fatalf("without leader election: %v", err)
	}
	if h := holder(t, env, "err-lock"); h != "me" {
		t.Errorf("lease holder %q changed without leader election", h)
	}
}

// TestReleaseOnCancel: with ReleaseOnCancel the leader gives the Lease
// up when its context ends, but only once its work has returned; a
// standby then takes over at once, not after the lease expires.
func TestReleaseOnCancel(t *testing.T) {
	env := testenv.StartT(t)
	const lease, retry = 30 * time.Second, 200 * time.Millisecond
	unblock, running := make(chan struct{}), make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- component.RunLeaderElected(ctx, component.LeaderElection{
			Config: component.LeaderElectionConfig{LeaderElect: true, LeaseDuration: lease, RenewDeadline: 10 * time.Second, RetryPeriod: retry,
				ResourceNamespace: "kube-system", ResourceName: "release-lock", Identity: "a"},
			Name: "release-lock", Client: mustClient(t, env), ReleaseOnCancel: true,
		}, func(ctx context.Context) error {
			close(running)
			<-ctx.Done()
			<-unblock // the work takes a while to stop
			return nil
		})
	}()
	wait(t, running, "a to lead")
	b := campaign(t, env, "release-lock", "b", lease, 10*time.Second, retry)
	cancel()
	// a's work has not returned: the lease stays a's, b stands by.
	select {
	case <-b.running:
		t.Fatal("b led while a's work was still running")
	case err := <-done:
		t.Fatalf("RunLeaderElected returned (%v) before its work did", err)
	case <-time.After(5 * retry):
	}
	if h := holder(t, env, "release-lock"); h != "a" {
		t.Fatalf("lease holder %q while a's work runs, want a", h)
	}
	close(unblock)
	if err := <-done; err != nil {
		t.Fatalf("RunLeaderElected = %v, want nil after its context ended", err)
	}
	released := time.Now()
	wait(t, b.running, "b to take over the released lease")
	if took := time.Since(released); took > lease/3 {
		t.Errorf("b took over %v after the release, want about a retry period (lease %v)", took, lease)
	}
}

func value(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}

// TestLeaderGaugeShared: two components on one registry share the gauge
// vector, one label each.
func TestLeaderGaugeShared(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := component.LeaderGauge(reg, "kube-scheduler"); err != nil {
		t.Fatal(err)
	}
	a, err := component.LeaderGauge(reg, "kube-controller-manager")
	if err != nil {
		t.Fatal(err)
	}
	a.Set(1)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, mf := range mfs {
		if want := "[ALPHA] Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name."; mf.GetHelp() != want {
			t.Errorf("help %q, want upstream's %q", mf.GetHelp(), want)
		}
		for _, m := range mf.GetMetric() {
			got = append(got, fmt.Sprintf("%s{%s=%q} %v", mf.GetName(), m.GetLabel()[0].GetName(), m.GetLabel()[0].GetValue(), m.GetGauge().GetValue()))
		}
	}
	want := `leader_election_master_status{name="kube-controller-manager"} 1,leader_election_master_status{name="kube-scheduler"} 0`
	if strings.Join(got, ",") != want {
		t.Errorf("gathered %v, want %s", got, want)
	}
}
