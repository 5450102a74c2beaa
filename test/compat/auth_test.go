package compat

import (
	"context"
	"slices"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/skiff-sh/skiff/pkg/testenv"
)

// A client-go program running as a service account (a TokenRequest token,
// as a pod's projected token) can do exactly what its RBAC bindings allow,
// and is told so in upstream's words; a role change takes effect promptly;
// its access reviews and rules review answer from the same authorizer.
func TestClientGoServiceAccountRBAC(t *testing.T) {
	env := testenv.StartT(t, testenv.Config{RBAC: true})
	ctx := context.Background()
	admin := clientset(t, restConfig(t, env))
	for _, ns := range []string{"team", "other"} {
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.CoreV1().ServiceAccounts("team").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "app"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().Roles("team").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings("team").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "app-reads-pods"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "pod-reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "app", Namespace: "team"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := admin.CoreV1().ServiceAccounts("team").CreateToken(ctx, "app", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	base := restConfig(t, env)
	saCfg := &rest.Config{Host: base.Host, BearerToken: tr.Status.Token, QPS: -1,
		TLSClientConfig: rest.TLSClientConfig{CAData: base.TLSClientConfig.CAData}}
	sa := clientset(t, saCfg)
	const me = "system:serviceaccount:team:app"

	// A new binding takes effect as soon as the authorizer's watch of
	// roles and bindings has seen it (as upstream's informers): promptly,
	// not necessarily before the create returned.
	eventually(t, "the service account allowed to list pods in team", func() bool {
		_, err := sa.CoreV1().Pods("team").List(ctx, metav1.ListOptions{})
		return err == nil
	})
	w, err := sa.CoreV1().Pods("team").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Errorf("watching pods in team (bound): %v", err)
	} else {
		w.Stop()
	}
	forbidden := []struct {
		what string
		call func() error
		msg  string
	}{
		{"list secrets", func() error { _, err := sa.CoreV1().Secrets("team").List(ctx, metav1.ListOptions{}); return err },
			`secrets is forbidden: User "` + me + `" cannot list resource "secrets" in API group "" in the namespace "team"`},
		{"get a secret", func() error { _, err := sa.CoreV1().Secrets("team").Get(ctx, "s", metav1.GetOptions{}); return err },
			`secrets "s" is forbidden: User "` + me + `" cannot get resource "secrets" in API group "" in the namespace "team"`},
		{"delete a pod", func() error { return sa.CoreV1().Pods("team").Delete(ctx, "p", metav1.DeleteOptions{}) },
			`pods "p" is forbidden: User "` + me + `" cannot delete resource "pods" in API group "" in the namespace "team"`},
		{"list pods elsewhere", func() error { _, err := sa.CoreV1().Pods("other").List(ctx, metav1.ListOptions{}); return err },
			`pods is forbidden: User "` + me + `" cannot list resource "pods" in API group "" in the namespace "other"`},
		{"list pods cluster-wide", func() error { _, err := sa.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); return err },
			`pods is forbidden: User "` + me + `" cannot list resource "pods" in API group "" at the cluster scope`},
		{"list deployments", func() error { _, err := sa.AppsV1().Deployments("team").List(ctx, metav1.ListOptions{}); return err },
			`deployments.apps is forbidden: User "` + me + `" cannot list resource "deployments" in API group "apps" in the namespace "team"`},
		{"read pod logs", func() error { return sa.CoreV1().Pods("team").GetLogs("p", &corev1.PodLogOptions{}).Do(ctx).Error() },
			`pods "p" is forbidden: User "` + me + `" cannot get resource "pods/log" in API group "" in the namespace "team"`},
	}
	for _, f := range forbidden {
		err := f.call()
		if !apierrors.IsForbidden(err) || err.Error() != f.msg {
			t.Errorf("%s: %v, want Forbidden %q", f.what, err, f.msg)
		}
	}

	// Discovery is open to every authenticated user (system:discovery).
	if _, err := sa.Discovery().ServerGroups(); err != nil {
		t.Errorf("discovery: %v", err)
	}

	// The access reviews answer from the authorizer.
	for _, c := range []struct {
		verb, resource string
		allowed        bool
	}{{"list", "pods", true}, {"watch", "pods", true}, {"delete", "pods", false}, {"list", "secrets", false}} {
		r, err := sa.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "team", Verb: c.verb, Resource: c.resource}}},
			metav1.CreateOptions{})
		if err != nil || r.Status.Allowed != c.allowed {
			t.Errorf("can %s %s: %+v %v, want allowed=%v", c.verb, c.resource, r.Status, err, c.allowed)
		}
	}
	rules, err := sa.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{
		Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "team"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(rules.Status.ResourceRules, func(r authorizationv1.ResourceRule) bool {
		return slices.Equal(r.Resources, []string{"pods"}) && slices.Equal(r.Verbs, []string{"get", "list", "watch"})
	}) || !slices.ContainsFunc(rules.Status.ResourceRules, func(r authorizationv1.ResourceRule) bool {
		return slices.Contains(r.Resources, "selfsubjectaccessreviews") // system:basic-user
	}) || slices.ContainsFunc(rules.Status.ResourceRules, func(r authorizationv1.ResourceRule) bool { return slices.Contains(r.Resources, "secrets") }) {
		t.Errorf("rules review: %+v", rules.Status.ResourceRules)
	}

	// A role change applies promptly.
	role, err := admin.RbacV1().Roles("team").Get(ctx, "pod-reader", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}})
	if _, err := admin.RbacV1().Roles("team").Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the service account allowed to create config maps", func() bool {
		_, err := sa.CoreV1().ConfigMaps("team").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "cm-"}}, metav1.CreateOptions{})
		return err == nil
	})
	// Holding only what it holds, it cannot grant itself more.
	_, err = sa.RbacV1().Roles("team").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "more"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("creating a role as the service account: %v, want Forbidden", err)
	}
}

// client-go's rest.Config.Impersonate: the admin acting as a service
// account gets its identity (SelfSubjectReview) and its permissions; a
// user without the impersonate verb is refused in upstream's words.
func TestClientGoImpersonation(t *testing.T) {
	env := testenv.StartT(t, testenv.Config{RBAC: true})
	ctx := context.Background()
	admin := clientset(t, restConfig(t, env))
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().ServiceAccounts("team").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "app"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	as := func(imp rest.ImpersonationConfig) *kubernetes.Clientset {
		cfg := restConfig(t, env)
		cfg.Impersonate = imp
		return clientset(t, cfg)
	}
	const me = "system:serviceaccount:team:app"
	sa := as(rest.ImpersonationConfig{UserName: me})
	who, err := sa.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := who.Status.UserInfo; u.Username != me || !slices.Equal(u.Groups, []string{"system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated"}) {
		t.Errorf("impersonated service account = %+v", u)
	}
	_, err = sa.CoreV1().Secrets("team").List(ctx, metav1.ListOptions{})
	if want := `secrets is forbidden: User "` + me + `" cannot list resource "secrets" in API group "" in the namespace "team"`; !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("impersonated list secrets: %v, want %q", err, want)
	}

	// A user with groups, a UID and extra values.
	jane := as(rest.ImpersonationConfig{UserName: "jane", UID: "1234", Groups: []string{"devs"}, Extra: map[string][]string{"scopes": {"view", "edit"}}})
	who, err = jane.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := who.Status.UserInfo; u.Username != "jane" || u.UID != "1234" || !slices.Equal(u.Groups, []string{"devs", "system:authenticated"}) ||
		!slices.Equal(u.Extra["scopes"], authenticationv1.ExtraValue{"view", "edit"}) {
		t.Errorf("impersonated jane = %+v", u)
	}

	// A service account without the impersonate verb is refused.
	tr, err := admin.CoreV1().ServiceAccounts("team").CreateToken(ctx, "app", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	base := restConfig(t, env)
	tokenCfg := &rest.Config{Host: base.Host, BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: base.TLSClientConfig.CAData},
		Impersonate: rest.ImpersonationConfig{UserName: "someone"}}
	_, err = clientset(t, tokenCfg).CoreV1().Pods("team").List(ctx, metav1.ListOptions{})
	want := `users "someone" is forbidden: User "` + me + `" cannot impersonate resource "users" in API group "" at the cluster scope`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("impersonation without the verb: %v, want %q", err, want)
	}
}
