package rootcacertpublisher

import (
	"context"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

const ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

func newClient(t *testing.T, env *testenv.Environment) *client.Client {
	t.Helper()
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func published(cm *corev1.ConfigMap) bool {
	return maps.Equal(cm.Data, map[string]string{DataKey: ca}) && cm.Annotations[DescriptionAnnotation] == Description
}

// TestSync calls sync on a given cache state and checks the ConfigMap on
// the server afterwards.
func TestSync(t *testing.T) {
	env := testenv.StartT(t)
	c := newClient(t, env)
	ctx := context.Background()
	cms := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](c)
	tests := []struct {
		name   string
		server *corev1.ConfigMap // on the server (and in the cache) before
		keep   map[string]string // annotations expected to survive
		writes bool
	}{
		{name: "missing: created", writes: true},
		{name: "right: left alone", server: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{DescriptionAnnotation: Description}}, Data: map[string]string{DataKey: ca}}},
		{name: "wrong data: fixed, other annotations kept", writes: true, keep: map[string]string{"team": "a"},
			server: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"team": "a", DescriptionAnnotation: Description}}, Data: map[string]string{DataKey: "stale", "extra": "x"}}},
		{name: "annotation missing: fixed", writes: true, server: &corev1.ConfigMap{Data: map[string]string{DataKey: ca}}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := "ns" + string(rune('a'+i))
			if _, err := client.For[*corev1.Namespace, *corev1.NamespaceList](c).Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			f := informers.NewSharedInformerFactory(c, 0)
			ctrl, err := New(Config{Client: c, Informers: f, RootCA: []byte(ca)})
			if err != nil {
				t.Fatal(err)
			}
			rv := ""
			if tt.server != nil {
				cm := tt.server.DeepCopy()
				cm.Namespace, cm.Name = ns, ConfigMapName
				out, err := cms.Create(ctx, cm, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				rv = out.ResourceVersion
				_ = f.ConfigMaps().Informer().GetIndexer().Add(out)
			}
			if err := ctrl.sync(ctx, ns); err != nil {
				t.Fatal(err)
			}
			got, err := cms.Namespace(ns).Get(ctx, ConfigMapName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !published(got) {
				t.Errorf("not published: %+v %+v", got.Data, got.Annotations)
			}
			for k, v := range tt.keep {
				if got.Annotations[k] != v {
					t.Errorf("annotation %s lost", k)
				}
			}
			if wrote := got.ResourceVersion != rv; wrote != tt.writes {
				t.Errorf("wrote = %v, want %v", wrote, tt.writes)
			}
		})
	}
	// A namespace that does not exist: the refused create is not an error.
	f := informers.NewSharedInformerFactory(c, 0)
	ctrl, err := New(Config{Client: c, Informers: f, RootCA: []byte(ca)})
	if err != nil {
		t.Fatal(err)
	}
	if err := ctrl.sync(ctx, "missing"); err != nil {
		t.Errorf("sync of a missing namespace: %v", err)
	}
}

// TestController: published into every namespace, new ones included, and
// put back when changed or deleted.
func TestController(t *testing.T) {
	env := testenv.StartT(t)
	c := newClient(t, env)
	ctx, cancel := context.WithCancel(context.Background())
	f := informers.NewSharedInformerFactory(c, 0)
	ctrl, err := New(Config{Client: c, Informers: f, RootCA: []byte(ca)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(ctx) }()
	f.Start(ctx)
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		f.Shutdown()
	}()
	cms := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](c)
	ok := func(ns string) func() bool {
		return func() bool {
			cm, err := cms.Namespace(ns).Get(ctx, ConfigMapName, metav1.GetOptions{})
			return err == nil && published(cm)
		}
	}
	for _, ns := range []string{"default", "kube-system", "kube-public"} {
		eventually(t, ns+"/kube-root-ca.crt", ok(ns))
	}
	if _, err := client.For[*corev1.Namespace, *corev1.NamespaceList](c).Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "team/kube-root-ca.crt", ok("team"))
	cm, _ := cms.Namespace("team").Get(ctx, ConfigMapName, metav1.GetOptions{})
	cm.Data[DataKey] = "tampered"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "tampered data put back", ok("team"))
	if err := cms.Namespace("team").Delete(ctx, ConfigMapName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "deleted ConfigMap re-created", ok("team"))
	// Other ConfigMaps are none of its business.
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "mine"}, Data: map[string]string{DataKey: "x"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Namespace("nope").Get(ctx, ConfigMapName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("published into a namespace that does not exist: %v", err)
	}
}
