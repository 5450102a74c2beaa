package apiserver_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/skiff-sh/skiff/pkg/testenv"
)

// BenchmarkCreatePodAs compares pod creates by the admin (system:masters)
// and by a service account token RBAC allows, on one RBAC server.
func BenchmarkCreatePodAs(b *testing.B) {
	c := start(b, testenv.Config{RBAC: true})
	c.namespace("bench")
	c.call("POST", "/api/v1/namespaces/bench/serviceaccounts", map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "robot"}}, http.StatusCreated, nil)
	c.call("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/bench/roles", rbacObject("Role", "bench", "pods", map[string]any{
		"rules": []map[string]any{policyRule([]string{"create"}, []string{""}, []string{"pods"})}}), http.StatusCreated, nil)
	c.call("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/bench/rolebindings", rbacObject("RoleBinding", "bench", "pods", map[string]any{
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pods"},
		"subjects": []map[string]any{{"kind": "ServiceAccount", "name": "robot"}}}), http.StatusCreated, nil)
	var tr authenticationv1.TokenRequest
	c.call("POST", "/api/v1/namespaces/bench/serviceaccounts/robot/token", map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": map[string]any{}}, http.StatusCreated, &tr)
	sa := c.withBearer(tr.Status.Token)
	var n atomic.Int64
	for _, tc := range []struct {
		name string
		c    *client
	}{{"admin", c}, {"serviceaccount", sa}} {
		b.Run(tc.name, func(b *testing.B) {
			cl := tc.c.on(b)
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					name := fmt.Sprintf("p%d", n.Add(1))
					code, _, data := doWith(b, cl.hc, cl.env.URL, "POST", "/api/v1/namespaces/bench/pods", map[string]any{"apiVersion": "v1", "kind": "Pod",
						"metadata": map[string]any{"name": name}, "spec": map[string]any{"containers": []map[string]any{{"name": "c", "image": "nginx"}}}}, "", "")
					if code != http.StatusCreated {
						b.Errorf("%d %s", code, data)
						return
					}
				}
			})
		})
	}
}
