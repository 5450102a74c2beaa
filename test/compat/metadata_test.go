package compat

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	skiffclient "github.com/skiff-sh/skiff/pkg/client"
	skiffcache "github.com/skiff-sh/skiff/pkg/client/cache"
	skiffmeta "github.com/skiff-sh/skiff/pkg/client/metadata"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

var configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// seedConfigMaps creates n ConfigMaps in namespace ns.
func seedConfigMaps(t testing.TB, env *testenv.Environment, ns string, n int) {
	t.Helper()
	cs := clientset(t, restConfig(t, env))
	createNamespace(t, cs, ns)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				_, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i), Labels: map[string]string{"i": fmt.Sprint(i % 10)}},
					Data:       map[string]string{"payload": "x"},
				}, metav1.CreateOptions{})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// runMetadataInformer syncs one metadata informer of ConfigMaps in ns
// (impl "skiff" or "clientgo") and returns the names it holds once its
// handler has seen want adds.
func runMetadataInformer(t testing.TB, env *testenv.Environment, impl, ns string, want int) []string {
	var seen atomic.Int64
	done := make(chan struct{})
	count := func(obj any) {
		if a, ok := obj.(metav1.Object); !ok || !strings.HasPrefix(a.GetName(), "cm-") {
			return // kube-root-ca.crt, when something publishes it
		}
		if seen.Add(1) == int64(want) {
			close(done)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var keys func() []string
	if impl == "skiff" {
		c := skiffClient(t, env)
		f := skiffmeta.NewSharedInformerFactory(c, 0, skiffmeta.WithNamespace(ns))
		inf := f.ForResource(skiffclient.Resource{Version: "v1", Resource: "configmaps", Namespaced: true})
		if _, err := inf.Informer().AddEventHandler(skiffcache.ResourceEventHandlerFuncs{AddFunc: count}); err != nil {
			t.Fatal(err)
		}
		f.Start(ctx)
		defer f.Shutdown()
		keys = inf.Informer().GetStore().ListKeys
	} else {
		mc, err := metadata.NewForConfig(restConfig(t, env))
		if err != nil {
			t.Fatal(err)
		}
		f := metadatainformer.NewFilteredSharedInformerFactory(mc, 0, ns, nil)
		inf := f.ForResource(configMapsGVR)
		if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: count}); err != nil {
			t.Fatal(err)
		}
		f.Start(ctx.Done())
		defer f.Shutdown()
		keys = inf.Informer().GetStore().ListKeys
	}
	<-done
	var out []string
	for _, k := range keys() {
		if strings.Contains(k, "/cm-") {
			out = append(out, k)
		}
	}
	cancel()
	return out
}

// TestMetadataInformers: client-go's metadata informer works against skiff
// and holds exactly what skiff's holds.
func TestMetadataInformers(t *testing.T) {
	env := startEnv(t)
	seedConfigMaps(t, env, "meta", 50)
	sk := runMetadataInformer(t, env, "skiff", "meta", 50)
	cg := runMetadataInformer(t, env, "clientgo", "meta", 50)
	if len(sk) != 50 || len(cg) != 50 {
		t.Fatalf("skiff %d keys, client-go %d", len(sk), len(cg))
	}
	in := map[string]bool{}
	for _, k := range cg {
		in[k] = true
	}
	for _, k := range sk {
		if !in[k] {
			t.Fatalf("skiff has %s, client-go does not", k)
		}
	}
	// client-go's metadata client reads what skiff's does.
	mc, err := metadata.NewForConfig(restConfig(t, env))
	if err != nil {
		t.Fatal(err)
	}
	got, err := mc.Resource(configMapsGVR).Namespace("meta").Get(context.Background(), "cm-00001", metav1.GetOptions{})
	if err != nil || got.Name != "cm-00001" || got.Labels["i"] != "1" {
		t.Fatalf("client-go metadata get: %v %+v", err, got)
	}
}

// BenchmarkMetadataInformerSync measures a metadata informer's initial
// sync of 5000 ConfigMaps from a real skiff API server (HTTP, protobuf
// PartialObjectMetadataList), skiff's against client-go's, until the
// handler has seen every add.
func BenchmarkMetadataInformerSync(b *testing.B) {
	const n = 5000
	env := startEnv(b)
	seedConfigMaps(b, env, "bench", n)
	for _, impl := range impls {
		b.Run(impl, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if got := runMetadataInformer(b, env, impl, "bench", n); len(got) != n {
					b.Fatalf("%d keys", len(got))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/object")
		})
	}
}
