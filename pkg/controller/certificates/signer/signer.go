package signer

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"os"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/controller/internal/csrutil"
)

// QueueName is upstream's queue name.
const QueueName = "csrsigning"

// DefaultDuration is upstream's --cluster-signing-duration.
const DefaultDuration = 365 * 24 * time.Hour

// Upstream's signing policy constants.
const (
	backdate    = 5 * time.Minute
	short       = 8 * time.Hour
	minDuration = 10 * time.Minute
)

// CA is a signing certificate and its key.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// Config configures the controller.
type Config struct {
	Client    *client.Client
	Informers *informers.SharedInformerFactory
	Recorder  record.EventRecorder
	Clock     clock.Clock
	// Workers is 5 upstream (no flag).
	Workers         int
	Logger          *slog.Logger
	MetricsProvider workqueue.MetricsProvider
	// CAs by signer name (kubernetes.io/kube-apiserver-client, ...): a
	// signer without a CA is not served.
	CAs map[string]*CA
	// Duration is the longest certificate (0: DefaultDuration).
	Duration time.Duration
	// Reload, when set, reads the CAs again every ReloadInterval (0: one
	// minute), as upstream's signer follows its files: a rotated CA signs
	// from then on; a failed read keeps the previous CAs.
	Reload         func() (map[string]*CA, error)
	ReloadInterval time.Duration
}

// Controller signs approved requests.
type Controller struct {
	*csrutil.Controller
	cfg  Config
	mu   sync.RWMutex
	cas  map[string]*CA
	csrs *client.Typed[*certificatesv1.CertificateSigningRequest, *certificatesv1.CertificateSigningRequestList]
}

// New registers the controller's informer handlers.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("signer: Client and Informers are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Workers < 1 {
		cfg.Workers = 5
	}
	if cfg.Duration == 0 {
		cfg.Duration = DefaultDuration
	}
	if err := checkSigners(cfg.CAs); err != nil {
		return nil, err
	}
	if cfg.ReloadInterval <= 0 {
		cfg.ReloadInterval = time.Minute
	}
	c := &Controller{cfg: cfg, cas: cfg.CAs, csrs: client.For[*certificatesv1.CertificateSigningRequest, *certificatesv1.CertificateSigningRequestList](cfg.Client)}
	base, err := csrutil.NewController(QueueName, cfg.Informers, cfg.Clock, cfg.MetricsProvider, cfg.Workers, cfg.Logger, c.handle)
	if err != nil {
		return nil, err
	}
	c.Controller = base
	return c, nil
}

func checkSigners(cas map[string]*CA) error {
	for name := range cas {
		if validator(name) == nil {
			return fmt.Errorf("unrecognized signerName: %q", name)
		}
	}
	return nil
}

// Run runs the workers and, with Reload, the CA reloads until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if c.cfg.Reload != nil {
		go func() {
			t := c.cfg.Clock.NewTicker(c.cfg.ReloadInterval)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C():
					c.reload()
				}
			}
		}()
	}
	return c.Controller.Run(ctx)
}

// reload reads the CAs again; a failure keeps the current ones.
func (c *Controller) reload() {
	cas, err := c.cfg.Reload()
	if err == nil {
		err = checkSigners(cas)
	}
	if err != nil {
		c.cfg.Logger.Error("Reloading the signing CAs failed; keeping the current ones", "err", err)
		return
	}
	c.mu.Lock()
	c.cas = cas
	c.mu.Unlock()
}

// validator returns the rules of a signer skiff serves (nil: none).
func validator(signerName string) func(*x509.CertificateRequest, []certificatesv1.KeyUsage) error {
	switch signerName {
	case certificatesv1.KubeletServingSignerName:
		return csrutil.ValidateKubeletServingCSR
	case certificatesv1.KubeAPIServerClientKubeletSignerName:
		return csrutil.ValidateKubeletClientCSR
	case certificatesv1.KubeAPIServerClientSignerName:
		return func(_ *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
			return csrutil.ValidateAPIServerClientUsages(usages)
		}
	}
	return nil
}

// handle signs csr when it is approved and for one of the signers.
func (c *Controller) handle(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
	if len(csr.Status.Certificate) != 0 || !csrutil.IsApproved(csr) || csrutil.HasTrueCondition(csr, certificatesv1.CertificateFailed) {
		return nil
	}
	c.mu.RLock()
	ca, ok := c.cas[csr.Spec.SignerName]
	c.mu.RUnlock()
	validate := validator(csr.Spec.SignerName)
	if !ok || validate == nil {
		return nil
	}
	x509cr, err := csrutil.ParseCSR(csr.Spec.Request)
	if err != nil {
		return fmt.Errorf("unable to parse csr %q: %v", csr.Name, err)
	}
	if err := validate(x509cr, csr.Spec.Usages); err != nil {
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue, Reason: "SignerValidationFailure",
			Message: err.Error(), LastUpdateTime: metav1.NewTime(c.cfg.Clock.Now()),
		})
		if _, err := c.csrs.UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
			return fmt.Errorf("error adding failure condition for csr: %v", err)
		}
		return nil
	}
	der, err := Sign(ca, x509cr, csr.Spec.Usages, Duration(c.cfg.Duration, csr.Spec.ExpirationSeconds), c.cfg.Clock.Now())
	if err != nil {
		return fmt.Errorf("error auto signing csr: %v", err)
	}
	csr.Status.Certificate = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if _, err := c.csrs.UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("error updating signature for csr: %v", err)
	}
	return nil
}

// Duration is the lifetime of a certificate: max unless the request asks
// for less (never less than 10 minutes).
func Duration(max time.Duration, expirationSeconds *int32) time.Duration {
	if expirationSeconds == nil {
		return max
	}
	d := time.Duration(*expirationSeconds) * time.Second
	switch {
	case d > max:
		return max
	case d < minDuration:
		return minDuration
	}
	return d
}

var keyUsages = map[certificatesv1.KeyUsage]x509.KeyUsage{
	certificatesv1.UsageSigning:           x509.KeyUsageDigitalSignature,
	certificatesv1.UsageDigitalSignature:  x509.KeyUsageDigitalSignature,
	certificatesv1.UsageContentCommitment: x509.KeyUsageContentCommitment,
	certificatesv1.UsageKeyEncipherment:   x509.KeyUsageKeyEncipherment,
	certificatesv1.UsageKeyAgreement:      x509.KeyUsageKeyAgreement,
	certificatesv1.UsageDataEncipherment:  x509.KeyUsageDataEncipherment,
	certificatesv1.UsageCertSign:          x509.KeyUsageCertSign,
	certificatesv1.UsageCRLSign:           x509.KeyUsageCRLSign,
	certificatesv1.UsageEncipherOnly:      x509.KeyUsageEncipherOnly,
	certificatesv1.UsageDecipherOnly:      x509.KeyUsageDecipherOnly,
}

var extKeyUsages = map[certificatesv1.KeyUsage]x509.ExtKeyUsage{
	certificatesv1.UsageAny:             x509.ExtKeyUsageAny,
	certificatesv1.UsageServerAuth:      x509.ExtKeyUsageServerAuth,
	certificatesv1.UsageClientAuth:      x509.ExtKeyUsageClientAuth,
	certificatesv1.UsageCodeSigning:     x509.ExtKeyUsageCodeSigning,
	certificatesv1.UsageEmailProtection: x509.ExtKeyUsageEmailProtection,
	certificatesv1.UsageSMIME:           x509.ExtKeyUsageEmailProtection,
	certificatesv1.UsageIPsecEndSystem:  x509.ExtKeyUsageIPSECEndSystem,
	certificatesv1.UsageIPsecTunnel:     x509.ExtKeyUsageIPSECTunnel,
	certificatesv1.UsageIPsecUser:       x509.ExtKeyUsageIPSECUser,
	certificatesv1.UsageTimestamping:    x509.ExtKeyUsageTimeStamping,
	certificatesv1.UsageOCSPSigning:     x509.ExtKeyUsageOCSPSigning,
	certificatesv1.UsageMicrosoftSGC:    x509.ExtKeyUsageMicrosoftServerGatedCrypto,
	certificatesv1.UsageNetscapeSGC:     x509.ExtKeyUsageNetscapeServerGatedCrypto,
}

// Sign issues the DER certificate of req with upstream's permissive
// policy (see the package doc).
func Sign(ca *CA, req *x509.CertificateRequest, usages []certificatesv1.KeyUsage, ttl time.Duration, now time.Time) ([]byte, error) {
	if err := req.CheckSignature(); err != nil {
		return nil, fmt.Errorf("unable to verify certificate request signature: %v", err)
	}
	sn, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("unable to generate a serial number for %s: %v", req.Subject.CommonName, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: sn, Subject: req.Subject,
		DNSNames: req.DNSNames, IPAddresses: req.IPAddresses, EmailAddresses: req.EmailAddresses, URIs: req.URIs,
		PublicKeyAlgorithm: req.PublicKeyAlgorithm, PublicKey: req.PublicKey,
		BasicConstraintsValid: true, IsCA: false,
	}
	for _, u := range usages {
		if ku, ok := keyUsages[u]; ok {
			tmpl.KeyUsage |= ku
		} else if eku, ok := extKeyUsages[u]; ok {
			tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, eku)
		} else {
			return nil, fmt.Errorf("unrecognized usage: %s", u)
		}
	}
	tmpl.NotBefore = now.Add(-backdate)
	if ttl < short {
		tmpl.NotAfter = now.Add(ttl)
	} else {
		tmpl.NotAfter = now.Add(ttl - backdate)
	}
	caNotAfter := ca.Cert.NotAfter
	if !tmpl.NotAfter.Before(caNotAfter) {
		tmpl.NotAfter = caNotAfter
	}
	if !tmpl.NotBefore.Before(caNotAfter) {
		return nil, fmt.Errorf("the signer has expired: NotAfter=%v", caNotAfter)
	}
	if !now.Before(caNotAfter) {
		return nil, fmt.Errorf("refusing to sign a certificate that expired in the past: NotAfter=%v", caNotAfter)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, req.PublicKey, ca.Key)
	if err != nil {
		return nil, fmt.Errorf("failed to sign certificate: %v", err)
	}
	return der, nil
}

// LoadCA reads a PEM certificate (the first of certFile) and its PEM
// private key (PKCS#8, PKCS#1 RSA or SEC 1 EC) and checks that they
// belong together.
func LoadCA(certFile, keyFile string) (*CA, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("error reading CA cert file %q: %v", certFile, err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("error reading CA key file %q: %v", keyFile, err)
	}
	return ParseCA(certPEM, keyPEM)
}

// ParseCA is LoadCA on the files' contents.
func ParseCA(certPEM, keyPEM []byte) (*CA, error) {
	var cert *x509.Certificate
	for rest := certPEM; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("error parsing CA cert: %v", err)
			}
			cert = c
			break
		}
	}
	if cert == nil {
		return nil, errors.New("error reading CA cert: no PEM certificate")
	}
	var key crypto.Signer
	for rest := keyPEM; key == nil; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, errors.New("error reading CA key: no PEM private key")
		}
		switch b.Type {
		case "PRIVATE KEY":
			k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("error reading CA key: %v", err)
			}
			s, ok := k.(crypto.Signer)
			if !ok {
				return nil, errors.New("error reading CA key: the key cannot sign")
			}
			key = s
		case "RSA PRIVATE KEY":
			k, err := x509.ParsePKCS1PrivateKey(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("error reading CA key: %v", err)
			}
			key = k
		case "EC PRIVATE KEY":
			k, err := x509.ParseECPrivateKey(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("error reading CA key: %v", err)
			}
			key = k
		}
	}
	if !samePublicKey(cert.PublicKey, key.Public()) {
		return nil, errors.New("error reading CA: the private key does not match the certificate")
	}
	return &CA{Cert: cert, Key: key}, nil
}

func samePublicKey(a, b crypto.PublicKey) bool {
	switch k := a.(type) {
	case *rsa.PublicKey:
		return k.Equal(b)
	case *ecdsa.PublicKey:
		return k.Equal(b)
	case ed25519.PublicKey:
		return k.Equal(b)
	}
	return false
}
