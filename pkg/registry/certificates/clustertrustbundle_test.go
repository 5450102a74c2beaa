package certificates

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"sort"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func caPEM(t *testing.T, isCA bool) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<31, 0),
		IsCA: isCA, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func expectErrorStrings(t *testing.T, errs []string, want ...string) {
	t.Helper()
	sort.Strings(errs)
	sort.Strings(want)
	if strings.Join(errs, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n  got  %q\n  want %q", errs, want)
	}
}

func TestValidateClusterTrustBundle(t *testing.T) {
	ca, other, leaf := caPEM(t, true), caPEM(t, true), caPEM(t, false)
	tests := []struct {
		name, bundleName, signer, bundle string
		want                             []string
	}{
		{name: "signer bundle", bundleName: "example.com:signer:ca", signer: "example.com/signer", bundle: ca + other},
		{name: "no signer", bundleName: "ca", bundle: ca},
		{name: "colon without signer", bundleName: "a:b", bundle: ca,
			want: []string{`metadata.name: Invalid value: "a:b": ClusterTrustBundle without signer name must not have ":" in its name`}},
		{name: "signer prefix missing", bundleName: "ca", signer: "example.com/signer", bundle: ca,
			want: []string{`metadata.name: Invalid value: "ca": ClusterTrustBundle for signerName example.com/signer must be named with prefix example.com:signer:`}},
		{name: "empty", bundleName: "ca",
			want: []string{`spec.trustBundle: Invalid value: "<value omitted>": at least one trust anchor must be provided`}},
		{name: "not a CA", bundleName: "ca", bundle: ca + leaf,
			want: []string{`spec.trustBundle: Invalid value: "<value omitted>": entry 1 does not have the CA bit set`}},
		{name: "duplicate", bundleName: "ca", bundle: ca + other + ca,
			want: []string{`spec.trustBundle: Invalid value: "<value omitted>": duplicate trust anchor (indices [0 2])`}},
		{name: "wrong block", bundleName: "ca", bundle: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
			want: []string{`spec.trustBundle: Invalid value: "<value omitted>": entry 0 has bad block type: PRIVATE KEY`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: tt.bundleName},
				Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: tt.signer, TrustBundle: tt.bundle}}
			var got []string
			for _, e := range ValidateClusterTrustBundle(b) {
				got = append(got, e.Error())
			}
			expectErrorStrings(t, got, tt.want...)
		})
	}
	old := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "example.com:signer:ca", ResourceVersion: "1"},
		Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/signer", TrustBundle: ca}}
	moved := old.DeepCopy()
	moved.Spec.SignerName = "example.com/other"
	var got []string
	for _, e := range ValidateClusterTrustBundleUpdate(moved, old) {
		got = append(got, e.Error())
	}
	expectErrorStrings(t, got,
		`metadata.name: Invalid value: "example.com:signer:ca": ClusterTrustBundle for signerName example.com/other must be named with prefix example.com:other:`,
		`spec.signerName: Invalid value: "example.com/other": field is immutable`)
}
