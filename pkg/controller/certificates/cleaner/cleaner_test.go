package cleaner

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"slices"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func certExpiring(t *testing.T, notAfter time.Time) []byte {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "x"}, NotBefore: notAfter.Add(-time.Hour), NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func cond(typ certificatesv1.RequestConditionType, ago time.Duration) certificatesv1.CertificateSigningRequestCondition {
	return certificatesv1.CertificateSigningRequestCondition{Type: typ, Status: corev1.ConditionTrue, LastUpdateTime: metav1.NewTime(now.Add(-ago))}
}

func TestExpired(t *testing.T) {
	valid := certExpiring(t, now.Add(24*time.Hour))
	expired := certExpiring(t, now.Add(-time.Minute))
	tests := []struct {
		name    string
		created time.Duration // ago
		conds   []certificatesv1.CertificateSigningRequestCondition
		cert    []byte
		want    string
	}{
		{name: "fresh pending", created: time.Hour},
		{name: "pending for 25h", created: 25 * time.Hour, want: "pending past deadline"},
		{name: "pending for 23h", created: 23 * time.Hour},
		{name: "issued 2h ago", created: 2 * time.Hour, conds: []certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateApproved, 2*time.Hour)}, cert: valid, want: "issued past deadline"},
		{name: "issued 30m ago", created: time.Hour, conds: []certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateApproved, 30*time.Minute)}, cert: valid},
		{name: "approved 2h ago, not issued", created: 48 * time.Hour, conds: []certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateApproved, 2*time.Hour)}},
		{name: "denied 2h ago", created: 2 * time.Hour, conds: []certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateDenied, 2*time.Hour)}, want: "denied past deadline"},
		{name: "denied 30m ago", created: 48 * time.Hour, conds: []certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateDenied, 30*time.Minute)}},
		{name: "failed 2h ago", created: 2 * time.Hour, conds: []certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateApproved, 30*time.Minute), cond(certificatesv1.CertificateFailed, 2*time.Hour)}, want: "failed past deadline"},
		{name: "issued 10m ago, certificate expired", created: time.Hour, conds: []certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateApproved, 10*time.Minute)}, cert: expired, want: "issued certificate expired"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			csr := &certificatesv1.CertificateSigningRequest{
				ObjectMeta: metav1.ObjectMeta{Name: "x", CreationTimestamp: metav1.NewTime(now.Add(-tt.created))},
				Status:     certificatesv1.CertificateSigningRequestStatus{Conditions: tt.conds, Certificate: tt.cert},
			}
			if got := Expired(csr, now); got != tt.want {
				t.Errorf("Expired = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestClean: Clean deletes exactly the expired requests of the cache from
// the server, at the fake clock's time.
func TestClean(t *testing.T) {
	env := testenv.StartT(t)
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	csrs := client.For[*certificatesv1.CertificateSigningRequest, *certificatesv1.CertificateSigningRequestList](c)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "x"}}, key)
	req := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	f := informers.NewSharedInformerFactory(c, 0)
	fake := clock.NewFake(time.Now())
	ctrl, err := New(Config{Client: c, Informers: f, Clock: fake})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"old", "new"} {
		csr, err := csrs.Create(ctx, &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: certificatesv1.CertificateSigningRequestSpec{Request: req, SignerName: "example.com/x", Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if name == "old" {
			csr.CreationTimestamp = metav1.NewTime(csr.CreationTimestamp.Add(-25 * time.Hour))
		}
		_ = f.InformerFor(csr, nil).GetIndexer().Add(csr)
	}
	if err := ctrl.Clean(ctx); err != nil {
		t.Fatal(err)
	}
	l, err := csrs.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, x := range l.Items {
		names = append(names, x.Name)
	}
	if !slices.Equal(names, []string{"new"}) {
		t.Errorf("left %v, want [new]", names)
	}
	// 25 hours later the other one goes too.
	fake.Step(25 * time.Hour)
	if err := ctrl.Clean(ctx); err != nil {
		t.Fatal(err)
	}
	if l, _ := csrs.List(ctx, metav1.ListOptions{}); len(l.Items) != 0 {
		t.Errorf("%d requests left, want none", len(l.Items))
	}
}
