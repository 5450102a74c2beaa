package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/kubeconfig"
)

// Config says how to reach and authenticate to an API server (client-go's
// rest.Config).
type Config struct {
	// Host is the server's URL (https://host:port).
	Host string

	// TLS: the CA to trust, the client certificate to present. *Data wins
	// over the file.
	CAData, CertData, KeyData []byte
	CAFile, CertFile, KeyFile string
	Insecure                  bool
	ServerName                string
	// GetClientCertificate, when set, supplies the client certificate of
	// each TLS handshake instead of CertData/CertFile (a certificate that
	// rotates, as the kubelet's; client-go's TLSClientConfig.GetCert).
	GetClientCertificate func(*tls.CertificateRequestInfo) (*tls.Certificate, error)
	// DialContext, when set, opens the client's connections (client-go's
	// Dial), e.g. to close them all when the client certificate rotated.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)

	// BearerToken, or BearerTokenFile (re-read as it rotates).
	BearerToken     string
	BearerTokenFile string
	// TokenSource, when set, supplies the bearer token of every request
	// instead (tokens that expire, such as a service account's from the
	// TokenRequest API); a 401 answer resets it, so that the next request
	// carries a fresh token, as client-go's resettable token sources.
	TokenSource TokenSource

	// QPS and Burst set the client-side token bucket (client-go's defaults:
	// 5 and 10). A negative QPS disables throttling.
	QPS   float32
	Burst int

	// Timeout bounds each non-watch request (0: none).
	Timeout time.Duration
	// UserAgent is sent with every request.
	UserAgent string
	// ContentType is "application/json" (default) or
	// "application/vnd.kubernetes.protobuf".
	ContentType string

	Clock  clock.Clock
	Logger *slog.Logger
}

// Defaults as client-go's.
const (
	DefaultQPS   = 5
	DefaultBurst = 10
)

// tlsConfig builds the TLS client configuration.
func (c *Config) tlsConfig() (*tls.Config, error) {
	t := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName, InsecureSkipVerify: c.Insecure} //nolint:gosec // opt-in
	ca := c.CAData
	if len(ca) == 0 && c.CAFile != "" {
		data, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, err
		}
		ca = data
	}
	if len(ca) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, errors.New("no certificates in the CA data")
		}
		t.RootCAs = pool
	}
	cert, key := c.CertData, c.KeyData
	if len(cert) == 0 && c.CertFile != "" {
		data, err := os.ReadFile(c.CertFile)
		if err != nil {
			return nil, err
		}
		cert = data
	}
	if len(key) == 0 && c.KeyFile != "" {
		data, err := os.ReadFile(c.KeyFile)
		if err != nil {
			return nil, err
		}
		key = data
	}
	if c.GetClientCertificate != nil {
		t.GetClientCertificate = c.GetClientCertificate
		return t, nil
	}
	if len(cert) > 0 || len(key) > 0 {
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
		t.Certificates = []tls.Certificate{pair}
	}
	return t, nil
}

// transport is the HTTP transport for a Config: HTTP/2 over TLS, with the
// bearer token added to each request.
func (c *Config) transport() (http.RoundTripper, error) {
	tc, err := c.tlsConfig()
	if err != nil {
		return nil, err
	}
	var rt http.RoundTripper = &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSClientConfig:     tc,
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 25,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	}
	if c.DialContext != nil {
		rt.(*http.Transport).DialContext = c.DialContext
	}
	switch {
	case c.TokenSource != nil:
		rt = &tokenSourceAuth{src: c.TokenSource, next: rt}
	case c.BearerToken != "" || c.BearerTokenFile != "":
		rt = &bearerAuth{token: c.BearerToken, file: c.BearerTokenFile, next: rt}
	}
	return rt, nil
}

// TokenSource supplies bearer tokens (see Config.TokenSource). Token may
// cache; ResetToken drops what is cached.
type TokenSource interface {
	Token(ctx context.Context) (string, error)
	ResetToken()
}

type tokenSourceAuth struct {
	src  TokenSource
	next http.RoundTripper
}

func (t *tokenSourceAuth) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Authorization") != "" {
		return t.next.RoundTrip(r)
	}
	tok, err := t.src.Token(r.Context())
	if err != nil {
		return nil, err
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+tok)
	resp, err := t.next.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		t.src.ResetToken()
	}
	return resp, err
}

type bearerAuth struct {
	token string
	file  string
	next  http.RoundTripper
}

func (b *bearerAuth) RoundTrip(r *http.Request) (*http.Response, error) {
	tok := b.token
	if b.file != "" {
		// The kubelet rotates projected tokens: read the file every time.
		if data, err := os.ReadFile(b.file); err == nil {
			tok = strings.TrimSpace(string(data))
		}
	}
	if tok != "" && r.Header.Get("Authorization") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	return b.next.RoundTrip(r)
}

// KubeconfigEnv is the environment variable naming kubeconfig files.
const KubeconfigEnv = "KUBECONFIG"

// LoadKubeconfig builds a Config from a kubeconfig file: path, else the
// first existing file of $KUBECONFIG (colon separated), else
// ~/.kube/config. context "" means the file's current context.
func LoadKubeconfig(path, context string) (*Config, error) {
	if path == "" {
		for _, p := range filepath.SplitList(os.Getenv(KubeconfigEnv)) {
			if _, err := os.Stat(p); err == nil {
				path = p
				break
			}
		}
	}
	if path == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, err
		}
		path = filepath.Join(home, ".kube", "config")
	}
	kc, err := kubeconfig.Load(path)
	if err != nil {
		return nil, err
	}
	return FromKubeconfig(kc, context, filepath.Dir(path))
}

// FromKubeconfig builds a Config from a parsed kubeconfig; relative file
// paths are resolved against dir.
func FromKubeconfig(kc *kubeconfig.Config, context, dir string) (*Config, error) {
	if context == "" {
		context = kc.CurrentContext
	}
	var ctx *kubeconfig.Context
	for i := range kc.Contexts {
		if kc.Contexts[i].Name == context {
			ctx = &kc.Contexts[i].Context
		}
	}
	if ctx == nil {
		return nil, fmt.Errorf("kubeconfig: context %q not found", context)
	}
	cfg := &Config{}
	found := false
	for _, c := range kc.Clusters {
		if c.Name == ctx.Cluster {
			found = true
			cfg.Host = c.Cluster.Server
			cfg.CAData = c.Cluster.CertificateAuthorityData
			cfg.CAFile = resolve(dir, c.Cluster.CertificateAuthority)
			cfg.Insecure = c.Cluster.InsecureSkipTLSVerify
			cfg.ServerName = c.Cluster.TLSServerName
		}
	}
	if !found {
		return nil, fmt.Errorf("kubeconfig: cluster %q not found", ctx.Cluster)
	}
	for _, u := range kc.Users {
		if u.Name == ctx.User {
			cfg.CertData, cfg.KeyData = u.User.ClientCertificateData, u.User.ClientKeyData
			cfg.CertFile, cfg.KeyFile = resolve(dir, u.User.ClientCertificate), resolve(dir, u.User.ClientKey)
			cfg.BearerToken, cfg.BearerTokenFile = u.User.Token, resolve(dir, u.User.TokenFile)
		}
	}
	return cfg, nil
}

func resolve(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// Where a pod finds its service account credentials.
const (
	ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"
)

// ErrNotInCluster is returned by InClusterConfig outside a pod.
var ErrNotInCluster = errors.New("unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined")

// InClusterConfig is the Config of a pod: the API server at
// $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, trusted through the
// mounted CA and authenticated by the mounted service account token.
func InClusterConfig() (*Config, error) {
	return inClusterConfig(ServiceAccountDir)
}

func inClusterConfig(dir string) (*Config, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, ErrNotInCluster
	}
	tokenFile := filepath.Join(dir, "token")
	if _, err := os.Stat(tokenFile); err != nil {
		return nil, err
	}
	return &Config{
		Host:            "https://" + net.JoinHostPort(host, port),
		CAFile:          filepath.Join(dir, "ca.crt"),
		BearerTokenFile: tokenFile,
	}, nil
}
