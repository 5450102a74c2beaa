package apiserver_test

import (
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/testenv"
)

func nodePod(name, node string, secrets ...string) map[string]any {
	var vols []map[string]any
	for _, s := range secrets {
		vols = append(vols, map[string]any{"name": "v-" + s, "secret": map[string]any{"secretName": s}})
	}
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"nodeName": node, "automountServiceAccountToken": false, "volumes": vols,
			"containers": []map[string]any{{"name": "c", "image": "busybox"}}}}
}

// TestNodeAuthorizer: with --authorization-mode=Node,RBAC a kubelet's
// identity reads the secrets of the pods bound to its node, not another
// node's, with upstream's message; the graph follows pod deletion; the
// system:node rules cover the rest of what a kubelet does.
func TestNodeAuthorizer(t *testing.T) {
	c := start(t, testenv.Config{RBAC: true})
	c.namespace("y")
	for _, s := range []string{"s1", "s2"} {
		c.call("POST", "/api/v1/namespaces/y/secrets", map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": s}}, http.StatusCreated, nil)
	}
	c.call("POST", "/api/v1/namespaces/y/pods", nodePod("p1", "n1", "s1"), http.StatusCreated, nil)
	c.call("POST", "/api/v1/namespaces/y/pods", nodePod("p2", "n2", "s2"), http.StatusCreated, nil)
	n1 := c.as("system:node:n1", "system:nodes")
	eventually(t, "own pod's secret", func() bool {
		code, _, _ := n1.do("GET", "/api/v1/namespaces/y/secrets/s1", nil, "", "")
		return code == http.StatusOK
	})
	code, _, data := n1.do("GET", "/api/v1/namespaces/y/secrets/s2", nil, "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`secrets "s2" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "y": no relationship found between node 'n1' and this object`)
	code, _, data = n1.do("GET", "/api/v1/nodes", nil, "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`nodes is forbidden: User "system:node:n1" cannot list resource "nodes" in API group "" at the cluster scope: node 'n1' cannot read all nodes, only its own Node object`)
	// Pods of its node through the field selector; events by the static rules.
	n1.call("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1", nil, http.StatusOK, nil)
	if code, _, _ := n1.do("GET", "/api/v1/pods", nil, "", ""); code != http.StatusForbidden {
		t.Errorf("list all pods: %d", code)
	}
	n1.call("POST", "/api/v1/namespaces/y/events", map[string]any{"apiVersion": "v1", "kind": "Event",
		"metadata": map[string]any{"name": "e1"}, "involvedObject": map[string]any{"kind": "Pod", "namespace": "y", "name": "p1"},
		"reason": "Started", "message": "m", "type": "Normal"}, http.StatusCreated, nil)
	// Deleting the pod removes the relationship.
	c.call("DELETE", "/api/v1/namespaces/y/pods/p1?gracePeriodSeconds=0", nil, http.StatusOK, nil)
	eventually(t, "pod deleted", func() bool {
		code, _, _ := n1.do("GET", "/api/v1/namespaces/y/secrets/s1", nil, "", "")
		return code == http.StatusForbidden
	})
}
