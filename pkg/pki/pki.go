package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// KeyPair is a certificate and its private key.
type KeyPair struct {
	Cert    *x509.Certificate
	Key     crypto.Signer
	CertPEM []byte
	KeyPEM  []byte
}

// Files are where a key pair lives on disk.
func Files(dir, name string) (certFile, keyFile string) {
	return filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
}

// Load reads a key pair.
func Load(dir, name string) (*KeyPair, error) {
	cf, kf := Files(dir, name)
	certPEM, err := os.ReadFile(cf)
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(kf)
	if err != nil {
		return nil, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("%s: not PEM", name)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s: key cannot sign", name)
	}
	return &KeyPair{Cert: cert, Key: signer, CertPEM: certPEM, KeyPEM: keyPEM}, nil
}

func (kp *KeyPair) save(dir, name string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	cf, kf := Files(dir, name)
	if err := os.WriteFile(kf, kp.KeyPEM, 0o600); err != nil {
		return err
	}
	return os.WriteFile(cf, kp.CertPEM, 0o644)
}

func newKey() (*ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

func sign(tmpl *x509.Certificate, parent *KeyPair) (*KeyPair, error) {
	key, keyPEM, err := newKey()
	if err != nil {
		return nil, err
	}
	issuer, signer := tmpl, crypto.Signer(key)
	if parent != nil {
		issuer, signer = parent.Cert, parent.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, issuer, key.Public(), signer)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &KeyPair{Cert: cert, Key: key, KeyPEM: keyPEM,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

func fresh(kp *KeyPair, now time.Time) bool {
	return kp != nil && now.Add(24*time.Hour).Before(kp.Cert.NotAfter)
}

// EnsureCA loads or creates the cluster CA ("ca.crt", "ca.key" in dir).
func EnsureCA(dir string, now time.Time) (*KeyPair, error) {
	return EnsureNamedCA(dir, "ca", "skiff-ca", now)
}

// EnsureNamedCA loads or creates a CA stored as <name>.crt and <name>.key
// in dir, with commonName as its subject (e.g. the front-proxy CA that
// signs the certificate the API server presents to aggregated servers).
func EnsureNamedCA(dir, name, commonName string, now time.Time) (*KeyPair, error) {
	if kp, err := Load(dir, name); err == nil && fresh(kp, now) {
		return kp, nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	sn, err := serial()
	if err != nil {
		return nil, err
	}
	kp, err := sign(&x509.Certificate{
		SerialNumber: sn, Subject: pkix.Name{CommonName: commonName},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true, IsCA: true,
	}, nil)
	if err != nil {
		return nil, err
	}
	return kp, kp.save(dir, name)
}

// EnsureServing loads or (re)creates a serving certificate signed by ca
// that covers every host (DNS name or IP).
func EnsureServing(dir, name string, ca *KeyPair, hosts []string, now time.Time) (*KeyPair, error) {
	if kp, err := Load(dir, name); err == nil && fresh(kp, now) && covers(kp.Cert, hosts) && signedBy(kp.Cert, ca) {
		return kp, nil
	}
	sn, err := serial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: sn, Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	kp, err := sign(tmpl, ca)
	if err != nil {
		return nil, err
	}
	return kp, kp.save(dir, name)
}

// EnsureClient loads or creates a client certificate for user (CN) in
// groups (O), signed by ca.
func EnsureClient(dir, name string, ca *KeyPair, user string, groups []string, now time.Time) (*KeyPair, error) {
	if kp, err := Load(dir, name); err == nil && fresh(kp, now) && kp.Cert.Subject.CommonName == user && signedBy(kp.Cert, ca) {
		return kp, nil
	}
	sn, err := serial()
	if err != nil {
		return nil, err
	}
	kp, err := sign(&x509.Certificate{
		SerialNumber: sn, Subject: pkix.Name{CommonName: user, Organization: groups},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca)
	if err != nil {
		return nil, err
	}
	return kp, kp.save(dir, name)
}

func covers(cert *x509.Certificate, hosts []string) bool {
	for _, h := range hosts {
		if cert.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

func signedBy(cert *x509.Certificate, ca *KeyPair) bool {
	return cert.CheckSignatureFrom(ca.Cert) == nil
}

// EnsureSigningKey loads or creates a bare signing key ("<name>.key" and
// the public "<name>.pub" in dir), used to sign service account tokens.
func EnsureSigningKey(dir, name string) (crypto.Signer, error) {
	kf := filepath.Join(dir, name+".key")
	if _, err := os.Stat(kf); err == nil {
		return LoadSigningKey(kf)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key, keyPEM, err := newKey()
	if err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(kf, keyPEM, 0o600); err != nil {
		return nil, err
	}
	return key, os.WriteFile(filepath.Join(dir, name+".pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644)
}

// LoadSigningKey reads a service account signing key: an ECDSA P-256
// private key in PEM, PKCS#8 ("PRIVATE KEY") or SEC 1 ("EC PRIVATE KEY").
// Tokens are ES256; other key types are refused with a clear error.
func LoadSigningKey(path string) (crypto.Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b, _ := pem.Decode(data)
	if b == nil {
		return nil, fmt.Errorf("%s: not PEM", path)
	}
	var key any
	switch b.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(b.Bytes)
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	default:
		return nil, fmt.Errorf("%s: PEM block %q is not a private key skiff can use (want an ECDSA P-256 key: PRIVATE KEY or EC PRIVATE KEY)", path, b.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, fmt.Errorf("%s: service account tokens are signed with ES256, which needs an ECDSA P-256 key (got %T)", path, key)
	}
	return ec, nil
}
