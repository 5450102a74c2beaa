package apiserver_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"slices"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// A CertificateSigningRequest records who created it (whatever the client
// claims), the approval subresource changes only conditions, and the
// status subresource cannot approve.
func TestCertificateSigningRequests(t *testing.T) {
	tokens, err := apiserver.LoadTokenFile(writeTokenFile(t, "s3cret,alice,1001,\"dev\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := start(t, testenv.Config{Tweak: func(cfg *apiserver.Config) {
		cfg.Authenticator = apiserver.UnionAuthenticator{cfg.Authenticator, tokens}
	}})
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	const base = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
	body, _ := json.Marshal(map[string]any{
		"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": map[string]any{"name": "alice"},
		"spec": map[string]any{"request": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			"signerName": "kubernetes.io/kube-apiserver-client", "usages": []string{"client auth"}, "username": "system:admin",
			"groups": []string{"system:masters"}},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Approved", "status": "True"}}},
	})
	req, _ := http.NewRequest(http.MethodPost, c.env.URL+base, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := c.anonymous().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %s", resp.StatusCode, data)
	}
	var csr certificatesv1.CertificateSigningRequest
	if err := json.Unmarshal(data, &csr); err != nil {
		t.Fatal(err)
	}
	if csr.Spec.Username != "alice" || csr.Spec.UID != "1001" || !slices.Equal(csr.Spec.Groups, []string{"dev", "system:authenticated"}) {
		t.Errorf("requester = %q %q %v", csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups)
	}
	if len(csr.Status.Conditions) != 0 {
		t.Errorf("created pre-approved: %v", csr.Status.Conditions)
	}

	// status cannot approve
	csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}
	var out certificatesv1.CertificateSigningRequest
	c.call(http.MethodPut, base+"/alice/status", &csr, http.StatusOK, &out)
	if len(out.Status.Conditions) != 0 {
		t.Errorf("status approved: %v", out.Status.Conditions)
	}
	// approval does, and leaves the spec alone
	out.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue,
		Reason: "KubectlApprove", Message: "This CSR was approved by kubectl certificate approve."}}
	out.Spec.SignerName = "example.com/other"
	var approved certificatesv1.CertificateSigningRequest
	c.call(http.MethodPut, base+"/alice/approval", &out, http.StatusOK, &approved)
	if len(approved.Status.Conditions) != 1 || approved.Status.Conditions[0].LastTransitionTime.IsZero() || approved.Spec.SignerName != csr.Spec.SignerName {
		t.Errorf("after approval: %+v", approved)
	}
	// denying an approved request is invalid
	approved.Status.Conditions = append(approved.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue})
	code, _, data := c.do(http.MethodPut, base+"/alice/approval", &approved, "", "")
	expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
	// field selector on spec.signerName
	var list certificatesv1.CertificateSigningRequestList
	c.call(http.MethodGet, base+"?fieldSelector=spec.signerName%3Dkubernetes.io%2Fkube-apiserver-client", nil, http.StatusOK, &list)
	if len(list.Items) != 1 {
		t.Errorf("field selector found %d", len(list.Items))
	}
}
