package admission

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCertificateSubjectRestriction(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	request := func(orgs ...string) []byte {
		der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "me", Organization: orgs}}, key)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	}
	tests := []struct {
		name   string
		signer string
		orgs   []string
		sub    string
		want   string
	}{
		{name: "client signer", signer: certificatesv1.KubeAPIServerClientSignerName, orgs: []string{"dev"}},
		{name: "masters", signer: certificatesv1.KubeAPIServerClientSignerName, orgs: []string{"dev", "system:masters"},
			want: `certificatesigningrequests.certificates.k8s.io "c" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed`},
		{name: "masters for another signer", signer: "example.com/mine", orgs: []string{"system:masters"}},
		{name: "a subresource", signer: certificatesv1.KubeAPIServerClientSignerName, orgs: []string{"system:masters"}, sub: "status"},
	}
	p := &certificateSubjectRestriction{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "c"},
				Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: tt.signer, Request: request(tt.orgs...)}}
			err := p.Validate(context.Background(), &Attributes{Operation: Create, Resource: grCSRs, Subresource: tt.sub, Name: "c", Object: csr})
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}
