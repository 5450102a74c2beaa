package controllermanager_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/controllermanager"
	"github.com/skiff-sh/skiff/pkg/pki"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// The CSR controllers in the manager, with the cluster CA of
// --cluster-signing-{cert,key}-file: a node client request is approved and
// issued by that CA.
func TestManagerSignsWithClusterCA(t *testing.T) {
	dir := t.TempDir()
	env := testenv.StartT(t, testenv.Config{Dir: dir, RBAC: true})
	certFile, keyFile := pki.Files(dir, "ca")
	m, err := controllermanager.New(controllermanager.Config{ClientConfig: managerClientConfig(t, env), UseServiceAccountCredentials: true,
		Controllers: []string{"csrapproving", "csrsigning", "csrcleaner"},
		CSRSigning:  controllermanager.CSRSigningConfig{ClusterSigningCertFile: certFile, ClusterSigningKeyFile: keyFile}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	csrs := client.For[*certificatesv1.CertificateSigningRequest, *certificatesv1.CertificateSigningRequestList](mustClient(t, env))
	if _, err := csrs.Create(ctx, &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "node-n1"},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var issued []byte
	deadline := time.Now().Add(30 * time.Second)
	for len(issued) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the node's request was not issued")
		}
		time.Sleep(10 * time.Millisecond)
		if c, err := csrs.Get(ctx, "node-n1", metav1.GetOptions{}); err == nil {
			issued = c.Status.Certificate
		}
	}
	ca, err := pki.Load(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(issued)
	cert, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if err := cert.CheckSignatureFrom(ca.Cert); err != nil || cert.Subject.CommonName != "system:node:n1" {
		t.Errorf("issued %v, signature %v", cert.Subject, err)
	}
}

// Upstream's rules for the signing files: none (the signer stays off),
// the cluster-wide pair, or per-signer pairs, never both.
func TestCSRSigningFiles(t *testing.T) {
	dir := t.TempDir()
	env := testenv.StartT(t, testenv.Config{Dir: dir})
	certFile, keyFile := pki.Files(dir, "ca")
	for _, tt := range []struct {
		name    string
		cfg     controllermanager.CSRSigningConfig
		wantErr string
	}{
		{name: "none"},
		{name: "both", cfg: controllermanager.CSRSigningConfig{ClusterSigningCertFile: certFile, ClusterSigningKeyFile: keyFile, KubeletServingCertFile: certFile, KubeletServingKeyFile: keyFile},
			wantErr: "cannot specify default and per controller certs at the same time"},
		{name: "per signer", cfg: controllermanager.CSRSigningConfig{KubeletServingCertFile: certFile, KubeletServingKeyFile: keyFile}},
		{name: "missing file", cfg: controllermanager.CSRSigningConfig{ClusterSigningCertFile: filepath.Join(dir, "nope.crt"), ClusterSigningKeyFile: keyFile},
			wantErr: "error reading CA cert file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := controllermanager.New(controllermanager.Config{ClientConfig: clientConfig(env), Controllers: []string{"csrsigning"}, CSRSigning: tt.cfg})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			err = m.Run(ctx)
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Run: %v, want %q", err, tt.wantErr)
			}
		})
	}
}
