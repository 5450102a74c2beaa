package replicaset

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

type harness struct {
	c    *client.Client
	f    *informers.SharedInformerFactory
	ctx  context.Context
	pods *client.Typed[*corev1.Pod, *corev1.PodList]
	rss  *client.Typed[*appsv1.ReplicaSet, *appsv1.ReplicaSetList]
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	env := testenv.StartT(t)
	// Pods need their service account, which the API server alone does
	// not create (the serviceaccount controller does).
	if err := env.EnsureServiceAccount(context.Background(), "default", "default"); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &harness{c: c, f: informers.NewSharedInformerFactory(c, 0), ctx: ctx,
		pods: client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default"),
		rss:  client.For[*appsv1.ReplicaSet, *appsv1.ReplicaSetList](c).Namespace("default")}
}

// seqNames is an injected name generator: <prefix><5 chars>, deterministic.
func seqNames() func(string) string {
	var n atomic.Int32
	return func(prefix string) string { return fmt.Sprintf("%s%05d", prefix, n.Add(1)) }
}

func waitFor(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (last error %v)", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func rsObj(name string, replicas int32) *appsv1.ReplicaSet {
	l := map[string]string{"app": name}
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}}
}

func (h *harness) podsOf(t *testing.T, app string) []corev1.Pod {
	t.Helper()
	l, err := h.pods.List(h.ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

func TestReplicaSetScalesUpAndDown(t *testing.T) {
	h := newHarness(t)
	ctrl, err := New(Config{Client: h.c, Informers: h.f, Workers: 2, NameGenerator: seqNames()})
	if err != nil {
		t.Fatal(err)
	}
	go ctrl.Run(h.ctx)
	rs, err := h.rss.Create(h.ctx, rsObj("web", 3), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "3 pods", func() (bool, error) { return len(h.podsOf(t, "web")) == 3, nil })
	for _, p := range h.podsOf(t, "web") {
		ref := metav1.GetControllerOf(&p)
		if !strings.HasPrefix(p.Name, "web-") || len(p.Name) != len("web-")+5 || ref == nil || ref.UID != rs.UID || ref.Kind != "ReplicaSet" || !*ref.BlockOwnerDeletion {
			t.Fatalf("pod %s ref %+v", p.Name, ref)
		}
	}
	waitFor(t, "status replicas 3", func() (bool, error) {
		got, err := h.rss.Get(h.ctx, "web", metav1.GetOptions{})
		return err == nil && got.Status.Replicas == 3 && got.Status.FullyLabeledReplicas == 3 && got.Status.ObservedGeneration == got.Generation, err
	})
	got, _ := h.rss.Get(h.ctx, "web", metav1.GetOptions{})
	got.Spec.Replicas = ptr.To[int32](1)
	if _, err := h.rss.Update(h.ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "1 pod", func() (bool, error) { return len(h.podsOf(t, "web")) == 1, nil })
	waitFor(t, "status replicas 1", func() (bool, error) {
		got, err := h.rss.Get(h.ctx, "web", metav1.GetOptions{})
		return err == nil && got.Status.Replicas == 1 && got.Status.ObservedGeneration == got.Generation, err
	})
}

// A burst of syncs before the informer has seen the new pods must not
// create more than spec.replicas pods. The pod informer is held back (not
// started) while the burst runs, so the cache is deterministically stale;
// the syncs run one after another, as the workqueue never gives one key to
// two workers at once.
func TestExpectationsUnderEventBurst(t *testing.T) {
	h := newHarness(t)
	var created atomic.Int32
	names := seqNames()
	ctrl, err := New(Config{Client: h.c, Informers: h.f, NameGenerator: func(p string) string { created.Add(1); return names(p) }})
	if err != nil {
		t.Fatal(err)
	}
	rsInformer, podInformer := h.f.ReplicaSets(), h.f.Pods()
	go rsInformer.Run(h.ctx)
	if _, err := h.rss.Create(h.ctx, rsObj("burst", 5), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the ReplicaSet in the cache", func() (bool, error) {
		_, err := rsInformer.Lister().Namespace("default").Get("burst")
		return err == nil, nil
	})
	for range 40 {
		_ = ctrl.Sync(h.ctx, "default/burst")
	}
	if n, c := len(h.podsOf(t, "burst")), created.Load(); n != 5 || c != 5 {
		t.Fatalf("%d pods (%d creations) after a burst of 40 syncs on a stale cache, want exactly 5", n, c)
	}
	if adds, _ := ctrl.Expectations.Pending("default/burst"); adds != 5 {
		t.Fatalf("%d creations pending, want 5 (none observed yet)", adds)
	}
	go podInformer.Run(h.ctx)
	waitFor(t, "the cache to observe all 5 creations", func() (bool, error) { return ctrl.Expectations.Satisfied("default/burst"), nil })
	for range 5 {
		if err := ctrl.Sync(h.ctx, "default/burst"); err != nil {
			t.Fatal(err)
		}
	}
	if n, c := len(h.podsOf(t, "burst")), created.Load(); n != 5 || c != 5 {
		t.Fatalf("%d pods (%d creations), want 5", n, c)
	}
	// The same holds for deletions: scale to 2 and burst again.
	rs, _ := h.rss.Get(h.ctx, "burst", metav1.GetOptions{})
	rs.Spec.Replicas = ptr.To[int32](2)
	if _, err := h.rss.Update(h.ctx, rs, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the scale-down in the cache", func() (bool, error) {
		rs, err := rsInformer.Lister().Namespace("default").Get("burst")
		return err == nil && *rs.Spec.Replicas == 2, nil
	})
	for range 40 {
		_ = ctrl.Sync(h.ctx, "default/burst")
	}
	if n, c := len(h.podsOf(t, "burst")), created.Load(); n != 2 || c != 5 {
		t.Fatalf("%d pods (%d creations) after a deletion burst, want exactly 2 and no new creation", n, c)
	}
}

func TestAdoptAndRelease(t *testing.T) {
	h := newHarness(t)
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: "default", Labels: map[string]string{"app": "adopt"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	if _, err := h.pods.Create(h.ctx, orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrl, err := New(Config{Client: h.c, Informers: h.f, NameGenerator: seqNames()})
	if err != nil {
		t.Fatal(err)
	}
	go ctrl.Run(h.ctx)
	rs, err := h.rss.Create(h.ctx, rsObj("adopt", 2), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "orphan adopted and one pod created", func() (bool, error) {
		p, err := h.pods.Get(h.ctx, "orphan", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ref := metav1.GetControllerOf(p)
		return ref != nil && ref.UID == rs.UID && len(h.podsOf(t, "adopt")) == 2, nil
	})
	// Relabel the adopted pod: released (controller reference removed) and replaced.
	p, _ := h.pods.Get(h.ctx, "orphan", metav1.GetOptions{})
	p.Labels = map[string]string{"app": "other"}
	if _, err := h.pods.Update(h.ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "pod released and replaced", func() (bool, error) {
		p, err := h.pods.Get(h.ctx, "orphan", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return metav1.GetControllerOf(p) == nil && len(h.podsOf(t, "adopt")) == 2, nil
	})
}

func TestReplicationController(t *testing.T) {
	h := newHarness(t)
	ctrl, err := NewReplicationManager(Config{Client: h.c, Informers: h.f, NameGenerator: seqNames()})
	if err != nil {
		t.Fatal(err)
	}
	go ctrl.Run(h.ctx)
	rcs := client.For[*corev1.ReplicationController, *corev1.ReplicationControllerList](h.c).Namespace("default")
	l := map[string]string{"app": "rc"}
	rc, err := rcs.Create(h.ctx, &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "rc"},
		Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](2), Selector: l,
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "2 pods owned by the RC and its status", func() (bool, error) {
		pods := h.podsOf(t, "rc")
		if len(pods) != 2 {
			return false, nil
		}
		for _, p := range pods {
			if ref := metav1.GetControllerOf(&p); ref == nil || ref.Kind != "ReplicationController" || ref.APIVersion != "v1" || ref.UID != rc.UID {
				return false, fmt.Errorf("ref %+v", ref)
			}
		}
		got, err := rcs.Get(h.ctx, "rc", metav1.GetOptions{})
		return err == nil && got.Status.Replicas == 2 && got.Status.ObservedGeneration == got.Generation, err
	})
}

var _ = cache.SplitMetaNamespaceKey

// A pod creation the API server refuses (403: its service account does
// not exist) sets ReplicaFailure/FailedCreate with the error as message;
// once creations succeed the condition goes away.
func TestReplicaFailureCondition(t *testing.T) {
	h := newHarness(t)
	ctrl, err := New(Config{Client: h.c, Informers: h.f, NameGenerator: seqNames()})
	if err != nil {
		t.Fatal(err)
	}
	go ctrl.Run(h.ctx)
	obj := rsObj("fail", 2)
	obj.Spec.Template.Spec.ServiceAccountName = "missing"
	if _, err := h.rss.Create(h.ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var cond *appsv1.ReplicaSetCondition
	waitFor(t, "ReplicaFailure", func() (bool, error) {
		rs, err := h.rss.Get(h.ctx, "fail", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		cond = getCondition(rs.Status, appsv1.ReplicaSetReplicaFailure)
		return cond != nil, nil
	})
	if cond.Status != corev1.ConditionTrue || cond.Reason != "FailedCreate" ||
		!strings.Contains(cond.Message, `is forbidden: error looking up service account default/missing: serviceaccount "missing" not found`) {
		t.Fatalf("condition %+v", cond)
	}
	sa := client.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](h.c).Namespace("default")
	if _, err := sa.Create(h.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "missing"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "pods created and ReplicaFailure removed", func() (bool, error) {
		rs, err := h.rss.Get(h.ctx, "fail", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return rs.Status.Replicas == 2 && getCondition(rs.Status, appsv1.ReplicaSetReplicaFailure) == nil, nil
	})
}
