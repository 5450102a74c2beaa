package storageapi

import (
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/registry"
)

// Definitions are the storage.k8s.io/v1 resources.
func Definitions() []*registry.Definition {
	sc := registry.NewDefinition("storage.k8s.io", "v1", "storageclasses", "StorageClass", false,
		func() runtime.Object { return &storagev1.StorageClass{} }, func() runtime.Object { return &storagev1.StorageClassList{} },
		&registry.Strategy{Default: registry.Default(DefaultStorageClass), Validate: registry.Validate(ValidateStorageClass),
			ValidateUpdate: registry.ValidateUpdate(ValidateStorageClassUpdate), ReturnDeletedObject: true})
	sc.ShortNames = []string{"sc"}
	return []*registry.Definition{sc}
}
