package certificates

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/registry/registrytest"
)

func csrPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func certPEM(t *testing.T) []byte {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "alice"}, NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<31, 0)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func validCSR(t *testing.T) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "alice", ResourceVersion: "1"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    csrPEM(t),
			SignerName: "kubernetes.io/kube-apiserver-client",
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth},
		},
	}
}

func approved() certificatesv1.CertificateSigningRequestCondition {
	return certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "KubectlApprove"}
}

func TestValidateCSR(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*certificatesv1.CertificateSigningRequest)
		want   []string
		msg    string
	}{
		{name: "valid", mutate: func(*certificatesv1.CertificateSigningRequest) {}},
		{name: "not PEM", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Request = []byte("hello") },
			want: []string{"spec.request: Invalid value"}},
		{name: "corrupt CSR", mutate: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Request = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: []byte{1, 2, 3}})
		}, want: []string{"spec.request: Invalid value"}},
		{name: "no signer", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "" },
			want: []string{"spec.signerName: Required value"}},
		{name: "signer without path", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "example.com" },
			want: []string{"spec.signerName: Invalid value"},
			msg:  `spec.signerName: Invalid value: "example.com": must be a fully qualified domain and path of the form 'example.com/signer-name'`},
		{name: "signer one-label domain", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "example/signer" },
			want: []string{"spec.signerName: Invalid value"},
			msg:  `spec.signerName: Invalid value: "example": should be a domain with at least two segments separated by dots`},
		{name: "legacy signer", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = LegacyUnknownSignerName },
			want: []string{"spec.signerName: Invalid value"}},
		{name: "no usages", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Usages = nil },
			want: []string{"spec.usages: Required value"}},
		{name: "unknown usage", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Usages = []certificatesv1.KeyUsage{"flying"} },
			want: []string{"spec.usages[0]: Unsupported value"}},
		{name: "duplicate usage", mutate: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Usages = []certificatesv1.KeyUsage{"client auth", "client auth"}
		}, want: []string{"spec.usages[1]: Duplicate value"}},
		{name: "short expiration", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Spec.ExpirationSeconds = new(int32(599)) },
			want: []string{"spec.expirationSeconds: Invalid value"},
			msg:  "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)"},
		{name: "ten minutes", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Spec.ExpirationSeconds = new(int32(600)) }},
		{name: "approved and denied", mutate: func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{approved(), {Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue}}
		}, want: []string{"status.conditions: Invalid value"}},
		{name: "approved false", mutate: func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionFalse}}
		}, want: []string{"status.conditions[0].status: Invalid value"}},
		{name: "duplicate condition", mutate: func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{approved(), approved()}
		}, want: []string{"status.conditions[1].type: Duplicate value"}},
		{name: "bad condition status", mutate: func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: "Custom", Status: "Maybe"}}
		}, want: []string{"status.conditions[0].status: Unsupported value"}},
		{name: "issued", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Status.Certificate = certPEM(t) }},
		{name: "garbage certificate", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Status.Certificate = []byte("nope") },
			want: []string{"status.certificate: Invalid value"},
			msg:  `status.certificate: Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block`},
		{name: "name with slash", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Name = "a/b" },
			want: []string{"metadata.name: Invalid value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			csr := validCSR(t)
			tt.mutate(csr)
			errs := ValidateCSR(csr)
			registrytest.ExpectErrors(t, errs, tt.want...)
			if tt.msg != "" && (len(errs) == 0 || errs[0].Error() != tt.msg) {
				t.Errorf("got %v, want %q", errs, tt.msg)
			}
		})
	}
}

func TestSetRequester(t *testing.T) {
	csr := validCSR(t)
	csr.Spec.Username, csr.Spec.Groups = "mallory", []string{"system:masters"}
	SetRequester(csr, &authenticationv1.UserInfo{Username: "alice", UID: "u-1", Groups: []string{"dev", "system:authenticated"},
		Extra: map[string]authenticationv1.ExtraValue{"scopes": {"a"}}})
	if csr.Spec.Username != "alice" || csr.Spec.UID != "u-1" || strings.Join(csr.Spec.Groups, ",") != "dev,system:authenticated" ||
		len(csr.Spec.Extra["scopes"]) != 1 {
		t.Errorf("spec = %+v", csr.Spec)
	}
	SetRequester(csr, nil)
	if csr.Spec.Username != "" || csr.Spec.Groups != nil || csr.Spec.Extra != nil {
		t.Errorf("client-set requester kept: %+v", csr.Spec)
	}
}

func TestSubresourcePreparation(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	old := validCSR(t)
	old.Spec.Username = "alice"

	// approval: conditions change; spec, certificate and Failed stay.
	obj := old.DeepCopy()
	obj.Spec.Username = "mallory"
	obj.Status.Certificate = certPEM(t)
	obj.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{approved(), {Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue}}
	PrepareForApprovalUpdate(obj, old)
	StampConditions(obj, old, now)
	if obj.Spec.Username != "alice" || len(obj.Status.Certificate) != 0 || len(obj.Status.Conditions) != 1 {
		t.Fatalf("approval kept more than conditions: %+v", obj)
	}
	if c := obj.Status.Conditions[0]; !c.LastUpdateTime.Time.Equal(now) || !c.LastTransitionTime.Time.Equal(now) {
		t.Errorf("timestamps = %v %v", c.LastUpdateTime, c.LastTransitionTime)
	}
	registrytest.ExpectErrors(t, ValidateCSRUpdate(obj, old))

	// status: the certificate is set; Approved cannot be removed or added.
	stored := obj
	st := stored.DeepCopy()
	st.Status.Certificate = certPEM(t)
	st.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue}}
	PrepareForStatusUpdate(st, stored)
	if len(st.Status.Certificate) == 0 || len(st.Status.Conditions) != 1 || st.Status.Conditions[0].Type != certificatesv1.CertificateApproved {
		t.Fatalf("status update = %+v", st.Status)
	}
	registrytest.ExpectErrors(t, ValidateCSRUpdate(st, stored))

	// an issued certificate cannot be replaced, an Approved condition not dropped.
	changed := st.DeepCopy()
	changed.Status.Certificate = certPEM(t)
	changed.Status.Conditions = nil
	registrytest.ExpectErrors(t, ValidateCSRUpdate(changed, st), "status.certificate: Invalid value", "status.conditions: Forbidden")

	// the main resource changes neither spec nor status.
	main := st.DeepCopy()
	main.Spec.SignerName = "example.com/other"
	main.Status.Conditions = nil
	main.Labels = map[string]string{"a": "b"}
	PrepareForUpdate(main, st)
	if main.Spec.SignerName != st.Spec.SignerName || len(main.Status.Conditions) != 1 || main.Labels["a"] != "b" {
		t.Errorf("main update = %+v", main)
	}
}

func TestDefaultConditionStatus(t *testing.T) {
	csr := &certificatesv1.CertificateSigningRequest{Status: certificatesv1.CertificateSigningRequestStatus{
		Conditions: []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved}}}}
	DefaultCSR(csr)
	if csr.Status.Conditions[0].Status != corev1.ConditionTrue {
		t.Errorf("status = %q", csr.Status.Conditions[0].Status)
	}
}
