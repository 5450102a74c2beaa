package certificate

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/skiff-sh/skiff/pkg/client"
)

// Upstream's names for the kubelet's client certificate.
const (
	SignerName = certificatesv1.KubeAPIServerClientKubeletSignerName
	NodesGroup = "system:nodes"
	NodePrefix = "system:node:"
)

// Usages are the usages a kubelet asks for with an ECDSA key.
var Usages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}

// Subject is the subject of node's client certificate.
func Subject(node string) pkix.Name {
	return pkix.Name{CommonName: NodePrefix + node, Organization: []string{NodesGroup}}
}

// NewKey generates a kubelet client key (ECDSA P-256, as upstream's).
func NewKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

// NewCSR is the CertificateSigningRequest for node's client certificate
// with key: PEM request, signer, usages and upstream's digested name.
func NewCSR(node string, key *ecdsa.PrivateKey) (*certificatesv1.CertificateSigningRequest, error) {
	subject := Subject(node)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject}, key)
	if err != nil {
		return nil, err
	}
	name, err := digestedName(key.Public(), subject, Usages)
	if err != nil {
		return nil, err
	}
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: SignerName,
			Usages:     append([]certificatesv1.KeyUsage(nil), Usages...),
		},
	}, nil
}

// digestedName is "node-csr-" and a digest of the public key, subject and
// usages, so that a kubelet asking again with the same key finds its CSR
// (upstream's naming; each field is length-prefixed so that no two inputs
// hash alike).
func digestedName(pub crypto.PublicKey, subject pkix.Name, usages []certificatesv1.KeyUsage) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	h := sha512.New512_256()
	write := func(s string) { fmt.Fprintf(h, "%d:%s|", len(s), s) }
	write(string(der))
	write(subject.CommonName)
	for _, o := range subject.Organization {
		write(o)
	}
	for _, u := range usages {
		write(string(u))
	}
	return "node-csr-" + base64.RawURLEncoding.EncodeToString(h.Sum(nil)), nil
}

// Request creates the CSR for node's client certificate with key (or finds
// the one made earlier with the same key), waits until it is approved and
// issued, and returns the certificate (PEM).
func Request(ctx context.Context, c *client.Client, node string, key *ecdsa.PrivateKey) ([]byte, error) {
	csr, err := NewCSR(node, key)
	if err != nil {
		return nil, err
	}
	return request(ctx, c, csr, node, key)
}

// request creates csr (a generated name when it has none) and waits for
// its certificate.
func request(ctx context.Context, c *client.Client, csr *certificatesv1.CertificateSigningRequest, node string, key *ecdsa.PrivateKey) ([]byte, error) {
	csrs := client.For[*certificatesv1.CertificateSigningRequest, *certificatesv1.CertificateSigningRequestList](c)
	created, err := csrs.Create(ctx, csr, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) && csr.Name != "" {
		existing, gerr := csrs.Get(ctx, csr.Name, metav1.GetOptions{})
		if gerr != nil {
			return nil, gerr
		}
		if err := compatible(existing, node, key); err != nil {
			return nil, fmt.Errorf("retrieved csr is not compatible: %w", err)
		}
		created, err = existing, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot create certificate signing request: %w", err)
	}
	return Wait(ctx, c, created.Name, created.UID)
}

// compatible says whether an existing CSR asks for node's certificate
// with key's public key.
func compatible(existing *certificatesv1.CertificateSigningRequest, node string, key *ecdsa.PrivateKey) error {
	block, _ := pem.Decode(existing.Spec.Request)
	if block == nil {
		return fmt.Errorf("unable to parse the request")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return err
	}
	pub, ok := req.PublicKey.(*ecdsa.PublicKey)
	if !ok || !pub.Equal(key.Public()) {
		return fmt.Errorf("public key does not match")
	}
	if req.Subject.CommonName != Subject(node).CommonName || existing.Spec.SignerName != SignerName {
		return fmt.Errorf("subject or signer does not match")
	}
	return nil
}

// Wait waits until the CSR name (uid, when set) is approved and issued
// and returns its certificate; a denied or failed CSR, or one deleted, is
// an error.
func Wait(ctx context.Context, c *client.Client, name string, uid types.UID) ([]byte, error) {
	csrs := client.For[*certificatesv1.CertificateSigningRequest, *certificatesv1.CertificateSigningRequestList](c)
	for {
		list, err := csrs.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
		if err != nil {
			return nil, err
		}
		if len(list.Items) == 0 {
			return nil, fmt.Errorf("certificate signing request %s was deleted", name)
		}
		if cert, done, err := issued(&list.Items[0], uid); done || err != nil {
			return cert, err
		}
		w, err := csrs.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: list.ResourceVersion})
		if err != nil {
			return nil, err
		}
		cert, done, err := waitEvents(ctx, w, uid)
		w.Stop()
		if done || err != nil {
			return cert, err
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("timed out waiting for the certificate of %s: %w", name, ctx.Err())
		}
	}
}

// waitEvents reads w until the CSR is issued or refused (done), or the
// watch ends (not done: list again).
func waitEvents(ctx context.Context, w watch.Interface, uid types.UID) ([]byte, bool, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, false, nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, false, nil
			}
			switch ev.Type {
			case watch.Deleted:
				return nil, true, fmt.Errorf("certificate signing request was deleted")
			case watch.Error:
				return nil, false, nil
			case watch.Added, watch.Modified:
				csr, ok := ev.Object.(*certificatesv1.CertificateSigningRequest)
				if !ok {
					continue
				}
				if cert, done, err := issued(csr, uid); done || err != nil {
					return cert, true, err
				}
			}
		}
	}
}

// issued is csr's certificate once approved and issued; denied and failed
// are errors.
func issued(csr *certificatesv1.CertificateSigningRequest, uid types.UID) ([]byte, bool, error) {
	if uid != "" && csr.UID != uid {
		return nil, true, fmt.Errorf("certificate signing request %s was replaced", csr.Name)
	}
	approved := false
	for _, c := range csr.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Status != "" {
			continue
		}
		switch c.Type {
		case certificatesv1.CertificateDenied:
			return nil, true, fmt.Errorf("certificate signing request is denied, reason: %v, message: %v", c.Reason, c.Message)
		case certificatesv1.CertificateFailed:
			return nil, true, fmt.Errorf("certificate signing request failed, reason: %v, message: %v", c.Reason, c.Message)
		case certificatesv1.CertificateApproved:
			approved = true
		}
	}
	if approved && len(bytes.TrimSpace(csr.Status.Certificate)) > 0 {
		return csr.Status.Certificate, true, nil
	}
	return nil, false, nil
}
