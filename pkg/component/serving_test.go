package component_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/component"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

const timeout = 30 * time.Second

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// serve starts a Server of NewMux(cfg, health, gatherer) on a local
// listener until the test ends; it returns the base URL.
func serve(t *testing.T, cfg component.ServingConfig, health *component.Health, gatherer prometheus.Gatherer) string {
	t.Helper()
	cfg.Listener = listen(t)
	srv, err := component.NewServer(cfg, component.NewMux(cfg, health, gatherer), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "https://" + srv.Addr().String()
}

type getter struct {
	t      *testing.T
	client *http.Client
}

func newGetter(t *testing.T, cert *tls.Certificate) getter {
	tc := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // self-signed
	if cert != nil {
		tc.Certificates = []tls.Certificate{*cert}
	}
	return getter{t, &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}}
}

func (g getter) get(url, token string) (int, string) {
	g.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := g.client.Do(req)
	if err != nil {
		g.t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// TestServingAuth: the served paths are guarded as upstream's delegated
// authentication and authorization guard them.
func TestServingAuth(t *testing.T) {
	env := testenv.StartT(t)
	admin, err := tls.X509KeyPair(env.CertData, env.KeyData)
	if err != nil {
		t.Fatal(err)
	}
	reg := component.NewRegistry()
	health := component.NewHealth()
	anon, cert := newGetter(t, nil), newGetter(t, &admin)

	// No delegation: only the always-allowed paths, for anyone.
	bare := serve(t, component.ServingConfig{Profiling: true}, health, reg)
	if code, body := anon.get(bare+"/healthz", ""); code != 200 || body != "ok" {
		t.Errorf("anonymous /healthz: %d %s", code, body)
	}
	if code, body := anon.get(bare+"/metrics", ""); code != 403 || body != `forbidden: User "system:anonymous" cannot get path "/metrics"` {
		t.Errorf("anonymous /metrics without delegation: %d %s", code, body)
	}
	if code, _ := cert.get(bare+"/metrics", ""); code != 403 {
		t.Errorf("a client certificate without a client CA is anonymous: %d", code)
	}
	if code, _ := anon.get(bare+"/debug/pprof/", ""); code != 403 {
		t.Errorf("anonymous /debug/pprof/: %d", code)
	}
	if code, body := anon.get(bare+"/metrics", "some-token"); code != 401 || body != "Unauthorized" {
		t.Errorf("a token without an authentication kubeconfig: %d %s", code, body)
	}

	// Authentication delegated: the client CA is looked up, tokens reviewed.
	authn := serve(t, component.ServingConfig{AuthenticationKubeconfig: env.KubeconfigPath, Profiling: true}, health, reg)
	if code, body := cert.get(authn+"/metrics", ""); code != 200 || !strings.Contains(body, "go_goroutines") {
		t.Errorf("system:masters certificate: %d %.200s", code, body)
	}
	// Profiling is behind the same checks; off, the path is not served.
	if code, body := cert.get(authn+"/debug/pprof/", ""); code != 200 || !strings.Contains(body, "goroutine") {
		t.Errorf("/debug/pprof/ with profiling: %d %.200s", code, body)
	}
	noProf := serve(t, component.ServingConfig{AuthenticationKubeconfig: env.KubeconfigPath}, health, reg)
	if code, _ := cert.get(noProf+"/debug/pprof/", ""); code != 404 {
		t.Errorf("/debug/pprof/ without profiling: %d", code)
	}
	if code, body := anon.get(authn+"/metrics", "not-a-token"); code != 401 {
		t.Errorf("bad token: %d %s", code, body)
	}
	if code, body := anon.get(authn+"/healthz/ping", ""); code != 403 || !strings.Contains(body, `cannot get path "/healthz/ping"`) {
		t.Errorf("anonymous /healthz/ping without authorization: %d %s", code, body)
	}
	// The always-allowed paths are configurable; "/foo/*" is a prefix.
	prefix := serve(t, component.ServingConfig{AuthorizationAlwaysAllowPaths: []string{"/healthz/*"}}, health, reg)
	if code, _ := anon.get(prefix+"/healthz/ping", ""); code != 200 {
		t.Errorf("/healthz/ping under an always-allowed prefix: %d", code)
	}
	if code, _ := anon.get(prefix+"/healthz", ""); code != 403 {
		t.Errorf("/healthz outside the always-allowed prefix: %d", code)
	}

	// Authorization delegated: a SubjectAccessReview decides (skiff's API
	// server allows every review until RBAC is enforced).
	both := serve(t, component.ServingConfig{AuthenticationKubeconfig: env.KubeconfigPath, AuthorizationKubeconfig: env.KubeconfigPath}, health, reg)
	if code, _ := anon.get(both+"/metrics", ""); code != 200 {
		t.Errorf("anonymous /metrics with authorization delegated: %d", code)
	}

	// A client CA file authenticates certificates without a lookup.
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, env.CAData, 0o600); err != nil {
		t.Fatal(err)
	}
	withCA := serve(t, component.ServingConfig{ClientCAFile: caFile}, health, reg)
	if code, _ := cert.get(withCA+"/metrics", ""); code != 200 {
		t.Errorf("system:masters certificate of --client-ca-file: %d", code)
	}
	if code, _ := anon.get(withCA+"/metrics", ""); code != 403 {
		t.Errorf("anonymous with --client-ca-file: %d", code)
	}
}

// TestServingCertificate: without certificate files the server presents
// a self-signed certificate for localhost, 127.0.0.1 and the bind
// address, named after the clock's time, as upstream; with them, theirs.
func TestServingCertificate(t *testing.T) {
	env := testenv.StartT(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	peer := func(cfg component.ServingConfig) *x509.Certificate {
		t.Helper()
		cfg.Listener = listen(t)
		srv, err := component.NewServer(cfg, http.NotFoundHandler(), clock.NewFake(now), nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ctx) }()
		defer func() {
			cancel()
			<-done
		}()
		conn, err := tls.Dial("tcp", srv.Addr().String(), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // inspected below
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0]
	}
	c := peer(component.ServingConfig{BindAddress: "10.1.2.3"})
	if want := fmt.Sprintf("localhost@%d", now.Unix()); c.Subject.CommonName != want {
		t.Errorf("CN %q, want %q", c.Subject.CommonName, want)
	}
	var ips []string
	for _, ip := range c.IPAddresses {
		ips = append(ips, ip.String())
	}
	if strings.Join(c.DNSNames, ",") != "localhost" || strings.Join(ips, ",") != "127.0.0.1,10.1.2.3" {
		t.Errorf("SANs %v %v, want localhost 127.0.0.1,10.1.2.3", c.DNSNames, ips)
	}
	if !c.NotBefore.Before(now) || !c.NotAfter.After(now.Add(300*24*time.Hour)) {
		t.Errorf("validity %v..%v around %v", c.NotBefore, c.NotAfter, now)
	}

	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, env.CertData, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, env.KeyData, 0o600); err != nil {
		t.Fatal(err)
	}
	given, err := tls.X509KeyPair(env.CertData, env.KeyData)
	if err != nil {
		t.Fatal(err)
	}
	if c := peer(component.ServingConfig{TLSCertFile: certFile, TLSKeyFile: keyFile}); !c.Equal(mustParse(t, given.Certificate[0])) {
		t.Errorf("served %q, want the --tls-cert-file certificate", c.Subject.CommonName)
	}
	if _, err := component.NewServer(component.ServingConfig{TLSCertFile: filepath.Join(dir, "nope"), TLSKeyFile: keyFile, Listener: listen(t)},
		http.NotFoundHandler(), nil, nil); err == nil || !strings.Contains(err.Error(), "serving certificate") {
		t.Errorf("missing certificate file: err = %v", err)
	}
}

func mustParse(t *testing.T, der []byte) *x509.Certificate {
	t.Helper()
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRunServing: the server serves while run runs and stops when it
// returns; a server that fails ends run.
func TestRunServing(t *testing.T) {
	health := component.NewHealth()
	ln := listen(t)
	srv, err := component.NewServer(component.ServingConfig{Listener: ln}, component.NewMux(component.ServingConfig{}, health, nil), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	url := "https://" + srv.Addr().String() + "/healthz"
	g := newGetter(t, nil)
	errRun := errors.New("run failed")
	err = component.RunServing(context.Background(), srv, func(ctx context.Context) error {
		if code, body := g.get(url, ""); code != 200 || body != "ok" {
			t.Errorf("/healthz while running: %d %s", code, body)
		}
		return errRun
	})
	if !errors.Is(err, errRun) {
		t.Fatalf("RunServing = %v, want run's error", err)
	}
	g.client.CloseIdleConnections()
	if _, err := g.client.Get(url); err == nil {
		t.Error("still serving after run returned")
	}

	// Serving fails (its listener is closed under it): run's context ends,
	// and serving's error is returned after run returned.
	ln2 := listen(t)
	srv, err = component.NewServer(component.ServingConfig{Listener: ln2}, http.NotFoundHandler(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	returned := false
	err = component.RunServing(context.Background(), srv, func(ctx context.Context) error {
		ln2.Close()
		<-ctx.Done()
		returned = true
		return nil
	})
	if err == nil || !returned {
		t.Fatalf("RunServing = %v (run returned %v), want the serving error after run returned", err, returned)
	}

	// Without a server: run alone.
	if err := component.RunServing(context.Background(), nil, func(context.Context) error { return errRun }); !errors.Is(err, errRun) {
		t.Fatalf("RunServing(nil) = %v", err)
	}
}
