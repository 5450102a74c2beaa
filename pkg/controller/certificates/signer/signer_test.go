package signer

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
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

func newClient(t *testing.T, env *testenv.Environment) *client.Client {
	t.Helper()
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newCA(t *testing.T, notAfter time.Time) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: notAfter.AddDate(-10, 0, 0), NotAfter: notAfter, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &CA{Cert: cert, Key: key}
}

// request is a PEM PKCS#10 request.
func request(t *testing.T, subject pkix.Name, dns []string, ips []net.IP) []byte {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject, DNSNames: dns, IPAddresses: ips}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// approve approves (or denies) name through the approval subresource, as
// kubectl certificate approve does.
func approve(t *testing.T, c *client.Client, csr *certificatesv1.CertificateSigningRequest, typ certificatesv1.RequestConditionType) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	csr = csr.DeepCopy()
	csr.APIVersion, csr.Kind = "certificates.k8s.io/v1", "CertificateSigningRequest"
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: typ, Status: corev1.ConditionTrue, Reason: "KubectlApprove", Message: "This CSR was approved by kubectl certificate approve."})
	body, _ := json.Marshal(csr)
	resp, err := c.Do(context.Background(), &client.Request{Method: http.MethodPut, Path: "/apis/certificates.k8s.io/v1/certificatesigningrequests/" + csr.Name + "/approval", Body: body, JSONOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	out := &certificatesv1.CertificateSigningRequest{}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		t.Fatal(err)
	}
	return out
}

var (
	clientUsages  = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth}
	servingUsages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageServerAuth}
	nodeSubject   = pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}
)

func seconds(n int32) *int32 { return &n }

// TestHandle calls the signer's sync on requests in given states and
// checks the certificate it wrote (or the Failed condition, or nothing).
func TestHandle(t *testing.T) {
	env := testenv.StartT(t)
	c := newClient(t, env)
	ctx := context.Background()
	csrs := client.For[*certificatesv1.CertificateSigningRequest, *certificatesv1.CertificateSigningRequestList](c)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	caNotAfter := now.AddDate(5, 0, 0)
	ca := newCA(t, caNotAfter)
	year := 365 * 24 * time.Hour
	tests := []struct {
		name       string
		signer     string
		subject    pkix.Name
		dns        []string
		ips        []net.IP
		usages     []certificatesv1.KeyUsage
		expiration *int32
		decision   certificatesv1.RequestConditionType // "": pending
		duration   time.Duration                       // --cluster-signing-duration (0: 1y)
		caNotAfter time.Time                           // zero: caNotAfter

		wantNotAfter time.Time // zero: no certificate
		wantFailed   string    // the Failed condition's message
		wantExtUsage []x509.ExtKeyUsage
	}{
		{name: "client, default duration backdated", signer: certificatesv1.KubeAPIServerClientSignerName,
			subject: pkix.Name{CommonName: "alice", Organization: []string{"devs"}}, usages: clientUsages, decision: certificatesv1.CertificateApproved,
			wantNotAfter: now.Add(year - 5*time.Minute), wantExtUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
		{name: "client, short expirationSeconds not backdated", signer: certificatesv1.KubeAPIServerClientSignerName,
			subject: pkix.Name{CommonName: "bob"}, usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}, expiration: seconds(3600), decision: certificatesv1.CertificateApproved,
			wantNotAfter: now.Add(time.Hour)},
		{name: "client, expirationSeconds above the duration is capped", signer: certificatesv1.KubeAPIServerClientSignerName,
			subject: pkix.Name{CommonName: "carol"}, usages: clientUsages, expiration: seconds(48 * 3600), duration: 24 * time.Hour, decision: certificatesv1.CertificateApproved,
			wantNotAfter: now.Add(24*time.Hour - 5*time.Minute)},
		{name: "client, capped at the CA's NotAfter", signer: certificatesv1.KubeAPIServerClientSignerName,
			subject: pkix.Name{CommonName: "dave"}, usages: clientUsages, decision: certificatesv1.CertificateApproved, caNotAfter: now.Add(30 * 24 * time.Hour),
			wantNotAfter: now.Add(30 * 24 * time.Hour)},
		{name: "client without client auth fails", signer: certificatesv1.KubeAPIServerClientSignerName,
			subject: pkix.Name{CommonName: "eve"}, usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature}, decision: certificatesv1.CertificateApproved,
			wantFailed: "missing required usage for client certificate: client auth"},
		{name: "client with server auth fails", signer: certificatesv1.KubeAPIServerClientSignerName,
			subject: pkix.Name{CommonName: "eve"}, usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageServerAuth}, decision: certificatesv1.CertificateApproved,
			wantFailed: "invalid usage for client certificate: server auth"},
		{name: "kubelet serving", signer: certificatesv1.KubeletServingSignerName, subject: nodeSubject,
			dns: []string{"n1.example"}, ips: []net.IP{net.ParseIP("10.0.0.7")}, usages: servingUsages, decision: certificatesv1.CertificateApproved,
			wantNotAfter: now.Add(year - 5*time.Minute), wantExtUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}},
		{name: "kubelet serving without SAN fails", signer: certificatesv1.KubeletServingSignerName, subject: nodeSubject,
			usages: servingUsages, decision: certificatesv1.CertificateApproved, wantFailed: "DNS or IP subjectAltName is required"},
		{name: "kubelet serving with another organization fails", signer: certificatesv1.KubeletServingSignerName,
			subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"other"}}, dns: []string{"n1"}, usages: servingUsages,
			decision: certificatesv1.CertificateApproved, wantFailed: "subject organization is not system:nodes"},
		{name: "kubelet serving with a CN that is not a node fails", signer: certificatesv1.KubeletServingSignerName,
			subject: pkix.Name{CommonName: "n1", Organization: []string{"system:nodes"}}, dns: []string{"n1"}, usages: servingUsages,
			decision: certificatesv1.CertificateApproved, wantFailed: "subject common name does not begin with system:node:"},
		{name: "kubelet serving with client usages fails", signer: certificatesv1.KubeletServingSignerName, subject: nodeSubject,
			dns: []string{"n1"}, usages: clientUsages, decision: certificatesv1.CertificateApproved,
			wantFailed: "usages did not match [digital signature key encipherment server auth]"},
		{name: "kubelet client", signer: certificatesv1.KubeAPIServerClientKubeletSignerName, subject: nodeSubject,
			usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}, decision: certificatesv1.CertificateApproved,
			wantNotAfter: now.Add(year - 5*time.Minute)},
		{name: "kubelet client with a SAN fails", signer: certificatesv1.KubeAPIServerClientKubeletSignerName, subject: nodeSubject,
			dns: []string{"n1"}, usages: clientUsages, decision: certificatesv1.CertificateApproved, wantFailed: "DNS subjectAltNames are not allowed"},
		{name: "pending is not signed", signer: certificatesv1.KubeAPIServerClientSignerName, subject: pkix.Name{CommonName: "x"}, usages: clientUsages},
		{name: "denied is not signed", signer: certificatesv1.KubeAPIServerClientSignerName, subject: pkix.Name{CommonName: "x"}, usages: clientUsages,
			decision: certificatesv1.CertificateDenied},
		{name: "another signer is not signed", signer: "example.com/custom", subject: pkix.Name{CommonName: "x"}, usages: clientUsages,
			decision: certificatesv1.CertificateApproved},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			csr := &certificatesv1.CertificateSigningRequest{
				ObjectMeta: metav1.ObjectMeta{Name: "csr-" + string(rune('a'+i))},
				Spec: certificatesv1.CertificateSigningRequestSpec{
					Request: request(t, tt.subject, tt.dns, tt.ips), SignerName: tt.signer, Usages: tt.usages, ExpirationSeconds: tt.expiration,
				},
			}
			csr, err := csrs.Create(ctx, csr, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tt.decision != "" {
				csr = approve(t, c, csr, tt.decision)
			}
			useCA := ca
			if !tt.caNotAfter.IsZero() {
				useCA = newCA(t, tt.caNotAfter)
			}
			f := informers.NewSharedInformerFactory(c, 0)
			ctrl, err := New(Config{Client: c, Informers: f, Clock: clock.NewFake(now), Duration: tt.duration, CAs: map[string]*CA{
				certificatesv1.KubeAPIServerClientSignerName:        useCA,
				certificatesv1.KubeletServingSignerName:             useCA,
				certificatesv1.KubeAPIServerClientKubeletSignerName: useCA,
			}})
			if err != nil {
				t.Fatal(err)
			}
			_ = f.InformerFor(csr, nil).GetIndexer().Add(csr)
			if err := ctrl.Sync(ctx, csr.Name); err != nil {
				t.Fatalf("sync: %v", err)
			}
			got, err := csrs.Get(ctx, csr.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var failed []string
			for _, cond := range got.Status.Conditions {
				if cond.Type == certificatesv1.CertificateFailed {
					failed = append(failed, cond.Reason+": "+cond.Message)
				}
			}
			if tt.wantFailed != "" {
				if want := []string{"SignerValidationFailure: " + tt.wantFailed}; !slices.Equal(failed, want) {
					t.Errorf("Failed conditions %q, want %q", failed, want)
				}
			} else if len(failed) > 0 {
				t.Errorf("unexpected Failed conditions %q", failed)
			}
			if tt.wantNotAfter.IsZero() {
				if len(got.Status.Certificate) > 0 {
					t.Fatalf("a certificate was issued")
				}
				return
			}
			b, _ := pem.Decode(got.Status.Certificate)
			if b == nil {
				t.Fatalf("no certificate in status: %q", got.Status.Certificate)
			}
			cert, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			if err := cert.CheckSignatureFrom(useCA.Cert); err != nil {
				t.Errorf("not signed by the CA: %v", err)
			}
			if cert.IsCA {
				t.Error("certificate is a CA")
			}
			if !cert.NotBefore.Equal(now.Add(-5*time.Minute)) || !cert.NotAfter.Equal(tt.wantNotAfter) {
				t.Errorf("validity %v – %v, want %v – %v", cert.NotBefore, cert.NotAfter, now.Add(-5*time.Minute), tt.wantNotAfter)
			}
			if cert.Subject.CommonName != tt.subject.CommonName || !slices.Equal(cert.Subject.Organization, tt.subject.Organization) {
				t.Errorf("subject %v, want %v", cert.Subject, tt.subject)
			}
			if !slices.Equal(cert.DNSNames, tt.dns) || len(cert.IPAddresses) != len(tt.ips) {
				t.Errorf("SANs %v %v, want %v %v", cert.DNSNames, cert.IPAddresses, tt.dns, tt.ips)
			}
			if tt.wantExtUsage != nil && !slices.Equal(cert.ExtKeyUsage, tt.wantExtUsage) {
				t.Errorf("ext key usages %v, want %v", cert.ExtKeyUsage, tt.wantExtUsage)
			}
			if cert.KeyUsage&x509.KeyUsageDigitalSignature == 0 && slices.Contains(tt.usages, certificatesv1.UsageDigitalSignature) {
				t.Errorf("key usage %v lacks digital signature", cert.KeyUsage)
			}
			// A second sync of the issued request changes nothing.
			_ = f.InformerFor(csr, nil).GetIndexer().Update(got)
			if err := ctrl.Sync(ctx, csr.Name); err != nil {
				t.Fatal(err)
			}
			again, _ := csrs.Get(ctx, csr.Name, metav1.GetOptions{})
			if again.ResourceVersion != got.ResourceVersion {
				t.Error("an issued request was written again")
			}
		})
	}
}

func TestDuration(t *testing.T) {
	for _, tt := range []struct {
		exp  *int32
		want time.Duration
	}{
		{nil, 24 * time.Hour},
		{seconds(60), 10 * time.Minute},
		{seconds(600), 10 * time.Minute},
		{seconds(7200), 2 * time.Hour},
		{seconds(3 * 86400), 24 * time.Hour},
	} {
		if got := Duration(24*time.Hour, tt.exp); got != tt.want {
			t.Errorf("Duration(24h, %v) = %v, want %v", tt.exp, got, tt.want)
		}
	}
}

func TestParseCA(t *testing.T) {
	ca := newCA(t, time.Now().Add(time.Hour))
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
	sec1, _ := x509.MarshalECPrivateKey(ca.Key.(*ecdsa.PrivateKey))
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(ca.Key)
	for _, key := range [][]byte{
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}),
	} {
		if _, err := ParseCA(certPEM, key); err != nil {
			t.Errorf("ParseCA: %v", err)
		}
	}
	other := newCA(t, time.Now().Add(time.Hour))
	otherKey, _ := x509.MarshalPKCS8PrivateKey(other.Key)
	if _, err := ParseCA(certPEM, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: otherKey})); err == nil {
		t.Error("a key of another certificate was accepted")
	}
}

// TestReload: a reloaded CA signs from then on; a failed reload keeps the
// previous one.
func TestReload(t *testing.T) {
	env := testenv.StartT(t)
	c := newClient(t, env)
	ctx := context.Background()
	csrs := client.For[*certificatesv1.CertificateSigningRequest, *certificatesv1.CertificateSigningRequestList](c)
	now := time.Now()
	first, second := newCA(t, now.AddDate(1, 0, 0)), newCA(t, now.AddDate(1, 0, 0))
	next := map[string]*CA{certificatesv1.KubeAPIServerClientSignerName: second}
	var reloadErr error
	f := informers.NewSharedInformerFactory(c, 0)
	ctrl, err := New(Config{Client: c, Informers: f, Clock: clock.NewFake(now),
		CAs:    map[string]*CA{certificatesv1.KubeAPIServerClientSignerName: first},
		Reload: func() (map[string]*CA, error) { return next, reloadErr }})
	if err != nil {
		t.Fatal(err)
	}
	signWith := func(name string) *x509.Certificate {
		t.Helper()
		csr, err := csrs.Create(ctx, &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: certificatesv1.CertificateSigningRequestSpec{Request: request(t, pkix.Name{CommonName: name}, nil, nil),
				SignerName: certificatesv1.KubeAPIServerClientSignerName, Usages: clientUsages}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		csr = approve(t, c, csr, certificatesv1.CertificateApproved)
		_ = f.InformerFor(csr, nil).GetIndexer().Add(csr)
		if err := ctrl.Sync(ctx, name); err != nil {
			t.Fatal(err)
		}
		got, _ := csrs.Get(ctx, name, metav1.GetOptions{})
		b, _ := pem.Decode(got.Status.Certificate)
		if b == nil {
			t.Fatalf("%s not issued", name)
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return cert
	}
	if err := signWith("before").CheckSignatureFrom(first.Cert); err != nil {
		t.Errorf("before the reload: %v", err)
	}
	reloadErr = errors.New("unreadable")
	ctrl.reload()
	if err := signWith("failed").CheckSignatureFrom(first.Cert); err != nil {
		t.Errorf("after a failed reload: %v", err)
	}
	reloadErr = nil
	ctrl.reload()
	if err := signWith("after").CheckSignatureFrom(second.Cert); err != nil {
		t.Errorf("after the reload: %v", err)
	}
}
