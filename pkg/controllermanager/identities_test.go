package controllermanager_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/auth/bootstrappolicy"
	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/controllermanager"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// whoami asks the API server who cfg's client is (SelfSubjectReview).
func whoami(t *testing.T, cfg client.Config) string {
	t.Helper()
	c, err := client.New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out authenticationv1.SelfSubjectReview
	resp, err := c.Do(context.Background(), &client.Request{Method: "POST", Path: "/apis/authentication.k8s.io/v1/selfsubjectreviews",
		Body: []byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`), ContentType: "application/json", JSONOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(resp.Body, &out); err != nil {
		t.Fatal(err)
	}
	return out.Status.UserInfo.Username
}

// Every controller skiff implements has upstream's service account, and
// every such account is bound to its system:controller: role.
func TestEveryControllerHasItsServiceAccount(t *testing.T) {
	bound := map[string]bool{}
	for _, b := range append(bootstrappolicy.ControllerRoleBindings(), bootstrappolicy.SkiffClusterRoleBindings()...) {
		for _, s := range b.Subjects {
			bound[s.Namespace+"/"+s.Name] = true
		}
	}
	for _, d := range controllermanager.Controllers() {
		sa, ok := controllermanager.ServiceAccountName(d.Name)
		if !ok {
			// Upstream runs its token controller with the manager's root
			// client.
			if d.Name != "serviceaccount-token-controller" {
				t.Errorf("%s: no service account", d.Name)
			}
			continue
		}
		// Upstream's policy has no role for these yet (they run with the
		// manager's identity upstream too, or are alpha).
		if sa == "storage-version-garbage-collector" || sa == "bootstrap-signer" || sa == "token-cleaner" {
			continue
		}
		if !bound[controllermanager.ControllerNamespace+"/"+sa] {
			t.Errorf("%s: service account %s has no bootstrap binding", d.Name, sa)
		}
	}
}

// With service account credentials a controller's client is the service
// account kube-system/<upstream's name>, created if missing; without, the
// manager's identity.
func TestControllerIdentities(t *testing.T) {
	fake := clock.NewFake(time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC))
	env := testenv.StartT(t, testenv.Config{Clock: fake})
	ctx := context.Background()
	root := mustClient(t, env)

	cfg, err := controllermanager.ControllerClientConfig(ctx, root, false, fake, "garbage-collector-controller")
	if err != nil {
		t.Fatal(err)
	}
	if got := whoami(t, cfg); got != "kubernetes-admin" {
		t.Errorf("without service account credentials: %q, want the manager's identity", got)
	}
	if !strings.HasSuffix(cfg.UserAgent, "/generic-garbage-collector") {
		t.Errorf("without service account credentials: User-Agent = %q, want upstream's client name", cfg.UserAgent)
	}

	cfg, err = controllermanager.ControllerClientConfig(ctx, root, true, fake, "garbage-collector-controller")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](root).Namespace("kube-system").Get(ctx, "generic-garbage-collector", metav1.GetOptions{}); err != nil {
		t.Fatalf("service account not created: %v", err)
	}
	if cfg.CertData != nil || cfg.KeyData != nil || cfg.TokenSource == nil {
		t.Fatalf("config keeps the manager's credentials or has no token source: %+v", cfg)
	}
	if !strings.HasSuffix(cfg.UserAgent, "/system:serviceaccount:kube-system:generic-garbage-collector") {
		t.Errorf("User-Agent = %q", cfg.UserAgent)
	}
	if got := whoami(t, cfg); got != "system:serviceaccount:kube-system:generic-garbage-collector" {
		t.Errorf("with service account credentials: %q", got)
	}

	// Tokens last an hour and are renewed after 48 minutes; a reset (the
	// server answered 401) renews at once.
	src := cfg.TokenSource
	first, err := src.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fake.Step(47 * time.Minute)
	if again, _ := src.Token(ctx); again != first {
		t.Error("token renewed before 80% of its life")
	}
	fake.Step(2 * time.Minute)
	second, _ := src.Token(ctx)
	if second == first || second == "" {
		t.Error("token not renewed after 80% of its life")
	}
	src.ResetToken()
	if third, _ := src.Token(ctx); third == second || third == "" {
		t.Error("token not renewed after a reset")
	}
	if got := whoami(t, cfg); got != "system:serviceaccount:kube-system:generic-garbage-collector" {
		t.Errorf("after renewals: %q", got)
	}

	// Deleting the account invalidates its tokens (once the server's
	// 10 s token cache let go): the next request is refused (401) and
	// resets the token; the one after recreates the account and works
	// again, as upstream's client builder.
	if err := client.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](root).Namespace("kube-system").Delete(ctx, "generic-garbage-collector", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	fake.Step(11 * time.Second)
	c, err := client.New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	cms := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](c).Namespace("default")
	if _, err := cms.List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("with the deleted account's token: %v, want 401", err)
	}
	if _, err := cms.List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("after the reset: %v", err)
	}
	if _, err := client.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](root).Namespace("kube-system").Get(ctx, "generic-garbage-collector", metav1.GetOptions{}); err != nil {
		t.Errorf("account not recreated: %v", err)
	}

	// Upstream's token controller keeps the manager's identity.
	cfg, err = controllermanager.ControllerClientConfig(ctx, root, true, fake, "serviceaccount-token-controller")
	if err != nil {
		t.Fatal(err)
	}
	if got := whoami(t, cfg); got != "kubernetes-admin" {
		t.Errorf("serviceaccount-token-controller: %q, want the manager's identity", got)
	}
}

// The manager runs with service account credentials: a Deployment still
// gets its pods, and the controllers' service accounts exist.
func TestManagerWithServiceAccountCredentials(t *testing.T) {
	env := testenv.StartT(t)
	if err := env.EnsureServiceAccount(context.Background(), "default", "default"); err != nil {
		t.Fatal(err)
	}
	m, err := controllermanager.New(controllermanager.Config{ClientConfig: clientConfig(env), UseServiceAccountCredentials: true,
		Controllers: []string{"deployment", "replicaset"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	c := mustClient(t, env)
	l := map[string]string{"app": "web"}
	if _, err := client.For[*appsv1.Deployment, *appsv1.DeploymentList](c).Namespace("default").Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1"}}}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	eventually(t, "two pods", func() bool {
		l, err := pods.List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) == 2
	})
	sas := client.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](c).Namespace("kube-system")
	for _, name := range []string{"deployment-controller", "replicaset-controller"} {
		if _, err := sas.Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("service account %s: %v", name, err)
		}
	}
}
