package garbagecollector

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

const waitTimeout = 30 * time.Second

type harness struct {
	t   *testing.T
	ctx context.Context
	c   *client.Client
	gc  *Controller
	cms *client.Typed[*corev1.ConfigMap, *corev1.ConfigMapList]
}

// start runs an API server and the garbage collector against it; with
// shared, a controller manager's shared factory that already has a
// ConfigMap informer (which the collector then joins) is given too.
func start(t *testing.T, shared ...bool) *harness {
	t.Helper()
	env := testenv.StartT(t)
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	var out io.Writer = io.Discard
	if os.Getenv("GC_TEST_LOG") != "" {
		out = os.Stderr
	}
	logger := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := Config{Client: c, Workers: 4, Logger: logger, DiscoveryPeriod: 300 * time.Millisecond}
	if len(shared) > 0 && shared[0] {
		cfg.Informers = informers.NewSharedInformerFactory(c, 0)
		cfg.Informers.ConfigMaps()
	}
	gc, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if cfg.Informers != nil {
		cfg.Informers.Start(ctx)
		t.Cleanup(cfg.Informers.Shutdown)
	}
	done := make(chan error, 1)
	go func() { done <- gc.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	h := &harness{t: t, ctx: ctx, c: c, gc: gc, cms: client.For[*corev1.ConfigMap, *corev1.ConfigMapList](c).Namespace("default")}
	h.waitFor("garbage collector synced", gc.HasSynced)
	return h
}

func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func ref(owner *corev1.ConfigMap, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, BlockOwnerDeletion: &block}
}

func (h *harness) create(name string, finalizers []string, refs ...metav1.OwnerReference) *corev1.ConfigMap {
	h.t.Helper()
	cm, err := h.cms.Create(h.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: finalizers, OwnerReferences: refs}}, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return cm
}

func (h *harness) get(name string) (*corev1.ConfigMap, bool) {
	cm, err := h.cms.Get(h.ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		h.t.Fatal(err)
	}
	return cm, true
}

func (h *harness) gone(name string) func() bool {
	return func() bool { _, ok := h.get(name); return !ok }
}

func (h *harness) delete(name string, policy metav1.DeletionPropagation) {
	h.t.Helper()
	if err := h.cms.Delete(h.ctx, name, metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) release(name string) {
	h.t.Helper()
	if _, err := h.cms.Patch(h.ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

// recorder records the order of configmap events in default.
type recorder struct {
	w      watch.Interface
	events []string // "DELETED a", "MODIFIED b refs=0"
}

func (h *harness) record() *recorder {
	h.t.Helper()
	l, err := h.cms.List(h.ctx, metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	w, err := h.cms.Watch(h.ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(w.Stop)
	return &recorder{w: w}
}

// until reads events until want is seen (the string), returning all.
func (r *recorder) until(t *testing.T, want ...string) []string {
	t.Helper()
	timeout := time.After(waitTimeout)
	for {
		done := true
		for _, w := range want {
			if !slices.Contains(r.events, w) {
				done = false
			}
		}
		if done {
			return r.events
		}
		select {
		case ev, ok := <-r.w.ResultChan():
			if !ok {
				t.Fatalf("watch closed; events %v", r.events)
			}
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if !ok {
				continue
			}
			s := fmt.Sprintf("%s %s", ev.Type, cm.Name)
			if ev.Type == watch.Modified {
				s = fmt.Sprintf("%s refs=%d deleting=%v", s, len(cm.OwnerReferences), cm.DeletionTimestamp != nil)
			}
			r.events = append(r.events, s)
		case <-timeout:
			t.Fatalf("timed out waiting for %v; events %v", want, r.events)
		}
	}
}

func index(events []string, s string) int { return slices.Index(events, s) }

func TestBackgroundDeletion(t *testing.T) {
	h := start(t)
	owner := h.create("owner", nil)
	h.create("dep1", nil, ref(owner, true))
	h.create("dep2", nil, ref(owner, false))
	rec := h.record()
	h.delete("owner", metav1.DeletePropagationBackground)
	ev := rec.until(t, "DELETED owner", "DELETED dep1", "DELETED dep2")
	// The owner goes at once; its dependents after it.
	if i := index(ev, "DELETED owner"); i > index(ev, "DELETED dep1") || i > index(ev, "DELETED dep2") {
		t.Fatalf("owner not deleted first: %v", ev)
	}
}

// A resource the manager's shared factory has a typed informer of is
// followed through it (no second watch and cache), with the same results.
func TestSharedInformers(t *testing.T) {
	h := start(t, true)
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	h.gc.mu.Lock()
	m := h.gc.monitors[cms]
	h.gc.mu.Unlock()
	if m == nil || !m.shared {
		t.Fatalf("configmaps not followed through the shared informer: %+v", m)
	}
	if h.gc.factory.Has(cms) {
		t.Error("the collector made its own configmaps informer too")
	}
	owner := h.create("owner", nil)
	h.create("dep", nil, ref(owner, true))
	h.delete("owner", metav1.DeletePropagationForeground)
	h.waitFor("the dependent deleted", h.gone("dep"))
	h.waitFor("the owner deleted after it", h.gone("owner"))
	owner = h.create("owner2", nil)
	h.create("dep2", nil, ref(owner, false))
	h.delete("owner2", metav1.DeletePropagationBackground)
	h.waitFor("the background dependent deleted", h.gone("dep2"))
}

func TestForegroundDeletion(t *testing.T) {
	h := start(t)
	owner := h.create("owner", nil)
	h.create("dep1", nil, ref(owner, true))
	h.create("dep2", nil, ref(owner, true))
	rec := h.record()
	h.delete("owner", metav1.DeletePropagationForeground)
	ev := rec.until(t, "DELETED owner", "DELETED dep1", "DELETED dep2")
	// The owner is marked, its blocking dependents go, then it goes.
	if i := index(ev, "DELETED owner"); i < index(ev, "DELETED dep1") || i < index(ev, "DELETED dep2") || index(ev, "MODIFIED owner refs=0 deleting=true") > index(ev, "DELETED dep1") {
		t.Fatalf("owner not deleted last: %v", ev)
	}
}

// TestForegroundWaitsForExactlyBlockingDependents: a foreground owner
// outlives its dependents with blockOwnerDeletion, and only those.
func TestForegroundWaitsForExactlyBlockingDependents(t *testing.T) {
	h := start(t)
	owner := h.create("owner", nil)
	h.create("blocking", []string{"example.com/hold"}, ref(owner, true))
	h.create("nonblocking", []string{"example.com/hold"}, ref(owner, false))
	h.create("plain", nil, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID})
	h.delete("owner", metav1.DeletePropagationForeground)
	// Every dependent is deleted; the held ones stay terminating.
	h.waitFor("dependents deleting", func() bool {
		b, ok1 := h.get("blocking")
		n, ok2 := h.get("nonblocking")
		return ok1 && ok2 && b.DeletionTimestamp != nil && n.DeletionTimestamp != nil
	})
	h.waitFor("plain dependent gone", h.gone("plain"))
	if o, ok := h.get("owner"); !ok || o.DeletionTimestamp == nil || !slices.Contains(o.Finalizers, metav1.FinalizerDeleteDependents) {
		t.Fatalf("owner while a blocking dependent exists: %v %+v", ok, o)
	}
	h.release("blocking")
	h.waitFor("owner gone once the blocking dependent is", h.gone("owner"))
	// The non-blocking dependent never held the owner.
	if n, ok := h.get("nonblocking"); !ok || n.DeletionTimestamp == nil {
		t.Fatalf("nonblocking: %v %+v", ok, n)
	}
	h.release("nonblocking")
	h.waitFor("nonblocking gone", h.gone("nonblocking"))
}

func TestOrphanDeletion(t *testing.T) {
	h := start(t)
	owner := h.create("owner", nil)
	other := h.create("other", nil)
	h.create("dep1", nil, ref(owner, true))
	h.create("dep2", nil, ref(owner, false), ref(other, false))
	rec := h.record()
	h.delete("owner", metav1.DeletePropagationOrphan)
	ev := rec.until(t, "DELETED owner", "MODIFIED dep1 refs=0 deleting=false", "MODIFIED dep2 refs=1 deleting=false")
	// References removed first, then the orphan finalizer and the owner.
	if i := index(ev, "DELETED owner"); i < index(ev, "MODIFIED dep1 refs=0 deleting=false") || i < index(ev, "MODIFIED dep2 refs=1 deleting=false") {
		t.Fatalf("owner gone before its dependents were orphaned: %v", ev)
	}
	d2, ok := h.get("dep2")
	if !ok || len(d2.OwnerReferences) != 1 || d2.OwnerReferences[0].UID != other.UID {
		t.Fatalf("dep2: %+v", d2)
	}
	if _, ok := h.get("dep1"); !ok {
		t.Fatal("orphaned dependent deleted")
	}
}

func TestDanglingReferences(t *testing.T) {
	h := start(t)
	live := h.create("live", nil)
	recreated := h.create("recreated", nil)
	oldUID := recreated.UID
	h.delete("recreated", metav1.DeletePropagationOrphan)
	h.waitFor("recreated gone", h.gone("recreated"))
	h.create("recreated", nil)
	h.create("missing-owner", nil, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "nope", UID: "00000000-0000-0000-0000-000000000001"})
	h.create("stale-uid", nil, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "recreated", UID: oldUID})
	h.create("one-dangling", nil, ref(live, false), metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "nope2", UID: "00000000-0000-0000-0000-000000000002"})
	// An owner in another namespace is absent from the dependent's.
	if _, err := client.For[*corev1.Namespace, *corev1.NamespaceList](h.c).Create(h.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.cms.Namespace("other").Create(h.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cross", OwnerReferences: []metav1.OwnerReference{ref(live, false)}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A cluster-scoped dependent of a namespaced kind cannot be resolved: kept.
	crs := client.For[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList](h.c)
	if _, err := crs.Create(h.ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "invalid-owner", OwnerReferences: []metav1.OwnerReference{ref(live, false)}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Also when the owner is missing, and other (namespaced) dependents
	// of the same owner are collected.
	missing := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "nope", UID: "00000000-0000-0000-0000-000000000001"}
	if _, err := crs.Create(h.ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "invalid-missing-owner", OwnerReferences: []metav1.OwnerReference{missing}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitFor("missing-owner collected", h.gone("missing-owner"))
	// A sentinel created after everything above, collected: a pass ran.
	h.create("sentinel", nil, missing)
	h.waitFor("sentinel collected", h.gone("sentinel"))
	if _, err := crs.Get(h.ctx, "invalid-missing-owner", metav1.GetOptions{}); err != nil {
		t.Fatalf("cluster-scoped dependent of a missing namespaced owner: %v", err)
	}
	h.waitFor("stale-uid collected", h.gone("stale-uid"))
	h.waitFor("cross-namespace dependent collected", func() bool {
		_, err := h.cms.Namespace("other").Get(h.ctx, "cross", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	h.waitFor("dangling reference removed", func() bool {
		d, ok := h.get("one-dangling")
		return ok && len(d.OwnerReferences) == 1 && d.OwnerReferences[0].UID == live.UID
	})
	if cr, err := crs.Get(h.ctx, "invalid-owner", metav1.GetOptions{}); err != nil || len(cr.OwnerReferences) != 1 {
		t.Fatalf("cluster-scoped dependent of a namespaced owner: %v %+v", err, cr)
	}
	if _, ok := h.get("live"); !ok {
		t.Fatal("live owner deleted")
	}
	if _, ok := h.get("recreated"); !ok {
		t.Fatal("new object with the old name deleted")
	}
}

// TestCustomResourceOwner: a resource that appears after start is
// followed, and its objects own others.
func TestCustomResourceOwner(t *testing.T) {
	h := start(t)
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "foos.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "foos", Singular: "foo", Kind: "Foo", ListKind: "FooList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true)}}}},
		},
	}
	if _, err := client.For[*apiextensionsv1.CustomResourceDefinition, *apiextensionsv1.CustomResourceDefinitionList](h.c).Create(h.ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	foos := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "foos"}
	h.waitFor("foos monitored", func() bool { return h.gc.Monitored(foos) && h.gc.HasSynced() })
	dyn := client.NewDynamic(h.c, client.Resource{Group: "example.com", Version: "v1", Resource: "foos", Namespaced: true}).Namespace("default")
	foo := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Foo", "metadata": map[string]any{"name": "f"}}}
	created, err := dyn.Create(h.ctx, foo, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A Foo owned by the Foo too (custom resources as dependents).
	child := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Foo", "metadata": map[string]any{"name": "child"}}}
	child.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Foo", Name: "f", UID: created.GetUID()}})
	if _, err := dyn.Create(h.ctx, child, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.create("dep", nil, metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Foo", Name: "f", UID: created.GetUID(), BlockOwnerDeletion: ptr(true)})
	policy := metav1.DeletePropagationForeground
	if err := dyn.Delete(h.ctx, "f", metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
		t.Fatal(err)
	}
	h.waitFor("dependent of the custom resource collected", h.gone("dep"))
	h.waitFor("custom resource dependent collected", func() bool {
		_, err := dyn.Get(h.ctx, "child", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	h.waitFor("foreground custom resource owner gone", func() bool {
		_, err := dyn.Get(h.ctx, "f", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

func ptr[T any](v T) *T { return &v }

var _ = json.Marshal
