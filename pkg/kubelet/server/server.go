package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
)

// DefaultPort is the kubelet's HTTPS port (upstream's --port).
const DefaultPort = 10250

// Host is what the server needs from the kubelet it serves.
type Host interface {
	// GetPodByName is the pod the kubelet runs under that namespace and
	// name, with the newest status the kubelet knows.
	GetPodByName(namespace, name string) (*corev1.Pod, bool)
	// GetPods are the pods bound to the node that the kubelet runs.
	GetPods() []*corev1.Pod
}

// Config configures a Server.
type Config struct {
	// NodeName is the node served: the name in authorization attributes
	// and in /stats/summary.
	NodeName string
	Host     Host
	Runtime  cri.RuntimeService
	// Images reports the image filesystem in /stats/summary (optional).
	Images cri.ImageService

	// Address and Port are where to listen (upstream's --address 0.0.0.0
	// and --port 10250); Listener, when set, is used instead.
	Address  string
	Port     int
	Listener net.Listener
	// TLSCertFile and TLSKeyFile are the serving certificate; without
	// them a self-signed one is made as upstream's kubelet makes it
	// without TLS bootstrap ("<host>@<time>" signed by "<host>-ca@<time>"),
	// kept as kubelet.crt/kubelet.key in CertDirectory when set.
	TLSCertFile, TLSKeyFile string
	CertDirectory           string

	// ClientCA verifies client certificates (upstream's
	// authentication.x509.clientCAFile); nil: certificates are ignored.
	ClientCA *x509.CertPool
	// Authenticator reviews bearer tokens (upstream's
	// authentication.webhook; NewWebhook); nil: tokens are ignored.
	Authenticator TokenAuthenticator
	// Anonymous lets requests without credentials in as
	// system:anonymous (upstream's authentication.anonymous.enabled,
	// false in the kubelet configuration's defaults, which kubeadm uses).
	Anonymous bool
	// Authorizer decides every authenticated request (upstream's
	// authorization.mode Webhook: NewWebhook); nil is AlwaysAllow.
	Authorizer Authorizer

	// HealthzAddress, when set (host:port, upstream's
	// --healthz-bind-address and --healthz-port, 127.0.0.1:10248), serves
	// /healthz over plain HTTP without authentication, as upstream's
	// kubelet does for local liveness checks; failing to listen there is
	// logged, not fatal (as upstream's).
	HealthzAddress string

	// SystemLogDir, when set, is served under /logs/ (upstream's
	// enableSystemLogHandler over /var/log; authorized as nodes/log).
	SystemLogDir string

	// NodeStats, when set, measures the node for /stats/summary and
	// /metrics/resource (MachineStats reads this machine); nil: the node's
	// usage is the sum of its pods' (simulated nodes).
	NodeStats func(ctx context.Context) (*NodeStats, error)

	Clock  clock.Clock
	Logger *slog.Logger
	// LogPollInterval is how often a followed log is checked for new
	// lines, rotation and the container's end (default 250ms).
	LogPollInterval time.Duration
}

// Server is the kubelet's HTTPS API.
type Server struct {
	cfg     Config
	log     *slog.Logger
	handler http.Handler
	metrics *metrics
	started time.Time
	// stopping closes when serving ends: streaming sessions end with it.
	stopping chan struct{}
	stopOnce sync.Once
}

// New checks cfg and returns a Server; Run serves it.
func New(cfg Config) (*Server, error) {
	if cfg.NodeName == "" || cfg.Host == nil || cfg.Runtime == nil {
		return nil, errors.New("kubelet server: NodeName, Host and Runtime are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Port == 0 {
		cfg.Port = DefaultPort
	}
	if cfg.LogPollInterval <= 0 {
		cfg.LogPollInterval = 250 * time.Millisecond
	}
	s := &Server{cfg: cfg, log: cfg.Logger.With("component", "kubelet-server", "node", cfg.NodeName), started: cfg.Clock.Now(), stopping: make(chan struct{})}
	s.metrics = newMetrics(s)
	s.handler = s.authFilter(http.HandlerFunc(s.route))
	return s, nil
}

// Handler is the server's handler behind authentication and
// authorization (tests serve it with httptest's TLS server).
func (s *Server) Handler() http.Handler { return s.handler }

// Run serves HTTPS (and the plain health port) until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	if s.cfg.HealthzAddress != "" {
		go s.serveHealthzPort(ctx)
	}
	return s.serve(ctx, s.handler)
}

// serveHealthzPort serves /healthz on HealthzAddress until ctx ends.
func (s *Server) serveHealthzPort(ctx context.Context) {
	ln, err := net.Listen("tcp", s.cfg.HealthzAddress)
	if err != nil {
		s.log.Error("Failed to start healthz server", "address", s.cfg.HealthzAddress, "err", err)
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", s.serveHealthz)
	mux.HandleFunc("/healthz/", s.serveHealthz)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); srv.Close() }()
	_ = srv.Serve(ln)
}

// serve serves h on the server's listener (Listener, else Address:Port)
// with its certificate until ctx ends.
func (s *Server) serve(ctx context.Context, h http.Handler) error {
	cert, err := s.servingCertificate()
	if err != nil {
		return fmt.Errorf("kubelet server: serving certificate: %w", err)
	}
	ln := s.cfg.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", net.JoinHostPort(s.cfg.Address, strconv.Itoa(s.cfg.Port))); err != nil {
			return fmt.Errorf("kubelet server: %w", err)
		}
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert},
		// HTTP/1.1 only: exec, attach and port-forward hijack the connection.
		NextProtos: []string{"http/1.1"}, ClientAuth: tls.RequestClientCert}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 32 * time.Second,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(tls.NewListener(ln, tc)) }()
	s.log.Info("Starting to listen", "address", ln.Addr().String())
	defer s.stopOnce.Do(func() { close(s.stopping) })
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.stopOnce.Do(func() { close(s.stopping) })
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	_ = srv.Close() // hijacked and followed streams
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// route dispatches an authorized request by path.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == "/healthz" || strings.HasPrefix(p, "/healthz/"):
		s.serveHealthz(w, r)
	case p == "/pods" || p == "/pods/":
		s.servePods(w, r)
	case p == "/metrics":
		s.metrics.serve(w, r)
	case p == "/metrics/resource":
		s.serveResourceMetrics(w, r)
	case p == "/stats/summary":
		s.serveSummary(w, r)
	case strings.HasPrefix(p, "/containerLogs/"):
		s.serveContainerLogs(w, r)
	case strings.HasPrefix(p, "/exec/"), strings.HasPrefix(p, "/attach/"):
		s.serveExecAttach(w, r)
	case strings.HasPrefix(p, "/portForward/"):
		s.servePortForward(w, r)
	case (p == "/logs" || strings.HasPrefix(p, "/logs/")) && s.cfg.SystemLogDir != "":
		if p == "/logs" {
			http.Redirect(w, r, "/logs/", http.StatusMovedPermanently)
			return
		}
		http.StripPrefix("/logs/", http.FileServer(http.Dir(s.cfg.SystemLogDir))).ServeHTTP(w, r)
	default:
		http.NotFound(w, r)
	}
}

// serveHealthz is upstream's /healthz: checks ping, log and syncloop
// (the kubelet answering is its sync loop's health here), "ok".
func (s *Server) serveHealthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	switch strings.TrimPrefix(r.URL.Path, "/healthz") {
	case "", "/":
		if _, ok := r.URL.Query()["verbose"]; ok {
			fmt.Fprint(w, "[+]ping ok\n[+]log ok\n[+]syncloop ok\nhealthz check passed\n")
			return
		}
	case "/ping", "/log", "/syncloop":
	default:
		http.NotFound(w, r)
		return
	}
	fmt.Fprint(w, "ok")
}

// servePods is the pods the kubelet runs, a v1 PodList.
func (s *Server) servePods(w http.ResponseWriter, _ *http.Request) {
	list := corev1.PodList{}
	list.APIVersion, list.Kind = "v1", "PodList"
	for _, p := range s.cfg.Host.GetPods() {
		list.Items = append(list.Items, *p)
	}
	writeJSON(w, &list)
}

func writeJSON(w http.ResponseWriter, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// servingCertificate is the configured pair, else the pair kept in
// CertDirectory, else a new self-signed one (written there when set).
func (s *Server) servingCertificate() (tls.Certificate, error) {
	if s.cfg.TLSCertFile != "" {
		return tls.LoadX509KeyPair(s.cfg.TLSCertFile, s.cfg.TLSKeyFile)
	}
	var certFile, keyFile string
	if s.cfg.CertDirectory != "" {
		certFile, keyFile = filepath.Join(s.cfg.CertDirectory, "kubelet.crt"), filepath.Join(s.cfg.CertDirectory, "kubelet.key")
		if c, err := tls.LoadX509KeyPair(certFile, keyFile); err == nil {
			if leaf, err := x509.ParseCertificate(c.Certificate[0]); err == nil && s.cfg.Clock.Now().Add(24*time.Hour).Before(leaf.NotAfter) {
				return c, nil
			}
		}
	}
	host, _ := os.Hostname()
	if host == "" {
		host = s.cfg.NodeName
	}
	cert, certPEM, keyPEM, err := selfSigned(strings.ToLower(host), s.cfg.Address, s.cfg.Clock.Now())
	if err != nil || certFile == "" {
		return cert, err
	}
	if err := os.MkdirAll(s.cfg.CertDirectory, 0o755); err != nil {
		return tls.Certificate{}, err
	}
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil { //nolint:gosec // a certificate is public
		return tls.Certificate{}, err
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return tls.Certificate{}, err
	}
	return cert, nil
}

// selfSigned is upstream's kubelet self-signed serving pair: "<host>@<unix
// time>" signed by "<host>-ca@<unix time>", valid for a year, for the host
// name (and the address when it is an IP).
func selfSigned(host, address string, now time.Time) (tls.Certificate, []byte, []byte, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, nil, err
	}
	from, until := now.Add(-time.Hour), now.Add(365*24*time.Hour)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: fmt.Sprintf("%s-ca@%d", host, now.Unix())},
		NotBefore: from, NotAfter: until, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true, IsCA: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, nil, nil, err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: fmt.Sprintf("%s@%d", host, now.Unix())},
		NotBefore: from, NotAfter: until, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true,
		DNSNames: []string{host}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	if ip := net.ParseIP(address); ip != nil && !ip.IsUnspecified() {
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

// PortOf is the port cfg serves: its Listener's, else Port (default
// DefaultPort).
func PortOf(cfg *Config) int32 {
	if cfg.Listener != nil {
		if a, ok := cfg.Listener.Addr().(*net.TCPAddr); ok {
			return int32(a.Port)
		}
	}
	if cfg.Port == 0 {
		return DefaultPort
	}
	return int32(cfg.Port)
}

// RunAlongside serves cfg while run runs, until run returns (then serving
// stops) or serving fails (then run's context ends and its return is
// awaited); it returns run's error, else serving's.
func RunAlongside(ctx context.Context, cfg Config, run func(context.Context) error) error {
	srv, err := New(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Run(ctx) }()
	runErr := make(chan error, 1)
	go func() { runErr <- run(ctx) }()
	select {
	case err := <-runErr:
		cancel()
		<-serveErr
		return err
	case err := <-serveErr:
		cancel()
		if rerr := <-runErr; rerr != nil {
			return rerr
		}
		if err != nil {
			return fmt.Errorf("kubelet server: %w", err)
		}
		return nil
	}
}

// Shared serves the APIs of many kubelets in one process (simulated
// nodes) on one listener: each node has an address of its own on this
// host (a loopback address such as 127.1.0.7, all of 127.0.0.0/8 being
// local on Linux) and a connection goes to the server of the node whose
// address it was made to. The listener, certificate and logger are the
// first server's configuration (its Address should be unspecified,
// 0.0.0.0, so that every node address reaches it).
type Shared struct {
	mu    sync.RWMutex
	byIP  map[string]*Server
	first *Server
}

// Add registers s for connections made to ip.
func (sh *Shared) Add(ip string, s *Server) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.byIP == nil {
		sh.byIP = map[string]*Server{}
	}
	if a, err := netip.ParseAddr(ip); err == nil {
		ip = a.Unmap().String()
	}
	sh.byIP[ip] = s
	if sh.first == nil {
		sh.first = s
	}
}

// ServeHTTP dispatches by the connection's local address (404 for an
// address no node has).
func (sh *Shared) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var ip string
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			ip = ap.Addr().Unmap().String()
		}
	}
	sh.mu.RLock()
	s := sh.byIP[ip]
	sh.mu.RUnlock()
	if s == nil {
		http.NotFound(w, r)
		return
	}
	s.handler.ServeHTTP(w, r)
}

// Run serves until ctx ends.
func (sh *Shared) Run(ctx context.Context) error {
	sh.mu.RLock()
	first := sh.first
	sh.mu.RUnlock()
	if first == nil {
		<-ctx.Done()
		return nil
	}
	defer func() {
		sh.mu.RLock()
		defer sh.mu.RUnlock()
		for _, s := range sh.byIP {
			s.stopOnce.Do(func() { close(s.stopping) })
		}
	}()
	return first.serve(ctx, sh)
}
