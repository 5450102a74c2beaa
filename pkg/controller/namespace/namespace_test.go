package namespace

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

const waitTimeout = 30 * time.Second

type harness struct {
	t   *testing.T
	ctx context.Context
	c   *client.Client
	clk *clock.Fake
	nss *client.Typed[*corev1.Namespace, *corev1.NamespaceList]
}

func start(t *testing.T) *harness {
	t.Helper()
	env := testenv.StartT(t)
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(time.Now())
	ctrl, err := New(Config{Client: c, Clock: clk, Workers: 2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return &harness{t: t, ctx: ctx, c: c, clk: clk, nss: client.For[*corev1.Namespace, *corev1.NamespaceList](c)}
}

// waitFor polls cond, moving the controller's clock a second each time
// (its queue delays requeues by the estimated time).
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		h.clk.Step(time.Second)
		time.Sleep(10 * time.Millisecond)
	}
}

func (h *harness) condition(ns string, typ corev1.NamespaceConditionType) (corev1.NamespaceCondition, bool) {
	n, err := h.nss.Get(h.ctx, ns, metav1.GetOptions{})
	if err != nil {
		return corev1.NamespaceCondition{}, false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == typ {
			return c, true
		}
	}
	return corev1.NamespaceCondition{}, false
}

func (h *harness) hasCondition(ns string, typ corev1.NamespaceConditionType, status corev1.ConditionStatus, reason, message string) func() bool {
	return func() bool {
		c, ok := h.condition(ns, typ)
		return ok && c.Status == status && c.Reason == reason && c.Message == message
	}
}

func (h *harness) gone(get func() error) func() bool {
	return func() bool { return apierrors.IsNotFound(get()) }
}

func (h *harness) createNamespace(name string) {
	h.t.Helper()
	if _, err := h.nss.Create(h.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

func pod(name string, finalizers ...string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: finalizers},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
}

func TestNamespaceDeletionWithCustomResourceAndFinalizer(t *testing.T) {
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
	h.createNamespace("ns1")
	foos := client.NewDynamic(h.c, client.Resource{Group: "example.com", Version: "v1", Resource: "foos", Namespaced: true}).Namespace("ns1")
	h.waitFor("foos served", func() bool {
		_, err := foos.List(h.ctx, metav1.ListOptions{})
		return err == nil
	})
	for _, name := range []string{"held", "free"} {
		foo := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Foo", "metadata": map[string]any{"name": name}}}
		if name == "held" {
			foo.SetFinalizers([]string{"example.com/hold"})
		}
		if _, err := foos.Create(h.ctx, foo, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cms := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](h.c).Namespace("ns1")
	if _, err := cms.Create(h.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := h.nss.Delete(h.ctx, "ns1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitFor("content remaining reported", h.hasCondition("ns1", corev1.NamespaceContentRemaining, corev1.ConditionTrue, "SomeResourcesRemain",
		"Some resources are remaining: foos.example.com has 1 resource instances"))
	if !h.hasCondition("ns1", corev1.NamespaceFinalizersRemaining, corev1.ConditionTrue, "SomeFinalizersRemain",
		"Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances")() {
		c, _ := h.condition("ns1", corev1.NamespaceFinalizersRemaining)
		t.Fatalf("finalizers condition: %+v", c)
	}
	for _, typ := range []corev1.NamespaceConditionType{corev1.NamespaceDeletionDiscoveryFailure, corev1.NamespaceDeletionGVParsingFailure, corev1.NamespaceDeletionContentFailure} {
		if c, ok := h.condition("ns1", typ); !ok || c.Status != corev1.ConditionFalse || c.Reason != okReasons[typ] {
			t.Fatalf("%s: %+v", typ, c)
		}
	}
	ns, err := h.nss.Get(h.ctx, "ns1", metav1.GetOptions{})
	if err != nil || ns.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("namespace: %v %+v", err, ns.Status)
	}
	if _, err := cms.Get(h.ctx, "cm", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("configmap: %v", err)
	}
	if _, err := foos.Get(h.ctx, "free", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("foo without finalizer: %v", err)
	}
	if _, err := foos.Patch(h.ctx, "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitFor("namespace gone", h.gone(func() error { _, err := h.nss.Get(h.ctx, "ns1", metav1.GetOptions{}); return err }))
}

// TestPodsDeletedFirst: nothing else is deleted while a pod remains, and
// the conditions name the pod and its finalizer.
func TestPodsDeletedFirst(t *testing.T) {
	h := start(t)
	h.createNamespace("ns2")
	// No controller manager here: the default service account by hand.
	if _, err := client.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](h.c).Namespace("ns2").Create(h.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := client.For[*corev1.Pod, *corev1.PodList](h.c).Namespace("ns2")
	if _, err := pods.Create(h.ctx, pod("p", "example.com/hold"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(h.ctx, pod("q"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](h.c).Namespace("ns2")
	if _, err := cms.Create(h.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := h.nss.Delete(h.ctx, "ns2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitFor("pod remaining reported", h.hasCondition("ns2", corev1.NamespaceContentRemaining, corev1.ConditionTrue, "SomeResourcesRemain",
		"Some resources are remaining: pods. has 1 resource instances"))
	if !h.hasCondition("ns2", corev1.NamespaceFinalizersRemaining, corev1.ConditionTrue, "SomeFinalizersRemain",
		"Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances")() {
		c, _ := h.condition("ns2", corev1.NamespaceFinalizersRemaining)
		t.Fatalf("finalizers condition: %+v", c)
	}
	if _, err := pods.Get(h.ctx, "q", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("pod q: %v", err)
	}
	// Several more passes: the configmap waits for the pods.
	for range 5 {
		h.clk.Step(10 * time.Second)
	}
	if _, err := cms.Get(h.ctx, "cm", metav1.GetOptions{}); err != nil {
		t.Fatalf("configmap deleted while a pod remains: %v", err)
	}
	if _, err := pods.Patch(h.ctx, "p", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitFor("namespace gone", h.gone(func() error { _, err := h.nss.Get(h.ctx, "ns2", metav1.GetOptions{}); return err }))
	if _, err := cms.Get(h.ctx, "cm", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("configmap: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
