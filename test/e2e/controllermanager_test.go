package e2e

import (
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// standaloneCM is a `skiff controller-manager` process.
type standaloneCM struct {
	cmd     *exec.Cmd
	log     *cluster // its log buffer only
	done    chan error
	port    int
	dataDir string // the cluster's: the admin client certificate
}

func startCM(t *testing.T, c *cluster, args ...string) *standaloneCM {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	log := &cluster{} // a log buffer only
	kcfg := filepath.Join(c.dataDir, "controller-manager.kubeconfig")
	argv := append([]string{"controller-manager", "--kubeconfig", kcfg, "--authentication-kubeconfig", kcfg, "--authorization-kubeconfig", kcfg,
		"--secure-port", strconv.Itoa(port), "--bind-address", "127.0.0.1", "-v", "1",
		// As kubeadm runs upstream's: each controller as its own service account.
		"--use-service-account-credentials"}, args...)
	cmd := exec.Command(skiffBin, argv...)
	cmd.Stdout, cmd.Stderr = syncWriter{log}, syncWriter{log}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &standaloneCM{cmd: cmd, log: log, done: make(chan error, 1), port: port, dataDir: c.dataDir}
	go func() { s.done <- cmd.Wait() }()
	t.Cleanup(func() {
		s.kill()
		if t.Failed() {
			t.Logf("skiff controller-manager %s output:\n%s", strings.Join(args, " "), log.logs())
		}
	})
	return s
}

func (s *standaloneCM) kill() {
	if s.cmd != nil {
		_ = s.cmd.Process.Kill()
		<-s.done
		s.cmd = nil
	}
}

// get fetches a path of the manager's HTTPS server (self-signed) as the
// cluster admin (the manager authorizes /metrics with a
// SubjectAccessReview, as upstream's).
func (s *standaloneCM) get(path string) (int, string, error) {
	return s.getAs(path, true)
}

// getAs fetches a path, with the admin client certificate or anonymously.
func (s *standaloneCM) getAs(path string, admin bool) (int, string, error) {
	tc := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // self-signed, as upstream's
	if admin {
		pair, err := tls.LoadX509KeyPair(filepath.Join(s.dataDir, "pki", "admin.crt"), filepath.Join(s.dataDir, "pki", "admin.key"))
		if err != nil {
			return 0, "", err
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
	defer c.CloseIdleConnections()
	resp, err := c.Get(fmt.Sprintf("https://127.0.0.1:%d%s", s.port, path))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

func leaseHolder(t *testing.T, k kc) string {
	t.Helper()
	out, _, err := k.run(t, "-n", "kube-system", "get", "lease", "kube-controller-manager", "-o", "jsonpath={.spec.holderIdentity}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

func hasBootstrap(t *testing.T, k kc, ns string) (sa, ca bool) {
	t.Helper()
	_, _, err := k.run(t, "-n", ns, "get", "serviceaccount", "default")
	sa = err == nil
	_, _, err = k.run(t, "-n", ns, "get", "configmap", "kube-root-ca.crt")
	return sa, err == nil
}

// TestControllerManagerStandalone: `skiff up --disable=controller-manager`
// alone creates no default service account and no kube-root-ca.crt, as
// upstream's API server alone; `skiff controller-manager` started against
// it becomes leader of kube-system/kube-controller-manager, serves
// /healthz and /metrics, and creates both in every namespace; a second
// instance waits, and takes over within the lease duration when the first
// dies.
func TestControllerManagerStandalone(t *testing.T) {
	c := ownCluster(t, "memory", "--disable=controller-manager")
	k := c.k()
	wantLines(t, k.ok(t, "create", "namespace", "e2e-bare"), "namespace/e2e-bare created")
	// The API server's stopgap created both synchronously at namespace
	// creation; nothing may create them now, within a grace period.
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		if sa, ca := hasBootstrap(t, k, "e2e-bare"); sa || ca {
			t.Fatalf("without a controller manager: default service account %v, kube-root-ca.crt %v", sa, ca)
		}
	}
	if h := leaseHolder(t, k); h != "" {
		t.Fatalf("lease held by %q without a controller manager", h)
	}

	// Short durations to keep the hand-over quick.
	le := []string{"--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=500ms"}
	first := startCM(t, c, le...)
	eventually(t, 30*time.Second, "the first controller manager to lead and be healthy", func() (bool, string) {
		code, body, err := first.get("/healthz")
		return err == nil && code == 200 && body == "ok" && leaseHolder(t, k) != "", fmt.Sprint(code, body, err)
	})
	holder := leaseHolder(t, k)
	eventually(t, 30*time.Second, "e2e-bare's default service account and kube-root-ca.crt", func() (bool, string) {
		sa, ca := hasBootstrap(t, k, "e2e-bare")
		return sa && ca, fmt.Sprintf("sa %v ca %v", sa, ca)
	})
	wantLines(t, k.ok(t, "create", "namespace", "e2e-cm"), "namespace/e2e-cm created")
	eventually(t, 30*time.Second, "e2e-cm's default service account and kube-root-ca.crt", func() (bool, string) {
		sa, ca := hasBootstrap(t, k, "e2e-cm")
		return sa && ca, fmt.Sprintf("sa %v ca %v", sa, ca)
	})
	// The published CA is the cluster's.
	caB64 := k.ok(t, "config", "view", "--raw", "-o", "jsonpath={.clusters[0].cluster.certificate-authority-data}")
	caPEM, err := base64.StdEncoding.DecodeString(strings.TrimSpace(caB64))
	if err != nil {
		t.Fatal(err)
	}
	published := k.ok(t, "-n", "e2e-cm", "get", "configmap", "kube-root-ca.crt", "-o", "jsonpath={.data.ca\\.crt}")
	if published != string(caPEM) {
		t.Errorf("kube-root-ca.crt ca.crt = %q, want the cluster CA %q", published, caPEM)
	}
	// /metrics is authorized by a SubjectAccessReview: the admin may,
	// system:anonymous may not (RBAC); /healthz is always allowed.
	if code, _, err := first.getAs("/metrics", false); err != nil || code != http.StatusForbidden {
		t.Errorf("anonymous /metrics: %d %v, want 403", code, err)
	}
	code, metrics, err := first.get("/metrics")
	if err != nil || code != 200 {
		t.Fatalf("/metrics: %d %v", code, err)
	}
	wantContains(t, metrics, `workqueue_adds_total{name="serviceaccount"}`, `workqueue_depth{name="root_ca_cert_publisher"}`,
		`leader_election_master_status{name="kube-controller-manager"} 1`)
	code, body, _ := first.get("/healthz?verbose")
	if code != 200 {
		t.Errorf("/healthz?verbose: %d", code)
	}
	// As upstream's: leaderElection and one check per controller, no ping
	// beside them.
	wantContains(t, body, "[+]leaderElection ok\n", "[+]serviceaccount-controller ok\n", "[+]root-ca-certificate-publisher-controller ok\n")
	if strings.Contains(body, "ping") {
		t.Errorf("/healthz?verbose lists ping beside other checks:\n%s", body)
	}

	// A second instance stands by while the first renews.
	second := startCM(t, c, le...)
	eventually(t, 30*time.Second, "the second controller manager to serve /healthz", func() (bool, string) {
		code, body, err := second.get("/healthz")
		return err == nil && code == 200, fmt.Sprint(code, body, err)
	})
	if _, m, _ := second.get("/metrics"); !strings.Contains(m, `leader_election_master_status{name="kube-controller-manager"} 0`) {
		t.Errorf("the standby reports itself leader")
	}
	if h := leaseHolder(t, k); h != holder {
		t.Fatalf("lease holder changed to %q while the first renews", h)
	}
	// The first dies without releasing: the second takes over after the
	// lease expires, within the lease duration (plus a retry period).
	_ = first.cmd.Process.Signal(syscall.SIGKILL)
	died := time.Now()
	first.kill()
	eventually(t, 30*time.Second, "the second controller manager to take over", func() (bool, string) {
		h := leaseHolder(t, k)
		return h != "" && h != holder, h
	})
	if took := time.Since(died); took > 4*time.Second+2*time.Second {
		t.Errorf("took over after %v, want within the 4s lease duration and a retry period", took)
	}
	// And it does the work: a deleted service account comes back.
	wantLines(t, k.ok(t, "-n", "e2e-cm", "delete", "serviceaccount", "default"), `serviceaccount "default" deleted`)
	eventually(t, 30*time.Second, "e2e-cm's default service account re-created by the new leader", func() (bool, string) {
		sa, _ := hasBootstrap(t, k, "e2e-cm")
		return sa, ""
	})
	// SIGINT: a clean exit.
	_ = second.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-second.done:
		second.cmd = nil
		if err != nil {
			t.Errorf("skiff controller-manager exited with %v after SIGINT", err)
		}
	case <-time.After(stopTimeout):
		t.Error("skiff controller-manager did not exit after SIGINT")
	}
}
