package apiserver_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/testenv"
)

// With RBAC, approving a CertificateSigningRequest needs "approve" on its
// signer and writing its certificate needs "sign" (the signer's name or
// "<domain>/*"), besides update on the subresource, as upstream's
// CertificateApproval and CertificateSigning plugins.
func TestCertificateSignerPermissions(t *testing.T) {
	c := start(t, testenv.Config{RBAC: true})
	const base = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "someone"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	create := func(name, signer string) {
		c.call(http.MethodPost, base, map[string]any{
			"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": map[string]any{"name": name},
			"spec": map[string]any{"request": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
				"signerName": signer, "usages": []string{"client auth"}},
		}, http.StatusCreated, nil)
	}
	create("client", "kubernetes.io/kube-apiserver-client")
	create("custom", "example.com/foo")

	// carol may update approvals and statuses, approve for example.com/*
	// and sign for kubernetes.io/kube-apiserver-client only.
	carol := c.as("carol")
	c.grant(t, "", "csr-writer", "carol",
		policyRule([]string{"get", "update"}, []string{"certificates.k8s.io"}, []string{"certificatesigningrequests", "certificatesigningrequests/approval", "certificatesigningrequests/status"}),
		policyRule([]string{"approve"}, []string{"certificates.k8s.io"}, []string{"signers"}, "example.com/*"),
		policyRule([]string{"sign"}, []string{"certificates.k8s.io"}, []string{"signers"}, "kubernetes.io/kube-apiserver-client"))
	approve := func(cl *client, name string) (int, []byte) {
		var csr certificatesv1.CertificateSigningRequest
		c.call(http.MethodGet, base+"/"+name, nil, http.StatusOK, &csr)
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved,
			Status: corev1.ConditionTrue, Reason: "Test"})
		code, _, data := cl.do(http.MethodPut, base+"/"+name+"/approval", &csr, "", "")
		return code, data
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "someone"}, NotBefore: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)}
	certDER, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(cl *client, name string) (int, []byte) {
		var csr certificatesv1.CertificateSigningRequest
		c.call(http.MethodGet, base+"/"+name, nil, http.StatusOK, &csr)
		csr.Status.Certificate = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certDER})
		code, _, data := cl.do(http.MethodPut, base+"/"+name+"/status", &csr, "", "")
		return code, data
	}

	code, data := approve(carol, "client")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`certificatesigningrequests.certificates.k8s.io "client" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"`)
	if code, data := approve(carol, "custom"); code != http.StatusOK {
		t.Fatalf("approving through the domain wildcard: %d %s", code, data)
	}
	code, data = sign(carol, "custom")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`certificatesigningrequests.certificates.k8s.io "custom" is forbidden: user not permitted to sign requests with signerName "example.com/foo"`)
	// The admin approves the client request; carol may sign it.
	if code, data := approve(c, "client"); code != http.StatusOK {
		t.Fatalf("admin approving: %d %s", code, data)
	}
	if code, data := sign(carol, "client"); code != http.StatusOK {
		t.Fatalf("signing with sign on the signer: %d %s", code, data)
	}
	// A status write changing neither certificate nor conditions needs no sign.
	var csr certificatesv1.CertificateSigningRequest
	c.call(http.MethodGet, base+"/custom", nil, http.StatusOK, &csr)
	carol.call(http.MethodPut, base+"/custom/status", &csr, http.StatusOK, nil)
}
