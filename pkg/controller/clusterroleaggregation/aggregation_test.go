package clusterroleaggregation

import (
	"context"
	"fmt"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

func rule(verb, resource string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: []string{verb}, APIGroups: []string{""}, Resources: []string{resource}}
}

func role(name string, labels map[string]string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Rules: rules}
}

func aggregated(name string, selectors ...map[string]string) *rbacv1.ClusterRole {
	r := role(name, nil)
	r.AggregationRule = &rbacv1.AggregationRule{}
	for _, s := range selectors {
		r.AggregationRule.ClusterRoleSelectors = append(r.AggregationRule.ClusterRoleSelectors, metav1.LabelSelector{MatchLabels: s})
	}
	return r
}

func TestAggregate(t *testing.T) {
	toAdmin := map[string]string{"aggregate-to-admin": "true"}
	toEdit := map[string]string{"aggregate-to-edit": "true"}
	tests := []struct {
		name  string
		role  *rbacv1.ClusterRole
		roles []*rbacv1.ClusterRole
		want  []rbacv1.PolicyRule
	}{
		{name: "nothing matches", role: aggregated("admin", toAdmin), roles: []*rbacv1.ClusterRole{role("x", nil, rule("get", "pods"))}, want: []rbacv1.PolicyRule{}},
		{name: "matching roles by name, duplicates once",
			role: aggregated("admin", toAdmin),
			roles: []*rbacv1.ClusterRole{
				role("zeta", toAdmin, rule("delete", "pods"), rule("get", "pods")),
				role("alpha", toAdmin, rule("get", "pods"), rule("list", "pods")),
				role("other", nil, rule("*", "*")),
			},
			want: []rbacv1.PolicyRule{rule("get", "pods"), rule("list", "pods"), rule("delete", "pods")}},
		{name: "selectors in order",
			role: aggregated("admin", toEdit, toAdmin),
			roles: []*rbacv1.ClusterRole{
				role("a-admin", toAdmin, rule("create", "secrets")),
				role("b-edit", toEdit, rule("update", "configmaps")),
			},
			want: []rbacv1.PolicyRule{rule("update", "configmaps"), rule("create", "secrets")}},
		{name: "a role matching its own selector does not count",
			role:  &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "self", Labels: toAdmin}, AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: toAdmin}}}, Rules: []rbacv1.PolicyRule{rule("get", "nodes")}},
			roles: []*rbacv1.ClusterRole{role("other", toAdmin, rule("get", "pods"))},
			want:  []rbacv1.PolicyRule{rule("get", "pods")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Aggregate(tt.role, append(tt.roles, tt.role))
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("Aggregate = %v, want %v", got, tt.want)
			}
		})
	}
}

func newClient(t *testing.T, env *testenv.Environment) *client.Client {
	t.Helper()
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The API server creates upstream's bootstrap roles (admin, edit, view
// among them), so the aggregated roles of these tests have names of their
// own.

// TestSync applies the union through server-side apply (managed by the
// controller's field manager), removes the rules of a role that stops
// matching, and writes nothing when the rules are current.
func TestSync(t *testing.T) {
	env := testenv.StartT(t)
	c := newClient(t, env)
	ctx := context.Background()
	roles := client.For[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList](c)
	toAdmin := map[string]string{"rbac.example.com/aggregate-to-admin": "true"}
	for _, r := range []*rbacv1.ClusterRole{
		aggregated("example-admin", toAdmin),
		role("pods", toAdmin, rule("get", "pods"), rule("list", "pods")),
		role("secrets", toAdmin, rule("get", "secrets"), rule("get", "pods")),
		role("unrelated", nil, rule("*", "*")),
	} {
		if _, err := roles.Create(ctx, r, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	f := informers.NewSharedInformerFactory(c, 0)
	ctrl, err := New(Config{Client: c, Informers: f})
	if err != nil {
		t.Fatal(err)
	}
	indexer := f.InformerFor(&rbacv1.ClusterRole{}, nil).GetIndexer()
	refresh := func() {
		l, err := roles.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range indexer.List() {
			_ = indexer.Delete(o)
		}
		for i := range l.Items {
			_ = indexer.Add(&l.Items[i])
		}
	}
	refresh()
	if err := ctrl.sync(ctx, "example-admin"); err != nil {
		t.Fatal(err)
	}
	admin, err := roles.Get(ctx, "example-admin", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []rbacv1.PolicyRule{rule("get", "pods"), rule("list", "pods"), rule("get", "secrets")}
	if !equality.Semantic.DeepEqual(admin.Rules, want) {
		t.Errorf("admin rules %v, want %v", admin.Rules, want)
	}
	managed := false
	for _, m := range admin.ManagedFields {
		if m.Manager == FieldManager && m.Operation == metav1.ManagedFieldsOperationApply {
			managed = true
		}
	}
	if !managed {
		t.Errorf("rules not applied by %s: %+v", FieldManager, admin.ManagedFields)
	}

	// Nothing to do: no write.
	refresh()
	if err := ctrl.sync(ctx, "example-admin"); err != nil {
		t.Fatal(err)
	}
	again, _ := roles.Get(ctx, "example-admin", metav1.GetOptions{})
	if again.ResourceVersion != admin.ResourceVersion {
		t.Error("admin was written although its rules were current")
	}

	// "secrets" stops matching: its rule goes.
	s, _ := roles.Get(ctx, "secrets", metav1.GetOptions{})
	s.Labels = nil
	if _, err := roles.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	refresh()
	if err := ctrl.sync(ctx, "example-admin"); err != nil {
		t.Fatal(err)
	}
	admin, _ = roles.Get(ctx, "example-admin", metav1.GetOptions{})
	if want := []rbacv1.PolicyRule{rule("get", "pods"), rule("list", "pods")}; !equality.Semantic.DeepEqual(admin.Rules, want) {
		t.Errorf("admin rules %v, want %v", admin.Rules, want)
	}

	// No role matches any more: the applied rules are removed.
	if err := roles.Delete(ctx, "pods", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	refresh()
	if err := ctrl.sync(ctx, "example-admin"); err != nil {
		t.Fatal(err)
	}
	admin, _ = roles.Get(ctx, "example-admin", metav1.GetOptions{})
	if len(admin.Rules) != 0 {
		t.Errorf("admin rules %v, want none", admin.Rules)
	}
	// A role without an aggregation rule is never written.
	u, _ := roles.Get(ctx, "unrelated", metav1.GetOptions{})
	if err := ctrl.sync(ctx, "unrelated"); err != nil {
		t.Fatal(err)
	}
	if u2, _ := roles.Get(ctx, "unrelated", metav1.GetOptions{}); u2.ResourceVersion != u.ResourceVersion {
		t.Error("a role without aggregationRule was written")
	}
}

// TestController: with the controller running, a new labelled role's
// rules reach the aggregated role.
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
	roles := client.For[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList](c)
	toView := map[string]string{"rbac.example.com/aggregate-to-view": "true"}
	if _, err := roles.Create(ctx, aggregated("example-view", toView), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := roles.Create(ctx, role("widgets-view", toView, rbacv1.PolicyRule{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{"example.com"}, Resources: []string{"widgets"}}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		v, err := roles.Get(ctx, "example-view", metav1.GetOptions{})
		if err == nil && len(v.Rules) == 1 && v.Rules[0].Resources[0] == "widgets" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("view not aggregated: %v %+v", err, v)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
