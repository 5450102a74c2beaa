package serviceaccount

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

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

func sa(ns, name string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// TestSync calls sync on a given cache state (informers filled by hand,
// never started) and checks what it created on the API server.
func TestSync(t *testing.T) {
	env := testenv.StartT(t)
	c := newClient(t, env)
	ctx := context.Background()
	nsClient := client.For[*corev1.Namespace, *corev1.NamespaceList](c)
	sas := client.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](c)
	tests := []struct {
		name     string
		phase    corev1.NamespacePhase // "" : the namespace is not in the cache
		cached   []string              // service accounts in the cache
		onServer []string              // service accounts already on the server
		want     []string              // Config.ServiceAccounts (nil: default)
		created  []string              // on the server afterwards
	}{
		{name: "active namespace gets default", phase: corev1.NamespaceActive, created: []string{"default"}},
		{name: "cached default is not created again", phase: corev1.NamespaceActive, cached: []string{"default"}, created: nil},
		{name: "terminating namespace gets nothing", phase: corev1.NamespaceTerminating, created: nil},
		{name: "namespace gone from the cache", phase: "", created: nil},
		{name: "already exists on the server is fine", phase: corev1.NamespaceActive, onServer: []string{"default"}, created: []string{"default"}},
		{name: "configured list, one present", phase: corev1.NamespaceActive, want: []string{"default", "builder"}, cached: []string{"builder"}, created: []string{"default"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := "ns" + string(rune('a'+i))
			if _, err := nsClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, n := range tt.onServer {
				if _, err := sas.Create(ctx, sa(ns, n), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			f := informers.NewSharedInformerFactory(c, 0)
			cfg := Config{Client: c, Informers: f}
			for _, n := range tt.want {
				cfg.ServiceAccounts = append(cfg.ServiceAccounts, *sa("", n))
			}
			ctrl, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if tt.phase != "" {
				_ = f.Namespaces().Informer().GetIndexer().Add(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}, Status: corev1.NamespaceStatus{Phase: tt.phase}})
			}
			for _, n := range tt.cached {
				_ = f.ServiceAccounts().Informer().GetIndexer().Add(sa(ns, n))
			}
			if err := ctrl.sync(ctx, ns); err != nil {
				t.Fatalf("sync: %v", err)
			}
			l, err := sas.Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range l.Items {
				got = append(got, s.Name)
			}
			if !slices.Equal(got, tt.created) {
				t.Errorf("service accounts on the server %v, want %v", got, tt.created)
			}
		})
	}
}

// TestController: with the controller running, a new namespace gets its
// default service account, a deleted one comes back, and a user's change
// to it is kept.
func TestController(t *testing.T) {
	env := testenv.StartT(t)
	c := newClient(t, env)
	ctx, cancel := context.WithCancel(context.Background())
	f := informers.NewSharedInformerFactory(c, 0)
	ctrl, err := New(Config{Client: c, Informers: f})
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
	sas := client.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](c)
	exists := func(ns string) func() bool {
		return func() bool {
			_, err := sas.Namespace(ns).Get(ctx, "default", metav1.GetOptions{})
			return err == nil
		}
	}
	eventually(t, "default/default (an existing namespace)", exists("default"))
	eventually(t, "kube-system/default", exists("kube-system"))
	if _, err := client.For[*corev1.Namespace, *corev1.NamespaceList](c).Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "team/default", exists("team"))
	old, _ := sas.Namespace("team").Get(ctx, "default", metav1.GetOptions{})
	if err := sas.Namespace("team").Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "team/default re-created", func() bool {
		s, err := sas.Namespace("team").Get(ctx, "default", metav1.GetOptions{})
		return err == nil && s.UID != old.UID
	})
	// A user's change is the user's.
	s, _ := sas.Namespace("team").Get(ctx, "default", metav1.GetOptions{})
	no := false
	s.AutomountServiceAccountToken = &no
	if _, err := sas.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A sentinel namespace proves the controller has caught up since.
	if _, err := client.For[*corev1.Namespace, *corev1.NamespaceList](c).Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "sentinel"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "sentinel/default", exists("sentinel"))
	s, err = sas.Namespace("team").Get(ctx, "default", metav1.GetOptions{})
	if err != nil || s.AutomountServiceAccountToken == nil || *s.AutomountServiceAccountToken {
		t.Errorf("the user's change was undone: %v %+v", err, s)
	}
	if _, err := sas.Namespace("nope").Get(ctx, "default", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a service account in a namespace that does not exist: %v", err)
	}
}
