package admission

import (
	"context"
	"reflect"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/skiff-sh/skiff/pkg/auth/authorizer"
)

// --- CertificateApproval and CertificateSigning ----------------------------

// certificateApproval refuses an approval (an update of
// certificatesigningrequests/approval) by a user who may not "approve" the
// request's signer, as upstream's CertificateApproval plugin: holding
// update on the approval subresource is not enough to approve requests of
// every signer.
type certificateApproval struct{ d Deps }

func (*certificateApproval) Name() string              { return "CertificateApproval" }
func (*certificateApproval) Handles(op Operation) bool { return op == Update }

func (p *certificateApproval) Validate(ctx context.Context, a *Attributes) error {
	if a.Resource != grCSRs || a.Subresource != "approval" {
		return nil
	}
	// The old object's signer: an approval cannot change it anyway.
	csr, ok := a.OldObject.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return forbidden(a, errorf("expected type CertificateSigningRequest, got: %T", a.OldObject))
	}
	if !authorizedForSigner(ctx, p.d.Authorizer, a, "approve", csr.Spec.SignerName) {
		return forbidden(a, errorf("user not permitted to approve requests with signerName %q", csr.Spec.SignerName))
	}
	return nil
}

// certificateSigning refuses a status update setting a certificate or
// changing the conditions of a request by a user who may not "sign" for
// its signer, as upstream's CertificateSigning plugin.
type certificateSigning struct{ d Deps }

func (*certificateSigning) Name() string              { return "CertificateSigning" }
func (*certificateSigning) Handles(op Operation) bool { return op == Update }

func (p *certificateSigning) Validate(ctx context.Context, a *Attributes) error {
	if a.Resource != grCSRs || a.Subresource != "status" {
		return nil
	}
	old, ok := a.OldObject.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return forbidden(a, errorf("expected type CertificateSigningRequest, got: %T", a.OldObject))
	}
	csr, ok := a.Object.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return forbidden(a, errorf("expected type CertificateSigningRequest, got: %T", a.Object))
	}
	if reflect.DeepEqual(old.Status.Certificate, csr.Status.Certificate) && apiequality.Semantic.DeepEqual(old.Status.Conditions, csr.Status.Conditions) {
		return nil
	}
	if !authorizedForSigner(ctx, p.d.Authorizer, a, "sign", old.Spec.SignerName) {
		return forbidden(a, errorf("user not permitted to sign requests with signerName %q", old.Spec.SignerName))
	}
	return nil
}

// authorizedForSigner is upstream's IsAuthorizedForSignerName: verb on
// certificates.k8s.io signers named signerName, or named "<domain>/*" for
// the signer's domain. A nil authorizer (authorization off) allows.
func authorizedForSigner(ctx context.Context, z authorizer.Authorizer, a *Attributes, verb, signerName string) bool {
	if z == nil {
		return true
	}
	domain, _, _ := strings.Cut(signerName, "/")
	for _, name := range []string{signerName, domain + "/*"} {
		d, _, err := z.Authorize(ctx, authorizer.Attributes{User: a.UserInfo, Verb: verb, APIGroup: "certificates.k8s.io", APIVersion: "*",
			Resource: "signers", Name: name, ResourceRequest: true})
		if err == nil && d == authorizer.DecisionAllow {
			return true
		}
	}
	return false
}
