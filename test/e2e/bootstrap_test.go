package e2e

import (
	"bytes"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestKubeletTLSBootstrap: a second node joins as upstream's kubelets do
// with kubeadm. `skiff token create` makes a join token (and a bootstrap
// kubeconfig); `skiff kubelet --bootstrap-kubeconfig` without a kubeconfig
// asks for its client certificate with it: kubectl shows the CSR by
// system:bootstrap:<id> approved and issued (skiff up's kubeadm RBAC and
// controller manager), the node becomes Ready, the written kubeconfig is
// system:node:<name> with the pair in --cert-dir; a second start reuses it.
func TestKubeletTLSBootstrap(t *testing.T) {
	t.Parallel()
	c := ownCluster(t, "memory", "--disable=kubelet,metrics-server")
	k := c.k()
	dir := t.TempDir()
	bootstrapConf := filepath.Join(dir, "bootstrap-kubelet.conf")
	out, err := exec.Command(skiffBin, "token", "create", "--kubeconfig", c.kubeconfig, "--write-kubeconfig", bootstrapConf).CombinedOutput()
	if err != nil {
		t.Fatalf("skiff token create: %v: %s", err, out)
	}
	token := strings.TrimSpace(string(out))
	m := regexp.MustCompile(`\A([a-z0-9]{6})\.[a-z0-9]{16}\z`).FindStringSubmatch(token)
	if m == nil {
		t.Fatalf("skiff token create printed %q, want <id>.<secret>", out)
	}
	id := m[1]
	// The Secret as kubeadm writes it.
	wantLines(t, k.ok(t, "get", "secret", "-n", "kube-system", "bootstrap-token-"+id, "-o",
		`jsonpath={.type}{"\n"}{.data.auth-extra-groups}{"\n"}{.data.usage-bootstrap-authentication}{"\n"}{.data.usage-bootstrap-signing}`),
		"bootstrap.kubernetes.io/token", b64("system:bootstrappers:kubeadm:default-node-token"), b64("true"), b64("true"))
	// The token authenticates by itself (kubectl --token).
	wantContains(t, k.ok(t, "auth", "whoami", "--kubeconfig", bootstrapConf), "system:bootstrap:"+id, "system:bootstrappers:kubeadm:default-node-token")

	kubeletConf, certDir := filepath.Join(dir, "kubelet.conf"), filepath.Join(dir, "pki")
	stop := startKubelet(t, "--runtime=sim", "--nodes=1", "--hostname-override=joined-1",
		"--bootstrap-kubeconfig", bootstrapConf, "--kubeconfig", kubeletConf, "--cert-dir", certDir)
	eventually(t, 60*time.Second, "node joined-1 Ready", func() (bool, string) {
		o, _, _ := k.run(t, "get", "node", "joined-1", "--no-headers")
		f := columns(o)
		return len(f) >= 2 && f[1] == "Ready", o
	})
	csrs := k.ok(t, "get", "csr", "--no-headers")
	wantMatch(t, csrs, `(?m)^node-csr-\S+\s+\S+\s+kubernetes\.io/kube-apiserver-client-kubelet\s+system:bootstrap:`+id+`\s+<none>\s+Approved,Issued$`)
	wantContains(t, k.ok(t, "auth", "whoami", "--kubeconfig", kubeletConf), "system:node:joined-1", "system:nodes")
	link, err := os.Readlink(filepath.Join(certDir, "kubelet-client-current.pem"))
	if err != nil || !regexp.MustCompile(`\Akubelet-client-\d{4}(-\d\d){5}\.pem\z`).MatchString(link) {
		t.Errorf("kubelet-client-current.pem -> %q (%v)", link, err)
	}
	// The node's identity is limited as a node's is (Node authorizer).
	k.fails(t, "--kubeconfig", kubeletConf, "get", "secrets", "-n", "kube-system")
	// And it runs pods as a node: scheduled there, Running with an IP.
	k.ok(t, "run", "web", "--image=registry.k8s.io/pause:3.10")
	eventually(t, 60*time.Second, "pod web Running on joined-1", func() (bool, string) {
		o, _, _ := k.run(t, "get", "pod", "web", "-o", `jsonpath={.status.phase} {.spec.nodeName} {.status.podIP}`)
		f := columns(o)
		return len(f) == 3 && f[0] == "Running" && f[1] == "joined-1", o
	})

	// Restarted, the kubelet keeps its certificate: no second CSR.
	stop()
	startKubelet(t, "--runtime=sim", "--nodes=1", "--hostname-override=joined-1",
		"--bootstrap-kubeconfig", bootstrapConf, "--kubeconfig", kubeletConf, "--cert-dir", certDir)
	eventually(t, 30*time.Second, "node joined-1 still Ready", func() (bool, string) {
		o, _, _ := k.run(t, "get", "node", "joined-1", "--no-headers")
		f := columns(o)
		return len(f) >= 2 && f[1] == "Ready", o
	})
	if n := len(lines(k.ok(t, "get", "csr", "--no-headers"))); n != 1 {
		t.Errorf("%d CSRs after a restart, want 1", n)
	}
}

// b64 is s base64-encoded (a Secret's data as kubectl prints it).
func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// startKubelet runs `skiff kubelet args...` until the returned stop (or
// the test's end) interrupts it; it must exit cleanly.
func startKubelet(t *testing.T, args ...string) (stop func()) {
	t.Helper()
	cmd := exec.Command(skiffBin, append([]string{"kubelet"}, args...)...)
	out := lockedBuf{mu: new(sync.Mutex), b: new(bytes.Buffer)}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cmd.Process.Signal(syscall.SIGINT)
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("skiff kubelet exited with %v after SIGINT", err)
				}
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Errorf("skiff kubelet did not exit within 30s of SIGINT")
			}
			if t.Failed() {
				out.mu.Lock()
				t.Logf("skiff kubelet %s output:\n%s", strings.Join(args, " "), out.b.String())
				out.mu.Unlock()
			}
		})
	}
	t.Cleanup(stop)
	return stop
}
