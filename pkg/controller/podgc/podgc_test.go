package podgc

import (
	"context"
	"slices"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

var t0 = time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)

type fixture struct {
	t     *testing.T
	ctx   context.Context
	clk   *clock.Fake
	c     *client.Client
	f     *informers.SharedInformerFactory
	ctrl  *Controller
	pods  *client.Typed[*corev1.Pod, *corev1.PodList]
	nodes *client.Typed[*corev1.Node, *corev1.NodeList]
	reg   *prometheus.Registry
}

// newFixture: an API server on a fake clock and a collector whose caches
// are filled by hand.
func newFixture(t *testing.T, threshold int) *fixture {
	clk := clock.NewFake(t0)
	env := testenv.StartT(t, testenv.Config{Clock: clk})
	if err := env.EnsureServiceAccount(context.Background(), "default", "default"); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	f := informers.NewSharedInformerFactory(c, 0)
	reg := prometheus.NewRegistry()
	ctrl, err := New(Config{Client: c, Informers: f, Clock: clk, TerminatedPodThreshold: threshold, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctrl.nodeQueue.ShutDown)
	return &fixture{t: t, ctx: context.Background(), clk: clk, c: c, f: f, ctrl: ctrl, reg: reg,
		pods: client.For[*corev1.Pod, *corev1.PodList](c), nodes: client.For[*corev1.Node, *corev1.NodeList](c)}
}

type podSpec struct {
	name, node string
	phase      corev1.PodPhase
	reason     string
	finalizer  bool // keeps the pod visible after its deletion
	deleting   bool // the cache sees it terminating
}

// pod creates a pod (at the clock's time) and caches it.
func (f *fixture) pod(s podSpec) {
	f.t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: s.name},
		Spec: corev1.PodSpec{NodeName: s.node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	if s.finalizer {
		p.Finalizers = []string{"test/keep"}
	}
	p, err := f.pods.Namespace("default").Create(f.ctx, p, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	if s.phase != "" {
		p.Status.Phase, p.Status.Reason = s.phase, s.reason
		if p, err = f.pods.Namespace("default").UpdateStatus(f.ctx, p, metav1.UpdateOptions{}); err != nil {
			f.t.Fatal(err)
		}
	}
	if s.deleting {
		p.DeletionTimestamp = &metav1.Time{Time: f.clk.Now()}
	}
	if err := f.f.Pods().Informer().GetIndexer().Update(p); err != nil {
		f.t.Fatal(err)
	}
}

// node creates a node; cached unless hidden (the cache has not seen it).
func (f *fixture) node(name string, ready bool, outOfService bool, hidden bool) {
	f.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if outOfService {
		n.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}}
	}
	n, err := f.nodes.Create(f.ctx, n, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}
	if n, err = f.nodes.UpdateStatus(f.ctx, n, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	if !hidden {
		if err := f.f.Nodes().Informer().GetIndexer().Update(n); err != nil {
			f.t.Fatal(err)
		}
	}
}

// remaining lists the pods on the server: name, or name+"(deleting)".
func (f *fixture) remaining() []string {
	f.t.Helper()
	l, err := f.pods.Namespace("default").List(f.ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, p := range l.Items {
		n := p.Name
		if p.DeletionTimestamp != nil {
			n += "(deleting)"
		}
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (f *fixture) get(name string) *corev1.Pod {
	f.t.Helper()
	p, err := f.pods.Namespace("default").Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

// TestTerminated: terminated pods beyond the threshold go, evicted ones
// first, then the oldest; running and pending pods never count.
func TestTerminated(t *testing.T) {
	for _, tt := range []struct {
		threshold int
		want      []string
	}{
		{threshold: 2, want: []string{"b", "c", "e", "f"}},
		{threshold: 4, want: []string{"a", "b", "c", "d", "e", "f"}},
		{threshold: 1, want: []string{"c", "e", "f"}},
		{threshold: 0, want: []string{"a", "b", "c", "d", "e", "f"}}, // off
	} {
		f := newFixture(t, tt.threshold)
		for _, s := range []podSpec{
			{name: "a", phase: corev1.PodSucceeded},
			{name: "e", phase: corev1.PodRunning},
			{name: "b", phase: corev1.PodFailed},
			{name: "c", phase: corev1.PodSucceeded},
			{name: "f"},
			{name: "d", phase: corev1.PodFailed, reason: "Evicted"},
		} {
			f.pod(s)
			f.clk.Step(time.Second)
		}
		f.ctrl.GC(f.ctx)
		if got := f.remaining(); !slices.Equal(got, tt.want) {
			t.Errorf("threshold %d: pods left %v, want %v", tt.threshold, got, tt.want)
		}
		if got, want := f.deleted("terminated"), float64(6-len(tt.want)); got != want {
			t.Errorf("threshold %d: force_delete_pods_total{terminated} = %v, want %v", tt.threshold, got, want)
		}
	}
}

// deleted is pod_gc_collector_force_delete_pods_total{namespace=default,reason}.
func (f *fixture) deleted(reason string) float64 {
	f.t.Helper()
	var m dto.Metric
	if err := f.ctrl.deleting.WithLabelValues("default", reason).Write(&m); err != nil {
		f.t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// recache puts the server's pods into the cache (as the informer would).
func (f *fixture) recache() {
	f.t.Helper()
	l, err := f.pods.Namespace("default").List(f.ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	idx := f.f.Pods().Informer().GetIndexer()
	for _, o := range idx.List() {
		_ = idx.Delete(o)
	}
	for i := range l.Items {
		if err := idx.Add(&l.Items[i]); err != nil {
			f.t.Fatal(err)
		}
	}
}

// TestTerminatedConverges: terminated pods whose force deletion was
// accepted but that wait for their finalizers still count against the
// threshold, and are not deleted again on every pass.
func TestTerminatedConverges(t *testing.T) {
	f := newFixture(t, 1)
	for _, n := range []string{"a", "b", "c"} {
		f.pod(podSpec{name: n, phase: corev1.PodSucceeded, finalizer: true})
		f.clk.Step(time.Second)
	}
	f.ctrl.GC(f.ctx)
	if got, want := f.remaining(), []string{"a(deleting)", "b(deleting)", "c"}; !slices.Equal(got, want) {
		t.Fatalf("after the first pass %v, want %v", got, want)
	}
	f.recache()
	f.ctrl.GC(f.ctx)
	if got, want := f.remaining(), []string{"a(deleting)", "b(deleting)", "c(deleting)"}; !slices.Equal(got, want) {
		t.Fatalf("after the second pass %v, want %v", got, want)
	}
	f.recache()
	f.ctrl.GC(f.ctx)
	if got := f.deleted("terminated"); got != 3 {
		t.Errorf("%v force deletions, want 3 (one per pod)", got)
	}
}

// TestOrphaned: a pod on a node that does not exist is failed with the
// DisruptionTarget condition and force-deleted once the node has been
// missing for the 40s quarantine and the server confirms it is gone.
func TestOrphaned(t *testing.T) {
	f := newFixture(t, DefaultTerminatedPodThreshold)
	f.node("n1", true, false, false)
	f.node("late", true, false, true) // on the server, not yet in the cache
	f.pod(podSpec{name: "on-n1", node: "n1", phase: corev1.PodRunning})
	f.pod(podSpec{name: "orphan", node: "gone", phase: corev1.PodRunning, finalizer: true})
	f.pod(podSpec{name: "orphan2", node: "gone", phase: corev1.PodSucceeded})
	f.pod(podSpec{name: "on-late", node: "late", phase: corev1.PodRunning})
	all := []string{"on-late", "on-n1", "orphan", "orphan2"}

	f.ctrl.GC(f.ctx)
	if got := f.remaining(); !slices.Equal(got, all) {
		t.Fatalf("pods %v right away", got)
	}
	f.clk.Step(QuarantineTime - time.Second)
	if n := f.ctrl.nodeQueue.Len(); n != 0 {
		t.Fatalf("%d nodes out of quarantine early", n)
	}
	f.ctrl.GC(f.ctx)
	if got := f.remaining(); !slices.Equal(got, all) {
		t.Fatalf("pods %v before the quarantine ended", got)
	}
	f.clk.Step(time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for f.ctrl.nodeQueue.Len() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("nodes never left quarantine")
		}
		time.Sleep(time.Millisecond)
	}
	f.ctrl.GC(f.ctx)
	if got, want := f.remaining(), []string{"on-late", "on-n1", "orphan(deleting)"}; !slices.Equal(got, want) {
		t.Fatalf("pods %v, want %v", got, want)
	}
	p := f.get("orphan")
	if p.Status.Phase != corev1.PodFailed {
		t.Errorf("phase %s", p.Status.Phase)
	}
	var cond *corev1.PodCondition
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.DisruptionTarget {
			cond = &p.Status.Conditions[i]
		}
	}
	if cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason != "DeletionByPodGC" || cond.Message != "PodGC: node no longer exists" || !cond.LastTransitionTime.Time.Equal(t0.Add(QuarantineTime)) {
		t.Errorf("condition %+v", cond)
	}
	if p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != 0 {
		t.Errorf("grace period %v, want a force delete", p.DeletionGracePeriodSeconds)
	}
	if got := f.deleted("orphaned"); got != 2 {
		t.Errorf("force_delete_pods_total{orphaned} = %v", got)
	}
	managed := false
	for _, m := range p.ManagedFields {
		managed = managed || (m.Manager == FieldManager && m.Subresource == "status")
	}
	if !managed {
		t.Errorf("no status fields managed by %s: %+v", FieldManager, p.ManagedFields)
	}
}

// TestTerminating: terminating pods are force-deleted when never scheduled,
// or on a not-ready node with the out-of-service taint; not otherwise.
func TestTerminating(t *testing.T) {
	f := newFixture(t, DefaultTerminatedPodThreshold)
	f.node("oos", false, true, false)
	f.node("notready", false, false, false)
	f.node("ready-tainted", true, true, false)
	f.pod(podSpec{name: "on-oos", node: "oos", phase: corev1.PodRunning, deleting: true, finalizer: true})
	f.pod(podSpec{name: "on-oos-alive", node: "oos", phase: corev1.PodRunning})
	f.pod(podSpec{name: "on-notready", node: "notready", phase: corev1.PodRunning, deleting: true})
	f.pod(podSpec{name: "on-ready-tainted", node: "ready-tainted", phase: corev1.PodRunning, deleting: true})
	f.pod(podSpec{name: "unscheduled", deleting: true})
	f.pod(podSpec{name: "unscheduled-alive"})
	f.ctrl.GC(f.ctx)
	want := []string{"on-notready", "on-oos(deleting)", "on-oos-alive", "on-ready-tainted", "unscheduled-alive"}
	if got := f.remaining(); !slices.Equal(got, want) {
		t.Fatalf("pods %v, want %v", got, want)
	}
	p := f.get("on-oos")
	if p.Status.Phase != corev1.PodFailed || len(p.Status.Conditions) != 0 {
		t.Errorf("status %+v: want Failed without a condition", p.Status)
	}
	if a, b := f.deleted("out-of-service"), f.deleted("unscheduled"); a != 1 || b != 1 {
		t.Errorf("force deletions: out-of-service %v, unscheduled %v; want 1 and 1", a, b)
	}
}

// TestController: the running collector, every 20s of the fake clock,
// deletes an orphaned pod once its node has been gone for the quarantine.
func TestController(t *testing.T) {
	f := newFixture(t, DefaultTerminatedPodThreshold)
	f.pod(podSpec{name: "orphan", node: "gone", phase: corev1.PodRunning})
	ctx, cancel := context.WithCancel(context.Background())
	inf := informers.NewSharedInformerFactory(f.c, 0)
	ctrl, err := New(Config{Client: f.c, Informers: inf, Clock: f.clk, TerminatedPodThreshold: 1})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		inf.Shutdown()
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := f.pods.Namespace("default").Get(f.ctx, "orphan", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("orphan not collected by %v", f.clk.Now())
		}
		if f.clk.Now().Before(t0.Add(QuarantineTime)) {
			if _, err := f.pods.Namespace("default").Get(f.ctx, "orphan", metav1.GetOptions{}); err != nil {
				t.Fatalf("collected before the quarantine ended: %v", err)
			}
		}
		// Wake the next pass once the loop waits for it.
		if f.clk.Waiters() >= 2 {
			f.clk.Step(GCCheckPeriod)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if f.clk.Now().Before(t0.Add(QuarantineTime)) {
		t.Errorf("collected at %v, before the quarantine ended", f.clk.Now())
	}
}
