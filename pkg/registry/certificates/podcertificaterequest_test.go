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

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func errorStrings(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func stubRequest(t *testing.T, curve elliptic.Curve) (*ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(curve, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		t.Fatal(err)
	}
	return key, der
}

func validPCR(t *testing.T) (*ecdsa.PrivateKey, *certificatesv1.PodCertificateRequest) {
	key, der := stubRequest(t, elliptic.P256())
	r := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Name: "pcr", Namespace: "default"}, Spec: certificatesv1.PodCertificateRequestSpec{
		SignerName: "example.com/signer", PodName: "web", PodUID: "pod-uid", ServiceAccountName: "default", ServiceAccountUID: "sa-uid",
		NodeName: "node1", NodeUID: "node-uid", StubPKCS10Request: der}}
	DefaultPodCertificateRequest(r)
	return key, r
}

func TestValidatePodCertificateRequest(t *testing.T) {
	_, r := validPCR(t)
	if *r.Spec.MaxExpirationSeconds != 86400 {
		t.Errorf("maxExpirationSeconds defaulted to %d", *r.Spec.MaxExpirationSeconds)
	}
	_, p224 := stubRequest(t, elliptic.P224())
	tests := []struct {
		name   string
		mutate func(*certificatesv1.PodCertificateRequest)
		want   []string
	}{
		{name: "valid", mutate: func(*certificatesv1.PodCertificateRequest) {}},
		{name: "no pod uid", mutate: func(r *certificatesv1.PodCertificateRequest) { r.Spec.PodUID = "" },
			want: []string{`spec.podUID: Invalid value: "": must not be empty`}},
		{name: "kubernetes signer over 24h", mutate: func(r *certificatesv1.PodCertificateRequest) {
			r.Spec.SignerName = "kubernetes.io/kube-apiserver-client-pod"
			r.Spec.MaxExpirationSeconds = ptrInt32(2 * 86400)
		}, want: []string{"spec.maxExpirationSeconds: Invalid value: 172800: must be in the range [3600, 86400]"}},
		{name: "under an hour", mutate: func(r *certificatesv1.PodCertificateRequest) { r.Spec.MaxExpirationSeconds = ptrInt32(60) },
			want: []string{"spec.maxExpirationSeconds: Invalid value: 60: must be in the range [3600, 7862400]"}},
		{name: "no stub request", mutate: func(r *certificatesv1.PodCertificateRequest) { r.Spec.StubPKCS10Request = nil },
			want: []string{"spec.stubPKCS10Request: Required value"}},
		{name: "garbage stub request", mutate: func(r *certificatesv1.PodCertificateRequest) { r.Spec.StubPKCS10Request = []byte("x") },
			want: []string{"spec.stubPKCS10Request: Invalid value: must be a valid DER-serialized PKCS#10 certificate signing request"}},
		{name: "P224 key", mutate: func(r *certificatesv1.PodCertificateRequest) { r.Spec.StubPKCS10Request = p224 },
			want: []string{`spec.stubPKCS10Request: Invalid value: "curve P-224": elliptic public keys must use curve P256, P384 or P521`}},
		{name: "annotation without domain", mutate: func(r *certificatesv1.PodCertificateRequest) {
			r.Spec.UnverifiedUserAnnotations = map[string]string{"tier": "gold"}
		}, want: []string{`spec.unverifiedUserAnnotations: Invalid value: "tier": keys must be domain-prefixed`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, r := validPCR(t)
			tt.mutate(r)
			expectErrorStrings(t, errorStrings(ValidatePodCertificateRequest(r)), tt.want...)
		})
	}
}

func ptrInt32(v int32) *int32 { return &v }

func TestValidatePodCertificateRequestStatusUpdate(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	key, old := validPCR(t)
	old.ResourceVersion = "1"
	issue := func(pub any, notBefore time.Time, lifetime time.Duration) string {
		caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "pod"}, NotBefore: notBefore, NotAfter: notBefore.Add(lifetime)}
		ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, pub, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	}
	issued := func(chain string, nb, na, refresh time.Time) *certificatesv1.PodCertificateRequest {
		r := old.DeepCopy()
		r.Status = certificatesv1.PodCertificateRequestStatus{CertificateChain: chain, NotBefore: &metav1.Time{Time: nb}, NotAfter: &metav1.Time{Time: na},
			BeginRefreshAt: &metav1.Time{Time: refresh}, Conditions: []metav1.Condition{{Type: "Issued", Status: metav1.ConditionTrue, Reason: "Signed", LastTransitionTime: metav1.NewTime(now)}}}
		return r
	}
	good := issue(&key.PublicKey, now, 12*time.Hour)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	denied := old.DeepCopy()
	denied.Status.Conditions = []metav1.Condition{{Type: "Denied", Status: metav1.ConditionTrue, Reason: "UnsupportedKeyType", LastTransitionTime: metav1.NewTime(now)}}
	tests := []struct {
		name     string
		old, new *certificatesv1.PodCertificateRequest
		want     []string
		suffix   string // of the one error (after the rendered chain)
	}{
		{name: "issued", old: old, new: issued(good, now, now.Add(12*time.Hour), now.Add(6*time.Hour))},
		{name: "denied", old: old, new: denied},
		{name: "issued to another key", old: old, new: issued(issue(&other.PublicKey, now, 12*time.Hour), now, now.Add(12*time.Hour), now.Add(6*time.Hour)),
			want: []string{"status.certificateChain: Invalid value: "}, suffix: "leaf certificate was not issued to the requested public key"},
		{name: "lifetime too long", old: old, new: issued(issue(&key.PublicKey, now, 48*time.Hour), now, now.Add(48*time.Hour), now.Add(6*time.Hour)),
			want: []string{"status.certificateChain: Invalid value: 172800000000000: leaf certificate lifetime must be <= spec.maxExpirationSeconds (86400)"}},
		{name: "notBefore far from now", old: old, new: issued(issue(&key.PublicKey, now.Add(-time.Hour), 12*time.Hour), now.Add(-time.Hour), now.Add(11*time.Hour), now.Add(6*time.Hour)),
			want: []string{"status.notBefore: Invalid value: \"2026-01-01T11:00:00Z\": must be set to within 5 minutes of kube-apiserver's current time"}},
		{name: "refresh too late", old: old, new: issued(good, now, now.Add(12*time.Hour), now.Add(12*time.Hour)),
			want: []string{"status.beginRefreshAt: Invalid value: \"2026-01-02T00:00:00Z\": must be at least 10 minutes before status.notAfter"}},
		{name: "two terminal conditions", old: old, new: func() *certificatesv1.PodCertificateRequest {
			r := denied.DeepCopy()
			r.Status.Conditions = append(r.Status.Conditions, metav1.Condition{Type: "Failed", Status: metav1.ConditionTrue, Reason: "X", LastTransitionTime: metav1.NewTime(now)})
			return r
		}(), want: []string{`status.conditions[1].type: Invalid value: "Failed": There may be at most one condition with type "Issued", "Denied", or "Failed"`}},
		{name: "denied then changed", old: denied, new: func() *certificatesv1.PodCertificateRequest {
			r := denied.DeepCopy()
			r.Status.Conditions[0].Message = "changed"
			return r
		}(), want: []string{`status: Invalid value: immutable after PodCertificateRequest is issued, denied, or failed`}},
		{name: "pending status changed", old: old, new: func() *certificatesv1.PodCertificateRequest {
			r := old.DeepCopy()
			r.Status.CertificateChain = good
			return r
		}(), want: []string{`status: Invalid value: status is immutable unless transitioning to "Issued", "Denied", or "Failed"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := errorStrings(ValidatePodCertificateRequestStatusUpdate(tt.new, tt.old, now))
			if len(got) != len(tt.want) {
				t.Fatalf("errors %q, want %q", got, tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) || !strings.HasSuffix(got[i], tt.suffix) {
					t.Errorf("error %q, want prefix %q and suffix %q", got[i], tt.want[i], tt.suffix)
				}
			}
		})
	}
}
