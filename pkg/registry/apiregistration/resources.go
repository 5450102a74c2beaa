package apiregistration

import (
	"k8s.io/apimachinery/pkg/runtime"

	apiregistrationv1 "github.com/skiff-sh/skiff/pkg/apis/apiregistration/v1"
	"github.com/skiff-sh/skiff/pkg/registry"
)

// Definitions are the apiregistration.k8s.io/v1 resources.
func Definitions() []*registry.Definition {
	d := registry.NewDefinition(apiregistrationv1.GroupName, "v1", "apiservices", "APIService", false,
		func() runtime.Object { return &apiregistrationv1.APIService{} }, func() runtime.Object { return &apiregistrationv1.APIServiceList{} },
		&registry.Strategy{Default: registry.Default(DefaultAPIService), Validate: registry.Validate(ValidateAPIService),
			ValidateUpdate: registry.ValidateUpdate(ValidateAPIServiceUpdate), HasStatus: true})
	d.Categories = []string{"api-extensions"}
	d.ValidateStatus = registry.ValidateUpdate(ValidateAPIServiceStatusUpdate)
	return []*registry.Definition{d}
}

// DefaultAPIService: a service port defaults to 443.
func DefaultAPIService(a *apiregistrationv1.APIService) {
	if s := a.Spec.Service; s != nil && s.Port == nil {
		s.Port = new(int32(443))
	}
}
