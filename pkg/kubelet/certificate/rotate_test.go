package certificate_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/kubelet/certificate"
)

func TestRotationDeadline(t *testing.T) {
	nb := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	na := nb.Add(100 * time.Hour)
	tests := []struct {
		r    float64
		want time.Duration // after notBefore
	}{
		{0, 70 * time.Hour},
		{0.5, 80 * time.Hour},
		{0.99, 89*time.Hour + 48*time.Minute},
	}
	for _, tt := range tests {
		if got := certificate.RotationDeadline(nb, na, tt.r).Sub(nb); (got - tt.want).Abs() > time.Millisecond {
			t.Errorf("r=%v: deadline %v after notBefore, want %v", tt.r, got, tt.want)
		}
	}
}

// A bootstrapped kubelet renews its certificate at the rotation deadline
// with a CSR of its own identity (system:node:<name>); the new pair is
// current in the store and for the client.
func TestManagerRotates(t *testing.T) {
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	seen := make(chan *certificatesv1.CertificateSigningRequest, 4)
	c.controlPlane(t, ctx, false, time.Hour, seen)
	dir := t.TempDir()
	cfg := certificate.BootstrapConfig{KubeconfigPath: filepath.Join(dir, "kubelet.conf"), BootstrapKubeconfigPath: c.bootstrap,
		CertDir: filepath.Join(dir, "pki"), NodeName: "n1", Logger: quietLogger()}
	if _, err := certificate.LoadClientCert(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	first := <-seen

	clk := clock.NewFake(time.Now())
	store := &certificate.Store{Dir: cfg.CertDir, Prefix: certificate.ClientPrefix}
	m, err := certificate.NewManager(certificate.ManagerConfig{Store: store, NodeName: "n1", Clock: clk, Logger: quietLogger(),
		Rand: rand.New(rand.NewPCG(1, 2))})
	if err != nil {
		t.Fatal(err)
	}
	old := m.Current()
	oldLink, _ := os.Readlink(store.CurrentPath())
	cc, err := client.LoadKubeconfig(cfg.KubeconfigPath, "")
	if err != nil {
		t.Fatal(err)
	}
	cc.CertFile, cc.KeyFile = "", ""
	cc.GetClientCertificate, cc.DialContext = m.GetClientCertificate, m.Dialer().DialContext
	kc, err := client.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	m.SetClient(kc)
	runCtx, stopRun := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); m.Run(runCtx) }()
	defer func() { stopRun(); <-done }()

	// Nothing before the deadline.
	waitFor(t, "the manager waiting for the deadline", func() bool { return clk.Waiters() > 0 })
	select {
	case csr := <-seen:
		t.Fatalf("CSR %s before the rotation deadline", csr.Name)
	default:
	}
	clk.SetTime(old.Leaf.NotBefore.Add(55 * time.Minute)) // past 90% of the hour
	var renewal *certificatesv1.CertificateSigningRequest
	select {
	case renewal = <-seen:
	case <-ctx.Done():
		t.Fatal("no renewal CSR")
	}
	if renewal.Name == first.Name || renewal.Spec.Username != "system:node:n1" || renewal.Spec.SignerName != certificate.SignerName {
		t.Errorf("renewal CSR %s by %s for %s (bootstrap CSR %s)", renewal.Name, renewal.Spec.Username, renewal.Spec.SignerName, first.Name)
	}
	waitFor(t, "the renewed certificate current", func() bool { return !m.Current().Leaf.Equal(old.Leaf) })
	if link, _ := os.Readlink(store.CurrentPath()); link == oldLink {
		// The fake clock names the file: it moved, so the name did.
		t.Errorf("kubelet-client-current.pem still -> %s", link)
	}
	fromStore, err := store.Current()
	if err != nil || !fromStore.Leaf.Equal(m.Current().Leaf) {
		t.Errorf("the store's current pair is not the renewed one (%v)", err)
	}
	if m.Current().Leaf.Subject.CommonName != "system:node:n1" {
		t.Errorf("renewed subject %v", m.Current().Leaf.Subject)
	}
	// The client goes on with the new certificate (requests racing the
	// closing of the old connections may fail once).
	var got string
	waitFor(t, "a request after the rotation", func() bool {
		u, err := tryWhoAmI(cc)
		got = u
		return err == nil
	})
	if got != "system:node:n1" {
		t.Errorf("after the rotation the client is %s", got)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ForKubeconfig takes over the client's certificate only when the
// kubeconfig names the bootstrapped pair.
func TestForKubeconfig(t *testing.T) {
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	seen := make(chan *certificatesv1.CertificateSigningRequest, 4)
	c.controlPlane(t, ctx, false, time.Hour, seen)
	dir := t.TempDir()
	cfg := certificate.BootstrapConfig{KubeconfigPath: filepath.Join(dir, "kubelet.conf"), BootstrapKubeconfigPath: c.bootstrap,
		CertDir: filepath.Join(dir, "pki"), NodeName: "n1", Logger: quietLogger()}
	if _, err := certificate.LoadClientCert(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	cc, err := client.LoadKubeconfig(cfg.KubeconfigPath, "")
	if err != nil {
		t.Fatal(err)
	}
	m, err := certificate.ForKubeconfig(cc, cfg.CertDir, "n1", quietLogger())
	if err != nil || m == nil {
		t.Fatalf("bootstrapped kubeconfig: manager %v, err %v", m, err)
	}
	if cc.CertFile != "" || cc.GetClientCertificate == nil || cc.DialContext == nil {
		t.Errorf("client config not pointed at the manager: cert file %q", cc.CertFile)
	}
	if got := whoAmI(t, cc); got != "system:node:n1" {
		t.Errorf("through the manager the client is %s", got)
	}

	admin, err := client.LoadKubeconfig(c.env.KubeconfigPath, "")
	if err != nil {
		t.Fatal(err)
	}
	if m, err := certificate.ForKubeconfig(admin, cfg.CertDir, "n1", quietLogger()); err != nil || m != nil || admin.GetClientCertificate != nil {
		t.Errorf("another kubeconfig: manager %v, err %v, hooks set %v", m, err, admin.GetClientCertificate != nil)
	}
}
