package certificates

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"sort"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/registry"
)

// ClusterTrustBundleDefinition is certificates.k8s.io/v1
// clustertrustbundles (stable in 1.37): cluster-scoped PEM bundles of CA
// certificates, selectable by spec.signerName.
func ClusterTrustBundleDefinition() *registry.Definition {
	return registry.NewDefinition("certificates.k8s.io", "v1", "clustertrustbundles", "ClusterTrustBundle", false,
		func() runtime.Object { return &certificatesv1.ClusterTrustBundle{} },
		func() runtime.Object { return &certificatesv1.ClusterTrustBundleList{} },
		&registry.Strategy{
			Validate:       registry.Validate(ValidateClusterTrustBundle),
			ValidateUpdate: registry.ValidateUpdate(ValidateClusterTrustBundleUpdate),
			Fields: registry.Fields(func(b *certificatesv1.ClusterTrustBundle) map[string]string {
				return map[string]string{"spec.signerName": b.Spec.SignerName}
			}),
		})
}

// ValidateClusterTrustBundle validates a new bundle: a bundle for a signer
// is named "<signer with / as :>:<name>", one without a signer has no ":"
// in its name; the bundle holds at least one CA certificate, each once.
func ValidateClusterTrustBundle(b *certificatesv1.ClusterTrustBundle) field.ErrorList {
	return validateClusterTrustBundle(b, true)
}

// ValidateClusterTrustBundleUpdate: the signer is immutable; an unchanged
// bundle is not parsed again (so a change in Go's X.509 parsing never
// makes a stored bundle unwritable).
func ValidateClusterTrustBundleUpdate(b, old *certificatesv1.ClusterTrustBundle) field.ErrorList {
	allErrs := validateClusterTrustBundle(b, b.Spec.TrustBundle != old.Spec.TrustBundle)
	allErrs = append(allErrs, apimachineryvalidation.ValidateObjectMetaUpdate(&b.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
	return append(allErrs, apimachineryvalidation.ValidateImmutableField(b.Spec.SignerName, old.Spec.SignerName, field.NewPath("spec", "signerName"))...)
}

func validateClusterTrustBundle(b *certificatesv1.ClusterTrustBundle, parse bool) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&b.ObjectMeta, false, clusterTrustBundleName(b.Spec.SignerName), field.NewPath("metadata"))
	if b.Spec.SignerName != "" {
		allErrs = append(allErrs, ValidateSignerName(field.NewPath("spec", "signerName"), b.Spec.SignerName)...)
	}
	if parse {
		allErrs = append(allErrs, validateTrustBundle(field.NewPath("spec", "trustBundle"), b.Spec.TrustBundle)...)
	}
	return allErrs
}

func clusterTrustBundleName(signer string) apimachineryvalidation.ValidateNameFunc {
	return func(name string, prefix bool) []string {
		if signer == "" {
			if strings.Contains(name, ":") {
				return []string{`ClusterTrustBundle without signer name must not have ":" in its name`}
			}
			return apimachineryvalidation.NameIsDNSSubdomain(name, prefix)
		}
		want := strings.ReplaceAll(signer, "/", ":") + ":"
		if !strings.HasPrefix(name, want) {
			return []string{fmt.Sprintf("ClusterTrustBundle for signerName %s must be named with prefix %s", signer, want)}
		}
		return apimachineryvalidation.NameIsDNSSubdomain(strings.TrimPrefix(name, want), prefix)
	}
}

// maxTrustBundleSize bounds spec.trustBundle (1 MiB, as upstream).
const maxTrustBundleSize = 1 << 20

// validateTrustBundle: PEM CERTIFICATE blocks without headers, each an
// X.509 CA certificate with valid basic constraints, none repeated, at
// least one.
func validateTrustBundle(p *field.Path, in string) field.ErrorList {
	if len(in) > maxTrustBundleSize {
		return field.ErrorList{field.TooLong(p, "", maxTrustBundleSize)}
	}
	var allErrs field.ErrorList
	invalid := func(format string, args ...any) {
		allErrs = append(allErrs, field.Invalid(p, "<value omitted>", fmt.Sprintf(format, args...)))
	}
	seen := map[string][]int{}
	rest := []byte(in)
	for i := 0; ; i++ {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		switch {
		case b.Type != "CERTIFICATE":
			invalid("entry %d has bad block type: %v", i, b.Type)
			continue
		case len(b.Headers) != 0:
			invalid("entry %d has PEM block headers", i)
			continue
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		switch {
		case err != nil:
			invalid("entry %d does not parse as X.509", i)
		case !cert.IsCA:
			invalid("entry %d does not have the CA bit set", i)
		case !cert.BasicConstraintsValid:
			invalid("entry %d has invalid basic constraints", i)
		default:
			seen[string(b.Bytes)] = append(seen[string(b.Bytes)], i)
		}
	}
	if len(allErrs) != 0 {
		return allErrs
	}
	if len(seen) == 0 {
		invalid("at least one trust anchor must be provided")
	}
	var dups [][]int
	for _, idx := range seen {
		if len(idx) > 1 {
			dups = append(dups, idx)
		}
	}
	sort.Slice(dups, func(i, j int) bool { return dups[i][0] < dups[j][0] })
	for _, idx := range dups {
		invalid("duplicate trust anchor (indices %v)", idx)
	}
	return allErrs
}
