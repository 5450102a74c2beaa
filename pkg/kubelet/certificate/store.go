package certificate

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Store keeps key pairs as upstream's certificate file store: Dir/<Prefix>-
// <timestamp>.pem (certificate and key PEM) and the symlink
// Dir/<Prefix>-current.pem to the newest.
type Store struct {
	Dir    string
	Prefix string // "kubelet-client"
}

// CurrentPath is the current pair's path (the symlink).
func (s *Store) CurrentPath() string {
	return filepath.Join(s.Dir, s.Prefix+"-current.pem")
}

// ErrNoCert is Current's error when the store holds no pair.
var ErrNoCert = errors.New("no certificate in the store")

// Current loads the current pair (Leaf set).
func (s *Store) Current() (*tls.Certificate, error) {
	data, err := os.ReadFile(s.CurrentPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoCert
	}
	if err != nil {
		return nil, err
	}
	return parsePair(data, data)
}

// Update stores a new pair and makes it current.
func (s *Store) Update(certPEM, keyPEM []byte, now time.Time) (*tls.Certificate, error) {
	c, err := parsePair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, err
	}
	name := s.Prefix + "-" + now.UTC().Format("2006-01-02-15-04-05") + ".pem"
	data := append(append([]byte{}, certPEM...), keyPEM...)
	if err := writeFileAtomic(filepath.Join(s.Dir, name), data, 0o600); err != nil {
		return nil, err
	}
	link := s.CurrentPath()
	tmp := link + ".updating"
	_ = os.Remove(tmp)
	if err := os.Symlink(name, tmp); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, link); err != nil {
		return nil, err
	}
	return c, nil
}

// parsePair reads a certificate chain from certPEM and the key from keyPEM
// (one file may hold both).
func parsePair(certPEM, keyPEM []byte) (*tls.Certificate, error) {
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("client certificate: %w", err)
	}
	if c.Leaf == nil {
		if c.Leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// validAt says whether the certificate is usable at now.
func validAt(c *tls.Certificate, now time.Time) bool {
	return c != nil && c.Leaf != nil && !now.Before(c.Leaf.NotBefore) && now.Before(c.Leaf.NotAfter)
}

func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func encodeKey(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}
