package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKubectlAuthorization drives kubectl against a cluster authorizing
// with RBAC (upstream's --authorization-mode=Node,RBAC): can-i with --as
// and --list, a service account token refused then allowed once bound,
// whoami with --as, and a Forbidden error as upstream prints it.
func TestKubectlAuthorization(t *testing.T) {
	c := ownCluster(t, "memory", "--authorization-mode=Node,RBAC")
	k := c.k()

	// The admin kubeconfig is system:masters.
	wantEqual(t, "admin can-i", strings.TrimSpace(k.ok(t, "auth", "can-i", "delete", "nodes")), "yes")
	// Another user holds only the bootstrap policy's basic rights.
	out, _, err := k.run(t, "auth", "can-i", "list", "secrets", "--as", "bob", "-n", "default")
	if err == nil || strings.TrimSpace(out) != "no" {
		t.Errorf("bob can-i list secrets: %q %v", out, err)
	}
	wantEqual(t, "bob can-i create selfsubjectaccessreviews", strings.TrimSpace(k.ok(t, "auth", "can-i", "create", "selfsubjectaccessreviews.authorization.k8s.io", "--as", "bob")), "yes")
	errOut := k.fails(t, "get", "pods", "-n", "default", "--as", "bob")
	wantContains(t, errOut, `Error from server (Forbidden): pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"`)

	// whoami tells the truth about impersonation.
	out = k.ok(t, "auth", "whoami", "--as", "bob", "--as-group", "devs")
	wantMatch(t, out, `Username\s+bob`, `Groups\s+\[devs system:authenticated\]`)
	out = k.ok(t, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}")
	wantContains(t, out, "kubernetes-admin", "system:masters")

	// A service account token: refused, then allowed by a binding.
	k.ok(t, "create", "namespace", "authz")
	k.ok(t, "create", "serviceaccount", "robot", "-n", "authz")
	token := strings.TrimSpace(k.ok(t, "create", "token", "robot", "-n", "authz"))
	caFile := filepath.Join(c.dataDir, "pki", "ca.crt")
	tokenConfig := filepath.Join(t.TempDir(), "robot.kubeconfig")
	if err := os.WriteFile(tokenConfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: skiff
  cluster:
    server: https://127.0.0.1:%d
    certificate-authority: %s
users:
- name: robot
  user:
    token: %s
contexts:
- name: robot
  context: {cluster: skiff, user: robot, namespace: authz}
current-context: robot
`, c.port, caFile, token)), 0o600); err != nil {
		t.Fatal(err)
	}
	robot := func(args ...string) []string { return append([]string{"--kubeconfig", tokenConfig}, args...) }
	errOut = k.fails(t, robot("get", "pods")...)
	wantContains(t, errOut, `Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:authz:robot" cannot list resource "pods" in API group "" in the namespace "authz"`)
	out, _, err = k.run(t, "auth", "can-i", "list", "pods", "-n", "authz", "--as", "system:serviceaccount:authz:robot")
	if err == nil || strings.TrimSpace(out) != "no" {
		t.Errorf("robot can-i list pods before: %q %v", out, err)
	}
	k.ok(t, "create", "rolebinding", "robot-view", "--clusterrole=view", "--serviceaccount=authz:robot", "-n", "authz")
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, errOut, err := k.run(t, robot("get", "pods")...)
		if err == nil {
			wantContains(t, errOut, "No resources found in authz namespace.")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the token is still refused after the rolebinding: %s", errOut)
		}
		time.Sleep(100 * time.Millisecond)
	}
	wantEqual(t, "robot can-i list pods", strings.TrimSpace(k.ok(t, "auth", "can-i", "list", "pods", "-n", "authz", "--as", "system:serviceaccount:authz:robot")), "yes")
	out, _, err = k.run(t, "auth", "can-i", "create", "pods", "-n", "authz", "--as", "system:serviceaccount:authz:robot")
	if err == nil || strings.TrimSpace(out) != "no" {
		t.Errorf("robot can-i create pods: %q %v", out, err)
	}
	// view allows no secrets: the token is refused there still.
	errOut = k.fails(t, robot("get", "secrets")...)
	wantContains(t, errOut, `secrets is forbidden: User "system:serviceaccount:authz:robot" cannot list resource "secrets"`)
	// whoami with the token.
	out = k.ok(t, robot("auth", "whoami")...)
	wantMatch(t, out, `Username\s+system:serviceaccount:authz:robot`, `Groups\s+\[system:serviceaccounts system:serviceaccounts:authz system:authenticated\]`)

	// --list shows the rules that apply, as upstream's table.
	out = k.ok(t, "auth", "can-i", "--list", "-n", "authz", "--as", "system:serviceaccount:authz:robot")
	wantMatch(t, out, `(?m)^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs$`,
		`(?m)^pods\s+\[\]\s+\[\]\s+\[get list watch\]$`,
		`(?m)^selfsubjectaccessreviews.authorization.k8s.io\s+\[\]\s+\[\]\s+\[create\]$`,
		`(?m)^\s+\[/healthz\]\s+\[\]\s+\[get\]$`)
	wantNotContains(t, out, "secrets ")
}
