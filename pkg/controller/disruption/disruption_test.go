package disruption

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

type harness struct {
	ctx    context.Context
	clock  *clock.Fake
	events *record.FakeRecorder
	ctrl   *Controller
	c      *client.Client
	pods   *client.Typed[*corev1.Pod, *corev1.PodList]
	pdbs   *client.Typed[*policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudgetList]
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

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
	events := record.NewFakeRecorder(100)
	ctrl, err := New(Config{Client: c, Informers: f, Clock: fc, Recorder: events})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx)
	f.WaitForCacheSync(ctx)
	return &harness{ctx: ctx, clock: fc, events: events, ctrl: ctrl, c: c,
		pods: client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default"),
		pdbs: client.For[*policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudgetList](c).Namespace("default")}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pod creates a pod labelled app=web (owned by owner when set), Ready or
// not through the status API, and waits for the informer.
func (h *harness) pod(t *testing.T, name string, ready bool, owner *metav1.OwnerReference) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	p, err := h.pods.Create(h.ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}
	if p, err = h.pods.UpdateStatus(h.ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.seenPod(t, p)
	return p
}

func (h *harness) seenPod(t *testing.T, p *corev1.Pod) {
	t.Helper()
	waitFor(t, "pod seen", func() bool {
		got, err := h.ctrl.podIn.Lister().Namespace("default").Get(p.Name)
		return err == nil && got.ResourceVersion == p.ResourceVersion
	})
}

func (h *harness) pdb(t *testing.T, name string, minAvailable, maxUnavailable *intstr.IntOrString) *policyv1.PodDisruptionBudget {
	t.Helper()
	pdb, err := h.pdbs.Create(h.ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: minAvailable, MaxUnavailable: maxUnavailable,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "pdb seen", func() bool {
		_, err := h.ctrl.pdbIn.Lister().Namespace("default").Get(name)
		return err == nil
	})
	return pdb
}

func (h *harness) seenPDB(t *testing.T, pdb *policyv1.PodDisruptionBudget) {
	t.Helper()
	waitFor(t, "pdb seen", func() bool {
		got, err := h.ctrl.pdbIn.Lister().Namespace("default").Get(pdb.Name)
		return err == nil && got.ResourceVersion == pdb.ResourceVersion
	})
}

func (h *harness) sync(t *testing.T, name string) *policyv1.PodDisruptionBudget {
	t.Helper()
	if err := h.ctrl.Sync(h.ctx, "default/"+name); err != nil {
		t.Fatal(err)
	}
	pdb, err := h.pdbs.Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.seenPDB(t, pdb)
	return pdb
}

type want struct {
	healthy, desired, expected, allowed int32
	status                              metav1.ConditionStatus
	reason                              string
}

func check(t *testing.T, pdb *policyv1.PodDisruptionBudget, w want) {
	t.Helper()
	st := pdb.Status
	cond := apimeta.FindStatusCondition(st.Conditions, policyv1.DisruptionAllowedCondition)
	if st.CurrentHealthy != w.healthy || st.DesiredHealthy != w.desired || st.ExpectedPods != w.expected || st.DisruptionsAllowed != w.allowed ||
		st.ObservedGeneration != pdb.Generation || cond == nil || cond.Status != w.status || cond.Reason != w.reason {
		t.Fatalf("status %+v, want %+v", st, w)
	}
}

func intOrStr(s string) *intstr.IntOrString { v := intstr.Parse(s); return &v }

func TestMinAvailableInt(t *testing.T) {
	h := newHarness(t)
	h.pdb(t, "web", intOrStr("2"), nil)
	pdb := h.sync(t, "web")
	check(t, pdb, want{0, 2, 0, 0, metav1.ConditionFalse, policyv1.InsufficientPodsReason})
	if ev := <-h.events.Events; ev != "Normal NoPods No matching pods found" {
		t.Errorf("event %q", ev)
	}
	h.pod(t, "a", true, nil)
	h.pod(t, "b", true, nil)
	h.pod(t, "c", false, nil)
	check(t, h.sync(t, "web"), want{2, 2, 3, 0, metav1.ConditionFalse, policyv1.InsufficientPodsReason})
	h.pod(t, "d", true, nil)
	pdb = h.sync(t, "web")
	check(t, pdb, want{3, 2, 4, 1, metav1.ConditionTrue, policyv1.SufficientPodsReason})
	if cond := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition); !cond.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("condition time %v, want the fake clock's", cond.LastTransitionTime)
	}
	// Nothing changed: no write.
	if again := h.sync(t, "web"); again.ResourceVersion != pdb.ResourceVersion {
		t.Error("an unchanged sync wrote the status")
	}
}

func ownerRef(apiVersion, kind, name string, uid types.UID) *metav1.OwnerReference {
	return &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}
}

func TestPercentagesThroughControllers(t *testing.T) {
	h := newHarness(t)
	labels := map[string]string{"app": "web"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	dep, err := client.For[*appsv1.Deployment, *appsv1.DeploymentList](h.c).Namespace("default").Create(h.ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](4), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := client.For[*appsv1.ReplicaSet, *appsv1.ReplicaSetList](h.c).Namespace("default").Create(h.ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", OwnerReferences: []metav1.OwnerReference{*ownerRef("apps/v1", "Deployment", "web", dep.UID)}},
		Spec:       appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](4), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sts, err := client.For[*appsv1.StatefulSet, *appsv1.StatefulSetList](h.c).Namespace("default").Create(h.ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "owners seen", func() bool {
		_, e1 := h.ctrl.depIn.Lister().Namespace("default").Get("web")
		_, e2 := h.ctrl.rsIn.Lister().Namespace("default").Get("web-1")
		_, e3 := h.ctrl.ssIn.Lister().Namespace("default").Get("db")
		return e1 == nil && e2 == nil && e3 == nil
	})
	for _, n := range []string{"web-1-a", "web-1-b", "web-1-c"} {
		h.pod(t, n, true, ownerRef("apps/v1", "ReplicaSet", "web-1", rs.UID))
	}
	h.pod(t, "db-0", true, ownerRef("apps/v1", "StatefulSet", "db", sts.UID))
	h.pod(t, "stray", true, nil)

	// Expected: the Deployment's 4 and the StatefulSet's 2 (the stray pod
	// has no controller: reported, not counted).
	// maxUnavailable 25% of 6 = 1.5, rounded up: 2; desired 4.
	h.pdb(t, "max", nil, intOrStr("25%"))
	check(t, h.sync(t, "max"), want{5, 4, 6, 1, metav1.ConditionTrue, policyv1.SufficientPodsReason})
	var sawUnmanaged bool
	for len(h.events.Events) > 0 {
		sawUnmanaged = sawUnmanaged || strings.HasPrefix(<-h.events.Events, "Warning UnmanagedPods")
	}
	if !sawUnmanaged {
		t.Error("no UnmanagedPods event")
	}
	// minAvailable 90% of 6 = 5.4, rounded up: 6.
	h.pdb(t, "min", intOrStr("90%"), nil)
	check(t, h.sync(t, "min"), want{5, 6, 6, 0, metav1.ConditionFalse, policyv1.InsufficientPodsReason})

	// A pod whose controller cannot be found: the fail-safe.
	h.pod(t, "orphaned", true, ownerRef("apps/v1", "ReplicaSet", "gone", "no-such-uid"))
	if err := h.ctrl.Sync(h.ctx, "default/max"); err != nil {
		t.Fatal(err)
	}
	pdb, _ := h.pdbs.Get(h.ctx, "max", metav1.GetOptions{})
	cond := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
	if pdb.Status.DisruptionsAllowed != 0 || cond.Status != metav1.ConditionFalse || cond.Reason != policyv1.SyncFailedReason ||
		!strings.Contains(cond.Message, `found no controllers for pod "orphaned"`) {
		t.Fatalf("fail-safe status %+v", pdb.Status)
	}
}

func TestDisruptedPodsExpire(t *testing.T) {
	h := newHarness(t)
	for _, n := range []string{"a", "b", "c"} {
		h.pod(t, n, true, nil)
	}
	h.pdb(t, "web", intOrStr("1"), nil)
	pdb := h.sync(t, "web")
	check(t, pdb, want{3, 1, 3, 2, metav1.ConditionTrue, policyv1.SufficientPodsReason})
	// An eviction recorded "a" (as the eviction subresource does).
	pdb.Status.DisruptedPods = map[string]metav1.Time{"a": metav1.NewTime(t0), "gone": metav1.NewTime(t0)}
	pdb.Status.DisruptionsAllowed = 1
	pdb, err := h.pdbs.UpdateStatus(h.ctx, pdb, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.seenPDB(t, pdb)
	h.clock.Step(time.Minute)
	pdb = h.sync(t, "web")
	check(t, pdb, want{2, 1, 3, 1, metav1.ConditionTrue, policyv1.SufficientPodsReason})
	if len(pdb.Status.DisruptedPods) != 1 || !pdb.Status.DisruptedPods["a"].Time.Equal(t0) {
		t.Errorf("disruptedPods %v (the missing pod's entry dropped, a's kept)", pdb.Status.DisruptedPods)
	}
	// Past 2 minutes "a" was not deleted: it counts again, with an event.
	h.clock.Step(time.Minute + time.Second)
	pdb = h.sync(t, "web")
	check(t, pdb, want{3, 1, 3, 2, metav1.ConditionTrue, policyv1.SufficientPodsReason})
	if len(pdb.Status.DisruptedPods) != 0 {
		t.Errorf("disruptedPods %v", pdb.Status.DisruptedPods)
	}
	var notDeleted bool
	for len(h.events.Events) > 0 {
		notDeleted = notDeleted || strings.HasPrefix(<-h.events.Events, "Warning NotDeleted")
	}
	if !notDeleted {
		t.Error("no NotDeleted event")
	}
}

func TestStaleDisruptionTargetReset(t *testing.T) {
	h := newHarness(t)
	p := h.pod(t, "a", true, nil)
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: "EvictionByEvictionAPI", LastTransitionTime: metav1.NewTime(t0)})
	p, err := h.pods.UpdateStatus(h.ctx, p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.seenPod(t, p)
	disruption := func() corev1.PodCondition {
		got, err := h.pods.Get(h.ctx, "a", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range got.Status.Conditions {
			if c.Type == corev1.DisruptionTarget {
				return c
			}
		}
		return corev1.PodCondition{}
	}
	h.clock.Step(time.Minute)
	if err := h.ctrl.SyncStalePodDisruption(h.ctx, "default/a"); err != nil {
		t.Fatal(err)
	}
	if c := disruption(); c.Status != corev1.ConditionTrue {
		t.Fatalf("reset before 2 minutes: %+v", c)
	}
	h.clock.Step(time.Minute)
	if err := h.ctrl.SyncStalePodDisruption(h.ctx, "default/a"); err != nil {
		t.Fatal(err)
	}
	if c := disruption(); c.Status != corev1.ConditionFalse || !c.LastTransitionTime.Time.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("after 2 minutes: %+v", c)
	}
}

func crd(plural, kind string, scale bool) *apiextensionsv1.CustomResourceDefinition {
	v := apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1", Served: true, Storage: true,
		Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}}}
	if scale {
		v.Subresources = &apiextensionsv1.CustomResourceSubresources{Scale: &apiextensionsv1.CustomResourceSubresourceScale{
			SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"}}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + ".example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names:    apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: strings.ToLower(kind), Kind: kind, ListKind: kind + "List"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{v}},
	}
}

// createCR creates a custom resource once its CRD serves, and returns its
// UID.
func (h *harness) createCR(t *testing.T, plural, kind, name string, replicas int64) types.UID {
	t.Helper()
	if _, err := client.For[*apiextensionsv1.CustomResourceDefinition, *apiextensionsv1.CustomResourceDefinitionList](h.c).Create(h.ctx, crd(plural, kind, plural == "scalers"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dyn := client.NewDynamic(h.c, client.Resource{Group: "example.com", Version: "v1", Resource: plural, Namespaced: true}).Namespace("default")
	var uid types.UID
	waitFor(t, kind+" served", func() bool {
		obj, err := dyn.Create(h.ctx, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": kind,
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"replicas": replicas}}}, metav1.CreateOptions{})
		if err != nil {
			return false
		}
		uid = obj.GetUID()
		return true
	})
	return uid
}

func TestCustomResourceScale(t *testing.T) {
	h := newHarness(t)
	uid := h.createCR(t, "scalers", "Scaler", "s", 5)
	for _, n := range []string{"s-0", "s-1", "s-2", "s-3"} {
		h.pod(t, n, true, ownerRef("example.com/v1", "Scaler", "s", uid))
	}
	// maxUnavailable 40% of the Scaler's 5 replicas: 2; desired 3.
	h.pdb(t, "web", nil, intOrStr("40%"))
	check(t, h.sync(t, "web"), want{4, 3, 5, 1, metav1.ConditionTrue, policyv1.SufficientPodsReason})

	// A controller whose resource has no scale subresource: the fail-safe
	// says so.
	plain := h.createCR(t, "plains", "Plain", "p", 1)
	h.pod(t, "p-0", true, ownerRef("example.com/v1", "Plain", "p", plain))
	if err := h.ctrl.Sync(h.ctx, "default/web"); err != nil {
		t.Fatal(err)
	}
	pdb, _ := h.pdbs.Get(h.ctx, "web", metav1.GetOptions{})
	cond := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
	if pdb.Status.DisruptionsAllowed != 0 || cond.Reason != policyv1.SyncFailedReason || cond.Message != "plains.example.com does not implement the scale subresource" {
		t.Fatalf("status %+v", pdb.Status)
	}
}

// TestEvictionsFollowTheBudget: with the controller running, the eviction
// subresource spends the allowed disruptions it computed, and refuses the
// eviction that would break the budget.
func TestEvictionsFollowTheBudget(t *testing.T) {
	h := newHarness(t)
	go h.ctrl.Run(h.ctx)
	for _, n := range []string{"a", "b", "c"} {
		h.pod(t, n, true, nil)
	}
	h.pdb(t, "web", intOrStr("2"), nil)
	waitFor(t, "one disruption allowed", func() bool {
		pdb, err := h.pdbs.Get(h.ctx, "web", metav1.GetOptions{})
		return err == nil && pdb.Status.ObservedGeneration == pdb.Generation && pdb.Status.DisruptionsAllowed == 1 && pdb.Status.ExpectedPods == 3
	})
	evict := func(name string) error {
		return h.pods.Subresource(h.ctx, name, "eviction", &policyv1.Eviction{
			TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}, nil)
	}
	if err := evict("a"); err != nil {
		t.Fatalf("first eviction: %v", err)
	}
	waitFor(t, "the budget spent", func() bool {
		pdb, err := h.pdbs.Get(h.ctx, "web", metav1.GetOptions{})
		return err == nil && pdb.Status.DisruptionsAllowed == 0 && pdb.Status.CurrentHealthy == 2
	})
	err := evict("b")
	if err == nil || !strings.Contains(err.Error(), "Cannot evict pod as it would violate the pod's disruption budget") {
		t.Fatalf("second eviction: %v, want 429", err)
	}
	// A new ready pod: one disruption again.
	h.pod(t, "d", true, nil)
	waitFor(t, "one disruption allowed again", func() bool {
		pdb, err := h.pdbs.Get(h.ctx, "web", metav1.GetOptions{})
		return err == nil && pdb.Status.DisruptionsAllowed == 1
	})
	if err := evict("b"); err != nil {
		t.Fatalf("eviction after scale-up: %v", err)
	}
}

// TestUnhealthyPodEvictionPolicy: with the controller's status, an unready
// pod may be evicted without spending a disruption when the budget is met
// (IfHealthyBudget, the default) or always (AlwaysAllow); a budget short of
// healthy pods refuses it under IfHealthyBudget.
func TestUnhealthyPodEvictionPolicy(t *testing.T) {
	h := newHarness(t)
	go h.ctrl.Run(h.ctx)
	h.pod(t, "a", true, nil)
	h.pod(t, "sick", false, nil)
	h.pod(t, "sick2", false, nil)
	h.pdb(t, "web", intOrStr("2"), nil) // 1 healthy of 2 wanted
	waitFor(t, "status", func() bool {
		pdb, err := h.pdbs.Get(h.ctx, "web", metav1.GetOptions{})
		return err == nil && pdb.Status.ObservedGeneration == pdb.Generation && pdb.Status.CurrentHealthy == 1 && pdb.Status.DesiredHealthy == 2
	})
	evict := func(name string) error {
		return h.pods.Subresource(h.ctx, name, "eviction", &policyv1.Eviction{
			TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}, nil)
	}
	if err := evict("sick"); err == nil || !strings.Contains(err.Error(), "would violate the pod's disruption budget") {
		t.Fatalf("an unready pod under IfHealthyBudget, budget short of healthy pods: %v, want 429", err)
	}
	pdb, _ := h.pdbs.Get(h.ctx, "web", metav1.GetOptions{})
	pdb.Spec.UnhealthyPodEvictionPolicy = ptr.To(policyv1.AlwaysAllow)
	if _, err := h.pdbs.Update(h.ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new generation observed", func() bool {
		pdb, err := h.pdbs.Get(h.ctx, "web", metav1.GetOptions{})
		return err == nil && pdb.Status.ObservedGeneration == pdb.Generation
	})
	if err := evict("sick"); err != nil {
		t.Fatalf("AlwaysAllow: %v", err)
	}
	// A ready pod still may not go: no disruption allowed.
	if err := evict("a"); err == nil || !strings.Contains(err.Error(), "would violate the pod's disruption budget") {
		t.Fatalf("a ready pod with no disruption allowed: %v, want 429", err)
	}
}
