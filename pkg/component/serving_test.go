package component_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
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
	code, body, _ := g.do(url, token, "")
	return code, strings.TrimSpace(body)
}

func (g getter) do(url, token, userAgent string) (int, string, http.Header) {
	g.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	if userAgent != "" {
		req.Header.Set("User-Agent", userAgent)
	}
	resp, err := g.client.Do(req)
	if err != nil {
		g.t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// selfSignedClient is a client certificate no cluster CA signed.
func selfSignedClient(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "mallory", Organization: []string{"system:masters"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// Upstream kube-scheduler 1.34's answers, byte for byte.
const (
	forbiddenMetrics = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden: User \"system:anonymous\" cannot get path \"/metrics\"","reason":"Forbidden","details":{},"code":403}` + "\n"
	unauthorized     = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}` + "\n"
	// for curl: indented, no final newline (content-length 224)
	forbiddenMetricsPretty = `{
  "kind": "Status",
  "apiVersion": "v1",
  "metadata": {},
  "status": "Failure",
  "message": "forbidden: User \"system:anonymous\" cannot get path \"/metrics\"",
  "reason": "Forbidden",
  "details": {},
  "code": 403
}`
)

// TestServingAuth: the served paths are guarded as upstream's delegated
// authentication and authorization guard them, with upstream's answers.
func TestServingAuth(t *testing.T) {
	env := testenv.StartT(t)
	admin, err := tls.X509KeyPair(env.CertData, env.KeyData)
	if err != nil {
		t.Fatal(err)
	}
	stranger := selfSignedClient(t)
	reg := component.NewRegistry()
	health := component.NewHealth()
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, env.CAData, 0o600); err != nil {
		t.Fatal(err)
	}
	servers := map[string]string{
		// No delegation: only the always-allowed paths, for anyone.
		"bare": serve(t, component.ServingConfig{Profiling: true}, health, reg),
		// Authentication delegated: the client CA is looked up, tokens reviewed.
		"authn":  serve(t, component.ServingConfig{AuthenticationKubeconfig: env.KubeconfigPath, Profiling: true}, health, reg),
		"noProf": serve(t, component.ServingConfig{AuthenticationKubeconfig: env.KubeconfigPath}, health, reg),
		// Authorization delegated too: a SubjectAccessReview decides (skiff's
		// API server allows every review until RBAC is enforced).
		"both": serve(t, component.ServingConfig{AuthenticationKubeconfig: env.KubeconfigPath, AuthorizationKubeconfig: env.KubeconfigPath}, health, reg),
		// The always-allowed paths are configurable; "/foo/*" is a prefix.
		"prefix": serve(t, component.ServingConfig{AuthorizationAlwaysAllowPaths: []string{"/healthz/*"}}, health, reg),
		// A client CA file authenticates certificates without a lookup.
		"caFile": serve(t, component.ServingConfig{ClientCAFile: caFile}, health, reg),
	}
	tests := []struct {
		name      string
		server    string
		cert      *tls.Certificate
		auth      string // Authorization header
		userAgent string
		path      string
		wantCode  int
		wantBody  string // exact when set
		contains  string
	}{
		{name: "anonymous /healthz", server: "bare", path: "/healthz", wantCode: 200, wantBody: "ok"},
		{name: "anonymous /metrics", server: "bare", path: "/metrics", wantCode: 403, wantBody: forbiddenMetrics},
		{name: "pretty for curl", server: "bare", path: "/metrics", userAgent: "curl/8.5.0", wantCode: 403, wantBody: forbiddenMetricsPretty},
		{name: "?pretty=false wins", server: "bare", path: "/metrics?pretty=false", userAgent: "curl/8.5.0", wantCode: 403, wantBody: forbiddenMetrics},
		{name: "?pretty=true", server: "bare", path: "/metrics?pretty=true", wantCode: 403, wantBody: forbiddenMetricsPretty},
		{name: "a certificate without a client CA is anonymous", server: "bare", cert: &admin, path: "/metrics", wantCode: 403, wantBody: forbiddenMetrics},
		{name: "a token without token review is anonymous", server: "bare", auth: "Bearer some-token", path: "/metrics", wantCode: 403, wantBody: forbiddenMetrics},
		{name: "anonymous /debug/pprof/", server: "bare", path: "/debug/pprof/", wantCode: 403, contains: `cannot get path \"/debug/pprof/\"`},
		{name: "system:masters certificate", server: "authn", cert: &admin, path: "/metrics", wantCode: 200, contains: "go_goroutines"},
		{name: "profiling", server: "authn", cert: &admin, path: "/debug/pprof/", wantCode: 200, contains: "goroutine"},
		{name: "profiling off", server: "noProf", cert: &admin, path: "/debug/pprof/", wantCode: 404},
		{name: "bad token", server: "authn", auth: "Bearer not-a-token", path: "/metrics", wantCode: 401, wantBody: unauthorized},
		{name: "bad token, any scheme case", server: "authn", auth: "bearer not-a-token", path: "/healthz", wantCode: 401, wantBody: unauthorized},
		{name: "not a bearer token: anonymous", server: "authn", auth: "Basic Zm9vOmJhcg==", path: "/healthz", wantCode: 200, wantBody: "ok"},
		{name: "a certificate the CA did not sign", server: "authn", cert: &stranger, path: "/healthz", wantCode: 401, wantBody: unauthorized},
		{name: "anonymous sub-path without authorization", server: "authn", path: "/healthz/ping", wantCode: 403, contains: `cannot get path \"/healthz/ping\"`},
		{name: "anonymous with authorization delegated", server: "both", path: "/metrics", wantCode: 200, contains: "go_goroutines"},
		{name: "always-allowed prefix", server: "prefix", path: "/healthz/ping", wantCode: 200, wantBody: "ok"},
		{name: "outside the always-allowed prefix", server: "prefix", path: "/healthz", wantCode: 403, contains: `cannot get path \"/healthz\"`},
		{name: "certificate of --client-ca-file", server: "caFile", cert: &admin, path: "/metrics", wantCode: 200},
		{name: "anonymous with --client-ca-file", server: "caFile", path: "/metrics", wantCode: 403, wantBody: forbiddenMetrics},
		{name: "stranger with --client-ca-file", server: "caFile", cert: &stranger, path: "/metrics", wantCode: 401, wantBody: unauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, h := newGetter(t, tt.cert).do(servers[tt.server]+tt.path, tt.auth, tt.userAgent)
			if code != tt.wantCode || tt.wantBody != "" && body != tt.wantBody || !strings.Contains(body, tt.contains) {
				t.Errorf("GET %s = %d %.300q, want %d %q (containing %q)", tt.path, code, body, tt.wantCode, tt.wantBody, tt.contains)
			}
			if cc := h.Get("Cache-Control"); cc != "no-cache, private" {
				t.Errorf("Cache-Control %q", cc)
			}
			if code == 401 || code == 403 {
				if ct := h.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
			}
		})
	}
}

// TestServingCertificate: without certificate files the server presents
// a self-signed certificate for localhost, 127.0.0.1 and the bind
// address, named after the clock's time, as upstream; with them, theirs.
func TestServingCertificate(t *testing.T) {
	env := testenv.StartT(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	chain := func(cfg component.ServingConfig, now time.Time) []*x509.Certificate {
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
		return conn.ConnectionState().PeerCertificates
	}
	peer := func(cfg component.ServingConfig) *x509.Certificate { return chain(cfg, now)[0] }
	// As upstream 1.34's kube-scheduler presents (observed with openssl).
	for _, tt := range []struct{ bind, dns, ips string }{
		{"127.0.0.1", "localhost", "127.0.0.1,127.0.0.1"},
		{"0.0.0.0", "localhost,localhost", "127.0.0.1"},
		{"10.1.2.3", "localhost", "127.0.0.1,10.1.2.3"},
	} {
		certs := chain(component.ServingConfig{BindAddress: tt.bind}, now)
		c, ca := certs[0], certs[1]
		if c.Subject.CommonName != fmt.Sprintf("localhost@%d", now.Unix()) || ca.Subject.CommonName != fmt.Sprintf("localhost-ca@%d", now.Unix()) ||
			c.Issuer.CommonName != ca.Subject.CommonName {
			t.Errorf("bind %s: %q issued by %q, CA %q", tt.bind, c.Subject.CommonName, c.Issuer.CommonName, ca.Subject.CommonName)
		}
		var ips []string
		for _, ip := range c.IPAddresses {
			ips = append(ips, ip.String())
		}
		if strings.Join(c.DNSNames, ",") != tt.dns || strings.Join(ips, ",") != tt.ips {
			t.Errorf("bind %s: SANs %v %v, want %s %s", tt.bind, c.DNSNames, ips, tt.dns, tt.ips)
		}
		if !c.NotBefore.Equal(now.Add(-time.Hour)) || !c.NotAfter.Equal(now.Add(-time.Hour).Add(365*24*time.Hour)) {
			t.Errorf("validity %v..%v around %v", c.NotBefore, c.NotAfter, now)
		}
		if c.KeyUsage != x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment || c.IsCA || !c.BasicConstraintsValid ||
			len(c.ExtKeyUsage) != 1 || c.ExtKeyUsage[0] != x509.ExtKeyUsageServerAuth {
			t.Errorf("leaf usages %v %v CA %v", c.KeyUsage, c.ExtKeyUsage, c.IsCA)
		}
		if ca.KeyUsage != x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment|x509.KeyUsageCertSign || !ca.IsCA {
			t.Errorf("CA usages %v CA %v", ca.KeyUsage, ca.IsCA)
		}
	}

	// --cert-dir: the pair is written there and reused by the next start.
	certDir := filepath.Join(t.TempDir(), "certs")
	first := peer(component.ServingConfig{CertDirectory: certDir, PairName: "kube-scheduler"})
	for _, f := range []string{"kube-scheduler.crt", "kube-scheduler.key"} {
		if _, err := os.Stat(filepath.Join(certDir, f)); err != nil {
			t.Errorf("--cert-dir: %v", err)
		}
	}
	if again := chain(component.ServingConfig{CertDirectory: certDir, PairName: "kube-scheduler"}, now.Add(time.Hour))[0]; !again.Equal(first) {
		t.Errorf("--cert-dir: the next start made %q instead of reusing %q", again.Subject.CommonName, first.Subject.CommonName)
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
