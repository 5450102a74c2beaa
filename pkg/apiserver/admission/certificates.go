package admission

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// --- CertificateSubjectRestriction -----------------------------------------

var grCSRs = schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}

// certificateSubjectRestriction refuses a CertificateSigningRequest for
// the kube-apiserver-client signer whose subject claims the system:masters
// group (a certificate that would bypass authorization), as upstream's
// CertificateSubjectRestriction plugin (CertificateApproval and
// CertificateSigning are in signers.go).
type certificateSubjectRestriction struct{}

func (*certificateSubjectRestriction) Name() string              { return "CertificateSubjectRestriction" }
func (*certificateSubjectRestriction) Handles(op Operation) bool { return op == Create }

func (*certificateSubjectRestriction) Validate(_ context.Context, a *Attributes) error {
	if a.Resource != grCSRs || a.Subresource != "" {
		return nil
	}
	csr, ok := a.Object.(*certificatesv1.CertificateSigningRequest)
	if !ok || csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return nil
	}
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return errorf("failed to parse CSR: PEM block type must be CERTIFICATE REQUEST")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return errorf("failed to parse CSR: %v", err)
	}
	if slices.Contains(req.Subject.Organization, "system:masters") {
		return forbidden(a, errorf("use of %s signer with system:masters group is not allowed", csr.Spec.SignerName))
	}
	return nil
}
