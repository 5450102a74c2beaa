package apiserver_test

import (
	"crypto/tls"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// as returns a client presenting a certificate for user in groups (the
// server adds system:authenticated).
func (c *client) as(user string, groups ...string) *client {
	c.t.Helper()
	certPEM, keyPEM, err := c.env.UserCertificate(user, groups...)
	if err != nil {
		c.t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		c.t.Fatal(err)
	}
	cfg := c.env.TLSConfig().Clone()
	cfg.Certificates = []tls.Certificate{cert}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}}
	c.t.Cleanup(hc.CloseIdleConnections)
	cc := *c
	cc.hc = hc
	return &cc
}

// withHeaders returns a client adding headers to every request.
func (c *client) withHeaders(h map[string][]string) *client {
	cc := *c
	base := c.hc.Transport
	cc.hc = &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		for k, vs := range h {
			for _, v := range vs {
				r.Header.Add(k, v)
			}
		}
		return base.RoundTrip(r)
	})}
	return &cc
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func rbacObject(kind, ns, name string, extra map[string]any) map[string]any {
	md := map[string]any{"name": name}
	if ns != "" {
		md["namespace"] = ns
	}
	o := map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": md}
	for k, v := range extra {
		o[k] = v
	}
	return o
}

func policyRule(verbs, groups, resources []string, names ...string) map[string]any {
	r := map[string]any{"verbs": verbs, "apiGroups": groups, "resources": resources}
	if len(names) > 0 {
		r["resourceNames"] = names
	}
	return r
}

func userSubjects(names ...string) []map[string]any {
	var out []map[string]any
	for _, n := range names {
		out = append(out, map[string]any{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": n})
	}
	return out
}

// grant gives user rules in ns (cluster-wide when ns is empty) through a
// new role and binding made by the admin, and waits until they apply.
func (c *client) grant(t *testing.T, ns, name, user string, rules ...map[string]any) {
	t.Helper()
	if ns == "" {
		c.call(http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/clusterroles", rbacObject("ClusterRole", "", name, map[string]any{"rules": rules}), http.StatusCreated, nil)
		c.call(http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", rbacObject("ClusterRoleBinding", "", name, map[string]any{
			"roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name}, "subjects": userSubjects(user)}), http.StatusCreated, nil)
	} else {
		c.call(http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/namespaces/"+ns+"/roles", rbacObject("Role", ns, name, map[string]any{"rules": rules}), http.StatusCreated, nil)
		c.call(http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/namespaces/"+ns+"/rolebindings", rbacObject("RoleBinding", ns, name, map[string]any{
			"roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name}, "subjects": userSubjects(user)}), http.StatusCreated, nil)
	}
	// Wait until the binding is seen: a review of one of the rules.
	r := rules[0]
	verb := r["verbs"].([]string)[0]
	res := r["resources"].([]string)[0]
	group := r["apiGroups"].([]string)[0]
	var rname string
	if n, ok := r["resourceNames"].([]string); ok {
		rname = n[0]
	}
	eventually(t, "grant "+name, func() bool {
		var sar authorizationv1.SubjectAccessReview
		c.call(http.MethodPost, "/apis/authorization.k8s.io/v1/subjectaccessreviews", map[string]any{
			"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
			"spec": map[string]any{"user": user, "resourceAttributes": map[string]any{"namespace": ns, "verb": verb, "group": group, "resource": res, "name": rname}},
		}, http.StatusCreated, &sar)
		return sar.Status.Allowed
	})
}

func TestAuthorizationForbidden(t *testing.T) {
	c := start(t, testenv.Config{RBAC: true})
	c.namespace("y")
	bob := c.as("bob")
	for _, tc := range []struct {
		method, path string
		msg          string
		group, kind  string
		name         string
	}{
		{"GET", "/api/v1/namespaces/y/secrets", `secrets is forbidden: User "bob" cannot list resource "secrets" in API group "" in the namespace "y"`, "", "secrets", ""},
		{"GET", "/api/v1/namespaces/y/secrets?watch=true", `secrets is forbidden: User "bob" cannot watch resource "secrets" in API group "" in the namespace "y"`, "", "secrets", ""},
		{"GET", "/api/v1/nodes", `nodes is forbidden: User "bob" cannot list resource "nodes" in API group "" at the cluster scope`, "", "nodes", ""},
		{"GET", "/apis/apps/v1/namespaces/y/deployments/d", `deployments.apps "d" is forbidden: User "bob" cannot get resource "deployments" in API group "apps" in the namespace "y"`, "apps", "deployments", "d"},
		{"GET", "/api/v1/namespaces/y/pods/p/log", `pods "p" is forbidden: User "bob" cannot get resource "pods/log" in API group "" in the namespace "y"`, "", "pods", "p"},
		{"DELETE", "/api/v1/namespaces/y/configmaps", `configmaps is forbidden: User "bob" cannot deletecollection resource "configmaps" in API group "" in the namespace "y"`, "", "configmaps", ""},
		{"PATCH", "/api/v1/namespaces/y", `namespaces "y" is forbidden: User "bob" cannot patch resource "namespaces" in API group "" in the namespace "y"`, "", "namespaces", "y"},
		{"GET", "/foo", `forbidden: User "bob" cannot get path "/foo"`, "", "", ""},
		{"POST", "/metrics", `forbidden: User "bob" cannot post path "/metrics"`, "", "", ""},
	} {
		code, _, data := bob.do(tc.method, tc.path, "{}", "application/merge-patch+json", "")
		st := expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden, tc.msg)
		if st.Details == nil || st.Details.Group != tc.group || st.Details.Kind != tc.kind || st.Details.Name != tc.name {
			t.Errorf("%s %s: details %+v", tc.method, tc.path, st.Details)
		}
	}
	// The admin (system:masters) may do everything.
	c.call("GET", "/api/v1/namespaces/y/secrets", nil, http.StatusOK, nil)
	// Without credentials: system:anonymous, authorized like anyone.
	code, _, data := doWith(t, c.anonymous(), c.env.URL, "GET", "/api/v1/namespaces", nil, "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope`)
	// The bootstrap policy's system:public-info-viewer lets anyone probe
	// health and read the version, not discover the API.
	for _, tc := range []struct {
		path string
		code int
	}{{"/healthz", 200}, {"/readyz", 200}, {"/livez", 200}, {"/version", 200}, {"/api", 403}, {"/apis", 403}} {
		if code, _, data := doWith(t, c.anonymous(), c.env.URL, "GET", tc.path, nil, "", ""); code != tc.code {
			t.Errorf("anonymous %s: %d %s", tc.path, code, data)
		}
	}
	// Invalid credentials are never anonymous.
	code, _, data = c.withBearer("nope").do("GET", "/api/v1/namespaces", nil, "", "")
	expectStatus(t, code, data, http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "Unauthorized")
}

func TestAuthorizationRBAC(t *testing.T) {
	c := start(t, testenv.Config{RBAC: true})
	c.namespace("y")
	c.namespace("z")
	bob := c.as("bob")
	code, _, _ := bob.do("GET", "/api/v1/namespaces/y/configmaps", nil, "", "")
	if code != http.StatusForbidden {
		t.Fatalf("before the grant: %d", code)
	}
	c.grant(t, "y", "cm-reader", "bob", policyRule([]string{"get", "list", "watch"}, []string{""}, []string{"configmaps"}))
	bob.call("GET", "/api/v1/namespaces/y/configmaps", nil, http.StatusOK, nil)
	// Only in its namespace, only its verbs.
	code, _, _ = bob.do("GET", "/api/v1/namespaces/z/configmaps", nil, "", "")
	if code != http.StatusForbidden {
		t.Errorf("other namespace: %d", code)
	}
	code, _, _ = bob.do("POST", "/api/v1/namespaces/y/configmaps", configMap("c", nil, nil), "", "")
	if code != http.StatusForbidden {
		t.Errorf("create: %d", code)
	}
	// resourceNames: a get of that name, and a list or watch selecting
	// exactly that name, as upstream.
	c.grant(t, "z", "one-secret", "bob", policyRule([]string{"get", "list", "watch"}, []string{""}, []string{"secrets"}, "s1"))
	c.call("POST", "/api/v1/namespaces/z/secrets", map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s1"}}, http.StatusCreated, nil)
	bob.call("GET", "/api/v1/namespaces/z/secrets/s1", nil, http.StatusOK, nil)
	bob.call("GET", "/api/v1/namespaces/z/secrets?fieldSelector=metadata.name%3Ds1", nil, http.StatusOK, nil)
	for _, p := range []string{"/api/v1/namespaces/z/secrets", "/api/v1/namespaces/z/secrets/s2", "/api/v1/namespaces/z/secrets?fieldSelector=metadata.name%3Ds2"} {
		if code, _, _ := bob.do("GET", p, nil, "", ""); code != http.StatusForbidden {
			t.Errorf("%s: %d", p, code)
		}
	}
	// A role change applies at once; so does removing the binding.
	var role map[string]any
	c.call("GET", "/apis/rbac.authorization.k8s.io/v1/namespaces/y/roles/cm-reader", nil, http.StatusOK, &role)
	role["rules"] = []map[string]any{policyRule([]string{"*"}, []string{""}, []string{"configmaps"})}
	c.call("PUT", "/apis/rbac.authorization.k8s.io/v1/namespaces/y/roles/cm-reader", role, http.StatusOK, nil)
	eventually(t, "role update", func() bool {
		code, _, _ := bob.do("POST", "/api/v1/namespaces/y/configmaps", configMap("c", nil, nil), "", "")
		return code == http.StatusCreated
	})
	c.call("DELETE", "/apis/rbac.authorization.k8s.io/v1/namespaces/y/rolebindings/cm-reader", nil, http.StatusOK, nil)
	eventually(t, "binding delete", func() bool {
		code, _, _ := bob.do("GET", "/api/v1/namespaces/y/configmaps", nil, "", "")
		return code == http.StatusForbidden
	})
	// Groups from the certificate's organizations.
	c.call(http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", rbacObject("ClusterRoleBinding", "", "devs-view", map[string]any{
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cm-viewer"},
		"subjects": []map[string]any{{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "devs"}}}), http.StatusCreated, nil)
	c.call(http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/clusterroles", rbacObject("ClusterRole", "", "cm-viewer", map[string]any{
		"rules": []map[string]any{policyRule([]string{"list"}, []string{""}, []string{"configmaps"})}}), http.StatusCreated, nil)
	carol := c.as("carol", "devs")
	eventually(t, "group binding", func() bool {
		code, _, _ := carol.do("GET", "/api/v1/configmaps", nil, "", "")
		return code == http.StatusOK
	})
}

func TestAuthorizationServiceAccountToken(t *testing.T) {
	c := start(t, testenv.Config{RBAC: true})
	c.namespace("y")
	var tr authenticationv1.TokenRequest
	c.call("POST", "/api/v1/namespaces/y/serviceaccounts/default/token", map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": map[string]any{}}, http.StatusCreated, &tr)
	sa := c.withBearer(tr.Status.Token)
	code, _, data := sa.do("GET", "/api/v1/namespaces/y/pods", nil, "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`pods is forbidden: User "system:serviceaccount:y:default" cannot list resource "pods" in API group "" in the namespace "y"`)
	c.call("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/y/roles", rbacObject("Role", "y", "pods", map[string]any{
		"rules": []map[string]any{policyRule([]string{"list"}, []string{""}, []string{"pods"})}}), http.StatusCreated, nil)
	c.call("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/y/rolebindings", rbacObject("RoleBinding", "y", "pods", map[string]any{
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pods"},
		"subjects": []map[string]any{{"kind": "ServiceAccount", "name": "default"}}}), http.StatusCreated, nil)
	eventually(t, "service account binding", func() bool {
		code, _, _ := sa.do("GET", "/api/v1/namespaces/y/pods", nil, "", "")
		return code == http.StatusOK
	})
	// Exactly what the binding allows.
	if code, _, _ := sa.do("GET", "/api/v1/namespaces/y/secrets", nil, "", ""); code != http.StatusForbidden {
		t.Errorf("secrets: %d", code)
	}
	var ssr authenticationv1.SelfSubjectReview
	sa.call("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}, http.StatusCreated, &ssr)
	if u := ssr.Status.UserInfo; u.Username != "system:serviceaccount:y:default" || strings.Join(u.Groups, ",") != "system:serviceaccounts,system:serviceaccounts:y,system:authenticated" {
		t.Errorf("whoami: %+v", u)
	}
}

// withBearer returns a client sending a bearer token and no certificate.
func (c *client) withBearer(token string) *client {
	cc := *c
	cfg := c.env.TLSConfig().Clone()
	cfg.Certificates = nil
	tr := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 100}
	c.t.Cleanup(tr.CloseIdleConnections)
	cc.hc = &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+token)
		return tr.RoundTrip(r)
	})}
	return &cc
}

func whoami(t *testing.T, c *client) authenticationv1.UserInfo {
	t.Helper()
	var ssr authenticationv1.SelfSubjectReview
	c.call("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}, http.StatusCreated, &ssr)
	return ssr.Status.UserInfo
}

func TestImpersonation(t *testing.T) {
	c := start(t, testenv.Config{RBAC: true})
	c.namespace("y")
	bob := c.as("bob")
	asAlice := map[string][]string{"Impersonate-User": {"alice"}}
	code, _, data := bob.withHeaders(asAlice).do("GET", "/api/v1/namespaces/y/pods", nil, "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope`)
	// The admin may impersonate anyone: the request is alice's.
	u := whoami(t, c.withHeaders(asAlice))
	if u.Username != "alice" || strings.Join(u.Groups, ",") != "system:authenticated" || u.UID != "" {
		t.Errorf("impersonated user %+v", u)
	}
	code, _, data = c.withHeaders(asAlice).do("GET", "/api/v1/namespaces/y/pods", nil, "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "y"`)
	// Groups, uid and extra.
	u = whoami(t, c.withHeaders(map[string][]string{"Impersonate-User": {"alice"}, "Impersonate-Group": {"g1", "g2"},
		"Impersonate-Uid": {"1234"}, "Impersonate-Extra-Scopes": {"view", "edit"}, "Impersonate-Extra-Example.com%2fkey": {"v"}}))
	if u.Username != "alice" || strings.Join(u.Groups, ",") != "g1,g2,system:authenticated" || u.UID != "1234" ||
		strings.Join(u.Extra["scopes"], ",") != "view,edit" || strings.Join(u.Extra["example.com/key"], ",") != "v" {
		t.Errorf("impersonated user %+v", u)
	}
	// A service account gets its groups.
	u = whoami(t, c.withHeaders(map[string][]string{"Impersonate-User": {"system:serviceaccount:y:robot"}}))
	if u.Username != "system:serviceaccount:y:robot" || strings.Join(u.Groups, ",") != "system:serviceaccounts,system:serviceaccounts:y,system:authenticated" {
		t.Errorf("impersonated service account %+v", u)
	}
	// system:anonymous is unauthenticated: not even system:basic-user
	// (bound to system:authenticated) applies.
	code, _, data = c.withHeaders(map[string][]string{"Impersonate-User": {"system:anonymous"}}).do("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
		map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}, "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`selfsubjectreviews.authentication.k8s.io is forbidden: User "system:anonymous" cannot create resource "selfsubjectreviews" in API group "authentication.k8s.io" at the cluster scope`)
	// Groups without a user: upstream's 500.
	code, _, data = c.withHeaders(map[string][]string{"Impersonate-Group": {"g"}}).do("GET", "/api/v1/namespaces/y/pods", nil, "", "")
	if code != http.StatusInternalServerError || !strings.Contains(string(data), "without impersonating a user") {
		t.Errorf("group without user: %d %s", code, data)
	}
	// bob may impersonate users, but not that group nor that uid.
	c.grant(t, "", "impersonator", "bob", policyRule([]string{"impersonate"}, []string{""}, []string{"users"}))
	u = whoami(t, bob.withHeaders(asAlice))
	if u.Username != "alice" {
		t.Errorf("bob as alice: %+v", u)
	}
	code, _, data = bob.withHeaders(map[string][]string{"Impersonate-User": {"alice"}, "Impersonate-Group": {"admins"}}).do("GET", "/api/v1/namespaces", nil, "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`groups "admins" is forbidden: User "bob" cannot impersonate resource "groups" in API group "" at the cluster scope`)
	code, _, data = bob.withHeaders(map[string][]string{"Impersonate-User": {"alice"}, "Impersonate-Uid": {"1"}}).do("GET", "/api/v1/namespaces", nil, "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`uids.authentication.k8s.io "1" is forbidden: User "bob" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope`)
	code, _, data = bob.withHeaders(map[string][]string{"Impersonate-User": {"system:serviceaccount:y:robot"}}).do("GET", "/api/v1/namespaces", nil, "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`serviceaccounts "robot" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "y"`)
}

func TestAccessReviews(t *testing.T) {
	c := start(t, testenv.Config{RBAC: true})
	c.namespace("y")
	sar := func(spec map[string]any) authorizationv1.SubjectAccessReviewStatus {
		var r authorizationv1.SubjectAccessReview
		c.call("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}, http.StatusCreated, &r)
		return r.Status
	}
	listPods := map[string]any{"namespace": "y", "verb": "list", "resource": "pods"}
	if st := sar(map[string]any{"user": "bob", "resourceAttributes": listPods}); st.Allowed || st.Denied || st.Reason != "" {
		t.Errorf("bob before: %+v", st)
	}
	if st := sar(map[string]any{"user": "root", "groups": []string{"system:masters"}, "resourceAttributes": listPods}); !st.Allowed {
		t.Errorf("system:masters: %+v", st)
	}
	c.grant(t, "y", "pod-lister", "bob", policyRule([]string{"list"}, []string{""}, []string{"pods"}))
	if st := sar(map[string]any{"user": "bob", "resourceAttributes": listPods}); !st.Allowed || st.Reason != `RBAC: allowed by RoleBinding "pod-lister/y" of Role "pod-lister" to User "bob"` {
		t.Errorf("bob after: %+v", st)
	}
	if st := sar(map[string]any{"user": "bob", "nonResourceAttributes": map[string]any{"verb": "get", "path": "/nope"}}); st.Allowed {
		t.Errorf("non-resource: %+v", st)
	}
	// A binding to a missing role: no opinion, with the error as reason.
	c.call(http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/namespaces/y/rolebindings", rbacObject("RoleBinding", "y", "dangling", map[string]any{
		"roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "missing"}, "subjects": userSubjects("eve")}), http.StatusCreated, nil)
	eventually(t, "dangling binding", func() bool {
		st := sar(map[string]any{"user": "eve", "resourceAttributes": listPods})
		return st.Reason == `RBAC: role.rbac.authorization.k8s.io "missing" not found`
	})
	// Validation, as upstream.
	code, _, data := c.do("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
		"spec": map[string]any{"resourceAttributes": listPods}}, "", "")
	expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		`SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified`)
	// Local reviews: the namespace must match.
	code, _, data = c.do("POST", "/apis/authorization.k8s.io/v1/namespaces/y/localsubjectaccessreviews", map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "LocalSubjectAccessReview",
		"metadata": map[string]any{"namespace": "y"}, "spec": map[string]any{"user": "bob", "resourceAttributes": map[string]any{"namespace": "z", "verb": "list", "resource": "pods"}}}, "", "")
	if code != http.StatusUnprocessableEntity || !strings.Contains(string(data), "must match metadata.namespace") {
		t.Errorf("local review mismatch: %d %s", code, data)
	}
	var lsar authorizationv1.LocalSubjectAccessReview
	c.call("POST", "/apis/authorization.k8s.io/v1/namespaces/y/localsubjectaccessreviews", map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "LocalSubjectAccessReview",
		"metadata": map[string]any{"namespace": "y"}, "spec": map[string]any{"user": "bob", "resourceAttributes": listPods}}, http.StatusCreated, &lsar)
	if !lsar.Status.Allowed {
		t.Errorf("local review: %+v", lsar.Status)
	}
	// Self reviews answer for the requester.
	bob := c.as("bob")
	var ssar authorizationv1.SelfSubjectAccessReview
	bob.call("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
		"spec": map[string]any{"resourceAttributes": listPods}}, http.StatusCreated, &ssar)
	if !ssar.Status.Allowed {
		t.Errorf("self review: %+v", ssar.Status)
	}
	bob.call("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
		"spec": map[string]any{"resourceAttributes": map[string]any{"namespace": "y", "verb": "delete", "resource": "pods"}}}, http.StatusCreated, &ssar)
	if ssar.Status.Allowed {
		t.Errorf("self review delete: %+v", ssar.Status)
	}
	var ssrr authorizationv1.SelfSubjectRulesReview
	bob.call("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
		"spec": map[string]any{"namespace": "y"}}, http.StatusCreated, &ssrr)
	found := false
	for _, r := range ssrr.Status.ResourceRules {
		found = found || (strings.Join(r.Verbs, ",") == "list" && strings.Join(r.Resources, ",") == "pods")
	}
	if !found || ssrr.Status.Incomplete || ssrr.Status.EvaluationError != "" {
		t.Errorf("rules review: %+v", ssrr.Status)
	}
	code, _, data = bob.do("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
		"spec": map[string]any{}}, "", "")
	expectStatus(t, code, data, http.StatusBadRequest, metav1.StatusReasonBadRequest, "no namespace on request")
}

func TestEscalationPrevention(t *testing.T) {
	c := start(t, testenv.Config{RBAC: true})
	c.namespace("y")
	bob := c.as("bob", "dev")
	// bob may manage roles and bindings in y, and read pods there.
	c.grant(t, "y", "rbac-manager", "bob",
		policyRule([]string{"create", "update", "get"}, []string{"rbac.authorization.k8s.io"}, []string{"roles", "rolebindings"}),
		policyRule([]string{"get"}, []string{""}, []string{"pods"}))
	role := func(name string, rules ...map[string]any) map[string]any {
		return rbacObject("Role", "y", name, map[string]any{"rules": rules})
	}
	// Rules bob holds: allowed. More: refused with upstream's message.
	bob.call("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/y/roles", role("ok", policyRule([]string{"get"}, []string{""}, []string{"pods"})), http.StatusCreated, nil)
	code, _, data := bob.do("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/y/roles", role("more",
		policyRule([]string{"get", "delete", "list"}, []string{""}, []string{"pods", "secrets"})), "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`roles.rbac.authorization.k8s.io "more" is forbidden: user "bob" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:`+"\n"+
			`{APIGroups:[""], Resources:["pods"], Verbs:["delete" "list"]}`+"\n"+
			`{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete" "list"]}`)
	// An update is checked too.
	var ok map[string]any
	bob.call("GET", "/apis/rbac.authorization.k8s.io/v1/namespaces/y/roles/ok", nil, http.StatusOK, &ok)
	ok["rules"] = []map[string]any{policyRule([]string{"*"}, []string{""}, []string{"pods"})}
	code, _, data = bob.do("PUT", "/apis/rbac.authorization.k8s.io/v1/namespaces/y/roles/ok", ok, "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden, "")
	// Binding a role bob holds: allowed; one he does not: refused.
	binding := func(name, kind, roleName string) map[string]any {
		return rbacObject("RoleBinding", "y", name, map[string]any{
			"roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": roleName}, "subjects": userSubjects("someone")})
	}
	bob.call("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/y/rolebindings", binding("ok", "Role", "ok"), http.StatusCreated, nil)
	c.call("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", rbacObject("ClusterRole", "", "secret-admin", map[string]any{
		"rules": []map[string]any{policyRule([]string{"*"}, []string{""}, []string{"secrets"})}}), http.StatusCreated, nil)
	eventually(t, "secret-admin role", func() bool {
		code, _, data = bob.do("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/y/rolebindings", binding("secrets", "ClusterRole", "secret-admin"), "", "")
		return code == http.StatusForbidden
	})
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`rolebindings.rbac.authorization.k8s.io "secrets" is forbidden: user "bob" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:`+"\n"+
			`{APIGroups:[""], Resources:["secrets"], Verbs:["*"]}`)
	// A binding to a missing role: not found.
	code, _, data = bob.do("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/y/rolebindings", binding("nothing", "Role", "nothing"), "", "")
	expectStatus(t, code, data, http.StatusNotFound, metav1.StatusReasonNotFound, `roles.rbac.authorization.k8s.io "nothing" not found`)
	// With the bind verb on that role, bob may bind it; with escalate he
	// may write any role.
	c.grant(t, "y", "binder", "bob",
		policyRule([]string{"bind"}, []string{"rbac.authorization.k8s.io"}, []string{"clusterroles"}, "secret-admin"),
		policyRule([]string{"escalate"}, []string{"rbac.authorization.k8s.io"}, []string{"roles"}))
	bob.call("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/y/rolebindings", binding("secrets", "ClusterRole", "secret-admin"), http.StatusCreated, nil)
	bob.call("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/y/roles", role("more",
		policyRule([]string{"get", "delete", "list"}, []string{""}, []string{"pods", "secrets"})), http.StatusCreated, nil)
	// Aggregation rules need full authority.
	c.grant(t, "", "clusterrole-writer", "bob", policyRule([]string{"create"}, []string{"rbac.authorization.k8s.io"}, []string{"clusterroles"}))
	code, _, data = bob.do("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", rbacObject("ClusterRole", "", "agg", map[string]any{
		"aggregationRule": map[string]any{"clusterRoleSelectors": []map[string]any{{"matchLabels": map[string]string{"a": "b"}}}}}), "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`clusterroles.rbac.authorization.k8s.io "agg" is forbidden: must have cluster-admin privileges to use the aggregationRule`)
	// system:masters is never checked.
	c.call("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", rbacObject("ClusterRole", "", "agg", map[string]any{
		"aggregationRule": map[string]any{"clusterRoleSelectors": []map[string]any{{"matchLabels": map[string]string{"a": "b"}}}}}), http.StatusCreated, nil)
}

// A service account token that authenticated is remembered for 10 s, as
// upstream's cached token authenticator: deleting the service account
// refuses the token once that time has passed.
func TestServiceAccountTokenCache(t *testing.T) {
	fake := clock.NewFake(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	c := start(t, testenv.Config{Clock: fake})
	c.namespace("y")
	c.call("POST", "/api/v1/namespaces/y/serviceaccounts", map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "robot"}}, http.StatusCreated, nil)
	var tr authenticationv1.TokenRequest
	c.call("POST", "/api/v1/namespaces/y/serviceaccounts/robot/token", map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": map[string]any{}}, http.StatusCreated, &tr)
	sa := c.withBearer(tr.Status.Token)
	u := whoami(t, sa)
	if u.Username != "system:serviceaccount:y:robot" || len(u.Extra["authentication.kubernetes.io/credential-id"]) != 1 ||
		!strings.HasPrefix(u.Extra["authentication.kubernetes.io/credential-id"][0], "JTI=") {
		t.Errorf("user %+v", u)
	}
	c.call("DELETE", "/api/v1/namespaces/y/serviceaccounts/robot", nil, http.StatusOK, nil)
	whoami(t, sa) // still cached
	fake.Step(11 * time.Second)
	code, _, data := sa.do("GET", "/api/v1/namespaces/y/pods", nil, "", "")
	expectStatus(t, code, data, http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "Unauthorized")
}

// Anonymous requests are classified by API priority and fairness as
// upstream's: a probe falls in "probes", another request in "global-default".
// With --anonymous-auth=false they get 401, except the health and version
// paths, which stay open (unauthorized).
func TestAnonymousRequests(t *testing.T) {
	c := start(t, testenv.Config{RBAC: true})
	var fss flowcontrolv1.FlowSchemaList
	c.call("GET", "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas", nil, http.StatusOK, &fss)
	uid := map[string]string{}
	for _, fs := range fss.Items {
		uid[fs.Name] = string(fs.UID)
	}
	for _, tc := range []struct{ path, fs string }{{"/readyz", "probes"}, {"/api", "global-default"}} {
		_, h, _ := doWith(t, c.anonymous(), c.env.URL, "GET", tc.path, nil, "", "")
		if got := h.Get("X-Kubernetes-PF-FlowSchema-UID"); got != uid[tc.fs] {
			t.Errorf("anonymous %s: flow schema uid %q, want %s's %q", tc.path, got, tc.fs, uid[tc.fs])
		}
	}

	off := start(t, testenv.Config{RBAC: true, Tweak: func(cfg *apiserver.Config) { cfg.AnonymousAuth = false }})
	code, _, data := doWith(t, off.anonymous(), off.env.URL, "GET", "/api/v1/namespaces", nil, "", "")
	expectStatus(t, code, data, http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "Unauthorized")
	for _, p := range []string{"/healthz", "/readyz", "/livez", "/version"} {
		if code, _, data := doWith(t, off.anonymous(), off.env.URL, "GET", p, nil, "", ""); code != http.StatusOK {
			t.Errorf("%s without anonymous auth: %d %s", p, code, data)
		}
	}
}

// Changing only a role's owner references or finalizers (what the garbage
// collector does) needs no escalation check, as upstream's.
func TestEscalationGCFields(t *testing.T) {
	c := start(t, testenv.Config{RBAC: true})
	c.namespace("y")
	c.call("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/y/roles", rbacObject("Role", "y", "secrets", map[string]any{
		"rules": []map[string]any{policyRule([]string{"*"}, []string{""}, []string{"secrets"})}}), http.StatusCreated, nil)
	c.grant(t, "y", "role-patcher", "gc", policyRule([]string{"patch", "get"}, []string{"rbac.authorization.k8s.io"}, []string{"roles"}))
	gc := c.as("gc")
	code, _, data := gc.do("PATCH", "/apis/rbac.authorization.k8s.io/v1/namespaces/y/roles/secrets",
		`{"metadata":{"finalizers":["example.com/hold"],"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":"1234"}]}}`, "application/merge-patch+json", "")
	if code != http.StatusOK {
		t.Fatalf("GC fields: %d %s", code, data)
	}
	code, _, data = gc.do("PATCH", "/apis/rbac.authorization.k8s.io/v1/namespaces/y/roles/secrets",
		`{"metadata":{"finalizers":null,"labels":{"a":"b"}}}`, "application/merge-patch+json", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`roles.rbac.authorization.k8s.io "secrets" is forbidden: user "gc" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:`+"\n"+
			`{APIGroups:[""], Resources:["secrets"], Verbs:["*"]}`)
}
