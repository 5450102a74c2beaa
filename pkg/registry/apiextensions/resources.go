package apiextensions

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/registry/customresource"
)

// Definitions are the apiextensions.k8s.io/v1 resources. The API server
// serves each established CRD's objects (see pkg/registry/customresource).
func Definitions() []*registry.Definition {
	crd := registry.NewDefinition("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false,
		func() runtime.Object { return &apiextensionsv1.CustomResourceDefinition{} },
		func() runtime.Object { return &apiextensionsv1.CustomResourceDefinitionList{} },
		&registry.Strategy{
			Default:        registry.Default(DefaultCustomResourceDefinition),
			Validate:       registry.Validate(ValidateCustomResourceDefinition),
			ValidateUpdate: registry.ValidateUpdate(ValidateCustomResourceDefinitionUpdate),
			Generation:     true,
			HasStatus:      true,
			// The storage version is recorded as stored from the start, and
			// every later storage version is added (never removed here).
			PrepareForCreate: registry.Prepare(func(crd *apiextensionsv1.CustomResourceDefinition) {
				crd.Status.StoredVersions = nil
				addStoredVersion(crd)
			}),
			PrepareForUpdate: registry.PrepareUpdate(func(crd, _ *apiextensionsv1.CustomResourceDefinition) {
				addStoredVersion(crd)
			}),
			// A deleted CRD waits, with the cleanup finalizer, until the
			// API server has deleted its objects.
			Finalizing: func(obj runtime.Object) bool {
				crd := obj.(*apiextensionsv1.CustomResourceDefinition)
				var now metav1.Time
				if ts := crd.DeletionTimestamp; ts != nil {
					now = *ts
				}
				customresource.MarkTerminating(crd, now)
				return false
			},
		})
	crd.ShortNames, crd.Categories = []string{"crd", "crds"}, []string{"api-extensions"}
	crd.ValidateStatus = registry.ValidateUpdate(ValidateCustomResourceDefinitionStatusUpdate)
	return []*registry.Definition{crd}
}

func addStoredVersion(crd *apiextensionsv1.CustomResourceDefinition) {
	for _, v := range crd.Spec.Versions {
		if !v.Storage {
			continue
		}
		for _, s := range crd.Status.StoredVersions {
			if s == v.Name {
				return
			}
		}
		crd.Status.StoredVersions = append(crd.Status.StoredVersions, v.Name)
	}
}
