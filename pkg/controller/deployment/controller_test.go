package deployment

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// harness drives the Deployment controller's Sync by hand against a real
// API server; a fake ReplicaSet controller makes each ReplicaSet's pods
// exist (and, unless stuck, be available) as soon as it asks for them.
type harness struct {
	t      *testing.T
	ctx    context.Context
	ctrl   *Controller
	f      *informers.SharedInformerFactory
	ds     *client.Typed[*appsv1.Deployment, *appsv1.DeploymentList]
	rss    *client.Typed[*appsv1.ReplicaSet, *appsv1.ReplicaSetList]
	stuck  map[string]bool // template hashes whose pods never become available
	clock  *clock.Fake
	events *record.FakeRecorder
}

func newHarness(t *testing.T) *harness {
	env := testenv.StartT(t)
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
	return &harness{t: t, ctx: ctx, ctrl: ctrl, f: f, stuck: map[string]bool{}, clock: fc, events: events,
		ds:  client.For[*appsv1.Deployment, *appsv1.DeploymentList](c).Namespace("default"),
		rss: client.For[*appsv1.ReplicaSet, *appsv1.ReplicaSetList](c).Namespace("default")}
}

func deploymentObj(replicas int32, strategy appsv1.DeploymentStrategy) *appsv1.Deployment {
	l := map[string]string{"app": "web"}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: l}, Strategy: strategy,
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1"}}}}}}
}

func rollingStrategy(surge, unavail intstr.IntOrString) appsv1.DeploymentStrategy {
	return appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavail}}
}

// settle waits until the informers hold what the server holds.
func (h *harness) settle() {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		live, err := h.rss.List(h.ctx, metav1.ListOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		d, err := h.ds.Get(h.ctx, "web", metav1.GetOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		ok := true
		if cd, err := h.f.Deployments().Lister().Namespace("default").Get("web"); err != nil || cd.ResourceVersion != d.ResourceVersion {
			ok = false
		}
		cached, _ := h.f.ReplicaSets().Lister().Namespace("default").List(labels.Everything())
		if len(cached) != len(live.Items) {
			ok = false
		}
		byName := map[string]string{}
		for _, r := range cached {
			byName[r.Name] = r.ResourceVersion
		}
		for _, r := range live.Items {
			if byName[r.Name] != r.ResourceVersion {
				ok = false
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatal("informers did not catch up")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fakeRSController gives every ReplicaSet the pods it asks for.
func (h *harness) fakeRSController() {
	h.t.Helper()
	live, err := h.rss.List(h.ctx, metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	for i := range live.Items {
		r := &live.Items[i]
		n := *r.Spec.Replicas
		avail := n
		if h.stuck[r.Labels[DefaultDeploymentUniqueLabelKey]] {
			avail = 0
		}
		want := appsv1.ReplicaSetStatus{Replicas: n, FullyLabeledReplicas: n, ReadyReplicas: avail, AvailableReplicas: avail, ObservedGeneration: r.Generation}
		if !reflect.DeepEqual(r.Status, want) {
			r.Status = want
			if _, err := h.rss.UpdateStatus(h.ctx, r, metav1.UpdateOptions{}); err != nil {
				h.t.Fatal(err)
			}
		}
	}
}

type totals struct{ spec, available int32 }

func (h *harness) totals() totals {
	live, _ := h.rss.List(h.ctx, metav1.ListOptions{})
	var t totals
	for _, r := range live.Items {
		t.spec += *r.Spec.Replicas
		t.available += r.Status.AvailableReplicas
	}
	return t
}

// step: one sync, then the fake RS controller, then settle.
func (h *harness) step() {
	h.t.Helper()
	h.settle()
	if err := h.ctrl.Sync(h.ctx, "default/web"); err != nil {
		h.t.Logf("sync: %v", err)
	}
	h.settle()
	h.fakeRSController()
	h.settle()
}

// rollout steps until the deployment is complete, checking after every
// step that the totals stay within bounds.
func (h *harness) rollout(maxTotal, minAvailable int32) *appsv1.Deployment {
	h.t.Helper()
	for i := 0; i < 60; i++ {
		h.step()
		tot := h.totals()
		if tot.spec > maxTotal {
			h.t.Fatalf("step %d: %d pods wanted, more than %d", i, tot.spec, maxTotal)
		}
		if tot.available < minAvailable {
			h.t.Fatalf("step %d: %d available, fewer than %d", i, tot.available, minAvailable)
		}
		d, _ := h.ds.Get(h.ctx, "web", metav1.GetOptions{})
		if c := GetCondition(d.Status, appsv1.DeploymentProgressing); c != nil && c.Reason == NewRSAvailableReason && d.Status.ObservedGeneration == d.Generation {
			return d
		}
	}
	h.t.Fatal("rollout did not complete")
	return nil
}

func (h *harness) setImage(image string) {
	h.t.Helper()
	d, err := h.ds.Get(h.ctx, "web", metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	d.Spec.Template.Spec.Containers[0].Image = image
	if _, err := h.ds.Update(h.ctx, d, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) replicaSets() map[string]*appsv1.ReplicaSet {
	live, _ := h.rss.List(h.ctx, metav1.ListOptions{})
	out := map[string]*appsv1.ReplicaSet{}
	for i := range live.Items {
		out[live.Items[i].Annotations[RevisionAnnotation]] = &live.Items[i]
	}
	return out
}

func testRollout(t *testing.T, surge, unavail intstr.IntOrString, maxTotal, minAvailable int32) {
	h := newHarness(t)
	if _, err := h.ds.Create(h.ctx, deploymentObj(3, rollingStrategy(surge, unavail)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	d := h.rollout(maxTotal, 0)
	if d.Annotations[RevisionAnnotation] != "1" || d.Status.AvailableReplicas != 3 {
		t.Fatalf("first rollout: revision %q status %+v", d.Annotations[RevisionAnnotation], d.Status)
	}
	h.setImage("nginx:2")
	d = h.rollout(maxTotal, minAvailable)
	rss := h.replicaSets()
	if len(rss) != 2 || *rss["1"].Spec.Replicas != 0 || *rss["2"].Spec.Replicas != 3 || d.Annotations[RevisionAnnotation] != "2" {
		t.Fatalf("after the rollout: %d ReplicaSets, deployment revision %q", len(rss), d.Annotations[RevisionAnnotation])
	}
	newRS := rss["2"]
	hash := newRS.Labels[DefaultDeploymentUniqueLabelKey]
	if newRS.Name != "web-"+hash || newRS.Spec.Selector.MatchLabels[DefaultDeploymentUniqueLabelKey] != hash || newRS.Spec.Template.Labels[DefaultDeploymentUniqueLabelKey] != hash {
		t.Fatalf("pod-template-hash: name %s labels %v selector %v", newRS.Name, newRS.Spec.Template.Labels, newRS.Spec.Selector)
	}
	if ref := metav1.GetControllerOf(newRS); ref == nil || ref.UID != d.UID || ref.Kind != "Deployment" {
		t.Fatalf("controller ref %+v", ref)
	}
	c := GetCondition(d.Status, appsv1.DeploymentProgressing)
	if c.Message != fmt.Sprintf("ReplicaSet %q has successfully progressed.", newRS.Name) {
		t.Fatalf("progressing: %+v", c)
	}
	if d.Status.Replicas != 3 || d.Status.UpdatedReplicas != 3 || d.Status.AvailableReplicas != 3 || d.Status.UnavailableReplicas != 0 {
		t.Fatalf("status %+v", d.Status)
	}
	var events []string
	for len(h.events.Events) > 0 {
		events = append(events, <-h.events.Events)
	}
	all := strings.Join(events, "\n")
	wantUp := regexp.MustCompile(`Normal ScalingReplicaSet Scaled up replica set ` + newRS.Name + ` from \d+ to 3`)
	wantDown := regexp.MustCompile(`Normal ScalingReplicaSet Scaled down replica set ` + rss["1"].Name + ` from \d+ to 0`)
	if !wantUp.MatchString(all) || !wantDown.MatchString(all) {
		t.Fatalf("events:\n%s", all)
	}
}

func TestRolloutMaxSurgeZero(t *testing.T) {
	testRollout(t, intstr.FromInt32(0), intstr.FromInt32(1), 3, 2)
}

func TestRolloutMaxUnavailableZero(t *testing.T) {
	testRollout(t, intstr.FromInt32(1), intstr.FromInt32(0), 4, 3)
}

func TestRolloutPercents(t *testing.T) {
	// 25%/25% of 3: surge 1 (rounded up), unavailable 0 (rounded down).
	testRollout(t, intstr.FromString("25%"), intstr.FromString("25%"), 4, 3)
}

func TestRevisionHistoryLimit(t *testing.T) {
	h := newHarness(t)
	d := deploymentObj(2, rollingStrategy(intstr.FromInt32(1), intstr.FromInt32(0)))
	d.Spec.RevisionHistoryLimit = ptr.To[int32](1)
	if _, err := h.ds.Create(h.ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.rollout(3, 0)
	for _, img := range []string{"nginx:2", "nginx:3", "nginx:4"} {
		h.setImage(img)
		h.rollout(3, 2)
		h.step() // the sync after completion cleans up
	}
	rss := h.replicaSets()
	if len(rss) != 2 || rss["4"] == nil || rss["3"] == nil {
		revs := []string{}
		for r := range rss {
			revs = append(revs, r)
		}
		t.Fatalf("revisions kept %v, want 3 and 4", revs)
	}
}

func TestProportionalScalingDuringRollout(t *testing.T) {
	h := newHarness(t)
	if _, err := h.ds.Create(h.ctx, deploymentObj(10, rollingStrategy(intstr.FromInt32(3), intstr.FromInt32(2))), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.rollout(13, 0)
	h.setImage("nginx:2")
	h.settle()
	dd, _ := h.ds.Get(h.ctx, "web", metav1.GetOptions{})
	h.stuck[ComputeHash(&dd.Spec.Template, nil)] = true // the new pods never become available
	for range 4 {
		h.step()
	}
	rss := h.replicaSets()
	if *rss["1"].Spec.Replicas != 8 || *rss["2"].Spec.Replicas != 5 {
		t.Fatalf("stuck rollout: old %d new %d, want 8 and 5", *rss["1"].Spec.Replicas, *rss["2"].Spec.Replicas)
	}
	dd, _ = h.ds.Get(h.ctx, "web", metav1.GetOptions{})
	dd.Spec.Replicas = ptr.To[int32](15)
	if _, err := h.ds.Update(h.ctx, dd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.step()
	rss = h.replicaSets()
	if *rss["1"].Spec.Replicas != 11 || *rss["2"].Spec.Replicas != 7 {
		t.Fatalf("after scaling to 15: old %d new %d, want 11 and 7", *rss["1"].Spec.Replicas, *rss["2"].Spec.Replicas)
	}
	if rss["1"].Annotations[DesiredReplicasAnnotation] != "15" || rss["2"].Annotations[MaxReplicasAnnotation] != "18" {
		t.Fatalf("annotations %v / %v", rss["1"].Annotations, rss["2"].Annotations)
	}
}

func TestRecreateAndPause(t *testing.T) {
	h := newHarness(t)
	if _, err := h.ds.Create(h.ctx, deploymentObj(2, appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.rollout(2, 0)
	// Paused: a template change makes no new ReplicaSet.
	d, _ := h.ds.Get(h.ctx, "web", metav1.GetOptions{})
	d.Spec.Paused = true
	d.Spec.Template.Spec.Containers[0].Image = "nginx:2"
	if _, err := h.ds.Update(h.ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.step()
	d, _ = h.ds.Get(h.ctx, "web", metav1.GetOptions{})
	if c := GetCondition(d.Status, appsv1.DeploymentProgressing); c.Status != corev1.ConditionUnknown || c.Reason != PausedDeployReason || c.Message != "Deployment is paused" {
		t.Fatalf("paused: %+v", c)
	}
	if n := len(h.replicaSets()); n != 1 {
		t.Fatalf("%d ReplicaSets while paused", n)
	}
	d.Spec.Paused = false
	if _, err := h.ds.Update(h.ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Recreate: never old and new pods wanted at once.
	for i := 0; i < 20; i++ {
		h.step()
		rss := h.replicaSets()
		if rss["2"] != nil && *rss["2"].Spec.Replicas > 0 && (*rss["1"].Spec.Replicas > 0 || rss["1"].Status.Replicas > 0) {
			t.Fatalf("step %d: new pods wanted while old ones run", i)
		}
		if rss["2"] != nil && rss["2"].Status.AvailableReplicas == 2 {
			return
		}
	}
	t.Fatal("recreate did not finish")
}

// A rollout without progress for progressDeadlineSeconds (fake clock) is
// reported as ProgressDeadlineExceeded, with upstream's message.
func TestProgressDeadlineExceeded(t *testing.T) {
	h := newHarness(t)
	d := deploymentObj(2, rollingStrategy(intstr.FromString("25%"), intstr.FromString("25%")))
	d.Spec.ProgressDeadlineSeconds = ptr.To[int32](30)
	created, err := h.ds.Create(h.ctx, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.stuck[ComputeHash(&created.Spec.Template, nil)] = true
	for range 3 {
		h.step()
	}
	progressing := func() *appsv1.DeploymentCondition {
		d, err := h.ds.Get(h.ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return GetCondition(d.Status, appsv1.DeploymentProgressing)
	}
	if c := progressing(); c == nil || c.Status != corev1.ConditionTrue {
		t.Fatalf("before the deadline: %+v", c)
	}
	h.clock.Step(29 * time.Second)
	h.step()
	if c := progressing(); c.Reason == TimedOutReason {
		t.Fatalf("timed out before the deadline: %+v", c)
	}
	h.clock.Step(2 * time.Second)
	h.step()
	c := progressing()
	rsName := "web-" + ComputeHash(&created.Spec.Template, nil)
	if c.Status != corev1.ConditionFalse || c.Reason != TimedOutReason || c.Message != fmt.Sprintf("ReplicaSet %q has timed out progressing.", rsName) {
		t.Fatalf("after the deadline: %+v", c)
	}
}
