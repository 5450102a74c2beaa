package compat

// Shared test helpers: an in-process skiff API server per test, client-go
// and skiff clients for it, a request-recording transport, and polling.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	skiffclient "github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/controllermanager"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// TestMain quiets client-go's klog and skiff's slog output unless
// SKIFF_COMPAT_LOG is set.
func TestMain(m *testing.M) {
	if os.Getenv("SKIFF_COMPAT_LOG") == "" {
		klog.SetLogger(logr.Discard())
		slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	}
	os.Exit(m.Run())
}

// waitTimeout bounds every wait for a condition.
const waitTimeout = 20 * time.Second

// startEnv starts an in-process skiff API server (memory storage) with
// skiff's controller manager for t, and waits until the default namespace
// has what the controllers put in every namespace (see createNamespace).
// Controllers named in without ("deployment-controller") are left out.
func startEnv(t testing.TB, without ...string) *testenv.Environment {
	t.Helper()
	cm := controllermanager.Config{}
	if len(without) > 0 {
		cm.Controllers = []string{"*"}
		for _, c := range without {
			cm.Controllers = append(cm.Controllers, "-"+c)
		}
	}
	env := testenv.StartT(t, testenv.Config{ControllerManager: controllermanager.InProcess(cm)})
	waitNamespaceBootstrap(t, env.KubeconfigPath, "default")
	return env
}

// waitNamespaceBootstrap waits, as upstream's e2e framework does, until
// namespace ns has its default service account (pods need it) and
// kube-root-ca.crt, which the controller manager creates.
func waitNamespaceBootstrap(t testing.TB, kubeconfig, ns string) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	eventually(t, "default service account and kube-root-ca.crt in "+ns, func() bool {
		_, err1 := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		_, err2 := cs.CoreV1().ConfigMaps(ns).Get(ctx, rootCA, metav1.GetOptions{})
		return err1 == nil && err2 == nil
	})
}

// restConfig loads the environment's admin kubeconfig with client-go's
// clientcmd, unthrottled, with client-go's default content types
// (protobuf for built-in types, JSON otherwise).
func restConfig(t testing.TB, env *testenv.Environment) *rest.Config {
	t.Helper()
	return protobufConfig(t, env)
}

// protobufConfig is restConfig with client-go's default content types
// (protobuf preferred for built-in types, JSON otherwise).
func protobufConfig(t testing.TB, env *testenv.Environment) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", env.KubeconfigPath)
	if err != nil {
		t.Fatalf("clientcmd: %v", err)
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	cfg.UserAgent = "skiff-compat/" + t.Name()
	return cfg
}

// clientset is a real client-go Clientset for cfg.
func clientset(t testing.TB, cfg *rest.Config) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("kubernetes.NewForConfig: %v", err)
	}
	return cs
}

// skiffClient is skiff's own REST client for env, unthrottled.
func skiffClient(t testing.TB, env *testenv.Environment) *skiffclient.Client {
	t.Helper()
	cfg, err := skiffclient.LoadKubeconfig(env.KubeconfigPath, "")
	if err != nil {
		t.Fatalf("skiff LoadKubeconfig: %v", err)
	}
	cfg.QPS = -1
	c, err := skiffclient.New(cfg)
	if err != nil {
		t.Fatalf("skiff client.New: %v", err)
	}
	return c
}

// createNamespace creates namespace name, waits for its default service
// account and kube-root-ca.crt (the controller manager's) and returns it.
func createNamespace(t testing.TB, cs kubernetes.Interface, name string) string {
	t.Helper()
	ctx := context.Background()
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	eventually(t, "default service account and kube-root-ca.crt in "+name, func() bool {
		_, err1 := cs.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		_, err2 := cs.CoreV1().ConfigMaps(name).Get(ctx, rootCA, metav1.GetOptions{})
		return err1 == nil && err2 == nil
	})
	return name
}

// testPod is a minimal valid pod.
func testPod(ns, name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36"}}},
	}
}

// testConfigMap is a config map with data.
func testConfigMap(ns, name string, labels, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Data: data}
}

// eventually polls cond every 10 ms until it holds, failing t after
// waitTimeout.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// must fails t on err.
func must(t testing.TB, err error, what string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(what, args...), err)
	}
}

// rootCA is the ConfigMap the controller manager's root CA publisher
// creates in every namespace.
const rootCA = "kube-root-ca.crt"

// recordedRequest is one request seen by a recordingTransport.
type recordedRequest struct {
	Method, Path, RawQuery string
	Accept, ContentType    string // request headers
	RespContentType        string // response header
	Status                 int
}

// requestLog records the requests made through the transports it wraps
// (install with cfg.Wrap(log.wrap)).
type requestLog struct {
	mu   sync.Mutex
	reqs []recordedRequest
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		rec := recordedRequest{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery,
			Accept: r.Header.Get("Accept"), ContentType: r.Header.Get("Content-Type")}
		if resp != nil {
			rec.RespContentType = resp.Header.Get("Content-Type")
			rec.Status = resp.StatusCode
		}
		l.mu.Lock()
		l.reqs = append(l.reqs, rec)
		l.mu.Unlock()
		return resp, err
	})
}

// get returns the requests so far.
func (l *requestLog) get() []recordedRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]recordedRequest(nil), l.reqs...)
}

// reset forgets the requests so far.
func (l *requestLog) reset() {
	l.mu.Lock()
	l.reqs = nil
	l.mu.Unlock()
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
