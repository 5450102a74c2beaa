package controllermanager_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/component"
	"github.com/skiff-sh/skiff/pkg/controllermanager"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

const timeout = 30 * time.Second

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// managerClientConfig is the controller manager's client against env (an
// RBAC cluster: testenv.Config.RBAC) as kubeadm configures it: user
// system:kube-controller-manager; run the manager with
// UseServiceAccountCredentials, so that each controller has its service
// account and exactly upstream's bootstrap permissions. The test fails if
// the server refuses any of their requests (creates in a terminating
// namespace aside: admission refuses those, as upstream's).
func managerClientConfig(t *testing.T, env *testenv.Environment) *client.Config {
	t.Helper()
	certPEM, keyPEM, err := env.UserCertificate("system:kube-controller-manager")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { checkNotRefused(t, env) })
	return &client.Config{Host: env.URL, CAData: env.CAData, CertData: certPEM, KeyData: keyPEM}
}

// checkNotRefused fails t for each request of the controller manager
// (its own identity or a controller's service account) refused with 403.
func checkNotRefused(t *testing.T, env *testenv.Environment) {
	t.Helper()
	for _, f := range env.Forbidden() {
		if f.User != "system:kube-controller-manager" && !strings.HasPrefix(f.User, "system:serviceaccount:kube-system:") {
			continue
		}
		if f.Verb == "POST" && terminating(env, f.URI) {
			continue
		}
		t.Errorf("the controller manager was refused: %s", f)
	}
}

// terminating reports whether uri is in a namespace being deleted or gone.
func terminating(env *testenv.Environment, uri string) bool {
	parts := strings.Split(strings.TrimPrefix(uri, "/"), "/")
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == "namespaces" {
			c, err := client.New(clientConfig(env))
			if err != nil {
				return false
			}
			ns, err := client.For[*corev1.Namespace, *corev1.NamespaceList](c).Get(context.Background(), parts[i+1], metav1.GetOptions{})
			return err != nil || ns.DeletionTimestamp != nil
		}
	}
	return false
}

func clientConfig(env *testenv.Environment) *client.Config {
	return &client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData}
}

// echo is a test controller: for each ConfigMap it records a Normal
// "Seen" event, through a named workqueue; it reports the names it saw.
type echo struct {
	cc     controllermanager.ControllerContext
	queue  workqueue.TypedRateLimitingInterface[string]
	lst    func(ns, name string) (*corev1.ConfigMap, error)
	synced cache.InformerSynced

	mu   sync.Mutex
	seen map[string]bool
}

func newEcho(cc controllermanager.ControllerContext) (*echo, error) {
	e := &echo{cc: cc, seen: map[string]bool{}}
	e.queue = workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "echo", MetricsProvider: cc.MetricsProvider, Clock: cc.Clock})
	inf := cc.Informers.ConfigMaps()
	_, err := inf.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(cm *corev1.ConfigMap, _ bool) { e.queue.Add(cm.Namespace + "/" + cm.Name) },
	})
	if err != nil {
		return nil, err
	}
	e.lst = func(ns, name string) (*corev1.ConfigMap, error) { return inf.Lister().Namespace(ns).Get(name) }
	e.synced = inf.Informer().HasSynced
	return e, nil
}

func (e *echo) Run(ctx context.Context) error {
	defer e.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx, e.synced) {
		return nil
	}
	go func() {
		<-ctx.Done()
		e.queue.ShutDown()
	}()
	for {
		key, shutdown := e.queue.Get()
		if shutdown {
			return nil
		}
		ns, name, _ := strings.Cut(key, "/")
		if cm, err := e.lst(ns, name); err == nil {
			e.cc.Recorder.Eventf(cm, corev1.EventTypeNormal, "Seen", "seen by %s", e.cc.Name)
		}
		e.mu.Lock()
		e.seen[key] = true
		e.mu.Unlock()
		e.queue.Done(key)
	}
}

func (e *echo) saw(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.seen[key]
}

type failing struct{}

func (failing) Run(context.Context) error { return errors.New("boom") }

func httpsGet(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestManagerRunsControllersServesHealthAndMetrics(t *testing.T) {
	env := testenv.StartT(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "https://" + ln.Addr().String()
	var (
		mu   sync.Mutex
		ech  *echo
		init []string
	)
	descs := []controllermanager.Descriptor{
		{Name: "echo-controller", Aliases: []string{"echo"}, WorkersFlag: "concurrent-echo-syncs", DefaultWorkers: 3,
			Init: func(cc controllermanager.ControllerContext) (controllermanager.Controller, error) {
				mu.Lock()
				defer mu.Unlock()
				init = append(init, cc.Name)
				if cc.Workers != 7 {
					t.Errorf("workers = %d, want 7 (ConcurrentSyncs)", cc.Workers)
				}
				e, err := newEcho(cc)
				ech = e
				return e, err
			}},
		{Name: "failing-controller", Init: func(controllermanager.ControllerContext) (controllermanager.Controller, error) {
			mu.Lock()
			defer mu.Unlock()
			init = append(init, "failing-controller")
			return failing{}, nil
		}},
		{Name: "off-controller", DisabledByDefault: true, Init: func(controllermanager.ControllerContext) (controllermanager.Controller, error) {
			t.Error("a disabled-by-default controller was started")
			return failing{}, nil
		}},
		{Name: "unimplemented-controller"},
	}
	m, err := controllermanager.New(controllermanager.Config{
		ClientConfig: clientConfig(env), Descriptors: descs,
		ConcurrentSyncs: map[string]int{"echo": 7},
		Serving: component.ServingConfig{Listener: ln,
			AuthenticationKubeconfig: env.KubeconfigPath, AuthorizationKubeconfig: env.KubeconfigPath},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})

	cms := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](m.Client())
	if _, err := cms.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "echo sees default/hello", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return ech != nil && ech.saw("default/hello")
	})
	mu.Lock()
	if strings.Join(init, ",") != "echo-controller,failing-controller" {
		t.Errorf("initialized %v, want echo-controller,failing-controller in table order", init)
	}
	mu.Unlock()
	events := client.For[*corev1.Event, *corev1.EventList](m.Client())
	eventually(t, "the Seen event", func() bool {
		l, err := events.Namespace("default").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, e := range l.Items {
			if e.Reason == "Seen" && e.InvolvedObject.Name == "hello" && e.Source.Component == "echo-controller" {
				return true
			}
		}
		return false
	})

	// The failing controller makes /healthz fail. As upstream's: no
	// leaderElection check without leader election, no ping beside other
	// checks, no /healthz/<check>.
	eventually(t, "/healthz reporting the failed controller", func() bool {
		code, body := httpsGet(t, base+"/healthz")
		return code == http.StatusInternalServerError &&
			body == "[+]echo-controller ok\n[-]failing-controller failed: reason withheld\nhealthz check failed\n"
	})
	for _, path := range []string{"/healthz/echo-controller", "/healthz/failing-controller", "/healthz/ping", "/livez", "/readyz"} {
		if code, _ := httpsGet(t, base+path); code != http.StatusNotFound {
			t.Errorf("%s = %d, want 404 as upstream's", path, code)
		}
	}
	code, body := httpsGet(t, base+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics = %d", code)
	}
	for _, want := range []string{`workqueue_adds_total{name="echo"}`, `workqueue_depth{name="echo"}`,
		`workqueue_queue_duration_seconds_bucket{name="echo"`, `workqueue_work_duration_seconds_count{name="echo"}`,
		`leader_election_master_status{name="kube-controller-manager"} 0`, "go_goroutines", "process_"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestManagerHealth: /healthz lists upstream's checks: ping alone without
// controllers and leader election, else one per running controller.
func TestManagerHealth(t *testing.T) {
	env := testenv.StartT(t)
	tests := []struct {
		name        string
		controllers []string
		want        func(body string) bool
	}{
		{name: "no controller", controllers: []string{}, want: func(body string) bool { return body == "[+]ping ok\nhealthz check passed\n" }},
		{name: "defaults but one", controllers: []string{"-serviceaccount", "*"}, want: func(body string) bool {
			return strings.Contains(body, "[+]root-ca-certificate-publisher-controller ok\n") && !strings.Contains(body, "serviceaccount-controller") &&
				!strings.Contains(body, "ping") && !strings.Contains(body, "leaderElection") && strings.HasSuffix(body, "healthz check passed\n")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			m, err := controllermanager.New(controllermanager.Config{ClientConfig: clientConfig(env), Controllers: tt.controllers,
				Serving: component.ServingConfig{Listener: ln}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- m.Run(ctx) }()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("Run: %v", err)
				}
			}()
			var last string
			deadline := time.Now().Add(timeout)
			for {
				code, body := httpsGet(t, "https://"+ln.Addr().String()+"/healthz?verbose")
				if code == 200 && tt.want(body) {
					break
				}
				last = fmt.Sprint(code, " ", body)
				if time.Now().After(deadline) {
					t.Fatalf("/healthz?verbose: %s", last)
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	if _, err := controllermanager.New(controllermanager.Config{ClientConfig: clientConfig(env), Controllers: []string{"*", "-nope"}}); err == nil ||
		!strings.Contains(err.Error(), `"-nope" is not in the list of known controllers`) {
		t.Fatalf("unknown controller: err = %v", err)
	}
}

type runFunc func(ctx context.Context) error

func (f runFunc) Run(ctx context.Context) error { return f(ctx) }

func mustClient(t *testing.T, env *testenv.Environment) *client.Client {
	t.Helper()
	c, err := client.New(clientConfig(env))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestInProcessWithTestenv: testenv runs the controller manager
// in-process; the built-in controllers act on the test's cluster, and
// --controllers is honoured.
func TestInProcessWithTestenv(t *testing.T) {
	tests := []struct {
		name        string
		controllers []string
		wantSA      bool
		wantCA      bool
	}{
		{name: "defaults", wantSA: true, wantCA: true},
		{name: "without the service account controller", controllers: []string{"*", "-serviceaccount"}, wantCA: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// As kubeadm runs it: with RBAC, the manager's own identity
			// (testenv hands it) and each controller as its service account.
			env := testenv.StartT(t, testenv.Config{RBAC: true,
				ControllerManager: controllermanager.InProcess(controllermanager.Config{Controllers: tt.controllers, UseServiceAccountCredentials: true})})
			t.Cleanup(func() { checkNotRefused(t, env) })
			c := mustClient(t, env)
			ctx := context.Background()
			if _, err := client.For[*corev1.Namespace, *corev1.NamespaceList](c).Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			cms := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](c).Namespace("team")
			sas := client.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](c).Namespace("team")
			// The publisher runs in both cases: once it published, the
			// service account controller (same informers) had its chance.
			eventually(t, "team/kube-root-ca.crt", func() bool {
				cm, err := cms.Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
				return err == nil && cm.Data["ca.crt"] == string(env.CAData)
			})
			if tt.wantSA {
				eventually(t, "team/default", func() bool {
					_, err := sas.Get(ctx, "default", metav1.GetOptions{})
					return err == nil
				})
				return
			}
			// A sentinel namespace published after team proves the
			// manager caught up; still no service account.
			if _, err := client.For[*corev1.Namespace, *corev1.NamespaceList](c).Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "later"}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			eventually(t, "later/kube-root-ca.crt", func() bool {
				_, err := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](c).Namespace("later").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
				return err == nil
			})
			if _, err := sas.Get(ctx, "default", metav1.GetOptions{}); err == nil {
				t.Error("team/default created with the service account controller disabled")
			}
		})
	}
}

// TestLeadershipLost: when another candidate takes the Lease from under
// the leader, the leader stops its controllers within the renew deadline
// and Run ends with ErrLeaderElectionLost (upstream exits).
func TestLeadershipLost(t *testing.T) {
	env := testenv.StartT(t)
	stopped := make(chan struct{})
	running := make(chan struct{})
	descs := []controllermanager.Descriptor{{Name: "probe-controller",
		Init: func(controllermanager.ControllerContext) (controllermanager.Controller, error) {
			return runFunc(func(ctx context.Context) error {
				close(running)
				<-ctx.Done()
				close(stopped)
				return nil
			}), nil
		}}}
	m, err := controllermanager.New(controllermanager.Config{ClientConfig: clientConfig(env), Descriptors: descs,
		LeaderElection: component.LeaderElectionConfig{LeaderElect: true, LeaseDuration: 3 * time.Second,
			RenewDeadline: time.Second, RetryPeriod: 200 * time.Millisecond, Identity: "me"}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Run(context.Background()) }()
	select {
	case <-running:
	case <-time.After(timeout):
		t.Fatal("never led")
	}
	// Becoming leader is an event on the Lease, from the manager, as upstream's.
	events := client.For[*corev1.Event, *corev1.EventList](mustClient(t, env)).Namespace("kube-system")
	eventually(t, "the LeaderElection event", func() bool {
		l, err := events.List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, e := range l.Items {
			if e.Reason == "LeaderElection" && e.Message == "me became leader" && e.InvolvedObject.Kind == "Lease" &&
				e.InvolvedObject.Name == "kube-controller-manager" && e.Source.Component == "kube-controller-manager" {
				return true
			}
		}
		return false
	})
	leases := client.For[*coordinationv1.Lease, *coordinationv1.LeaseList](mustClient(t, env)).Namespace("kube-system")
	eventually(t, "the lease stolen", func() bool {
		l, err := leases.Get(context.Background(), "kube-controller-manager", metav1.GetOptions{})
		if err != nil {
			return false
		}
		thief, long := "thief", int32(3600)
		l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds = &thief, &long
		_, err = leases.Update(context.Background(), l, metav1.UpdateOptions{})
		return err == nil
	})
	stolen := time.Now()
	select {
	case err := <-done:
		if !errors.Is(err, controllermanager.ErrLeaderElectionLost) {
			t.Fatalf("Run = %v, want ErrLeaderElectionLost", err)
		}
	case <-time.After(timeout):
		t.Fatal("Run did not end after the lease was stolen")
	}
	select {
	case <-stopped:
	default:
		t.Fatal("Run returned before its controllers stopped")
	}
	if took := time.Since(stolen); took > 3*time.Second {
		t.Errorf("stopped leading %v after the lease was taken, want within about the renew deadline", took)
	}
}
