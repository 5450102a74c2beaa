package rbac

import (
	"context"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/auth/authorizer"
)

func rule(verbs, groups, resources []string, names ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources, ResourceNames: names}
}

func l(s ...string) []string { return s }

func clusterRole(name string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
}

func role(ns, name string, rules ...rbacv1.PolicyRule) *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}
}

func crb(name, roleName string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: roleName}, Subjects: subjects}
}

func rb(ns, name, kind, roleName string, subjects ...rbacv1.Subject) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: roleName}, Subjects: subjects}
}

func userSubject(n string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: n}
}
func groupSubject(n string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: n}
}
func saSubject(ns, n string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: n}
}

// fixture is a small cluster policy exercising each matching rule.
func fixture() *Index {
	x := NewIndex()
	objs := []runtime.Object{
		clusterRole("pod-reader", rule(l("get", "list", "watch"), l(""), l("pods"))),
		clusterRole("logs", rule(l("get"), l(""), l("pods/log"))),
		clusterRole("scaler", rule(l("get", "update"), l("*"), l("*/scale"))),
		clusterRole("deploy-all", rule(l("*"), l("apps"), l("deployments"))),
		clusterRole("secret-one", rule(l("get", "update"), l(""), l("secrets"), "s1")),
		clusterRole("nonres", rbacv1.PolicyRule{Verbs: l("get"), NonResourceURLs: l("/healthz", "/logs/*")}),
		clusterRole("everything", rule(l("*"), l("*"), l("*")), rbacv1.PolicyRule{Verbs: l("*"), NonResourceURLs: l("*")}),
		// An aggregated role as the aggregation controller leaves it: the
		// selected roles' rules are stored in its rules.
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "aggregated"},
			AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"agg": "true"}}}},
			Rules:           []rbacv1.PolicyRule{rule(l("get", "list"), l(""), l("configmaps"))}},
		role("ns1", "cm-editor", rule(l("create", "update"), l(""), l("configmaps"))),

		crb("alice-reader", "pod-reader", userSubject("alice")),
		crb("devs-logs", "logs", groupSubject("devs")),
		crb("robot-scaler", "scaler", saSubject("ns1", "robot")),
		// A service account subject without a namespace in a cluster
		// binding names nobody.
		crb("sa-without-namespace", "everything", saSubject("", "robot")),
		crb("carol-nonres", "nonres", userSubject("carol")),
		crb("dave-aggregated", "aggregated", userSubject("dave")),
		rb("ns1", "bob-cm", "Role", "cm-editor", userSubject("bob")),
		rb("ns1", "bob-secret", "ClusterRole", "secret-one", userSubject("bob")),
		// A service account subject without a namespace in a role
		// binding is the binding's namespace's.
		rb("ns2", "robot-deploy", "ClusterRole", "deploy-all", saSubject("", "robot")),
		rb("ns1", "eve-missing", "Role", "missing", userSubject("eve")),
	}
	for _, o := range objs {
		x.Set(o)
	}
	return x
}

func user(name string, groups ...string) *authenticationv1.UserInfo {
	return &authenticationv1.UserInfo{Username: name, Groups: append(groups, "system:authenticated")}
}

func res(verb, group, resource, sub, ns, name string) authorizer.Attributes {
	return authorizer.Attributes{Verb: verb, APIGroup: group, APIVersion: "v1", Resource: resource, Subresource: sub, Namespace: ns, Name: name, ResourceRequest: true}
}

func nonRes(verb, path string) authorizer.Attributes {
	return authorizer.Attributes{Verb: verb, Path: path}
}

// TestMatrix checks user × verb × resource × namespace against the answers
// upstream's RBAC documentation gives
// (https://kubernetes.io/docs/reference/access-authn-authz/rbac/).
func TestMatrix(t *testing.T) {
	z := authorizer.Union{authorizer.PrivilegedGroups{authorizer.SystemPrivilegedGroup}, New(fixture())}
	robot1 := &authenticationv1.UserInfo{Username: "system:serviceaccount:ns1:robot", Groups: l("system:serviceaccounts", "system:serviceaccounts:ns1", "system:authenticated")}
	robot2 := &authenticationv1.UserInfo{Username: "system:serviceaccount:ns2:robot", Groups: l("system:serviceaccounts", "system:serviceaccounts:ns2", "system:authenticated")}
	tests := []struct {
		name  string
		user  *authenticationv1.UserInfo
		attrs authorizer.Attributes
		want  authorizer.Decision
	}{
		// ClusterRole bound cluster-wide: every namespace and the cluster scope.
		{"cluster binding in a namespace", user("alice"), res("get", "", "pods", "", "ns1", "p"), authorizer.DecisionAllow},
		{"cluster binding across namespaces", user("alice"), res("list", "", "pods", "", "", ""), authorizer.DecisionAllow},
		{"cluster binding watch", user("alice"), res("watch", "", "pods", "", "ns9", ""), authorizer.DecisionAllow},
		{"verb not granted", user("alice"), res("delete", "", "pods", "", "ns1", "p"), authorizer.DecisionNoOpinion},
		{"resource not granted", user("alice"), res("get", "", "secrets", "", "ns1", "s"), authorizer.DecisionNoOpinion},
		{"other group same resource name", user("alice"), res("get", "metrics.k8s.io", "pods", "", "ns1", "p"), authorizer.DecisionNoOpinion},
		{"subresource needs its own rule", user("alice"), res("get", "", "pods", "log", "ns1", "p"), authorizer.DecisionNoOpinion},
		{"user not bound", user("mallory"), res("get", "", "pods", "", "ns1", "p"), authorizer.DecisionNoOpinion},
		// Group subjects and the resource/subresource form.
		{"group member subresource", user("frank", "devs"), res("get", "", "pods", "log", "ns1", "p"), authorizer.DecisionAllow},
		{"group member parent resource", user("frank", "devs"), res("get", "", "pods", "", "ns1", "p"), authorizer.DecisionNoOpinion},
		{"group member other subresource", user("frank", "devs"), res("get", "", "pods", "exec", "ns1", "p"), authorizer.DecisionNoOpinion},
		// "*/scale" matches every resource's scale subresource.
		{"*/scale deployments", robot1, res("update", "apps", "deployments", "scale", "ns1", "d"), authorizer.DecisionAllow},
		{"*/scale replicasets", robot1, res("get", "apps", "replicasets", "scale", "ns3", "r"), authorizer.DecisionAllow},
		{"*/scale not the parent", robot1, res("update", "apps", "deployments", "", "ns1", "d"), authorizer.DecisionNoOpinion},
		{"*/scale not another subresource", robot1, res("update", "apps", "deployments", "status", "ns1", "d"), authorizer.DecisionNoOpinion},
		// A namespace-less service account subject in a cluster binding matches nobody.
		{"sa subject without namespace in cluster binding", robot1, res("delete", "", "nodes", "", "", "n"), authorizer.DecisionNoOpinion},
		// A role binding's namespace-less service account is its own namespace's.
		{"sa subject defaulted to binding namespace", robot2, res("create", "apps", "deployments", "", "ns2", ""), authorizer.DecisionAllow},
		{"role binding only in its namespace", robot2, res("create", "apps", "deployments", "", "ns1", ""), authorizer.DecisionNoOpinion},
		{"role binding wrong sa namespace", robot1, res("create", "apps", "deployments", "", "ns2", ""), authorizer.DecisionNoOpinion},
		{"verb * on deployments", robot2, res("deletecollection", "apps", "deployments", "", "ns2", ""), authorizer.DecisionAllow},
		// Role bindings to a Role and to a ClusterRole.
		{"role binding to role", user("bob"), res("create", "", "configmaps", "", "ns1", ""), authorizer.DecisionAllow},
		{"role binding other namespace", user("bob"), res("create", "", "configmaps", "", "ns2", ""), authorizer.DecisionNoOpinion},
		{"role binding cluster scope", user("bob"), res("create", "", "configmaps", "", "", ""), authorizer.DecisionNoOpinion},
		// resourceNames.
		{"resource name matches", user("bob"), res("get", "", "secrets", "", "ns1", "s1"), authorizer.DecisionAllow},
		{"resource name update", user("bob"), res("update", "", "secrets", "", "ns1", "s1"), authorizer.DecisionAllow},
		{"resource name differs", user("bob"), res("get", "", "secrets", "", "ns1", "s2"), authorizer.DecisionNoOpinion},
		{"resource names never allow list", user("bob"), res("list", "", "secrets", "", "ns1", ""), authorizer.DecisionNoOpinion},
		{"resource names never allow watch", user("bob"), res("watch", "", "secrets", "", "ns1", ""), authorizer.DecisionNoOpinion},
		{"resource names allow a watch of that name", user("bob"), res("get", "", "secrets", "", "ns1", "s1"), authorizer.DecisionAllow},
		{"resource names never allow create", user("bob"), res("create", "", "secrets", "", "ns1", ""), authorizer.DecisionNoOpinion},
		// Non-resource URLs.
		{"non-resource exact", user("carol"), nonRes("get", "/healthz"), authorizer.DecisionAllow},
		{"non-resource verb", user("carol"), nonRes("post", "/healthz"), authorizer.DecisionNoOpinion},
		{"non-resource no prefix without *", user("carol"), nonRes("get", "/healthz/etcd"), authorizer.DecisionNoOpinion},
		{"non-resource trailing *", user("carol"), nonRes("get", "/logs/kube-apiserver.log"), authorizer.DecisionAllow},
		{"non-resource trailing * needs its prefix", user("carol"), nonRes("get", "/logs"), authorizer.DecisionNoOpinion},
		{"non-resource rule is not a resource rule", user("carol"), res("get", "", "healthz", "", "", ""), authorizer.DecisionNoOpinion},
		{"resource rule is not a non-resource rule", user("alice"), nonRes("get", "/api/v1/pods"), authorizer.DecisionNoOpinion},
		// Aggregated ClusterRoles by their stored rules.
		{"aggregated role", user("dave"), res("list", "", "configmaps", "", "ns5", ""), authorizer.DecisionAllow},
		{"aggregated role verb", user("dave"), res("delete", "", "configmaps", "", "ns5", "c"), authorizer.DecisionNoOpinion},
		// system:masters.
		{"system:masters resource", user("root", "system:masters"), res("delete", "", "nodes", "", "", "n"), authorizer.DecisionAllow},
		{"system:masters path", user("root", "system:masters"), nonRes("put", "/anything"), authorizer.DecisionAllow},
		// A binding to a missing role grants nothing.
		{"missing role", user("eve"), res("get", "", "pods", "", "ns1", "p"), authorizer.DecisionNoOpinion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.attrs
			a.User = tt.user
			got, reason, err := z.Authorize(context.Background(), a)
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if got != tt.want {
				t.Fatalf("decision %v (%s), want %v", got, reason, tt.want)
			}
		})
	}
}

func TestReasons(t *testing.T) {
	z := New(fixture())
	for _, tt := range []struct {
		user  *authenticationv1.UserInfo
		attrs authorizer.Attributes
		want  string
	}{
		{user("alice"), res("get", "", "pods", "", "ns1", "p"), `RBAC: allowed by ClusterRoleBinding "alice-reader" of ClusterRole "pod-reader" to User "alice"`},
		{user("frank", "devs"), res("get", "", "pods", "log", "ns1", "p"), `RBAC: allowed by ClusterRoleBinding "devs-logs" of ClusterRole "logs" to Group "devs"`},
		{user("bob"), res("create", "", "configmaps", "", "ns1", ""), `RBAC: allowed by RoleBinding "bob-cm/ns1" of Role "cm-editor" to User "bob"`},
		{&authenticationv1.UserInfo{Username: "system:serviceaccount:ns2:robot"}, res("get", "apps", "deployments", "", "ns2", "d"),
			`RBAC: allowed by RoleBinding "robot-deploy/ns2" of ClusterRole "deploy-all" to ServiceAccount "robot/ns2"`},
		{user("eve"), res("get", "", "pods", "", "ns1", "p"), `RBAC: role.rbac.authorization.k8s.io "missing" not found`},
		{user("mallory"), res("get", "", "pods", "", "ns1", "p"), ``},
	} {
		a := tt.attrs
		a.User = tt.user
		_, reason, _ := z.Authorize(context.Background(), a)
		if reason != tt.want {
			t.Errorf("%s: reason %q, want %q", tt.user.Username, reason, tt.want)
		}
	}
}

// A change of a role or binding applies to the next request.
func TestChangesApply(t *testing.T) {
	x := fixture()
	z := New(x)
	check := func(u *authenticationv1.UserInfo, a authorizer.Attributes, want authorizer.Decision) {
		t.Helper()
		a.User = u
		if got, reason, _ := z.Authorize(context.Background(), a); got != want {
			t.Fatalf("got %v (%s), want %v", got, reason, want)
		}
	}
	del := res("delete", "", "pods", "", "ns1", "p")
	check(user("alice"), del, authorizer.DecisionNoOpinion)
	x.Set(clusterRole("pod-reader", rule(l("get", "list", "watch", "delete"), l(""), l("pods"))))
	check(user("alice"), del, authorizer.DecisionAllow)
	x.Delete(crb("alice-reader", "pod-reader"))
	check(user("alice"), del, authorizer.DecisionNoOpinion)
	// A binding whose subjects change is re-indexed.
	x.Set(crb("alice-reader", "pod-reader", userSubject("zoe")))
	check(user("alice"), del, authorizer.DecisionNoOpinion)
	check(user("zoe"), del, authorizer.DecisionAllow)
	x.Set(crb("alice-reader", "pod-reader", userSubject("alice"), groupSubject("devs")))
	check(user("alice"), del, authorizer.DecisionAllow)
	check(user("zoe"), del, authorizer.DecisionNoOpinion)
	check(user("frank", "devs"), del, authorizer.DecisionAllow)
	// Replace drops what the relist no longer has.
	x.Replace(&rbacv1.ClusterRoleBinding{}, nil)
	check(user("alice"), del, authorizer.DecisionNoOpinion)
	// A deleted role grants nothing any more.
	x.Delete(role("ns1", "cm-editor"))
	check(user("bob"), res("create", "", "configmaps", "", "ns1", ""), authorizer.DecisionNoOpinion)
}

func TestRulesFor(t *testing.T) {
	z := New(fixture())
	// bob in ns1: his role bindings; alice's cluster binding applies
	// everywhere; a user in two subjects of one binding gets its rules once.
	x := z.Index
	x.Set(crb("twice", "logs", userSubject("bob"), groupSubject("devs")))
	rr, nr, incomplete, err := z.RulesFor(context.Background(), user("bob", "devs"), "ns1")
	if err != nil || incomplete {
		t.Fatalf("err %v incomplete %v", err, incomplete)
	}
	var got []string
	for _, r := range rr {
		got = append(got, strings.Join(r.Verbs, ",")+" "+strings.Join(r.Resources, ",")+" "+strings.Join(r.ResourceNames, ","))
	}
	want := []string{"get pods/log ", "get pods/log ", "create,update configmaps ", "get,update secrets s1"}
	// "logs" via devs-logs and via twice (two bindings, both listed, as upstream).
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("rules %q, want %q", got, want)
	}
	if len(nr) != 0 {
		t.Errorf("non-resource rules %v", nr)
	}
	// Without a namespace only cluster bindings count.
	rr, _, _, _ = z.RulesFor(context.Background(), user("bob"), "")
	if len(rr) != 1 {
		t.Errorf("cluster-scope rules %v", rr)
	}
	_, nr, _, _ = z.RulesFor(context.Background(), user("carol"), "default")
	if len(nr) != 1 || strings.Join(nr[0].NonResourceURLs, ",") != "/healthz,/logs/*" {
		t.Errorf("carol's non-resource rules %v", nr)
	}
	_, _, _, err = z.RulesFor(context.Background(), user("eve"), "ns1")
	if err == nil || err.Error() != `role.rbac.authorization.k8s.io "missing" not found` {
		t.Errorf("eve's error %v", err)
	}
}

func TestConfirmNoEscalation(t *testing.T) {
	owner := []rbacv1.PolicyRule{
		rule(l("get", "list"), l(""), l("pods")),
		rule(l("*"), l("apps"), l("*/scale")),
		rule(l("get"), l(""), l("secrets"), "a", "b"),
		{Verbs: l("get"), NonResourceURLs: l("/logs/*")},
	}
	u := &authenticationv1.UserInfo{Username: "bob", Groups: l("dev", "system:authenticated")}
	tests := []struct {
		name  string
		rules []rbacv1.PolicyRule
		want  string
	}{
		{"covered", []rbacv1.PolicyRule{rule(l("get"), l(""), l("pods")), rule(l("update"), l("apps"), l("deployments/scale"))}, ""},
		{"covered names", []rbacv1.PolicyRule{rule(l("get"), l(""), l("secrets"), "a")}, ""},
		{"covered url prefix", []rbacv1.PolicyRule{{Verbs: l("get"), NonResourceURLs: l("/logs/x", "/logs/*")}}, ""},
		{"missing verbs compacted", []rbacv1.PolicyRule{rule(l("get", "delete", "watch"), l(""), l("pods", "services"))},
			`user "bob" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n" +
				`{APIGroups:[""], Resources:["pods"], Verbs:["delete" "watch"]}` + "\n" +
				`{APIGroups:[""], Resources:["services"], Verbs:["get" "delete" "watch"]}`},
		{"names do not cover all", []rbacv1.PolicyRule{rule(l("get"), l(""), l("secrets"))},
			`user "bob" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n" +
				`{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`},
		{"url", []rbacv1.PolicyRule{{Verbs: l("get"), NonResourceURLs: l("/metrics")}},
			`user "bob" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n" +
				`{NonResourceURLs:["/metrics"], Verbs:["get"]}`},
	}
	for _, tt := range tests {
		err := ConfirmNoEscalation(u, owner, nil, tt.rules)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

func BenchmarkAuthorizeServiceAccount(b *testing.B) {
	x := fixture()
	for i := 0; i < 200; i++ {
		x.Set(rb("ns1", "other"+string(rune('a'+i%26))+string(rune('a'+i/26)), "Role", "cm-editor", userSubject("u"+string(rune('a'+i%26)))))
	}
	x.Set(role("ns1", "pod-creator", rule(l("create"), l(""), l("pods"))))
	x.Set(rb("ns1", "robot-pods", "Role", "pod-creator", saSubject("ns1", "robot")))
	z := authorizer.Union{authorizer.PrivilegedGroups{authorizer.SystemPrivilegedGroup}, New(x)}
	a := res("create", "", "pods", "", "ns1", "")
	a.User = &authenticationv1.UserInfo{Username: "system:serviceaccount:ns1:robot", Groups: l("system:serviceaccounts", "system:serviceaccounts:ns1", "system:authenticated")}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if d, _, _ := z.Authorize(context.Background(), a); d != authorizer.DecisionAllow {
			b.Fatal(d)
		}
	}
}
