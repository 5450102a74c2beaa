package apiextensions

import (
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// DefaultCustomResourceDefinition fills the apiextensions.k8s.io/v1 defaults:
//   - spec.names.singular: the kind in lower case ("CronTab" -> "crontab")
//   - spec.names.listKind: kind + "List"
//   - spec.conversion: strategy None (versions differ only in apiVersion)
//   - a conversion webhook service's port: 443
//   - status.storedVersions: the storage version, if none is recorded yet
//
// spec.scope is not defaulted: v1 requires it (v1beta1 defaulted it to
// Namespaced).
func DefaultCustomResourceDefinition(crd *apiextensionsv1.CustomResourceDefinition) {
	names := &crd.Spec.Names
	if names.Singular == "" {
		names.Singular = strings.ToLower(names.Kind)
	}
	if names.ListKind == "" && names.Kind != "" {
		names.ListKind = names.Kind + "List"
	}
	if crd.Spec.Conversion == nil {
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	}
	if wh := crd.Spec.Conversion.Webhook; wh != nil && wh.ClientConfig != nil && wh.ClientConfig.Service != nil && wh.ClientConfig.Service.Port == nil {
		wh.ClientConfig.Service.Port = new(int32(443))
	}
	if len(crd.Status.StoredVersions) == 0 {
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				crd.Status.StoredVersions = append(crd.Status.StoredVersions, v.Name)
				break
			}
		}
	}
}
