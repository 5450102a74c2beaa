package csrutil

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
)

// ParseCSR decodes a PEM-encoded PKCS#10 request ("CERTIFICATE REQUEST").
func ParseCSR(pemBytes []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}

// ApprovalCondition reports whether csr has an Approved or a Denied
// condition (upstream's GetCertApprovalCondition).
func ApprovalCondition(status *certificatesv1.CertificateSigningRequestStatus) (approved, denied bool) {
	for _, c := range status.Conditions {
		if c.Type == certificatesv1.CertificateApproved {
			approved = true
		}
		if c.Type == certificatesv1.CertificateDenied {
			denied = true
		}
	}
	return approved, denied
}

// IsApproved: approved and not denied.
func IsApproved(csr *certificatesv1.CertificateSigningRequest) bool {
	approved, denied := ApprovalCondition(&csr.Status)
	return approved && !denied
}

// HasTrueCondition reports whether csr has a condition of type t whose
// status is True (or empty, which means True in v1).
func HasTrueCondition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t && (c.Status == "" || c.Status == corev1.ConditionTrue) {
			return true
		}
	}
	return false
}

// Upstream's validation errors.
var (
	errOrganizationNotSystemNodes = errors.New("subject organization is not system:nodes")
	errCommonNameNotSystemNode    = errors.New("subject common name does not begin with system:node:")
	errDNSOrIPSANRequired         = errors.New("DNS or IP subjectAltName is required")
	errDNSSANNotAllowed           = errors.New("DNS subjectAltNames are not allowed")
	errEmailSANNotAllowed         = errors.New("Email subjectAltNames are not allowed") //nolint:staticcheck // upstream's message
	errIPSANNotAllowed            = errors.New("IP subjectAltNames are not allowed")
	errURISANNotAllowed           = errors.New("URI subjectAltNames are not allowed")
)

// usageSet is a request's usages, sorted and without duplicates.
func usageSet(usages []certificatesv1.KeyUsage) []string {
	var out []string
	for _, u := range usages {
		out = append(out, string(u))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func sameUsages(usages []certificatesv1.KeyUsage, want ...certificatesv1.KeyUsage) bool {
	return slices.Equal(usageSet(usages), usageSet(want))
}

// ValidateKubeletClientCSR checks a kubernetes.io/kube-apiserver-client-kubelet
// request: O=system:nodes exactly, CN=system:node:<name>, no subject
// alternative names, usages {digital signature, client auth} with or
// without key encipherment.
func ValidateKubeletClientCSR(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	if !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		return errOrganizationNotSystemNodes
	}
	if len(req.DNSNames) > 0 {
		return errDNSSANNotAllowed
	}
	if len(req.EmailAddresses) > 0 {
		return errEmailSANNotAllowed
	}
	if len(req.IPAddresses) > 0 {
		return errIPSANNotAllowed
	}
	if len(req.URIs) > 0 {
		return errURISANNotAllowed
	}
	if !strings.HasPrefix(req.Subject.CommonName, "system:node:") {
		return errCommonNameNotSystemNode
	}
	if !sameUsages(usages, certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth) &&
		!sameUsages(usages, certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth) {
		return fmt.Errorf("usages did not match %v", []string{"client auth", "digital signature", "key encipherment"})
	}
	return nil
}

// ValidateKubeletServingCSR checks a kubernetes.io/kubelet-serving request:
// usages {digital signature, server auth} with or without key
// encipherment, O=system:nodes exactly, at least one DNS or IP SAN and no
// other kind, CN=system:node:<name>.
func ValidateKubeletServingCSR(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	if !sameUsages(usages, certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageServerAuth) &&
		!sameUsages(usages, certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth) {
		return fmt.Errorf("usages did not match %v", []string{"digital signature", "key encipherment", "server auth"})
	}
	if !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		return errOrganizationNotSystemNodes
	}
	if len(req.DNSNames) == 0 && len(req.IPAddresses) == 0 {
		return errDNSOrIPSANRequired
	}
	if len(req.EmailAddresses) > 0 {
		return errEmailSANNotAllowed
	}
	if len(req.URIs) > 0 {
		return errURISANNotAllowed
	}
	if !strings.HasPrefix(req.Subject.CommonName, "system:node:") {
		return errCommonNameNotSystemNode
	}
	return nil
}

// ValidateAPIServerClientUsages checks a kubernetes.io/kube-apiserver-client
// request's usages: client auth required, digital signature and key
// encipherment allowed, nothing else.
func ValidateAPIServerClientUsages(usages []certificatesv1.KeyUsage) error {
	hasClientAuth := false
	for _, u := range usages {
		switch u {
		case certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment:
		case certificatesv1.UsageClientAuth:
			hasClientAuth = true
		default:
			return fmt.Errorf("invalid usage for client certificate: %s", u)
		}
	}
	if !hasClientAuth {
		return fmt.Errorf("missing required usage for client certificate: %s", certificatesv1.UsageClientAuth)
	}
	return nil
}
