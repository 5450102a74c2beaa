package cluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/auth/bootstrappolicy"
	"github.com/skiff-sh/skiff/pkg/bootstraptoken"
	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// The roles kubeadm's bindings name are upstream's bootstrap policy.
func TestKubeadmBindingsNameBootstrapRoles(t *testing.T) {
	roles := map[string]bool{}
	for _, r := range bootstrappolicy.ClusterRoles() {
		roles[r.Name] = true
	}
	for _, b := range kubeadmClusterRoleBindings() {
		if !roles[b.RoleRef.Name] {
			t.Errorf("binding %s names ClusterRole %s, which the bootstrap policy lacks", b.Name, b.RoleRef.Name)
		}
	}
}

func nodeCSR(t *testing.T, name string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:node:" + name, Organization: []string{"system:nodes"}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "csr-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
}

// With kubeadm's bindings (and upstream's RBAC), a node join token may
// create a node client CSR and have it auto-approved (the approver's
// SubjectAccessReview on certificatesigningrequests/nodeclient), and a
// node may renew its own certificate (selfnodeclient); without them the
// token may do neither.
func TestKubeadmRBACLetsBootstrapTokensAskForNodeCertificates(t *testing.T) {
	env := testenv.StartT(t, testenv.Config{RBAC: true, Tweak: func(c *apiserver.Config) { c.EnableBootstrapTokenAuth = true }})
	ctx := context.Background()
	cc, err := client.LoadKubeconfig(env.KubeconfigPath, "")
	if err != nil {
		t.Fatal(err)
	}
	cc.QPS = -1
	admin, err := client.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := bootstraptoken.Create(ctx, admin, bootstraptoken.Options{TTL: time.Hour, Usages: bootstraptoken.DefaultUsages,
		Groups: []string{bootstraptoken.DefaultNodeGroup}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	id, _, _ := bootstraptoken.Parse(tok)
	bc := *cc
	bc.CertData, bc.KeyData, bc.CertFile, bc.KeyFile, bc.BearerToken = nil, nil, "", "", tok
	bootstrapper, err := client.New(&bc)
	if err != nil {
		t.Fatal(err)
	}
	csrs := client.For[*certificatesv1.CertificateSigningRequest, *certificatesv1.CertificateSigningRequestList](bootstrapper)
	sar := func(user string, groups []string, subresource string) bool {
		t.Helper()
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Subresource: subresource, Verb: "create"}}}
		review.APIVersion, review.Kind = "authorization.k8s.io/v1", "SubjectAccessReview"
		body, err := json.Marshal(review)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := admin.Do(ctx, &client.Request{Method: http.MethodPost, Path: "/apis/authorization.k8s.io/v1/subjectaccessreviews", Body: body, JSONOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(resp.Body, review); err != nil {
			t.Fatal(err)
		}
		return review.Status.Allowed
	}
	bootstrapUser, bootstrapGroups := "system:bootstrap:"+id, []string{"system:bootstrappers", bootstraptoken.DefaultNodeGroup, "system:authenticated"}

	if _, err := csrs.Create(ctx, nodeCSR(t, "n2"), metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("creating a CSR before kubeadm's bindings: %v, want forbidden", err)
	}
	if sar(bootstrapUser, bootstrapGroups, "nodeclient") {
		t.Errorf("nodeclient allowed before kubeadm's bindings")
	}
	if err := installKubeadmRBAC(ctx, admin); err != nil {
		t.Fatal(err)
	}
	// Idempotent, and it restores changed subjects.
	crbs := client.For[*rbacv1.ClusterRoleBinding, *rbacv1.ClusterRoleBindingList](admin)
	b, err := crbs.Get(ctx, "kubeadm:kubelet-bootstrap", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b.Subjects = nil
	if _, err := crbs.Update(ctx, b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := installKubeadmRBAC(ctx, admin); err != nil {
		t.Fatal(err)
	}
	// RBAC reads bindings from the watch cache: wait for the restored one.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err = csrs.Create(ctx, nodeCSR(t, "n2"), metav1.CreateOptions{})
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("creating a CSR with a join token: %v", err)
	}
	if !sar(bootstrapUser, bootstrapGroups, "nodeclient") {
		t.Errorf("nodeclient (auto-approval of join CSRs) not allowed for %s", bootstrapUser)
	}
	if !sar("system:node:n2", []string{"system:nodes", "system:authenticated"}, "selfnodeclient") {
		t.Errorf("selfnodeclient (auto-approval of renewals) not allowed for a node")
	}
	if sar(bootstrapUser, bootstrapGroups, "selfnodeclient") {
		t.Errorf("selfnodeclient allowed for a join token")
	}
}
