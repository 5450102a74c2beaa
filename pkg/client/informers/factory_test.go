package informers_test

import (
	"context"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

const timeout = 30 * time.Second

func newClient(t *testing.T) *client.Client {
	t.Helper()
	env := testenv.StartT(t)
	// The tests create pods in "default" without a controller manager.
	if err := env.EnsureServiceAccount(context.Background(), "default", "default"); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newPod(ns, name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
}

func mustCreate[T client.Object, L client.ObjectList](t *testing.T, typed *client.Typed[T, L], obj T) T {
	t.Helper()
	out, err := typed.Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// eventually waits for cond with a deadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// settle creates obj (as a sentinel, after the informer synced) and waits
// until the informer has it: it can only come through the watch, which is
// then open. A test must not end with an informer's request still on its
// way to the server: the test server's shutdown counts requests with a
// sync.WaitGroup whose Add would then race with Wait.
func settle[T client.Object, L client.ObjectList](t *testing.T, typed *client.Typed[T, L], obj T, cached func() bool) {
	t.Helper()
	mustCreate(t, typed, obj)
	eventually(t, "sentinel "+obj.GetName()+" cached", cached)
}

func waitSync(t *testing.T, f *informers.SharedInformerFactory) map[reflect.Type]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res := f.WaitForCacheSync(ctx)
	for typ, ok := range res {
		if !ok {
			t.Fatalf("%v did not sync", typ)
		}
	}
	return res
}

func podNames(t *testing.T, l cache.Lister[*corev1.Pod]) []string {
	t.Helper()
	pods, err := l.List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods {
		names = append(names, p.Namespace+"/"+p.Name)
	}
	slices.Sort(names)
	return names
}

func TestFactorySharesOneInformerPerType(t *testing.T) {
	c := newClient(t)
	f := informers.NewSharedInformerFactory(c, 0)
	t.Cleanup(f.Shutdown)
	pods := f.Pods()
	if informers.InformerFor[*corev1.Pod, *corev1.PodList](f) != pods || f.Pods().Informer() != pods.Informer() {
		t.Fatal("two informers for pods")
	}
	if f.ConfigMaps().Informer() == pods.Informer() {
		t.Fatal("config maps share the pod informer")
	}
	// client-go's InformerFor reaches the same informer.
	got := f.InformerFor(&corev1.Pod{}, func(*client.Client, time.Duration) cache.SharedIndexInformer {
		t.Fatal("made a second pod informer")
		return nil
	})
	if got != pods.Informer() {
		t.Fatal("InformerFor returned another informer")
	}
}

func TestFactoryStartWaitAndShutdown(t *testing.T) {
	c := newClient(t)
	podc := client.For[*corev1.Pod, *corev1.PodList](c)
	cmc := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](c)
	mustCreate(t, podc, newPod("default", "a", nil))
	mustCreate(t, cmc, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cm"}})

	f := informers.NewSharedInformerFactory(c, 0)
	t.Cleanup(f.Shutdown)
	// A pod informer whose Run calls we count.
	var runs atomic.Int32
	podInf := f.InformerFor(&corev1.Pod{}, func(c *client.Client, resync time.Duration) cache.SharedIndexInformer {
		return &countingInformer{
			SharedIndexInformer: cache.NewTypedInformer(client.For[*corev1.Pod, *corev1.PodList](c), nil,
				cache.SharedIndexInformerOptions{ResyncPeriod: resync}).Informer(),
			runs: &runs,
		}
	})
	pods := f.Pods()
	if pods.Informer() != podInf {
		t.Fatal("Pods() is not the informer made by InformerFor")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.Start(ctx)
	res := waitSync(t, f)
	if len(res) != 1 || !res[reflect.TypeOf(&corev1.Pod{})] {
		t.Fatalf("sync result %v", res)
	}
	eventually(t, "pod a cached", func() bool { return slices.Equal(podNames(t, pods.Lister()), []string{"default/a"}) })

	// An informer asked for later starts with the next Start; the running
	// one is not started again.
	cms := f.ConfigMaps()
	f.Start(ctx)
	res = waitSync(t, f)
	if len(res) != 2 || !res[reflect.TypeOf(&corev1.ConfigMap{})] {
		t.Fatalf("sync result %v", res)
	}
	if _, err := cms.Lister().Namespace("default").Get("cm"); err != nil {
		eventually(t, "cm cached", func() bool { _, err := cms.Lister().Namespace("default").Get("cm"); return err == nil })
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("pod informer Run called %d times", n)
	}
	settle(t, podc, newPod("default", "sentinel", nil), func() bool {
		_, err := pods.Lister().Namespace("default").Get("sentinel")
		return err == nil
	})
	settle(t, cmc, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "sentinel"}}, func() bool {
		_, err := cms.Lister().Namespace("default").Get("sentinel")
		return err == nil
	})

	f.Shutdown() // stops them even though ctx is still live
	if !pods.Informer().IsStopped() || !cms.Informer().IsStopped() {
		t.Fatal("informers still running after Shutdown")
	}
	nodes := f.Nodes()
	f.Start(ctx) // no effect after Shutdown
	if nodes.Informer().IsStopped() || nodes.HasSynced() {
		t.Fatal("Start after Shutdown started an informer")
	}
	f.Shutdown()
}

type countingInformer struct {
	cache.SharedIndexInformer
	runs *atomic.Int32
}

func (c *countingInformer) Run(ctx context.Context) {
	c.runs.Add(1)
	c.SharedIndexInformer.Run(ctx)
}

func TestFactoryNamespaceTweakAndTransform(t *testing.T) {
	c := newClient(t)
	mustCreate(t, client.For[*corev1.Namespace, *corev1.NamespaceList](c), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}})
	mustCreate(t, client.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](c), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "default"}})
	podc := client.For[*corev1.Pod, *corev1.PodList](c)
	mustCreate(t, podc, newPod("default", "in", map[string]string{"app": "x"}))
	mustCreate(t, podc, newPod("default", "wrong-label", map[string]string{"app": "y"}))
	mustCreate(t, podc, newPod("other", "wrong-ns", map[string]string{"app": "x"}))

	f := informers.NewSharedInformerFactory(c, 0,
		informers.WithNamespace("default"),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "app=x" }),
		informers.WithTransform(func(obj any) (any, error) {
			if p, ok := obj.(*corev1.Pod); ok {
				p.ManagedFields = nil
				p.Spec = corev1.PodSpec{}
			}
			return obj, nil
		}),
	)
	t.Cleanup(f.Shutdown)
	pods := f.Pods()
	f.Start(context.Background())
	waitSync(t, f)
	eventually(t, "default/in cached", func() bool { return slices.Equal(podNames(t, pods.Lister()), []string{"default/in"}) })
	p, err := pods.Lister().Namespace("default").Get("in")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Spec.Containers) != 0 {
		t.Fatal("transform not applied")
	}
	// Later events pass the same filter.
	mustCreate(t, podc, newPod("default", "in2", map[string]string{"app": "x"}))
	mustCreate(t, podc, newPod("other", "wrong-ns2", map[string]string{"app": "x"}))
	eventually(t, "in2 cached", func() bool {
		return slices.Equal(podNames(t, pods.Lister()), []string{"default/in", "default/in2"})
	})
}

func TestFactoryCustomResync(t *testing.T) {
	c := newClient(t)
	podc := client.For[*corev1.Pod, *corev1.PodList](c)
	mustCreate(t, podc, newPod("default", "a", nil))
	f := informers.NewSharedInformerFactory(c, time.Hour,
		informers.WithCustomResyncConfig(map[client.Object]time.Duration{&corev1.Pod{}: time.Second}))
	t.Cleanup(f.Shutdown)
	pods := f.Pods()
	var resyncs atomic.Int32
	if _, err := pods.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Pod]{
		UpdateFunc: func(o, n *corev1.Pod) {
			if o == n {
				resyncs.Add(1)
			}
		},
	}); err != nil {
		t.Fatal(err)
	}
	f.Start(context.Background())
	waitSync(t, f)
	eventually(t, "a resync (1s period on the wall clock)", func() bool { return resyncs.Load() > 0 })
	settle(t, podc, newPod("default", "sentinel", nil), func() bool {
		_, err := pods.Lister().Namespace("default").Get("sentinel")
		return err == nil
	})
}

func TestFactoryUnstructuredInformerPerResource(t *testing.T) {
	c := newClient(t)
	mustCreate(t, client.For[*corev1.ConfigMap, *corev1.ConfigMapList](c),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cm"}})
	mustCreate(t, client.For[*corev1.Secret, *corev1.SecretList](c),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "s"}})
	f := informers.NewSharedInformerFactory(c, 0)
	t.Cleanup(f.Shutdown)
	type U = *unstructured.Unstructured
	type UL = *unstructured.UnstructuredList
	cms := informers.InformerForResource[U, UL](f, client.Resource{Version: "v1", Resource: "configmaps", Namespaced: true})
	secrets := informers.InformerForResource[U, UL](f, client.Resource{Version: "v1", Resource: "secrets", Namespaced: true})
	if cms.Informer() == secrets.Informer() {
		t.Fatal("one informer for two resources")
	}
	f.Start(context.Background())
	waitSync(t, f)
	eventually(t, "both cached", func() bool {
		cm, err1 := cms.Lister().Namespace("default").Get("cm")
		s, err2 := secrets.Lister().Namespace("default").Get("s")
		return err1 == nil && err2 == nil && cm.GetKind() == "ConfigMap" && s.GetKind() == "Secret"
	})
	settle(t, client.For[*corev1.ConfigMap, *corev1.ConfigMapList](c),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "sentinel"}}, func() bool {
			_, err := cms.Lister().Namespace("default").Get("sentinel")
			return err == nil
		})
	settle(t, client.For[*corev1.Secret, *corev1.SecretList](c),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "sentinel"}}, func() bool {
			_, err := secrets.Lister().Namespace("default").Get("sentinel")
			return err == nil
		})
}

// Existing finds the typed informer a controller asked for, and nothing
// for resources without one, for dynamic (unstructured) informers, or for
// a factory that sees only part of the objects.
func TestFactoryExisting(t *testing.T) {
	c := newClient(t)
	f := informers.NewSharedInformerFactory(c, 0)
	t.Cleanup(f.Shutdown)
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	if f.Existing(pods) != nil {
		t.Fatal("an informer before anyone asked for one")
	}
	inf := f.Pods().Informer()
	if f.Existing(pods) != inf {
		t.Fatal("the pod informer is not found")
	}
	f.ForResource(client.Resource{Version: "v1", Resource: "configmaps", Namespaced: true})
	if f.Existing(cms) != nil {
		t.Fatal("a dynamic informer counts as a typed one")
	}
	ns := informers.NewSharedInformerFactory(c, 0, informers.WithNamespace("default"))
	t.Cleanup(ns.Shutdown)
	ns.Pods()
	if ns.Existing(pods) != nil {
		t.Fatal("a namespaced factory's informer offered for the whole resource")
	}
}
