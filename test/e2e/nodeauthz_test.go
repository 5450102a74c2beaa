package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestKubectlNodeAuthorizer: under --authorization-mode=Node,RBAC a
// kubelet's identity (impersonated with kubectl --as/--as-group) reads the
// secret of a pod bound to its node and is refused another node's with
// upstream's message.
func TestKubectlNodeAuthorizer(t *testing.T) {
	c := ownCluster(t, "memory", "--authorization-mode=Node,RBAC")
	k := c.k()
	k.ok(t, "create", "namespace", "nodeauthz")
	k.ok(t, "create", "secret", "generic", "mine", "-n", "nodeauthz", "--from-literal=a=b")
	k.ok(t, "create", "secret", "generic", "theirs", "-n", "nodeauthz", "--from-literal=a=b")
	eventually(t, 20*time.Second, "the default service account", func() (bool, string) {
		out, errOut, err := k.run(t, "get", "serviceaccount", "default", "-n", "nodeauthz", "-o", "name")
		return err == nil, out + errOut
	})
	k.withStdin(`apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: nodeauthz}
spec:
  nodeName: n1
  automountServiceAccountToken: false
  containers: [{name: c, image: busybox}]
  volumes: [{name: s, secret: {secretName: mine}}]
---
apiVersion: v1
kind: Pod
metadata: {name: p2, namespace: nodeauthz}
spec:
  nodeName: n2
  automountServiceAccountToken: false
  containers: [{name: c, image: busybox}]
  volumes: [{name: s, secret: {secretName: theirs}}]
`).ok(t, "create", "-f", "-")
	as := []string{"-n", "nodeauthz", "--as", "system:node:n1", "--as-group", "system:nodes"}
	eventually(t, 10*time.Second, "node n1 reads its pod's secret", func() (bool, string) {
		out, errOut, err := k.run(t, append([]string{"get", "secret", "mine", "-o", "name"}, as...)...)
		return err == nil && strings.TrimSpace(out) == "secret/mine", out + errOut
	})
	errOut := k.fails(t, append([]string{"get", "secret", "theirs"}, as...)...)
	wantContains(t, errOut, `Error from server (Forbidden): secrets "theirs" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "nodeauthz": no relationship found between node 'n1' and this object`)
	// Without the nodes group the name alone is nobody.
	errOut = k.fails(t, "get", "secret", "mine", "-n", "nodeauthz", "--as", "system:node:n1")
	wantContains(t, errOut, `secrets "mine" is forbidden: User "system:node:n1" cannot get resource "secrets"`)
}
