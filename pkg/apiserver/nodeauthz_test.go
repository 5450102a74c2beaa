package apiserver_test

import (
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/apiserver"
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

// TestNodeRestrictionHTTP: with NodeRestriction enabled a kubelet may
// write its own Node and the status of its pods, not another node's, with
// upstream's messages.
func TestNodeRestrictionHTTP(t *testing.T) {
	c := start(t, testenv.Config{RBAC: true, Tweak: func(cfg *apiserver.Config) {
		cfg.EnableAdmissionPlugins = []string{"NodeRestriction"}
	}})
	c.namespace("y")
	n1 := c.as("system:node:n1", "system:nodes")
	nodeObj := func(name string, labels map[string]any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": name, "labels": labels}}
	}
	n1.call("POST", "/api/v1/nodes", nodeObj("n1", map[string]any{"kubernetes.io/hostname": "n1"}), http.StatusCreated, nil)
	code, _, data := n1.do("POST", "/api/v1/nodes", nodeObj("n2", nil), "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden, `nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"`)
	c.call("POST", "/api/v1/nodes", nodeObj("n2", nil), http.StatusCreated, nil)
	code, _, data = n1.do("PATCH", "/api/v1/nodes/n1", `{"metadata":{"labels":{"node-restriction.kubernetes.io/x":"y"}}}`, "application/merge-patch+json", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden, `nodes "n1" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/x`)
	patch := func(path, body string) {
		t.Helper()
		if code, _, data := n1.do("PATCH", path, body, "application/merge-patch+json", ""); code != http.StatusOK {
			t.Fatalf("PATCH %s: %d %s", path, code, data)
		}
	}
	patch("/api/v1/nodes/n1/status", `{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"ok"}]}}`)
	code, _, data = n1.do("PATCH", "/api/v1/nodes/n2/status", `{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"ok"}]}}`, "application/merge-patch+json", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden, `nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"`)
	c.call("POST", "/api/v1/namespaces/y/pods", nodePod("p1", "n1"), http.StatusCreated, nil)
	c.call("POST", "/api/v1/namespaces/y/pods", nodePod("p2", "n2"), http.StatusCreated, nil)
	patch("/api/v1/namespaces/y/pods/p1/status", `{"status":{"phase":"Running"}}`)
	code, _, data = n1.do("PATCH", "/api/v1/namespaces/y/pods/p2/status", `{"status":{"phase":"Running"}}`, "application/merge-patch+json", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden, `pods "p2" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself`)
	// Tokens only for its own pods: the Node authorizer allows the service
	// account of a pod on n1, NodeRestriction checks the bound pod.
	var pods struct {
		Items []struct {
			Metadata struct{ Name, UID string }
		}
	}
	c.call("GET", "/api/v1/namespaces/y/pods", nil, http.StatusOK, &pods)
	uids := map[string]string{}
	for _, p := range pods.Items {
		uids[p.Metadata.Name] = p.Metadata.UID
	}
	tokenFor := func(pod string) map[string]any {
		return map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": map[string]any{
			"boundObjectRef": map[string]any{"apiVersion": "v1", "kind": "Pod", "name": pod, "uid": uids[pod]}}}
	}
	eventually(t, "default service account", func() bool {
		code, _, _ := c.do("GET", "/api/v1/namespaces/y/serviceaccounts/default", nil, "", "")
		return code == http.StatusOK
	})
	eventually(t, "token for its pod", func() bool {
		code, _, _ := n1.do("POST", "/api/v1/namespaces/y/serviceaccounts/default/token", tokenFor("p1"), "", "")
		return code == http.StatusCreated
	})
	code, _, data = n1.do("POST", "/api/v1/namespaces/y/serviceaccounts/default/token", tokenFor("p2"), "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node`)
	// A mirror pod of its static pod, owned by its Node; deleting it.
	var node struct{ Metadata struct{ UID string } }
	c.call("GET", "/api/v1/nodes/n1", nil, http.StatusOK, &node)
	mirror := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{
		"name": "static-n1", "annotations": map[string]any{"kubernetes.io/config.mirror": "hash"},
		"ownerReferences": []map[string]any{{"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": node.Metadata.UID, "controller": true}}},
		"spec": map[string]any{"nodeName": "n1", "containers": []map[string]any{{"name": "c", "image": "busybox"}}}}
	n1.call("POST", "/api/v1/namespaces/y/pods", mirror, http.StatusCreated, nil)
	n1.call("DELETE", "/api/v1/namespaces/y/pods/static-n1", nil, http.StatusOK, nil)
	code, _, data = n1.do("DELETE", "/api/v1/namespaces/y/pods/p2", nil, "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden, `pods "p2" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself`)
	// A pod that is not a mirror pod.
	code, _, data = n1.do("POST", "/api/v1/namespaces/y/pods", nodePod("p3", "n1"), "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden, `pods "p3" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods`)
}
