package certificate

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"time"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/clock"
)

// ManagerConfig configures a Manager.
type ManagerConfig struct {
	// Store holds the current pair and receives the renewed ones.
	Store *Store
	// NodeName is the node the certificate is for.
	NodeName string
	Clock    clock.Clock
	Logger   *slog.Logger
	// Rand draws the jitter of the rotation deadline (default: seeded
	// from the time).
	Rand *rand.Rand
}

// Manager keeps the kubelet's client certificate current (see the
// package documentation): Current for the client's GetClientCertificate,
// Dialer for its connections, Run for the renewals.
type Manager struct {
	cfg    ManagerConfig
	dialer *Dialer

	mu     sync.Mutex
	cur    *tls.Certificate
	client *client.Client
}

// NewManager starts from the store's current pair.
func NewManager(cfg ManagerConfig) (*Manager, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x6b75))
	}
	cur, err := cfg.Store.Current()
	if err != nil {
		return nil, err
	}
	return &Manager{cfg: cfg, cur: cur, dialer: &Dialer{d: net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}, conns: map[*trackedConn]struct{}{}}}, nil
}

// ForKubeconfig returns a Manager for the bootstrapped certificate in
// certDir and points cc's TLS at it (its GetClientCertificate and Dialer)
// when cc's client certificate is that store's current file (the
// kubeconfig LoadClientCert writes); otherwise it leaves cc alone, logs
// that rotation is off, and returns nil. The caller sets the client built
// from cc (SetClient) and runs the Manager.
func ForKubeconfig(cc *client.Config, certDir, node string, logger *slog.Logger) (*Manager, error) {
	store := &Store{Dir: certDir, Prefix: ClientPrefix}
	if !sameFile(cc.CertFile, store.CurrentPath()) {
		logger.Warn("client certificate rotation is off: the kubeconfig's certificate is not the bootstrapped one", "cert", cc.CertFile, "cert-dir", certDir)
		return nil, nil
	}
	m, err := NewManager(ManagerConfig{Store: store, NodeName: node, Logger: logger})
	if err != nil {
		return nil, err
	}
	cc.CertFile, cc.KeyFile, cc.CertData, cc.KeyData = "", "", nil, nil
	cc.GetClientCertificate, cc.DialContext = m.GetClientCertificate, m.Dialer().DialContext
	return m, nil
}

// sameFile says whether paths a and b name the same file (either may be
// the symlink itself).
func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	ia, err := os.Lstat(a)
	if err != nil {
		return false
	}
	ib, err := os.Lstat(b)
	if err != nil {
		return false
	}
	return os.SameFile(ia, ib)
}

// SetClient sets the client renewals are asked with: one built on
// GetClientCertificate and Dialer, so that it authenticates as the node
// (the approver's selfnodeclient check).
func (m *Manager) SetClient(c *client.Client) {
	m.mu.Lock()
	m.client = c
	m.mu.Unlock()
}

// Current is the current certificate.
func (m *Manager) Current() *tls.Certificate {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cur
}

// GetClientCertificate serves Current to TLS handshakes.
func (m *Manager) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	c := m.Current()
	if c == nil {
		return &tls.Certificate{}, nil
	}
	return c, nil
}

// Dialer opens the client's connections; a rotation closes them all so
// that the next ones present the new certificate.
func (m *Manager) Dialer() *Dialer { return m.dialer }

// RotationDeadline is when a certificate valid from notBefore to notAfter
// is renewed: at a random point in 70–90% of its lifetime (upstream's
// jitter; r in [0, 1)).
func RotationDeadline(notBefore, notAfter time.Time, r float64) time.Time {
	total := notAfter.Sub(notBefore)
	return notBefore.Add(time.Duration(float64(total) * (0.7 + 0.2*r)))
}

// Run renews the certificate at each rotation deadline until ctx ends. A
// failed renewal is retried with a back-off from 2 s doubling to 5 min
// (never past the certificate's end: an expired kubelet can only be
// bootstrapped again).
func (m *Manager) Run(ctx context.Context) {
	backoff := time.Duration(0)
	for {
		cur := m.Current()
		var wait time.Duration
		if backoff > 0 {
			wait = backoff
		} else {
			deadline := RotationDeadline(cur.Leaf.NotBefore, cur.Leaf.NotAfter, m.cfg.Rand.Float64())
			wait = deadline.Sub(m.cfg.Clock.Now())
			m.cfg.Logger.Info("client certificate rotation deadline", "expiration", cur.Leaf.NotAfter.UTC(), "deadline", deadline.UTC())
		}
		if wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-m.cfg.Clock.After(wait):
			}
		}
		if err := m.rotate(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			backoff = min(max(2*backoff, 2*time.Second), 5*time.Minute)
			m.cfg.Logger.Error("client certificate rotation failed", "err", err, "retry", backoff)
			continue
		}
		backoff = 0
	}
}

// rotate asks for a new certificate with a new key and makes it current.
func (m *Manager) rotate(ctx context.Context) error {
	m.mu.Lock()
	c := m.client
	m.mu.Unlock()
	if c == nil {
		return errors.New("no client to ask for a certificate with")
	}
	key, err := NewKey()
	if err != nil {
		return err
	}
	csr, err := NewCSR(m.cfg.NodeName, key)
	if err != nil {
		return err
	}
	csr.Name, csr.GenerateName = "", "csr-"
	// Bounded as upstream's certificate manager bounds a renewal request.
	rctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	certPEM, err := request(rctx, c, csr, m.cfg.NodeName, key)
	if err != nil {
		return err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	next, err := m.cfg.Store.Update(certPEM, encodeKey(der), m.cfg.Clock.Now())
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.cur = next
	m.mu.Unlock()
	m.cfg.Logger.Info("client certificate rotated", "expiration", next.Leaf.NotAfter.UTC())
	// Connections authenticated with the old certificate go; new ones
	// present the new one.
	m.dialer.CloseAll()
	return nil
}

// Dialer tracks the connections it opened so that CloseAll can end them
// (upstream's connrotation dialer).
type Dialer struct {
	d     net.Dialer
	mu    sync.Mutex
	conns map[*trackedConn]struct{}
}

// DialContext opens a tracked connection.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := d.d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: conn, d: d}
	d.mu.Lock()
	d.conns[tc] = struct{}{}
	d.mu.Unlock()
	return tc, nil
}

// CloseAll closes every open connection.
func (d *Dialer) CloseAll() {
	d.mu.Lock()
	conns := d.conns
	d.conns = map[*trackedConn]struct{}{}
	d.mu.Unlock()
	for c := range conns {
		c.Conn.Close()
	}
}

type trackedConn struct {
	net.Conn
	d    *Dialer
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.d.mu.Lock()
		delete(c.d.conns, c)
		c.d.mu.Unlock()
	})
	return c.Conn.Close()
}
