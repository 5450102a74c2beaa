package controllermanager

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
	"math/big"
	"net"
	"net/http"
	"net/http/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/skiff-sh/skiff/pkg/client/leaderelection"
)

// health holds the /healthz checks: ping, leaderElection and one per
// running controller.
type health struct {
	le *leaderelection.HealthzAdaptor

	mu          sync.Mutex
	controllers map[string]error // running controllers; non-nil: failed
}

func newHealth(le *leaderelection.HealthzAdaptor) *health {
	return &health{le: le, controllers: map[string]error{}}
}

func (h *health) add(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.controllers[name] = nil
}

func (h *health) fail(name string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.controllers[name] = err
}

func (h *health) remove(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.controllers, name)
}

type check struct {
	name string
	run  func(*http.Request) error
}

func (h *health) checks() []check {
	out := []check{
		{"ping", func(*http.Request) error { return nil }},
		{h.le.Name(), h.le.Check},
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	names := make([]string, 0, len(h.controllers))
	for n := range h.controllers {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		err := h.controllers[n]
		out = append(out, check{n, func(*http.Request) error { return err }})
	}
	return out
}

// ServeHTTP answers /healthz and /healthz/<check> as upstream's healthz
// handler: "ok", or 500 with one [+]/[-] line per check ("reason
// withheld" unless ?verbose).
func (h *health) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	checks := h.checks()
	if name, ok := strings.CutPrefix(r.URL.Path, "/healthz/"); ok {
		for _, c := range checks {
			if c.name == name {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.Header().Set("X-Content-Type-Options", "nosniff")
				if err := c.run(r); err != nil {
					http.Error(w, fmt.Sprintf("internal server error: %v", err), http.StatusInternalServerError)
					return
				}
				fmt.Fprint(w, "ok")
				return
			}
		}
		http.NotFound(w, r)
		return
	}
	_, verbose := r.URL.Query()["verbose"]
	var b strings.Builder
	failed := false
	for _, c := range checks {
		if err := c.run(r); err != nil {
			failed = true
			fmt.Fprintf(&b, "[-]%s failed: reason withheld\n", c.name)
		} else {
			fmt.Fprintf(&b, "[+]%s ok\n", c.name)
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if failed {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, b.String()+"healthz check failed\n")
		return
	}
	if verbose {
		fmt.Fprint(w, b.String()+"healthz check passed\n")
		return
	}
	fmt.Fprint(w, "ok")
}

type server struct {
	ln  net.Listener
	srv *http.Server
}

// Handler is the manager's HTTP handler, without authentication and
// authorization: /healthz and /metrics.
func (m *Manager) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/healthz", m.health)
	mux.Handle("/healthz/", m.health)
	if m.gatherer != nil {
		mux.Handle("/metrics", promhttp.HandlerFor(m.gatherer, promhttp.HandlerOpts{}))
	}
	if m.cfg.Profiling {
		// Upstream's --profiling (on by default): Go's profiles under
		// /debug/pprof/, behind the same authentication and authorization.
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

func (m *Manager) newServer() (*server, error) {
	var cert tls.Certificate
	var err error
	if m.cfg.TLSCertFile != "" {
		cert, err = tls.LoadX509KeyPair(m.cfg.TLSCertFile, m.cfg.TLSKeyFile)
	} else {
		cert, err = selfSigned(m.cfg.BindAddress, m.cfg.Clock.Now())
	}
	if err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}
	ln := m.cfg.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", net.JoinHostPort(m.cfg.BindAddress, strconv.Itoa(m.cfg.SecurePort))); err != nil {
			return nil, fmt.Errorf("failed to create listener: %w", err)
		}
	}
	auth, err := newDelegatedAuth(&m.cfg)
	if err != nil {
		if m.cfg.Listener == nil {
			ln.Close()
		}
		return nil, err
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"},
		ClientAuth: tls.RequestClientCert}
	return &server{
		ln:  tls.NewListener(ln, tc),
		srv: &http.Server{Handler: auth.wrap(m.Handler()), ReadHeaderTimeout: 32 * time.Second},
	}, nil
}

// serve serves until ctx ends.
func (s *server) serve(ctx context.Context) error {
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

// selfSigned makes a serving certificate for localhost, 127.0.0.1 and the
// bind address, signed by a throwaway CA, as upstream's
// MaybeDefaultWithSelfSignedCerts does ("localhost@<unix time>").
func selfSigned(bindAddress string, now time.Time) (tls.Certificate, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	name := fmt.Sprintf("localhost@%d", now.Unix())
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name + "-ca@" + strconv.FormatInt(now.Unix(), 10)},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true, IsCA: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(365 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	if ip := net.ParseIP(bindAddress); ip != nil && !ip.IsUnspecified() && !ip.Equal(net.ParseIP("127.0.0.1")) {
		tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der, caDER}, PrivateKey: key}, nil
}
