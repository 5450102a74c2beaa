package testenv

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/kubeconfig"
	"github.com/skiff-sh/skiff/pkg/pki"
	"github.com/skiff-sh/skiff/pkg/registry/builtin"
	"github.com/skiff-sh/skiff/pkg/storage"
	"github.com/skiff-sh/skiff/pkg/storage/etcd3"
	"github.com/skiff-sh/skiff/pkg/storage/memory"
)

// Config tunes an Environment.
type Config struct {
	// Storage is "memory" (default) or "etcd" (an embedded member in Dir).
	Storage string
	// Dir holds certificates, the kubeconfig and etcd data; a temporary
	// directory is made (and removed on Stop) when empty.
	Dir    string
	Clock  clock.Clock
	Logger *slog.Logger
	// RBAC makes the server authorize as upstream's defaults do
	// (--authorization-mode=Node,RBAC, --anonymous-auth=true); off, every
	// authenticated request is allowed (what most tests want). The admin
	// client stays in system:masters either way; UserCertificate gives
	// clients of other identities.
	RBAC bool
	// Tweak adjusts the API server configuration before it starts.
	Tweak func(*apiserver.Config)
	// ControllerManager, when set, runs from Start to Stop against the
	// server, given the admin kubeconfig (with RBAC, a kubeconfig of
	// system:kube-controller-manager, as kubeadm writes: set the manager's
	// UseServiceAccountCredentials then, as upstream's needs), as a
	// controller manager attached to a real cluster: pass
	// controllermanager.InProcess(cfg) for skiff's.
	// (A function, so that testenv depends neither on the controllers nor
	// on the client, whose own tests use testenv.) It is stopped before
	// the server; an error it returns is Stop's error.
	ControllerManager func(ctx context.Context, kubeconfigPath string) error
	// Scheduler, when set, runs likewise (scheduler.InProcess(cfg) for
	// skiff's; with RBAC as system:kube-scheduler), so that a test's pods
	// get bound to its nodes.
	Scheduler func(ctx context.Context, kubeconfigPath string) error
}

// Environment is a running in-process API server.
type Environment struct {
	// URL is the server's https:// address.
	URL string
	// CAData, CertData and KeyData are PEM: the cluster CA and the admin
	// client certificate and key.
	CAData, CertData, KeyData []byte
	// FrontProxyCAData (PEM) signs the client certificate (CN
	// front-proxy-client) the server presents to aggregated API servers.
	FrontProxyCAData []byte
	// KubeconfigPath is an admin kubeconfig for this server.
	KubeconfigPath string
	Server         *apiserver.Server

	kv      *restartableKV
	cancel  context.CancelFunc
	done    chan error
	cleanup []func()

	comps []*runningComponent
	ca    *pki.KeyPair
	dir   string
	cmErr error // what a component (controller manager, scheduler) returned, if it failed
	// forbidden records the requests refused with 403 (with RBAC).
	forbidden *forbiddenLog
}

// runningComponent is a controller manager or scheduler run by the
// environment.
type runningComponent struct {
	name   string
	cancel context.CancelFunc
	done   chan error
}

// Start starts an Environment and returns once it is ready.
func Start(ctx context.Context, cfg Config) (*Environment, error) {
	env := &Environment{done: make(chan error, 1)}
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "skiff-testenv-")
		if err != nil {
			return nil, err
		}
		dir = d
		env.cleanup = append(env.cleanup, func() { os.RemoveAll(d) })
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	}
	if cfg.RBAC {
		env.forbidden = newForbiddenLog(cfg.Logger.Handler())
		cfg.Logger = slog.New(env.forbidden)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	now := time.Now()
	ca, err := pki.EnsureCA(dir, now)
	if err != nil {
		return nil, err
	}
	serving, err := pki.EnsureServing(dir, "apiserver", ca, []string{"127.0.0.1", "localhost"}, now)
	if err != nil {
		return nil, err
	}
	admin, err := pki.EnsureClient(dir, "admin", ca, "kubernetes-admin", []string{"system:masters"}, now)
	if err != nil {
		return nil, err
	}
	kubeletClient, err := pki.EnsureClient(dir, "apiserver-kubelet-client", ca, "kube-apiserver-kubelet-client", nil, now)
	if err != nil {
		return nil, err
	}
	saKey, err := pki.EnsureSigningKey(dir, "sa")
	if err != nil {
		return nil, err
	}
	frontProxyCA, err := pki.EnsureNamedCA(dir, "front-proxy-ca", "front-proxy-ca", now)
	if err != nil {
		return nil, err
	}
	frontProxy, err := pki.EnsureClient(dir, "front-proxy-client", frontProxyCA, "front-proxy-client", nil, now)
	if err != nil {
		return nil, err
	}
	var kv storage.KV
	switch cfg.Storage {
	case "", "memory":
		kv = memory.New(memory.Config{})
	case "etcd":
		e, err := etcd3.StartEmbedded(ctx, etcd3.EmbeddedConfig{Dir: filepath.Join(dir, "etcd"), UnsafeNoFsync: true, LogLevel: "fatal"})
		if err != nil {
			return nil, err
		}
		env.cleanup = append(env.cleanup, e.Close)
		kv = etcd3.NewEmbedded(e)
	default:
		return nil, fmt.Errorf("testenv: unknown storage %q", cfg.Storage)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	port := ln.Addr().(*net.TCPAddr).Port
	acfg := apiserver.Config{
		KV: kv, Definitions: builtin.Definitions(), Listener: ln, SecurePort: port,
		TLS: &tls.Config{
			MinVersion:   tls.VersionTLS12,
			Certificates: []tls.Certificate{{Certificate: [][]byte{serving.Cert.Raw}, PrivateKey: serving.Key, Leaf: serving.Cert}},
			ClientAuth:   tls.RequestClientCert,
			NextProtos:   []string{"h2", "http/1.1"},
		},
		Authenticator:        apiserver.UnionAuthenticator{apiserver.NewX509Authenticator(roots)},
		Clock:                cfg.Clock,
		Logger:               cfg.Logger,
		ClientCAPEM:          ca.CertPEM,
		ServiceAccountSigner: saKey,
		ProxyClientCert:      &tls.Certificate{Certificate: [][]byte{frontProxy.Cert.Raw}, PrivateKey: frontProxy.Key, Leaf: frontProxy.Cert},
		RequestHeaderCAPEM:   frontProxyCA.CertPEM, RequestHeaderAllowedNames: []string{"front-proxy-client"},
		// Toward kubelets (pods/log, exec, nodes/proxy): kubeadm's identity.
		KubeletClientCert: &tls.Certificate{Certificate: [][]byte{kubeletClient.Cert.Raw}, PrivateKey: kubeletClient.Key, Leaf: kubeletClient.Cert},
	}
	if cfg.RBAC {
		acfg.AuthorizationModes, acfg.AnonymousAuth = []string{"Node", "RBAC"}, true
	}
	if cfg.Tweak != nil {
		cfg.Tweak(&acfg)
	}
	env.kv = newRestartableKV(acfg.KV)
	acfg.KV = env.kv
	srv, err := apiserver.New(acfg)
	if err != nil {
		ln.Close()
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	env.cancel = cancel
	go func() {
		env.done <- srv.Run(runCtx)
		kv.Close()
	}()
	select {
	case <-srv.Ready():
	case err := <-env.done:
		env.runCleanup()
		return nil, fmt.Errorf("testenv: server exited: %w", err)
	case <-ctx.Done():
		env.Stop()
		return nil, ctx.Err()
	}
	env.URL = fmt.Sprintf("https://127.0.0.1:%d", port)
	env.CAData, env.CertData, env.KeyData = ca.CertPEM, admin.CertPEM, admin.KeyPEM
	env.FrontProxyCAData = frontProxyCA.CertPEM
	env.ca, env.dir = ca, dir
	env.Server = srv
	env.KubeconfigPath = filepath.Join(dir, "kubeconfig")
	if err := kubeconfig.Write(env.KubeconfigPath, kubeconfig.New("skiff-testenv", env.URL, ca.CertPEM, admin.CertPEM, admin.KeyPEM)); err != nil {
		env.Stop()
		return nil, err
	}
	for _, c := range []struct {
		name, user string
		run        func(context.Context, string) error
	}{{"controller manager", "system:kube-controller-manager", cfg.ControllerManager}, {"scheduler", "system:kube-scheduler", cfg.Scheduler}} {
		if c.run == nil {
			continue
		}
		path := env.KubeconfigPath
		if cfg.RBAC {
			// Each component with its own identity and the bootstrap
			// policy's permissions, as kubeadm configures them.
			certPEM, keyPEM, err := env.UserCertificate(c.user)
			if err == nil {
				path = filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".kubeconfig")
				err = kubeconfig.Write(path, kubeconfig.New("skiff-testenv", env.URL, ca.CertPEM, certPEM, keyPEM))
			}
			if err != nil {
				env.Stop()
				return nil, err
			}
		}
		cctx, cancel := context.WithCancel(context.Background())
		rc := &runningComponent{name: c.name, cancel: cancel, done: make(chan error, 1)}
		env.comps = append(env.comps, rc)
		go func() { rc.done <- c.run(cctx, path) }()
	}
	return env, nil
}

// UserCertificate issues a client certificate (PEM) for user in groups,
// signed by the environment's CA: a client of that identity.
func (env *Environment) UserCertificate(user string, groups ...string) (certPEM, keyPEM []byte, err error) {
	name := fmt.Sprintf("user-%x", sha256.Sum256([]byte(user+"\x00"+strings.Join(groups, "\x00"))))[:21]
	c, err := pki.EnsureClient(env.dir, name, env.ca, user, groups, time.Now())
	if err != nil {
		return nil, nil, err
	}
	return c.CertPEM, c.KeyPEM, nil
}

// StartT starts an Environment for a test and stops it at the test's end.
func StartT(t testing.TB, cfg ...Config) *Environment {
	t.Helper()
	var c Config
	if len(cfg) > 0 {
		c = cfg[0]
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	env, err := Start(ctx, c)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(func() {
		env.Stop()
		if env.cmErr != nil {
			t.Errorf("testenv: %v", env.cmErr)
		}
	})
	return env
}

// TLSConfig is a client TLS configuration trusting the server and
// presenting the admin certificate.
func (e *Environment) TLSConfig() *tls.Config {
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(e.CAData)
	cert, _ := tls.X509KeyPair(e.CertData, e.KeyData)
	return &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// HTTPClient is an admin HTTP client for the server.
func (e *Environment) HTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: e.TLSConfig(), ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 100}}
}

// Stop stops the controller manager and scheduler (if any), then shuts the server down
// and waits for it.
func (e *Environment) Stop() error {
	var err error
	for _, c := range e.comps {
		c.cancel()
		if cerr := <-c.done; cerr != nil && err == nil {
			err = fmt.Errorf("%s: %w", c.name, cerr)
			e.cmErr = err
		}
	}
	e.comps = nil
	if e.cancel != nil {
		e.cancel()
		if serr := <-e.done; err == nil {
			err = serr
		}
		e.cancel = nil
	}
	e.runCleanup()
	return err
}

func (e *Environment) runCleanup() {
	for i := len(e.cleanup) - 1; i >= 0; i-- {
		e.cleanup[i]()
	}
	e.cleanup = nil
}

// EnsureServiceAccount creates the service account namespace/name unless
// it exists. Pods need their service account (the ServiceAccount
// admission plugin refuses them otherwise) and, as upstream's, the API
// server alone creates none: without Config.ControllerManager, a test
// that creates pods calls EnsureServiceAccount(ctx, ns, "default") first.
func (e *Environment) EnsureServiceAccount(ctx context.Context, namespace, name string) error {
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":%q}}`, name)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL+"/api/v1/namespaces/"+namespace+"/serviceaccounts", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.HTTPClient().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusCreated || resp.StatusCode == http.StatusConflict {
		return nil
	}
	msg, _ := io.ReadAll(resp.Body)
	return fmt.Errorf("creating service account %s/%s: %s: %s", namespace, name, resp.Status, msg)
}
