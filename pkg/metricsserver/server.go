package metricsserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/clock"
)

// DefaultResolution is how often kubelets are scraped (metrics-server's
// --metric-resolution default).
const DefaultResolution = 15 * time.Second

// Config configures a Server.
type Config struct {
	// Client reads Nodes and Pods (their labels and the kubelets'
	// addresses).
	Client *client.Client
	// KubeletTLS is the TLS configuration for scraping kubelets: its
	// client certificate authenticates the server to them; without
	// RootCAs the kubelets' serving certificates are not verified
	// (metrics-server's --kubelet-insecure-tls; upstream's kubelets serve
	// self-signed certificates unless given one).
	KubeletTLS *tls.Config
	// KubeletTimeout bounds one scrape (10 s).
	KubeletTimeout time.Duration
	// Resolution: how often kubelets are scraped (DefaultResolution).
	Resolution time.Duration

	// Listener accepts the API server's proxied requests (HTTPS).
	Listener net.Listener
	// ServingCert is the serving certificate (for
	// <service>.<namespace>.svc, which the APIService's caBundle
	// verifies).
	ServingCert tls.Certificate
	// RequestHeaderCA verifies the API server's front-proxy client
	// certificate; every request must present one.
	RequestHeaderCA *x509.CertPool

	Clock  clock.Clock
	Logger *slog.Logger
}

// Server scrapes kubelets and serves metrics.k8s.io.
type Server struct {
	cfg     Config
	log     *slog.Logger
	factory *informers.SharedInformerFactory
	nodes   cache.Lister[*corev1.Node]
	pods    cache.Lister[*corev1.Pod]
	synced  []cache.InformerSynced
	http    *http.Client

	mu    sync.RWMutex
	state map[string]*nodeState // by node name
}

// New checks cfg and returns a Server; Run starts it.
func New(cfg Config) (*Server, error) {
	if cfg.Client == nil {
		return nil, errors.New("metricsserver: Client is required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Resolution <= 0 {
		cfg.Resolution = DefaultResolution
	}
	if cfg.KubeletTimeout <= 0 {
		cfg.KubeletTimeout = 10 * time.Second
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.KubeletTLS != nil {
		tc = cfg.KubeletTLS.Clone()
	}
	if tc.RootCAs == nil {
		tc.InsecureSkipVerify = true
	}
	f := informers.NewSharedInformerFactory(cfg.Client, 0)
	nodes, pods := f.Nodes(), f.Pods()
	s := &Server{cfg: cfg, log: cfg.Logger, factory: f,
		nodes: nodes.Lister(), pods: pods.Lister(), synced: []cache.InformerSynced{nodes.HasSynced, pods.HasSynced},
		http: &http.Client{Timeout: cfg.KubeletTimeout, Transport: &http.Transport{TLSClientConfig: tc, MaxIdleConnsPerHost: 2,
			IdleConnTimeout: 2 * cfg.Resolution}},
		state: map[string]*nodeState{}}
	return s, nil
}

// Handler is the metrics.k8s.io API (without the TLS client check).
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serve) }

// Run scrapes every Resolution and serves on cfg.Listener (if any) until
// ctx ends.
func (s *Server) Run(ctx context.Context) error {
	s.factory.Start(ctx)
	defer s.factory.Shutdown()
	if !cache.WaitForCacheSync(ctx, s.synced...) {
		return nil
	}
	var srv *http.Server
	errc := make(chan error, 1)
	if s.cfg.Listener != nil {
		tc := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{s.cfg.ServingCert},
			ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: s.cfg.RequestHeaderCA}
		if s.cfg.RequestHeaderCA == nil {
			return errors.New("metricsserver: RequestHeaderCA is required to serve")
		}
		srv = &http.Server{Handler: s.Handler(), TLSConfig: tc, ReadHeaderTimeout: 10 * time.Second,
			ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
		go func() { errc <- srv.ServeTLS(s.cfg.Listener, "", "") }()
		defer srv.Close()
	}
	t := s.cfg.Clock.NewTicker(s.cfg.Resolution)
	defer t.Stop()
	for {
		s.scrapeAll(ctx)
		select {
		case <-ctx.Done():
			return nil
		case err := <-errc:
			if errors.Is(err, http.ErrServerClosed) {
				return nil
			}
			return err
		case <-t.C():
		}
	}
}

// kubeletURL is where node's kubelet serves /metrics/resource: its
// InternalIP (else its first address) and its kubelet endpoint port.
func kubeletURL(n *corev1.Node) (string, bool) {
	addr := ""
	for _, t := range []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeHostName, corev1.NodeExternalIP} {
		for _, a := range n.Status.Addresses {
			if a.Type == t && addr == "" {
				addr = a.Address
			}
		}
	}
	if addr == "" {
		return "", false
	}
	port := n.Status.DaemonEndpoints.KubeletEndpoint.Port
	if port == 0 {
		port = 10250
	}
	return "https://" + net.JoinHostPort(addr, strconv.Itoa(int(port))) + "/metrics/resource", true
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// scrapeAll scrapes every Ready node (at most 32 at once) and replaces
// the stored state: nodes gone or not Ready are dropped.
func (s *Server) scrapeAll(ctx context.Context) {
	nodes, err := s.nodes.List(everything)
	if err != nil {
		return
	}
	type result struct {
		name string
		sc   *nodeScrape
		err  error
	}
	results := make(chan result, len(nodes))
	sem := make(chan struct{}, 32)
	n := 0
	for _, node := range nodes {
		u, ok := kubeletURL(node)
		if !ok || !nodeReady(node) {
			continue
		}
		n++
		go func(name, u string) {
			sem <- struct{}{}
			defer func() { <-sem }()
			sc, err := s.scrape(ctx, u)
			results <- result{name, sc, err}
		}(node.Name, u)
	}
	next := map[string]*nodeState{}
	var failed []string
	var firstErr error
	s.mu.RLock()
	old := s.state
	s.mu.RUnlock()
	for i := 0; i < n; i++ {
		r := <-results
		if r.err != nil {
			failed = append(failed, r.name)
			if firstErr == nil {
				firstErr = r.err
			}
			continue
		}
		next[r.name] = update(old[r.name], r.sc)
	}
	s.mu.Lock()
	s.state = next
	s.mu.Unlock()
	if len(failed) > 0 {
		s.log.Warn("Failed to scrape nodes", "count", len(failed), "first", failed[0], "err", firstErr)
	}
}

// scrape reads one kubelet's resource metrics.
func (s *Server) scrape(ctx context.Context, url string) (*nodeScrape, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("request failed, status: %q", resp.Status)
	}
	return parseResourceMetrics(resp.Body, s.cfg.Clock.Now())
}

// Scrape runs one round of scraping now (tests and start-up).
func (s *Server) Scrape(ctx context.Context) { s.scrapeAll(ctx) }
