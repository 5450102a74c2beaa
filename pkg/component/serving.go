package component

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// ServingConfig is a component's secure serving and its delegated
// authentication and authorization (upstream's --secure-port,
// --bind-address, --tls-*, --client-ca-file, --authentication-*,
// --authorization-* and --profiling flags).
type ServingConfig struct {
	// SecurePort serves over HTTPS (kube-controller-manager's 10257,
	// kube-scheduler's 10259); 0 turns serving off. Listener, when set, is
	// used instead of listening on BindAddress:SecurePort (tests).
	SecurePort  int
	BindAddress string
	Listener    net.Listener
	// TLSCertFile and TLSKeyFile are the serving certificate; without them
	// a self-signed one is made, as upstream does without --tls-cert-file:
	// in CertDirectory (--cert-dir) as <PairName>.crt/.key, kept there and
	// reused by the next start, or without it in memory.
	TLSCertFile, TLSKeyFile string
	CertDirectory           string
	// PairName names the self-signed pair's files (the component:
	// "kube-scheduler"; empty: "apiserver").
	PairName string
	// AuthenticationKubeconfig reaches the API server for TokenReviews and
	// the client CA lookup (kube-system/extension-apiserver-authentication),
	// AuthorizationKubeconfig for SubjectAccessReviews; ClientCAFile
	// overrides the lookup. AuthorizationAlwaysAllowPaths (nil:
	// DefaultAlwaysAllowPaths) need neither; "/foo/*" is a prefix.
	AuthenticationKubeconfig      string
	AuthorizationKubeconfig       string
	ClientCAFile                  string
	AuthorizationAlwaysAllowPaths []string
	// Profiling is upstream's --profiling (on by default): Go's profiles
	// served under /debug/pprof/, behind the same checks.
	Profiling bool
}

// Upstream's serving defaults.
const (
	DefaultBindAddress = "0.0.0.0"
	// kube-controller-manager's and kube-scheduler's --secure-port.
	ControllerManagerSecurePort = 10257
	SchedulerSecurePort         = 10259
)

// DefaultAlwaysAllowPaths is upstream's --authorization-always-allow-paths.
func DefaultAlwaysAllowPaths() []string { return []string{"/healthz", "/readyz", "/livez"} }

// DefaultServingConfig is upstream's serving defaults on securePort:
// 0.0.0.0, a self-signed certificate, the health paths always allowed,
// profiling on.
func DefaultServingConfig(securePort int) ServingConfig {
	return ServingConfig{SecurePort: securePort, BindAddress: DefaultBindAddress,
		AuthorizationAlwaysAllowPaths: DefaultAlwaysAllowPaths(), Profiling: true}
}

// WithDefaults fills BindAddress and AuthorizationAlwaysAllowPaths when
// unset (an empty, non-nil list stays empty).
func (c ServingConfig) WithDefaults() ServingConfig {
	if c.BindAddress == "" {
		c.BindAddress = DefaultBindAddress
	}
	if c.AuthorizationAlwaysAllowPaths == nil {
		c.AuthorizationAlwaysAllowPaths = DefaultAlwaysAllowPaths()
	}
	return c
}

// Enabled says whether anything is served (a port or a Listener).
func (c *ServingConfig) Enabled() bool { return c.SecurePort != 0 || c.Listener != nil }

// Validate checks the flags as upstream's options validation does,
// naming them.
func (c *ServingConfig) Validate() []error {
	var errs []error
	if c.SecurePort < 0 || c.SecurePort > 65535 {
		errs = append(errs, fmt.Errorf("--secure-port %d must be between 0 and 65535, inclusive. 0 for turning off secure port", c.SecurePort))
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file go together"))
	}
	return errs
}

// NewMux returns the unauthenticated handler of a component's common
// paths: /healthz and /healthz/<check> (health, when not nil), /metrics
// (gatherer, when not nil) and, with cfg.Profiling, /debug/pprof/. The
// caller may add its own paths (/livez, /readyz, ...) before serving it.
func NewMux(cfg ServingConfig, health *Health, gatherer prometheus.Gatherer) *http.ServeMux {
	mux := http.NewServeMux()
	if health != nil {
		health.Install(mux, "/healthz")
	}
	if gatherer != nil {
		mux.Handle("/metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	}
	if cfg.Profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// Server is a component's HTTPS server: a handler behind delegated
// authentication and authorization.
type Server struct {
	ln  net.Listener
	srv *http.Server
}

// NewServer listens (cfg.Listener, else BindAddress:SecurePort) and
// prepares to serve handler over TLS behind delegated authentication and
// authorization. clk dates the self-signed certificate and is the review
// clients' clock; logger receives upstream's warnings about missing
// delegation. Nothing is served until Serve.
func NewServer(cfg ServingConfig, handler http.Handler, clk clock.Clock, logger *slog.Logger) (*Server, error) {
	cfg = cfg.WithDefaults()
	if clk == nil {
		clk = clock.Real{}
	}
	if logger == nil {
		logger = slog.Default()
	}
	cert, err := servingCertificate(&cfg, clk.Now())
	if err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}
	auth, err := newDelegatedAuth(&cfg, clk, logger)
	if err != nil {
		return nil, err
	}
	ln := cfg.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", net.JoinHostPort(cfg.BindAddress, strconv.Itoa(cfg.SecurePort))); err != nil {
			return nil, fmt.Errorf("failed to create listener: %w", err)
		}
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"},
		ClientAuth: tls.RequestClientCert}
	return &Server{
		ln:  tls.NewListener(ln, tc),
		srv: &http.Server{Handler: auth.wrap(handler), ReadHeaderTimeout: 32 * time.Second},
	}, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve serves until ctx ends (then shuts down, giving requests in flight
// 5s) or serving fails. It closes the listener.
func (s *Server) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(sctx)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// RunServing runs run while srv serves (srv nil: run alone), until run
// returns or serving fails; serving stops before it returns. It returns
// run's error, or serving's (after run, whose context is then cancelled,
// returned).
func RunServing(ctx context.Context, srv *Server, run func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	serveErr := make(chan error, 1)
	served := make(chan struct{})
	if srv != nil {
		go func() {
			defer close(served)
			serveErr <- srv.Serve(ctx)
		}()
	} else {
		close(served)
	}
	defer func() { <-served }()
	runErr := make(chan error, 1)
	go func() { runErr <- run(ctx) }()
	select {
	case err := <-runErr:
		cancel()
		return err
	case err := <-serveErr:
		cancel()
		<-runErr
		return err
	}
}

// selfSigned makes a serving certificate signed by a throwaway CA, as
// upstream's MaybeDefaultWithSelfSignedCerts("localhost", nil,
// [127.0.0.1]) does: "localhost@<unix time>" signed by
// "localhost-ca@<unix time>", valid from an hour ago for a year, for
// localhost and 127.0.0.1 plus the bind address (localhost again when it
// is unspecified). It returns the pair and its PEM (leaf then CA; key).
func selfSigned(bindAddress string, now time.Time) (tls.Certificate, []byte, []byte, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, nil, err
	}
	from, until := now.Add(-time.Hour), now.Add(-time.Hour).Add(365*24*time.Hour)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: fmt.Sprintf("localhost-ca@%d", now.Unix())},
		NotBefore: from, NotAfter: until,
		KeyUsage:              x509.KeyUsageKeyEncipherment | x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true, IsCA: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, nil, nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return tls.Certificate{}, nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: fmt.Sprintf("localhost@%d", now.Unix())},
		NotBefore: from, NotAfter: until,
		KeyUsage:              x509.KeyUsageKeyEncipherment | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
	}
	if ip := net.ParseIP(bindAddress); ip == nil || ip.IsUnspecified() {
		tmpl.DNSNames = append(tmpl.DNSNames, "localhost")
	} else {
		tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return tls.Certificate{}, nil, nil, err
	}
	certPEM := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})...)
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	return tls.Certificate{Certificate: [][]byte{der, caDER}, PrivateKey: key}, certPEM, keyPEM, nil
}

// servingCertificate is the certificate NewServer presents: the files
// given; else, with a CertDirectory, the pair there (made and written
// there the first time); else a self-signed one in memory.
func servingCertificate(cfg *ServingConfig, now time.Time) (tls.Certificate, error) {
	if cfg.TLSCertFile != "" {
		return tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
	}
	var certFile, keyFile string
	if cfg.CertDirectory != "" {
		name := cfg.PairName
		if name == "" {
			name = "apiserver"
		}
		certFile, keyFile = filepath.Join(cfg.CertDirectory, name+".crt"), filepath.Join(cfg.CertDirectory, name+".key")
		if cert, err := tls.LoadX509KeyPair(certFile, keyFile); err == nil {
			return cert, nil
		}
	}
	cert, certPEM, keyPEM, err := selfSigned(cfg.BindAddress, now)
	if err != nil || certFile == "" {
		return cert, err
	}
	if err := os.MkdirAll(cfg.CertDirectory, 0o755); err != nil {
		return tls.Certificate{}, fmt.Errorf("unable to write self-signed certificate: %w", err)
	}
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil { //nolint:gosec // a certificate is public
		return tls.Certificate{}, fmt.Errorf("unable to write self-signed certificate: %w", err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return tls.Certificate{}, fmt.Errorf("unable to write self-signed key: %w", err)
	}
	return cert, nil
}
