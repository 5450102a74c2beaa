package approver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"slices"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/pki"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

func request(t *testing.T, subject pkix.Name, dns []string) []byte {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject, DNSNames: dns}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// TestHandle creates requests as an admin and as the node n1 itself and
// checks which the approver approves, and with which message.
func TestHandle(t *testing.T) {
	dir := t.TempDir()
	env := testenv.StartT(t, testenv.Config{Dir: dir})
	admin, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ca, err := pki.Load(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	nodeCert, err := pki.EnsureClient(dir, "node-n1", ca, "system:node:n1", []string{"system:nodes"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	node, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: nodeCert.CertPEM, KeyData: nodeCert.KeyPEM, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	nodeSubject := pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}
	kubeletUsages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth}
	tests := []struct {
		name    string
		as      *client.Client
		signer  string
		subject pkix.Name
		dns     []string
		usages  []certificatesv1.KeyUsage
		denied  bool
		want    string // the Approved condition's message ("" : not approved)
	}{
		{name: "a node's own client certificate", as: node, signer: certificatesv1.KubeAPIServerClientKubeletSignerName,
			subject: nodeSubject, usages: kubeletUsages, want: selfNodeClientMessage},
		{name: "a node client certificate requested by another user", as: admin, signer: certificatesv1.KubeAPIServerClientKubeletSignerName,
			subject: nodeSubject, usages: kubeletUsages, want: nodeClientMessage},
		{name: "a node client certificate without key encipherment", as: node, signer: certificatesv1.KubeAPIServerClientKubeletSignerName,
			subject: nodeSubject, usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}, want: selfNodeClientMessage},
		{name: "with a SAN it is not a node client request", as: node, signer: certificatesv1.KubeAPIServerClientKubeletSignerName,
			subject: nodeSubject, dns: []string{"n1"}, usages: kubeletUsages},
		{name: "another organization is not a node", as: node, signer: certificatesv1.KubeAPIServerClientKubeletSignerName,
			subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"other"}}, usages: kubeletUsages},
		{name: "server usages are not a client request", as: node, signer: certificatesv1.KubeAPIServerClientKubeletSignerName,
			subject: nodeSubject, usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}},
		{name: "kubelet serving is never auto-approved", as: node, signer: certificatesv1.KubeletServingSignerName,
			subject: nodeSubject, dns: []string{"n1"}, usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}},
		{name: "kube-apiserver-client is never auto-approved", as: admin, signer: certificatesv1.KubeAPIServerClientSignerName,
			subject: pkix.Name{CommonName: "alice"}, usages: kubeletUsages},
		{name: "a denied request stays denied", as: node, signer: certificatesv1.KubeAPIServerClientKubeletSignerName,
			subject: nodeSubject, usages: kubeletUsages, denied: true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			csrs := client.For[*certificatesv1.CertificateSigningRequest, *certificatesv1.CertificateSigningRequestList](tt.as)
			csr, err := csrs.Create(ctx, &certificatesv1.CertificateSigningRequest{
				ObjectMeta: metav1.ObjectMeta{Name: "csr-" + string(rune('a'+i))},
				Spec:       certificatesv1.CertificateSigningRequestSpec{Request: request(t, tt.subject, tt.dns), SignerName: tt.signer, Usages: tt.usages},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			f := informers.NewSharedInformerFactory(admin, 0)
			ctrl, err := New(Config{Client: admin, Informers: f})
			if err != nil {
				t.Fatal(err)
			}
			if tt.denied {
				csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue, Reason: "No"}}
				csr.APIVersion, csr.Kind = "certificates.k8s.io/v1", "CertificateSigningRequest"
				if err := do(ctx, admin, "PUT", "/apis/certificates.k8s.io/v1/certificatesigningrequests/"+csr.Name+"/approval", csr, csr); err != nil {
					t.Fatal(err)
				}
			}
			_ = f.InformerFor(csr, nil).GetIndexer().Add(csr)
			if err := ctrl.Sync(ctx, csr.Name); err != nil {
				t.Fatalf("sync: %v", err)
			}
			got, err := csrs.Get(ctx, csr.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var approved []string
			for _, c := range got.Status.Conditions {
				if c.Type == certificatesv1.CertificateApproved {
					approved = append(approved, c.Reason+": "+c.Message)
				}
			}
			var want []string
			if tt.want != "" {
				want = []string{"AutoApproved: " + tt.want}
			}
			if !slices.Equal(approved, want) {
				t.Errorf("Approved conditions %q, want %q", approved, want)
			}
		})
	}
}
