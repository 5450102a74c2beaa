package statefulset

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// harness drives the controller's Sync by hand against a real API server
// (no kubelet: the test marks pods Running and Ready through pods/status).
type harness struct {
	t      *testing.T
	ctx    context.Context
	ctrl   *Controller
	f      *informers.SharedInformerFactory
	clock  *clock.Fake
	events *record.FakeRecorder
	sets   *client.Typed[*appsv1.StatefulSet, *appsv1.StatefulSetList]
	pods   *client.Typed[*corev1.Pod, *corev1.PodList]
	pvcs   *client.Typed[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]
	revs   *client.Typed[*appsv1.ControllerRevision, *appsv1.ControllerRevisionList]
}

func newHarness(t *testing.T) *harness {
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
	f.Start(ctx)
	f.WaitForCacheSync(ctx)
	return &harness{t: t, ctx: ctx, ctrl: ctrl, f: f, clock: fc, events: events,
		sets: client.For[*appsv1.StatefulSet, *appsv1.StatefulSetList](c).Namespace("default"),
		pods: client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default"),
		pvcs: client.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](c).Namespace("default"),
		revs: client.For[*appsv1.ControllerRevision, *appsv1.ControllerRevisionList](c).Namespace("default")}
}

func setObj(name string, replicas int32) *appsv1.StatefulSet {
	l := map[string]string{"app": name}
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(replicas), ServiceName: name, Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1"}}}}}}
}

func versions[T metav1.Object](items []T) map[string]string {
	m := map[string]string{}
	for _, o := range items {
		m[o.GetName()] = o.GetResourceVersion()
	}
	return m
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
		ok := true
		check := func(live, cached map[string]string) {
			if fmt.Sprint(live) != fmt.Sprint(cached) {
				ok = false
			}
		}
		ls, err := h.sets.List(h.ctx, metav1.ListOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		cs, _ := h.f.StatefulSets().Lister().Namespace("default").List(labels.Everything())
		check(versions(ptrs(ls.Items)), versions(cs))
		lp, err := h.pods.List(h.ctx, metav1.ListOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		cp, _ := h.f.Pods().Lister().Namespace("default").List(labels.Everything())
		check(versions(ptrs(lp.Items)), versions(cp))
		lc, err := h.pvcs.List(h.ctx, metav1.ListOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		cc, _ := h.f.PersistentVolumeClaims().Lister().Namespace("default").List(labels.Everything())
		check(versions(ptrs(lc.Items)), versions(cc))
		lr, err := h.revs.List(h.ctx, metav1.ListOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		cr, _ := h.f.ControllerRevisions().Lister().Namespace("default").List(labels.Everything())
		check(versions(ptrs(lr.Items)), versions(cr))
		if ok {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatal("informers did not catch up")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sync settles the caches and runs one sync of default/<name>.
func (h *harness) sync(name string) {
	h.t.Helper()
	h.settle()
	if err := h.ctrl.Sync(h.ctx, "default/"+name); err != nil {
		h.t.Fatalf("sync: %v", err)
	}
}

func (h *harness) create(s *appsv1.StatefulSet) *appsv1.StatefulSet {
	h.t.Helper()
	out, err := h.sets.Create(h.ctx, s, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

func (h *harness) get(name string) *appsv1.StatefulSet {
	h.t.Helper()
	s, err := h.sets.Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

func (h *harness) update(name string, mutate func(*appsv1.StatefulSet)) {
	h.t.Helper()
	s := h.get(name)
	mutate(s)
	if _, err := h.sets.Update(h.ctx, s, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

// podNames are the live (not deleting) pods, sorted.
func (h *harness) podNames() []string {
	h.t.Helper()
	l, err := h.pods.List(h.ctx, metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p.Name)
		}
	}
	sort.Strings(out)
	return out
}

func (h *harness) pod(name string) *corev1.Pod {
	h.t.Helper()
	p, err := h.pods.Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return p
}

// setPhase writes the pod's phase and Ready condition through pods/status
// (what a kubelet would do), the condition's transition at the fake now.
func (h *harness) setPhase(name string, phase corev1.PodPhase, ready bool) {
	h.t.Helper()
	p := h.pod(name)
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

func (h *harness) ready(names ...string) {
	h.t.Helper()
	for _, n := range names {
		h.setPhase(n, corev1.PodRunning, true)
	}
}

func (h *harness) expectPods(want ...string) {
	h.t.Helper()
	if got := h.podNames(); strings.Join(got, ",") != strings.Join(want, ",") {
		h.t.Fatalf("pods %v, want %v", got, want)
	}
}

// drain returns the events recorded so far.
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

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
