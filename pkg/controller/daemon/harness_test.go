package daemon

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type harness struct {
	t      *testing.T
	ctx    context.Context
	c      *client.Client
	ctrl   *Controller
	f      *informers.SharedInformerFactory
	clock  *clock.Fake
	events *record.FakeRecorder
	dss    *client.Typed[*appsv1.DaemonSet, *appsv1.DaemonSetList]
	pods   *client.Typed[*corev1.Pod, *corev1.PodList]
	nodes  *client.Typed[*corev1.Node, *corev1.NodeList]
	revs   *client.Typed[*appsv1.ControllerRevision, *appsv1.ControllerRevisionList]
}

// newHarness starts an API server and the controller; start=false leaves
// the informers to the test.
func newHarness(t *testing.T, start bool) *harness {
	t.Helper()
	env := testenv.StartT(t)
	if err := env.EnsureServiceAccount(context.Background(), "default", "default"); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f := informers.NewSharedInformerFactory(c, 0)
	fc := clock.NewFake(t0)
	events := record.NewFakeRecorder(1000)
	ctrl, err := New(Config{Client: c, Informers: f, Clock: fc, Recorder: events})
	if err != nil {
		t.Fatal(err)
	}
	if start {
		f.Start(ctx)
		f.WaitForCacheSync(ctx)
	}
	return &harness{t: t, ctx: ctx, c: c, ctrl: ctrl, f: f, clock: fc, events: events,
		dss:   client.For[*appsv1.DaemonSet, *appsv1.DaemonSetList](c).Namespace("default"),
		pods:  client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default"),
		nodes: client.For[*corev1.Node, *corev1.NodeList](c),
		revs:  client.For[*appsv1.ControllerRevision, *appsv1.ControllerRevisionList](c).Namespace("default")}
}

func (h *harness) node(name string, lbls map[string]string, taints ...corev1.Taint) {
	h.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}}
	n, err := h.nodes.Create(h.ctx, n, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	// A new node is tainted not-ready:NoSchedule (TaintNodesByCondition,
	// as upstream); a Ready node's taints are what the test says.
	n.Spec.Taints = taints
	if _, err := h.nodes.Update(h.ctx, n, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

func dsObj(name string) *appsv1.DaemonSet {
	l := map[string]string{"app": name}
	return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "agent:1"}}}}}}
}

func versions[T metav1.Object](items []T) string {
	m := map[string]string{}
	for _, o := range items {
		m[o.GetName()] = o.GetResourceVersion()
	}
	return fmt.Sprint(m)
}

func ptrs[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// settle waits until the informers hold what the server holds.
func (h *harness) settle() {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ld, err1 := h.dss.List(h.ctx, metav1.ListOptions{})
		lp, err2 := h.pods.List(h.ctx, metav1.ListOptions{})
		ln, err3 := h.nodes.List(h.ctx, metav1.ListOptions{})
		lr, err4 := h.revs.List(h.ctx, metav1.ListOptions{})
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
			h.t.Fatal(err1, err2, err3, err4)
		}
		cd, _ := h.f.DaemonSets().Lister().List(labels.Everything())
		cp, _ := h.f.Pods().Lister().List(labels.Everything())
		cn, _ := h.f.Nodes().Lister().List(labels.Everything())
		cr, _ := h.f.ControllerRevisions().Lister().List(labels.Everything())
		if versions(ptrs(ld.Items)) == versions(cd) && versions(ptrs(lp.Items)) == versions(cp) &&
			versions(ptrs(ln.Items)) == versions(cn) && versions(ptrs(lr.Items)) == versions(cr) {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatal("informers did not catch up")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (h *harness) sync(name string) {
	h.t.Helper()
	h.settle()
	// The informer updates its cache before its handlers observe the
	// events (expectations): wait for those too.
	waitFor(h.t, "expectations observed", func() bool { return h.ctrl.Expectations.Satisfied("default/" + name) })
	if err := h.ctrl.Sync(h.ctx, "default/"+name); err != nil {
		h.t.Fatalf("sync: %v", err)
	}
}

func (h *harness) create(ds *appsv1.DaemonSet) *appsv1.DaemonSet {
	h.t.Helper()
	out, err := h.dss.Create(h.ctx, ds, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

func (h *harness) get(name string) *appsv1.DaemonSet {
	h.t.Helper()
	ds, err := h.dss.Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return ds
}

func (h *harness) update(name string, mutate func(*appsv1.DaemonSet)) {
	h.t.Helper()
	ds := h.get(name)
	mutate(ds)
	if _, err := h.dss.Update(h.ctx, ds, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

// livePods are the pods not being deleted, by target node (sorted by
// creation within a node).
func (h *harness) livePods() map[string][]corev1.Pod {
	h.t.Helper()
	l, err := h.pods.List(h.ctx, metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string][]corev1.Pod{}
	for _, p := range l.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		n, err := targetNodeName(&p)
		if err != nil {
			h.t.Fatalf("pod %s: %v", p.Name, err)
		}
		out[n] = append(out[n], p)
	}
	return out
}

// nodesWithPods is "node:count" for every node with pods, sorted.
func (h *harness) nodesWithPods() []string {
	var out []string
	for n, ps := range h.livePods() {
		out = append(out, fmt.Sprintf("%s:%d", n, len(ps)))
	}
	sort.Strings(out)
	return out
}

func (h *harness) expectNodes(want ...string) {
	h.t.Helper()
	if got := h.nodesWithPods(); fmt.Sprint(got) != fmt.Sprint(want) {
		h.t.Fatalf("pods per node %v, want %v", got, want)
	}
}

func (h *harness) setPhase(name string, phase corev1.PodPhase, ready bool) {
	h.t.Helper()
	p, err := h.pods.Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	p.Status.Phase = phase
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.NewTime(h.clock.Now())}}
	if _, err := h.pods.UpdateStatus(h.ctx, p, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

// readyAll marks every live pod Running and Ready.
func (h *harness) readyAll() {
	h.t.Helper()
	for _, ps := range h.livePods() {
		for _, p := range ps {
			if p.Status.Phase != corev1.PodRunning {
				h.setPhase(p.Name, corev1.PodRunning, true)
			}
		}
	}
}

func (h *harness) drain() []string {
	var out []string
	for {
		select {
		case e := <-h.events.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func everything() labels.Selector { return labels.Everything() }

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
