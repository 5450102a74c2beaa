package certificates

import (
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/registry"
)

// Definitions are the certificates.k8s.io/v1 resources.
func Definitions() []*registry.Definition {
	csr := registry.NewDefinition("certificates.k8s.io", "v1", "certificatesigningrequests", "CertificateSigningRequest", false,
		func() runtime.Object { return &certificatesv1.CertificateSigningRequest{} },
		func() runtime.Object { return &certificatesv1.CertificateSigningRequestList{} },
		&registry.Strategy{
			Default:          registry.Default(DefaultCSR),
			SetRequester:     setRequester,
			PrepareForUpdate: registry.PrepareUpdate(PrepareForUpdate),
			Validate:         registry.Validate(ValidateCSR),
			ValidateUpdate:   registry.ValidateUpdate(ValidateCSRUpdate),
			HasStatus:        true,
			Fields: registry.Fields(func(c *certificatesv1.CertificateSigningRequest) map[string]string {
				return map[string]string{"spec.signerName": c.Spec.SignerName}
			}),
		})
	csr.ShortNames = []string{"csr"}
	csr.Subresources = []registry.UpdateSubresource{
		{Name: "status", Keep: registry.PrepareUpdate(PrepareForStatusUpdate), ValidateUpdate: registry.ValidateUpdate(ValidateCSRUpdate), Stamp: stamp},
		{Name: "approval", Keep: registry.PrepareUpdate(PrepareForApprovalUpdate), ValidateUpdate: registry.ValidateUpdate(ValidateCSRUpdate), Stamp: stamp},
	}
	return []*registry.Definition{csr, ClusterTrustBundleDefinition(), PodCertificateRequestDefinition(clock.Real{})}
}

func setRequester(obj runtime.Object, u *authenticationv1.UserInfo) {
	SetRequester(obj.(*certificatesv1.CertificateSigningRequest), u)
}

func stamp(obj, old runtime.Object, now time.Time) {
	StampConditions(obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest), now)
}

// DefaultCSR: a condition without a status is True.
func DefaultCSR(csr *certificatesv1.CertificateSigningRequest) {
	for i := range csr.Status.Conditions {
		if csr.Status.Conditions[i].Status == "" {
			csr.Status.Conditions[i].Status = corev1.ConditionTrue
		}
	}
}

// SetRequester replaces whatever the client put in the requester fields
// with the authenticated user (u nil leaves them empty), as upstream.
func SetRequester(csr *certificatesv1.CertificateSigningRequest, u *authenticationv1.UserInfo) {
	csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups, csr.Spec.Extra = "", "", nil, nil
	if u == nil {
		return
	}
	csr.Spec.Username, csr.Spec.UID = u.Username, u.UID
	csr.Spec.Groups = append([]string(nil), u.Groups...)
	if len(u.Extra) > 0 {
		csr.Spec.Extra = map[string]certificatesv1.ExtraValue{}
		for k, v := range u.Extra {
			csr.Spec.Extra[k] = append(certificatesv1.ExtraValue(nil), v...)
		}
	}
}

// PrepareForUpdate: an update of the main resource changes metadata only.
func PrepareForUpdate(csr, old *certificatesv1.CertificateSigningRequest) {
	csr.Spec = *old.Spec.DeepCopy()
	csr.Status = *old.Status.DeepCopy()
}

// PrepareForStatusUpdate: the status subresource changes status only, and
// not its Approved and Denied conditions (the approval subresource's).
func PrepareForStatusUpdate(csr, old *certificatesv1.CertificateSigningRequest) {
	csr.Spec = *old.Spec.DeepCopy()
	preserveConditions(csr, old, certificatesv1.CertificateApproved)
	preserveConditions(csr, old, certificatesv1.CertificateDenied)
}

// PrepareForApprovalUpdate: the approval subresource changes conditions
// only, and not the Failed ones (the signer's, through status).
func PrepareForApprovalUpdate(csr, old *certificatesv1.CertificateSigningRequest) {
	csr.Spec = *old.Spec.DeepCopy()
	csr.Status.Certificate = old.Status.Certificate
	preserveConditions(csr, old, certificatesv1.CertificateFailed)
}

// preserveConditions replaces csr's conditions of type t by old's.
func preserveConditions(csr, old *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) {
	var kept []certificatesv1.CertificateSigningRequestCondition
	for _, c := range csr.Status.Conditions {
		if c.Type != t {
			kept = append(kept, c)
		}
	}
	for _, c := range old.Status.Conditions {
		if c.Type == t {
			kept = append(kept, *c.DeepCopy())
		}
	}
	csr.Status.Conditions = kept
}

// StampConditions fills a condition's lastUpdateTime with now when unset,
// and its lastTransitionTime with the stored condition's of the same type
// and status when there is one, else now.
func StampConditions(csr, old *certificatesv1.CertificateSigningRequest, now time.Time) {
	t := metav1.NewTime(now.Truncate(time.Second))
	for i := range csr.Status.Conditions {
		c := &csr.Status.Conditions[i]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime = t
		}
		if !c.LastTransitionTime.IsZero() {
			continue
		}
		c.LastTransitionTime = t
		for _, oc := range old.Status.Conditions {
			if oc.Type == c.Type && oc.Status == c.Status && !oc.LastTransitionTime.IsZero() {
				c.LastTransitionTime = oc.LastTransitionTime
				break
			}
		}
	}
}
