package client

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

func envClient(t *testing.T) (*Client, *testenv.Environment) {
	t.Helper()
	env := testenv.StartT(t)
	c, err := New(&Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c, env
}

func cm(name string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels}, Data: map[string]string{"k": "v"}}
}

func TestTypedCRUD(t *testing.T) {
	c, _ := envClient(t)
	ctx := context.Background()
	cms := For[*corev1.ConfigMap, *corev1.ConfigMapList](c).Namespace("default")

	created, err := cms.Create(ctx, cm("a", map[string]string{"app": "x"}), metav1.CreateOptions{})
	if err != nil || created.UID == "" || created.ResourceVersion == "" {
		t.Fatalf("create: %v %+v", err, created.ObjectMeta)
	}
	if _, err := cms.Create(ctx, cm("a", nil), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: %v", err)
	}
	got, err := cms.Get(ctx, "a", metav1.GetOptions{})
	if err != nil || got.UID != created.UID {
		t.Fatalf("get: %v", err)
	}
	if _, err := cms.Get(ctx, "nope", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get missing: %v", err)
	}
	got.Data["k"] = "v2"
	updated, err := cms.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil || updated.Data["k"] != "v2" {
		t.Fatalf("update: %v", err)
	}
	if _, err := cms.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: %v", err)
	}
	patched, err := cms.Patch(ctx, "a", types.MergePatchType, []byte(`{"data":{"p":"1"}}`), metav1.PatchOptions{})
	if err != nil || patched.Data["p"] != "1" {
		t.Fatalf("patch: %v", err)
	}
	if _, err := cms.Create(ctx, cm("b", map[string]string{"app": "y"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "app=x"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "a" || list.ResourceVersion == "" {
		t.Fatalf("list: %v %+v", err, list)
	}
	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("second delete: %v", err)
	}
	// The dynamic client sees the same objects.
	dyn := NewDynamic(c, Resource{Version: "v1", Resource: "configmaps", Namespaced: true}).Namespace("default")
	u, err := dyn.Get(ctx, "b", metav1.GetOptions{})
	if err != nil || u.GetName() != "b" || u.GetKind() != "ConfigMap" {
		t.Fatalf("dynamic get: %v %v", err, u)
	}
	ul, err := dyn.List(ctx, metav1.ListOptions{})
	if err != nil || len(ul.Items) == 0 {
		t.Fatalf("dynamic list: %v", err)
	}
}

func TestWatch(t *testing.T) {
	c, _ := envClient(t)
	ctx := context.Background()
	cms := For[*corev1.ConfigMap, *corev1.ConfigMapList](c).Namespace("default")
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, cm("w", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "w", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []watch.EventType{watch.Added, watch.Deleted}
	for _, typ := range want {
		select {
		case ev := <-w.ResultChan():
			if ev.Type != typ || ev.Object.(*corev1.ConfigMap).Name != "w" {
				t.Fatalf("got %s %v, want %s w", ev.Type, ev.Object, typ)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no event")
		}
	}
	w.Stop()
	for range w.ResultChan() { // drains and closes
	}
}

func TestLoadKubeconfigAndInCluster(t *testing.T) {
	_, env := envClient(t)
	t.Setenv(KubeconfigEnv, filepath.Join(t.TempDir(), "missing")+string(os.PathListSeparator)+env.KubeconfigPath)
	cfg, err := LoadKubeconfig("", "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := For[*corev1.Namespace, *corev1.NamespaceList](c).Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("kubeconfig client: %v", err)
	}
	if _, err := LoadKubeconfig(env.KubeconfigPath, "nope"); err == nil {
		t.Fatal("unknown context accepted")
	}

	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "token"), []byte("tok\n"), 0o600)
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
	t.Setenv("KUBERNETES_SERVICE_PORT", "443")
	ic, err := inClusterConfig(dir)
	if err != nil || ic.Host != "https://10.96.0.1:443" || ic.BearerTokenFile != filepath.Join(dir, "token") {
		t.Fatalf("in-cluster: %v %+v", err, ic)
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if _, err := inClusterConfig(dir); err != ErrNotInCluster {
		t.Fatalf("outside a pod: %v", err)
	}
}

func TestRetriesTooManyRequestsAndBearerToken(t *testing.T) {
	var calls int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			w.WriteHeader(401)
			w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}`))
			return
		}
		if atomic.AddInt32(&calls, 1) < 3 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(429)
			w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429}`))
			return
		}
		w.Write([]byte(`{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"default"}}`))
	}))
	defer srv.Close()
	c, err := New(&Config{Host: srv.URL, BearerToken: "s3cret", QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := For[*corev1.Namespace, *corev1.NamespaceList](c).Get(context.Background(), "default", metav1.GetOptions{})
	if err != nil || ns.Name != "default" || atomic.LoadInt32(&calls) != 3 {
		t.Fatalf("retry: %v, calls %d", err, calls)
	}
	bad, _ := New(&Config{Host: srv.URL, BearerToken: "wrong", QPS: -1})
	if _, err := For[*corev1.Namespace, *corev1.NamespaceList](bad).Get(context.Background(), "default", metav1.GetOptions{}); !apierrors.IsUnauthorized(err) {
		t.Fatalf("bad token: %v", err)
	}
}

func TestThrottleWaitsOnTheTokenBucket(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"x"}}`))
	}))
	defer srv.Close()
	fc := clock.NewFake(time.Unix(1000, 0))
	var logs syncBuffer
	c, err := New(&Config{Host: srv.URL, QPS: 1, Burst: 1, Clock: fc, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	nss := For[*corev1.Namespace, *corev1.NamespaceList](c)
	if _, err := nss.Get(context.Background(), "x", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if logs.String() != "" {
		t.Errorf("an unthrottled request logged %q", logs.String())
	}
	done := make(chan error, 1)
	go func() { _, err := nss.Get(context.Background(), "x", metav1.GetOptions{}); done <- err }()
	// The second request waits for a token: it is still waiting until the
	// fake clock moves a second.
	deadline := time.Now().Add(10 * time.Second)
	for fc.Waiters() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("second request never waited")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case <-done:
		t.Fatal("second request was not throttled")
	default:
	}
	fc.Step(time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// A wait that long is worth client-go's log line.
	got := logs.String()
	for _, want := range []string{`msg="Waited for 1s due to client-side throttling, not priority and fairness"`, "verb=GET", "path=/api/v1/namespaces/x"} {
		if !strings.Contains(got, want) {
			t.Errorf("log %q lacks %q", got, want)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestProtobufContentType(t *testing.T) {
	env := testenv.StartT(t)
	c, err := New(&Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1, ContentType: ContentTypeProtobuf})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cms := For[*corev1.ConfigMap, *corev1.ConfigMapList](c).Namespace("default")
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	created, err := cms.Create(ctx, cm("pb", map[string]string{"a": "b"}), metav1.CreateOptions{})
	if err != nil || created.Labels["a"] != "b" || created.UID == "" {
		t.Fatalf("create: %v %+v", err, created)
	}
	got, err := cms.Get(ctx, "pb", metav1.GetOptions{})
	if err != nil || got.Data["k"] != "v" {
		t.Fatalf("get: %v %+v", err, got)
	}
	// Creates and updates go as protobuf bodies; the server decodes them.
	got.Data["k"] = "w"
	if updated, err := cms.Update(ctx, got, metav1.UpdateOptions{}); err != nil || updated.Data["k"] != "w" {
		t.Fatalf("update: %v %+v", err, updated)
	}
	if _, err := cms.Get(ctx, "nope", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("protobuf error status: %v", err)
	}
	select {
	case ev := <-w.ResultChan():
		if ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).Name != "pb" {
			t.Fatalf("watch: %s %v", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event")
	}
	// Unstructured objects fall back to JSON.
	dyn := NewDynamic(c, Resource{Version: "v1", Resource: "configmaps", Namespaced: true}).Namespace("default")
	if u, err := dyn.Get(ctx, "pb", metav1.GetOptions{}); err != nil || u.GetName() != "pb" {
		t.Fatalf("dynamic with protobuf client: %v", err)
	}
}
