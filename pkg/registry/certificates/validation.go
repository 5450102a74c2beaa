package certificates

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// LegacyUnknownSignerName is the signer of CSRs created through v1beta1
// without one; v1 refuses it.
const LegacyUnknownSignerName = "kubernetes.io/legacy-unknown"

// validUsages are the key usages upstream accepts, sorted.
var validUsages = func() []string {
	u := []string{}
	for _, k := range []certificatesv1.KeyUsage{
		certificatesv1.UsageSigning, certificatesv1.UsageDigitalSignature, certificatesv1.UsageContentCommitment,
		certificatesv1.UsageKeyEncipherment, certificatesv1.UsageKeyAgreement, certificatesv1.UsageDataEncipherment,
		certificatesv1.UsageCertSign, certificatesv1.UsageCRLSign, certificatesv1.UsageEncipherOnly,
		certificatesv1.UsageDecipherOnly, certificatesv1.UsageAny, certificatesv1.UsageServerAuth,
		certificatesv1.UsageClientAuth, certificatesv1.UsageCodeSigning, certificatesv1.UsageEmailProtection,
		certificatesv1.UsageSMIME, certificatesv1.UsageIPsecEndSystem, certificatesv1.UsageIPsecTunnel,
		certificatesv1.UsageIPsecUser, certificatesv1.UsageTimestamping, certificatesv1.UsageOCSPSigning,
		certificatesv1.UsageMicrosoftSGC, certificatesv1.UsageNetscapeSGC,
	} {
		u = append(u, string(k))
	}
	slices.Sort(u)
	return u
}()

// ValidateCSR validates a new CertificateSigningRequest: the request is a
// PEM CSR with a valid signature, usages are known and unique, the signer
// is a qualified name, expirationSeconds at least 600, and conditions and
// an issued certificate are well formed.
func ValidateCSR(csr *certificatesv1.CertificateSigningRequest) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&csr.ObjectMeta, false, path.ValidatePathSegmentName, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	if err := checkRequest(csr.Spec.Request); err != nil {
		allErrs = append(allErrs, field.Invalid(spec.Child("request"), csr.Spec.Request, err.Error()))
	}
	if len(csr.Spec.Usages) == 0 {
		allErrs = append(allErrs, field.Required(spec.Child("usages"), ""))
	}
	seen := map[certificatesv1.KeyUsage]bool{}
	for i, u := range csr.Spec.Usages {
		if !slices.Contains(validUsages, string(u)) {
			allErrs = append(allErrs, field.NotSupported(spec.Child("usages").Index(i), u, validUsages))
		}
		if seen[u] {
			allErrs = append(allErrs, field.Duplicate(spec.Child("usages").Index(i), u))
		}
		seen[u] = true
	}
	if csr.Spec.SignerName == LegacyUnknownSignerName {
		allErrs = append(allErrs, field.Invalid(spec.Child("signerName"), csr.Spec.SignerName, "the legacy signerName is not allowed via this API version"))
	} else {
		allErrs = append(allErrs, ValidateSignerName(spec.Child("signerName"), csr.Spec.SignerName)...)
	}
	if e := csr.Spec.ExpirationSeconds; e != nil && *e < 600 {
		allErrs = append(allErrs, field.Invalid(spec.Child("expirationSeconds"), *e, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	allErrs = append(allErrs, validateConditions(field.NewPath("status", "conditions"), csr)...)
	if err := checkCertificate(csr.Status.Certificate); err != nil {
		allErrs = append(allErrs, field.Invalid(field.NewPath("status", "certificate"), "<certificate data>", err.Error()))
	}
	return allErrs
}

// ValidateCSRUpdate validates any update (main, status, approval): the
// result must be valid, no Approved, Denied or Failed condition may go
// away, and an issued certificate may not change.
func ValidateCSRUpdate(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
	allErrs := ValidateCSR(csr)
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed} {
		if countConditions(csr, t) < countConditions(old, t) {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("status", "conditions"), fmt.Sprintf("updates may not remove a condition of type %q", t)))
		}
	}
	if len(old.Status.Certificate) > 0 && !equality.Semantic.DeepEqual(old.Status.Certificate, csr.Status.Certificate) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("status", "certificate"), "<certificate data>", "updates may not modify existing certificate content"))
	}
	return append(allErrs, apimachineryvalidation.ValidateObjectMetaUpdate(&csr.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
}

func countConditions(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) int {
	n := 0
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			n++
		}
	}
	return n
}

// checkRequest: one PEM "CERTIFICATE REQUEST" block holding a CSR whose
// signature verifies.
func checkRequest(data []byte) error {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return err
	}
	return req.CheckSignature()
}

// checkCertificate: empty, or PEM CERTIFICATE blocks without headers.
func checkCertificate(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	blocks := 0
	for {
		block, rest := pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("only CERTIFICATE PEM blocks are allowed, found %q", block.Type)
		}
		if len(block.Headers) != 0 {
			return errors.New("no PEM block headers are permitted")
		}
		blocks++
		certs, err := x509.ParseCertificates(block.Bytes)
		if err != nil {
			return err
		}
		if len(certs) == 0 {
			return errors.New("found CERTIFICATE PEM block containing 0 certificates")
		}
		data = rest
	}
	if blocks == 0 {
		return errors.New("must contain at least one CERTIFICATE PEM block")
	}
	return nil
}

var trueFalseUnknown = []string{string(corev1.ConditionFalse), string(corev1.ConditionTrue), string(corev1.ConditionUnknown)}

func validateConditions(fldPath *field.Path, csr *certificatesv1.CertificateSigningRequest) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[certificatesv1.RequestConditionType]bool{}
	approved, denied := false, false
	for i, c := range csr.Status.Conditions {
		p := fldPath.Index(i)
		if c.Type == "" {
			allErrs = append(allErrs, field.Required(p.Child("type"), ""))
		}
		if !slices.Contains(trueFalseUnknown, string(c.Status)) {
			allErrs = append(allErrs, field.NotSupported(p.Child("status"), c.Status, trueFalseUnknown))
		}
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
			if c.Status != corev1.ConditionTrue {
				allErrs = append(allErrs, field.Invalid(p.Child("status"), c.Status, "approved condition may only have status=True"))
			}
		case certificatesv1.CertificateDenied:
			denied = true
			if c.Status != corev1.ConditionTrue {
				allErrs = append(allErrs, field.Invalid(p.Child("status"), c.Status, "denied condition may only have status=True"))
			}
		}
		if seen[c.Type] {
			allErrs = append(allErrs, field.Duplicate(p.Child("type"), c.Type))
		}
		seen[c.Type] = true
	}
	if approved && denied {
		allErrs = append(allErrs, field.Invalid(fldPath, csr.Status.Conditions, "Approved and Denied conditions are mutually exclusive"))
	}
	return allErrs
}

// maxSignerNameLength: a DNS subdomain, a slash, and a path that still
// fits a resourceName in an RBAC rule.
const maxSignerNameLength = validation.DNS1123SubdomainMaxLength + 1 + 317

// ValidateSignerName: "example.com/signer-name", a domain of at least two
// DNS labels and a path of DNS subdomains.
func ValidateSignerName(fldPath *field.Path, name string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	segments := strings.Split(name, "/")
	if len(segments) != 2 {
		return field.ErrorList{field.Invalid(fldPath, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")}
	}
	var el field.ErrorList
	if len(segments[0]) > validation.DNS1123SubdomainMaxLength {
		el = append(el, field.TooLong(fldPath, segments[0], validation.DNS1123SubdomainMaxLength))
	}
	labels := strings.Split(segments[0], ".")
	for _, l := range labels {
		if errs := validation.IsDNS1123Label(l); len(errs) > 0 {
			for _, e := range errs {
				el = append(el, field.Invalid(fldPath, segments[0], fmt.Sprintf("validating label %q: %s", l, e)))
			}
			break
		}
	}
	if len(labels) < 2 {
		el = append(el, field.Invalid(fldPath, segments[0], "should be a domain with at least two segments separated by dots"))
	}
	for _, c := range strings.Split(segments[1], ".") {
		if errs := validation.IsDNS1123Subdomain(c); len(errs) > 0 {
			for _, e := range errs {
				el = append(el, field.Invalid(fldPath, segments[1], fmt.Sprintf("validating component %q: %s", c, e)))
			}
			break
		}
	}
	if len(name) > maxSignerNameLength {
		el = append(el, field.TooLong(fldPath, name, maxSignerNameLength))
	}
	return el
}
