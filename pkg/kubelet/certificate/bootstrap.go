package certificate

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/kubeconfig"
)

// ClientPrefix names the kubelet's client certificate files in the cert
// directory (upstream's).
const ClientPrefix = "kubelet-client"

// BootstrapConfig configures LoadClientCert.
type BootstrapConfig struct {
	// KubeconfigPath is the kubelet's kubeconfig (--kubeconfig): used as
	// is while its client certificate is valid, else written.
	KubeconfigPath string
	// BootstrapKubeconfigPath (--bootstrap-kubeconfig) authenticates the
	// certificate signing request (a bootstrap token).
	BootstrapKubeconfigPath string
	// CertDir holds kubelet-client-*.pem (--cert-dir).
	CertDir string
	// NodeName is the node the certificate is for.
	NodeName string
	// Timeout bounds the wait for the certificate (default 1 h).
	Timeout time.Duration
	Clock   clock.Clock
	Logger  *slog.Logger
}

// LoadClientCert makes sure KubeconfigPath holds a valid client
// certificate, requesting one with the bootstrap kubeconfig when it does
// not (see the package documentation). bootstrapped says whether it
// wrote the kubeconfig.
func LoadClientCert(ctx context.Context, cfg BootstrapConfig) (bootstrapped bool, err error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = time.Hour
	}
	if cfg.NodeName == "" {
		return false, errors.New("bootstrap: no node name")
	}
	now := cfg.Clock.Now()
	if err := kubeconfigValid(cfg.KubeconfigPath, now); err == nil {
		return false, nil
	} else {
		cfg.Logger.Info("using the bootstrap kubeconfig to get a client certificate", "kubeconfig", cfg.KubeconfigPath, "reason", err)
	}
	bc, err := client.LoadKubeconfig(cfg.BootstrapKubeconfigPath, "")
	if err != nil {
		return false, fmt.Errorf("bootstrap kubeconfig: %w", err)
	}
	store := &Store{Dir: cfg.CertDir, Prefix: ClientPrefix}
	if cur, err := store.Current(); err == nil && validAt(cur, now) {
		cfg.Logger.Info("the current client certificate is valid, not asking for a new one", "path", store.CurrentPath())
		return true, writeKubeconfig(cfg.KubeconfigPath, bc, store.CurrentPath())
	}
	key, keyPEM, err := pendingKey(filepath.Join(cfg.CertDir, ClientPrefix+".key.tmp"))
	if err != nil {
		return false, err
	}
	if bc.UserAgent == "" {
		bc.UserAgent = "skiff-kubelet"
	}
	c, err := client.New(bc)
	if err != nil {
		return false, err
	}
	wctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	certPEM, err := Request(wctx, c, cfg.NodeName, key)
	if err != nil {
		return false, err
	}
	if _, err := store.Update(certPEM, keyPEM, cfg.Clock.Now()); err != nil {
		return false, err
	}
	_ = os.Remove(filepath.Join(cfg.CertDir, ClientPrefix+".key.tmp"))
	cfg.Logger.Info("client certificate issued", "node", cfg.NodeName, "path", store.CurrentPath())
	return true, writeKubeconfig(cfg.KubeconfigPath, bc, store.CurrentPath())
}

// kubeconfigValid is nil when path is a kubeconfig whose client
// certificate loads and is valid at now.
func kubeconfigValid(path string, now time.Time) error {
	if _, err := os.Stat(path); err != nil {
		return err
	}
	cc, err := client.LoadKubeconfig(path, "")
	if err != nil {
		return err
	}
	certPEM, keyPEM := cc.CertData, cc.KeyData
	if len(certPEM) == 0 && cc.CertFile != "" {
		if certPEM, err = os.ReadFile(cc.CertFile); err != nil {
			return err
		}
	}
	if len(keyPEM) == 0 && cc.KeyFile != "" {
		if keyPEM, err = os.ReadFile(cc.KeyFile); err != nil {
			return err
		}
	}
	if len(certPEM) == 0 {
		return errors.New("no client certificate")
	}
	pair, err := parsePair(certPEM, keyPEM)
	if err != nil {
		return err
	}
	if !validAt(pair, now) {
		return fmt.Errorf("client certificate expired at %s", pair.Leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	return nil
}

// pendingKey loads the key of a request in flight, or generates and keeps
// one.
func pendingKey(path string) (*ecdsa.PrivateKey, []byte, error) {
	if data, err := os.ReadFile(path); err == nil {
		if block, _ := pem.Decode(data); block != nil {
			if key, err := x509.ParseECPrivateKey(block.Bytes); err == nil {
				return key, data, nil
			}
		}
	}
	key, err := NewKey()
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	keyPEM := encodeKey(der)
	if err := writeFileAtomic(path, keyPEM, 0o600); err != nil {
		return nil, nil, err
	}
	return key, keyPEM, nil
}

// writeKubeconfig writes the kubelet's kubeconfig: bc's cluster, the
// store's current file as client certificate and key (upstream's
// default-cluster, default-auth, default-context).
func writeKubeconfig(path string, bc *client.Config, pemPath string) error {
	caData := bc.CAData
	if len(caData) == 0 && bc.CAFile != "" {
		data, err := os.ReadFile(bc.CAFile)
		if err != nil {
			return err
		}
		caData = data
	}
	abs, err := filepath.Abs(pemPath)
	if err != nil {
		return err
	}
	return kubeconfig.Write(path, &kubeconfig.Config{
		APIVersion: "v1", Kind: "Config",
		Clusters: []kubeconfig.NamedCluster{{Name: "default-cluster", Cluster: kubeconfig.Cluster{Server: bc.Host,
			CertificateAuthorityData: caData, InsecureSkipTLSVerify: bc.Insecure, TLSServerName: bc.ServerName}}},
		Users:          []kubeconfig.NamedUser{{Name: "default-auth", User: kubeconfig.AuthInfo{ClientCertificate: abs, ClientKey: abs}}},
		Contexts:       []kubeconfig.NamedContext{{Name: "default-context", Context: kubeconfig.Context{Cluster: "default-cluster", User: "default-auth"}}},
		CurrentContext: "default-context",
	})
}
