package apiserver_test

import (
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/testenv"
)

// Escalation prevention at the cluster scope, as upstream's: a user who
// may create ClusterRoles and ClusterRoleBindings may neither write a
// ClusterRole granting more than he holds nor bind one, unless he has
// escalate on clusterroles or bind on the role.
func TestClusterScopeEscalationPrevention(t *testing.T) {
	c := start(t, testenv.Config{RBAC: true})
	dave := c.as("dave")
	c.grant(t, "", "cluster-rbac-writer", "dave",
		policyRule([]string{"create"}, []string{"rbac.authorization.k8s.io"}, []string{"clusterroles", "clusterrolebindings"}),
		policyRule([]string{"list"}, []string{""}, []string{"nodes"}))
	const (
		roles    = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
		bindings = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"
	)
	binding := func(name, roleName string) map[string]any {
		return rbacObject("ClusterRoleBinding", "", name, map[string]any{
			"roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": roleName}, "subjects": userSubjects("eve")})
	}
	// A role with rules dave holds, and its binding: allowed.
	dave.call(http.MethodPost, roles, rbacObject("ClusterRole", "", "node-lister", map[string]any{
		"rules": []map[string]any{policyRule([]string{"list"}, []string{""}, []string{"nodes"})}}), http.StatusCreated, nil)
	eventually(t, "node-lister bound", func() bool {
		code, _, _ := dave.do(http.MethodPost, bindings, binding("eve-nodes", "node-lister"), "", "")
		return code == http.StatusCreated
	})
	// More than he holds: refused, role and binding.
	code, _, data := dave.do(http.MethodPost, roles, rbacObject("ClusterRole", "", "node-admin", map[string]any{
		"rules": []map[string]any{policyRule([]string{"list", "delete"}, []string{""}, []string{"nodes"})}}), "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`clusterroles.rbac.authorization.k8s.io "node-admin" is forbidden: user "dave" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:`+"\n"+
			`{APIGroups:[""], Resources:["nodes"], Verbs:["delete"]}`)
	code, _, data = dave.do(http.MethodPost, bindings, binding("eve-admin", "cluster-admin"), "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`clusterrolebindings.rbac.authorization.k8s.io "eve-admin" is forbidden: user "dave" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:`+"\n"+
			`{APIGroups:["*"], Resources:["*"], Verbs:["*"]}`+"\n"+
			`{NonResourceURLs:["*"], Verbs:["*"]}`)
	// bind on cluster-admin lets him bind it; escalate lets him write any role.
	c.grant(t, "", "admin-binder", "dave",
		policyRule([]string{"bind"}, []string{"rbac.authorization.k8s.io"}, []string{"clusterroles"}, "cluster-admin"),
		policyRule([]string{"escalate"}, []string{"rbac.authorization.k8s.io"}, []string{"clusterroles"}))
	dave.call(http.MethodPost, bindings, binding("eve-admin", "cluster-admin"), http.StatusCreated, nil)
	dave.call(http.MethodPost, roles, rbacObject("ClusterRole", "", "node-admin", map[string]any{
		"rules": []map[string]any{policyRule([]string{"list", "delete"}, []string{""}, []string{"nodes"})}}), http.StatusCreated, nil)
}
