package certificate_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/bootstraptoken"
	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/kubeconfig"
	"github.com/skiff-sh/skiff/pkg/kubelet/certificate"
	"github.com/skiff-sh/skiff/pkg/pki"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// cluster is an API server accepting bootstrap tokens, its CA, an admin
// client and a bootstrap kubeconfig with a join token.
type cluster struct {
	env       *testenv.Environment
	ca        *pki.KeyPair
	admin     *client.Client
	bootstrap string // bootstrap kubeconfig path
	tokenID   string
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	dir := t.TempDir()
	env := testenv.StartT(t, testenv.Config{Dir: dir, Tweak: func(c *apiserver.Config) { c.EnableBootstrapTokenAuth = true }})
	ca, err := pki.Load(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	cc, err := client.LoadKubeconfig(env.KubeconfigPath, "")
	if err != nil {
		t.Fatal(err)
	}
	cc.QPS = -1
	admin, err := client.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := bootstraptoken.Create(context.Background(), admin, bootstraptoken.Options{TTL: time.Hour,
		Usages: bootstraptoken.DefaultUsages, Groups: []string{bootstraptoken.DefaultNodeGroup}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	from, err := kubeconfig.Load(env.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := bootstraptoken.Kubeconfig(from, dir, tok)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bootstrap-kubelet.conf")
	if err := kubeconfig.Write(path, kc); err != nil {
		t.Fatal(err)
	}
	id, _, _ := bootstraptoken.Parse(tok)
	return &cluster{env: env, ca: ca, admin: admin, bootstrap: path, tokenID: id}
}

// sign issues a certificate for req with the cluster CA, valid from
// notBefore for life.
func (c *cluster) sign(t *testing.T, req *x509.CertificateRequest, notBefore time.Time, life time.Duration) []byte {
	t.Helper()
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: req.Subject, NotBefore: notBefore, NotAfter: notBefore.Add(life),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.ca.Cert, req.PublicKey, c.ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// controlPlane plays the CSR approver and signer: each new CSR is handed
// to seen, then approved and issued (life from now), or denied. It stops
// with ctx; the returned channel is closed then.
func (c *cluster) controlPlane(t *testing.T, ctx context.Context, deny bool, life time.Duration, seen chan<- *certificatesv1.CertificateSigningRequest) <-chan struct{} {
	t.Helper()
	csrs := client.For[*certificatesv1.CertificateSigningRequest, *certificatesv1.CertificateSigningRequestList](c.admin)
	w, err := csrs.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer w.Stop()
		for ev := range w.ResultChan() {
			csr, ok := ev.Object.(*certificatesv1.CertificateSigningRequest)
			if !ok || ev.Type != watch.Added || len(csr.Status.Conditions) > 0 || ctx.Err() != nil {
				continue
			}
			seen <- csr.DeepCopy()
			cond := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test"}
			if deny {
				cond.Type = certificatesv1.CertificateDenied
			}
			csr.Status.Conditions = append(csr.Status.Conditions, cond)
			csr.APIVersion, csr.Kind = "certificates.k8s.io/v1", "CertificateSigningRequest"
			if err := putJSON(ctx, c.admin, "/apis/certificates.k8s.io/v1/certificatesigningrequests/"+csr.Name+"/approval", csr); err != nil {
				if ctx.Err() == nil {
					t.Errorf("approving: %v", err)
				}
				return
			}
			if deny {
				continue
			}
			cur, err := csrs.Get(ctx, csr.Name, metav1.GetOptions{})
			if err != nil {
				if ctx.Err() == nil {
					t.Errorf("reading the CSR: %v", err)
				}
				return
			}
			block, _ := pem.Decode(cur.Spec.Request)
			req, err := x509.ParseCertificateRequest(block.Bytes)
			if err != nil {
				if ctx.Err() == nil {
					t.Errorf("parsing the request: %v", err)
				}
				return
			}
			cur.Status.Certificate = c.sign(t, req, time.Now().Add(-time.Minute), life)
			if _, err := csrs.UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
				if ctx.Err() == nil {
					t.Errorf("issuing: %v", err)
				}
				return
			}
		}
	}()
	return done
}

func putJSON(ctx context.Context, c *client.Client, path string, obj any) error {
	body, err := jsonMarshal(obj)
	if err != nil {
		return err
	}
	_, err = c.Do(ctx, &client.Request{Method: "PUT", Path: path, Body: body, JSONOnly: true})
	return err
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// A kubelet without a kubeconfig asks for its certificate with the
// bootstrap token, as upstream's: the CSR's shape, the files written, and
// the identity the written kubeconfig has.
func TestLoadClientCertBootstraps(t *testing.T) {
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	seen := make(chan *certificatesv1.CertificateSigningRequest, 4)
	c.controlPlane(t, ctx, false, 365*24*time.Hour, seen)

	dir := t.TempDir()
	cfg := certificate.BootstrapConfig{KubeconfigPath: filepath.Join(dir, "kubelet.conf"), BootstrapKubeconfigPath: c.bootstrap,
		CertDir: filepath.Join(dir, "pki"), NodeName: "n1", Logger: quietLogger()}
	did, err := certificate.LoadClientCert(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !did {
		t.Error("LoadClientCert says it did not bootstrap")
	}
	csr := <-seen
	if !strings.HasPrefix(csr.Name, "node-csr-") || csr.Spec.SignerName != "kubernetes.io/kube-apiserver-client-kubelet" ||
		!slices.Equal(csr.Spec.Usages, []certificatesv1.KeyUsage{"digital signature", "client auth"}) {
		t.Errorf("CSR %s signer %s usages %v", csr.Name, csr.Spec.SignerName, csr.Spec.Usages)
	}
	if want := "system:bootstrap:" + c.tokenID; csr.Spec.Username != want || !slices.Contains(csr.Spec.Groups, bootstraptoken.DefaultNodeGroup) {
		t.Errorf("CSR by %s %v, want %s in %s", csr.Spec.Username, csr.Spec.Groups, want, bootstraptoken.DefaultNodeGroup)
	}
	block, _ := pem.Decode(csr.Spec.Request)
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if pub, ok := req.PublicKey.(*ecdsa.PublicKey); !ok || pub.Curve != elliptic.P256() {
		t.Errorf("request key %T, want ECDSA P-256", req.PublicKey)
	}
	if req.Subject.CommonName != "system:node:n1" || !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		t.Errorf("request subject %v", req.Subject)
	}

	// The files: kubelet-client-current.pem links to a timestamped pair,
	// the pending key is gone.
	link, err := os.Readlink(filepath.Join(dir, "pki", "kubelet-client-current.pem"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(link, "kubelet-client-") || !strings.HasSuffix(link, ".pem") || link == "kubelet-client-current.pem" {
		t.Errorf("kubelet-client-current.pem -> %s", link)
	}
	if _, err := os.Stat(filepath.Join(dir, "pki", "kubelet-client.key.tmp")); !os.IsNotExist(err) {
		t.Errorf("the pending key is left: %v", err)
	}
	// The kubeconfig authenticates as the node.
	kc, err := client.LoadKubeconfig(cfg.KubeconfigPath, "")
	if err != nil {
		t.Fatal(err)
	}
	if kc.CertFile != filepath.Join(dir, "pki", "kubelet-client-current.pem") || kc.KeyFile != kc.CertFile {
		t.Errorf("kubeconfig cert %s key %s", kc.CertFile, kc.KeyFile)
	}
	if got := whoAmI(t, kc); got != "system:node:n1" {
		t.Errorf("the written kubeconfig is %s, want system:node:n1", got)
	}

	// Run again: the kubeconfig is valid, nothing is asked.
	if did, err := certificate.LoadClientCert(ctx, cfg); err != nil || did {
		t.Errorf("second run: bootstrapped %v, err %v; want neither", did, err)
	}
	// Without the kubeconfig but with a valid current pair, the pair is
	// reused: no new CSR.
	if err := os.Remove(cfg.KubeconfigPath); err != nil {
		t.Fatal(err)
	}
	if did, err := certificate.LoadClientCert(ctx, cfg); err != nil || !did {
		t.Errorf("with the kubeconfig gone: bootstrapped %v, err %v", did, err)
	}
	select {
	case csr := <-seen:
		t.Errorf("a new CSR %s although the current certificate is valid", csr.Name)
	default:
	}
	if got := whoAmI(t, kc); got != "system:node:n1" {
		t.Errorf("the rewritten kubeconfig is %s", got)
	}
}

// An expired client certificate is replaced through the bootstrap
// kubeconfig; a denied CSR is an error.
func TestLoadClientCertExpiredAndDenied(t *testing.T) {
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	// An expired certificate of the cluster CA in the kubeconfig.
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}}, key)
	req, _ := x509.ParseCertificateRequest(der)
	old := c.sign(t, req, time.Now().Add(-2*time.Hour), time.Hour)
	keyDER, _ := x509.MarshalECPrivateKey(key)
	kcPath := filepath.Join(dir, "kubelet.conf")
	if err := kubeconfig.Write(kcPath, kubeconfig.New("skiff", c.env.URL, c.env.CAData, old, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))); err != nil {
		t.Fatal(err)
	}
	cfg := certificate.BootstrapConfig{KubeconfigPath: kcPath, BootstrapKubeconfigPath: c.bootstrap,
		CertDir: filepath.Join(dir, "pki"), NodeName: "n1", Logger: quietLogger()}

	denyCtx, stopDeny := context.WithCancel(ctx)
	seen := make(chan *certificatesv1.CertificateSigningRequest, 4)
	denier := c.controlPlane(t, denyCtx, true, time.Hour, seen)
	if _, err := certificate.LoadClientCert(ctx, cfg); err == nil || !strings.Contains(err.Error(), "denied") {
		t.Fatalf("denied CSR: err %v, want denied", err)
	}
	stopDeny()
	<-denier
	denied := <-seen
	// The pending key is kept: the next try finds the same (denied) CSR.
	if _, err := os.Stat(filepath.Join(dir, "pki", "kubelet-client.key.tmp")); err != nil {
		t.Errorf("the pending key: %v", err)
	}
	if err := client.For[*certificatesv1.CertificateSigningRequest, *certificatesv1.CertificateSigningRequestList](c.admin).Delete(ctx, denied.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	c.controlPlane(t, ctx, false, time.Hour, seen)
	did, err := certificate.LoadClientCert(ctx, cfg)
	if err != nil || !did {
		t.Fatalf("expired certificate: bootstrapped %v, err %v", did, err)
	}
	if csr := <-seen; csr.Name != denied.Name {
		t.Errorf("the new CSR %s is not made with the pending key (first %s)", csr.Name, denied.Name)
	}
	kc, err := client.LoadKubeconfig(kcPath, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := whoAmI(t, kc); got != "system:node:n1" {
		t.Errorf("identity %s", got)
	}
}

func whoAmI(t *testing.T, cc *client.Config) string {
	t.Helper()
	u, err := tryWhoAmI(cc)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func tryWhoAmI(cc *client.Config) (string, error) {
	c, err := client.New(cc)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(context.Background(), &client.Request{Method: "POST", Path: "/apis/authentication.k8s.io/v1/selfsubjectreviews",
		Body: []byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`), JSONOnly: true})
	if err != nil {
		return "", err
	}
	var r struct {
		Status struct {
			UserInfo struct {
				Username string `json:"username"`
			} `json:"userInfo"`
		} `json:"status"`
	}
	if err := jsonUnmarshal(resp.Body, &r); err != nil {
		return "", err
	}
	return r.Status.UserInfo.Username, nil
}
