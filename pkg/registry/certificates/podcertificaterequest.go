package certificates

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/registry"
)

// Limits of a PodCertificateRequest, as upstream's.
const (
	pcrMinMaxExpirationSeconds           = 60 * 60
	pcrMaxMaxExpirationSeconds           = 91 * 24 * 60 * 60
	pcrKubernetesMaxMaxExpirationSeconds = 24 * 60 * 60
	pcrDefaultMaxExpirationSeconds       = 86400
	pcrMaxStubRequestSize                = 10 * 1024
	pcrMaxCertificateChainSize           = 100 * 1024
	pcrMaxUIDLength                      = 128
)

// PodCertificateRequestDefinition is certificates.k8s.io/v1
// podcertificaterequests (+status), stable in 1.37: a kubelet's request for
// a pod's certificate, which a signer answers through the status.
func PodCertificateRequestDefinition(clk clock.Clock) *registry.Definition {
	d := registry.NewDefinition("certificates.k8s.io", "v1", "podcertificaterequests", "PodCertificateRequest", true,
		func() runtime.Object { return &certificatesv1.PodCertificateRequest{} },
		func() runtime.Object { return &certificatesv1.PodCertificateRequestList{} },
		&registry.Strategy{
			Default:        registry.Default(DefaultPodCertificateRequest),
			Validate:       registry.Validate(ValidatePodCertificateRequest),
			ValidateUpdate: registry.ValidateUpdate(ValidatePodCertificateRequestUpdate),
			HasStatus:      true,
			Fields: registry.Fields(func(r *certificatesv1.PodCertificateRequest) map[string]string {
				return map[string]string{"spec.signerName": r.Spec.SignerName, "spec.podName": r.Spec.PodName, "spec.nodeName": string(r.Spec.NodeName)}
			}),
		})
	d.Strategy.AllowUnconditionalUpdate = false
	d.ValidateStatus = registry.ValidateUpdate(func(r, old *certificatesv1.PodCertificateRequest) field.ErrorList {
		return ValidatePodCertificateRequestStatusUpdate(r, old, clk.Now())
	})
	return d
}

// DefaultPodCertificateRequest: certificates live at most 24 hours unless
// the request says otherwise.
func DefaultPodCertificateRequest(r *certificatesv1.PodCertificateRequest) {
	if r.Spec.MaxExpirationSeconds == nil {
		v := int32(pcrDefaultMaxExpirationSeconds)
		r.Spec.MaxExpirationSeconds = &v
	}
}

func isKubernetesSigner(name string) bool {
	host, _, _ := strings.Cut(name, "/")
	return host == "kubernetes.io" || strings.HasSuffix(host, ".kubernetes.io")
}

// ValidatePodCertificateRequest validates a new request: the pod, service
// account and node it names, the lifetime bounds (24 hours for
// kubernetes.io signers, 91 days for others), and the stub PKCS#10
// request, whose signature must verify and whose key must be one of the
// supported types (RSA 3072/4096, ECDSA P256/P384/P521, Ed25519).
func ValidatePodCertificateRequest(r *certificatesv1.PodCertificateRequest) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&r.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	allErrs = append(allErrs, ValidateSignerName(spec.Child("signerName"), r.Spec.SignerName)...)
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(r.Spec.PodName, false) {
		allErrs = append(allErrs, field.Invalid(spec.Child("podName"), r.Spec.PodName, msg))
	}
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(r.Spec.ServiceAccountName, false) {
		allErrs = append(allErrs, field.Invalid(spec.Child("serviceAccountName"), r.Spec.ServiceAccountName, msg))
	}
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(string(r.Spec.NodeName), false) {
		allErrs = append(allErrs, field.Invalid(spec.Child("nodeName"), r.Spec.NodeName, msg))
	}
	for _, uid := range []struct {
		name, value string
	}{{"podUID", string(r.Spec.PodUID)}, {"serviceAccountUID", string(r.Spec.ServiceAccountUID)}, {"nodeUID", string(r.Spec.NodeUID)}} {
		switch {
		case uid.value == "":
			allErrs = append(allErrs, field.Invalid(spec.Child(uid.name), uid.value, "must not be empty"))
		case len(uid.value) > pcrMaxUIDLength:
			allErrs = append(allErrs, field.TooLong(spec.Child(uid.name), uid.value, pcrMaxUIDLength))
		}
	}
	allErrs = append(allErrs, apimachineryvalidation.ValidateAnnotations(r.Spec.UnverifiedUserAnnotations, spec.Child("unverifiedUserAnnotations"))...)
	for k := range r.Spec.UnverifiedUserAnnotations {
		if !strings.Contains(k, "/") {
			allErrs = append(allErrs, field.Invalid(spec.Child("unverifiedUserAnnotations"), k, "keys must be domain-prefixed"))
		}
	}
	ep := spec.Child("maxExpirationSeconds")
	if r.Spec.MaxExpirationSeconds == nil {
		return append(allErrs, field.Required(ep, "must be set"))
	}
	maxSeconds := int32(pcrMaxMaxExpirationSeconds)
	if isKubernetesSigner(r.Spec.SignerName) {
		maxSeconds = pcrKubernetesMaxMaxExpirationSeconds
	}
	if v := *r.Spec.MaxExpirationSeconds; v < pcrMinMaxExpirationSeconds || v > maxSeconds {
		allErrs = append(allErrs, field.Invalid(ep, v, fmt.Sprintf("must be in the range [%d, %d]", pcrMinMaxExpirationSeconds, maxSeconds)))
	}
	return append(allErrs, validateStubRequest(r.Spec.StubPKCS10Request, spec.Child("stubPKCS10Request"))...)
}

var stubKeyTypes = "supported types are Ed25519, ECDSA, and RSA"

func validateStubRequest(der []byte, p *field.Path) field.ErrorList {
	switch {
	case len(der) == 0:
		return field.ErrorList{field.Required(p, "")}
	case len(der) > pcrMaxStubRequestSize:
		return field.ErrorList{field.TooLong(p, "", pcrMaxStubRequestSize)}
	}
	csr, err := x509.ParseCertificateRequest(der)
	if err != nil {
		return field.ErrorList{field.Invalid(p, field.OmitValueType{}, "must be a valid DER-serialized PKCS#10 certificate signing request")}
	}
	if err := csr.CheckSignature(); err != nil {
		return field.ErrorList{field.Invalid(p, field.OmitValueType{}, "could not verify the certificate signing request's signature")}
	}
	switch pub := csr.PublicKey.(type) {
	case ed25519.PublicKey:
	case *ecdsa.PublicKey:
		if pub.Curve != elliptic.P256() && pub.Curve != elliptic.P384() && pub.Curve != elliptic.P521() {
			return field.ErrorList{field.Invalid(p, "curve "+pub.Curve.Params().Name, "elliptic public keys must use curve P256, P384 or P521")}
		}
	case *rsa.PublicKey:
		if bits := pub.Size() * 8; bits != 3072 && bits != 4096 {
			return field.ErrorList{field.Invalid(p, fmt.Sprintf("%d-bit modulus", bits), "RSA keys must have modulus size 3072 or 4096")}
		}
	default:
		return field.ErrorList{field.Invalid(p, field.OmitValueType{}, "unknown public key type; "+stubKeyTypes)}
	}
	return nil
}

// ValidatePodCertificateRequestUpdate: the spec never changes; the main
// resource changes only metadata.
func ValidatePodCertificateRequestUpdate(r, old *certificatesv1.PodCertificateRequest) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, apimachineryvalidation.ValidateImmutableField(r.Spec, old.Spec, field.NewPath("spec"))...)
}

const (
	pcrIssued = "Issued"
	pcrDenied = "Denied"
	pcrFailed = "Failed"
)

func pcrCondition(r *certificatesv1.PodCertificateRequest, t string) bool {
	for _, c := range r.Status.Conditions {
		if c.Type == t && c.Status == metav1.ConditionTrue {
			return true
		}
	}
	return false
}

// ValidatePodCertificateRequestStatusUpdate validates a signer's answer:
// at most one of Issued, Denied or Failed (status True, no other types);
// the status changes only to reach one of them, and a terminal status
// never changes again; Denied and Failed carry nothing
// but conditions; Issued carries the PEM chain whose leaf certifies the
// stub request's key, with notBefore (within 5 minutes of now), notAfter
// (a lifetime of at least an hour and at most spec.maxExpirationSeconds)
// and beginRefreshAt (10 minutes inside both) matching the leaf.
func ValidatePodCertificateRequestStatusUpdate(r, old *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	if len(allErrs) > 0 {
		return allErrs
	}
	cp := field.NewPath("status", "conditions")
	known := 0
	for i, c := range r.Status.Conditions {
		switch c.Type {
		case pcrIssued, pcrDenied, pcrFailed:
			if known++; known > 1 {
				allErrs = append(allErrs, field.Invalid(cp.Index(i).Child("type"), c.Type, `There may be at most one condition with type "Issued", "Denied", or "Failed"`))
			}
			if c.Status != metav1.ConditionTrue {
				allErrs = append(allErrs, field.NotSupported(cp.Index(i).Child("status"), c.Status, []metav1.ConditionStatus{metav1.ConditionTrue}))
			}
		default:
			allErrs = append(allErrs, field.NotSupported(cp.Index(i).Child("type"), c.Type, []string{pcrIssued, pcrDenied, pcrFailed}))
		}
	}
	allErrs = append(allErrs, metav1validation.ValidateConditions(r.Status.Conditions, cp)...)
	if len(allErrs) > 0 {
		return allErrs
	}
	sp := field.NewPath("status")
	if pcrCondition(old, pcrIssued) || pcrCondition(old, pcrDenied) || pcrCondition(old, pcrFailed) {
		if !equality.Semantic.DeepEqual(r.Status, old.Status) {
			allErrs = append(allErrs, field.Invalid(sp, field.OmitValueType{}, "immutable after PodCertificateRequest is issued, denied, or failed"))
		}
		return allErrs
	}
	if pcrCondition(r, pcrDenied) || pcrCondition(r, pcrFailed) {
		if !equality.Semantic.DeepEqual(r.Status, certificatesv1.PodCertificateRequestStatus{Conditions: r.Status.Conditions}) {
			allErrs = append(allErrs, field.Invalid(sp, field.OmitValueType{}, "non-condition status fields must be empty when denying or failing the PodCertificateRequest"))
		}
		return allErrs
	}
	if !pcrCondition(r, pcrIssued) {
		if !equality.Semantic.DeepEqual(r.Status, old.Status) {
			allErrs = append(allErrs, field.Invalid(sp, field.OmitValueType{}, `status is immutable unless transitioning to "Issued", "Denied", or "Failed"`))
		}
		return allErrs
	}
	return validateIssued(r, old, now)
}

func validateIssued(r, old *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	chainPath := field.NewPath("status", "certificateChain")
	st := r.Status
	chain := st.CertificateChain
	if len(chain) > pcrMaxCertificateChainSize {
		return field.ErrorList{field.TooLong(chainPath, "", pcrMaxCertificateChainSize)}
	}
	leafBlock, rest := pem.Decode([]byte(chain))
	switch {
	case leafBlock == nil:
		return field.ErrorList{field.Invalid(chainPath, chain, "issued certificate chain must contain at least one certificate")}
	case leafBlock.Type != "CERTIFICATE":
		return field.ErrorList{field.Invalid(chainPath, chain, "issued certificate chain must consist entirely of CERTIFICATE PEM blocks")}
	}
	leaf, err := x509.ParseCertificate(leafBlock.Bytes)
	if err != nil {
		return field.ErrorList{field.Invalid(chainPath, chain, "leaf certificate does not parse as valid X.509")}
	}
	if csr, err := x509.ParseCertificateRequest(old.Spec.StubPKCS10Request); err == nil {
		if k, ok := csr.PublicKey.(interface{ Equal(crypto.PublicKey) bool }); ok && !k.Equal(leaf.PublicKey) {
			return field.ErrorList{field.Invalid(chainPath, chain, "leaf certificate was not issued to the requested public key")}
		}
	}
	var allErrs field.ErrorList
	nb, na, br := field.NewPath("status", "notBefore"), field.NewPath("status", "notAfter"), field.NewPath("status", "beginRefreshAt")
	if st.NotBefore == nil {
		allErrs = append(allErrs, field.Required(nb, "must be present and consistent with the issued certificate"))
	}
	if st.NotAfter == nil {
		allErrs = append(allErrs, field.Required(na, "must be present and consistent with the issued certificate"))
	}
	if st.BeginRefreshAt == nil {
		allErrs = append(allErrs, field.Required(br, "must be present and in the range [notbefore+10min, notafter-10min]"))
	}
	if len(allErrs) > 0 {
		return allErrs
	}
	switch d := st.NotBefore.Time.Sub(now); {
	case !st.NotBefore.Time.Equal(leaf.NotBefore):
		return field.ErrorList{field.Invalid(nb, st.NotBefore.Time, "must be set to the NotBefore time encoded in the leaf certificate")}
	case d > 5*time.Minute || d < -5*time.Minute:
		return field.ErrorList{field.Invalid(nb, st.NotBefore.Time, "must be set to within 5 minutes of kube-apiserver's current time")}
	case !st.NotAfter.Time.Equal(leaf.NotAfter):
		return field.ErrorList{field.Invalid(na, st.NotAfter.Time, "must be set to the NotAfter time encoded in the leaf certificate")}
	}
	lifetime := leaf.NotAfter.Sub(leaf.NotBefore)
	switch {
	case lifetime < time.Hour:
		return field.ErrorList{field.Invalid(chainPath, lifetime, "leaf certificate lifetime must be >= 1 hour")}
	case r.Spec.MaxExpirationSeconds != nil && lifetime > time.Duration(*r.Spec.MaxExpirationSeconds)*time.Second:
		return field.ErrorList{field.Invalid(chainPath, lifetime, fmt.Sprintf("leaf certificate lifetime must be <= spec.maxExpirationSeconds (%v)", *r.Spec.MaxExpirationSeconds))}
	case st.BeginRefreshAt.Time.Before(st.NotBefore.Time.Add(10 * time.Minute)):
		return field.ErrorList{field.Invalid(br, st.BeginRefreshAt.Time, "must be at least 10 minutes after status.notBefore")}
	case st.BeginRefreshAt.Time.After(st.NotAfter.Time.Add(-10 * time.Minute)):
		return field.ErrorList{field.Invalid(br, st.BeginRefreshAt.Time, "must be at least 10 minutes before status.notAfter")}
	}
	for {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return nil
		}
		if b.Type != "CERTIFICATE" {
			return field.ErrorList{field.Invalid(chainPath, chain, "issued certificate chain must consist entirely of CERTFICATE PEM blocks")}
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return field.ErrorList{field.Invalid(chainPath, chain, "intermediate certificate does not parse as valid X.509")}
		}
	}
}
