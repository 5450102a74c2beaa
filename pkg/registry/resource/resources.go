package resource

import (
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/registry"
)

const group = "resource.k8s.io"

// Definitions are the resource.k8s.io/v1 resources upstream serves by
// default.
func Definitions() []*registry.Definition { return definitions(clock.Real{}) }

// definitions builds them with the clock device taints are stamped with.
func definitions(clk clock.Clock) []*registry.Definition {
	class := registry.NewDefinition(group, "v1", "deviceclasses", "DeviceClass", false,
		func() runtime.Object { return &resourcev1.DeviceClass{} }, func() runtime.Object { return &resourcev1.DeviceClassList{} },
		&registry.Strategy{Validate: registry.Validate(ValidateDeviceClass), ValidateUpdate: registry.ValidateUpdate(ValidateDeviceClassUpdate),
			Generation: true, ReturnDeletedObject: true})

	claim := registry.NewDefinition(group, "v1", "resourceclaims", "ResourceClaim", true,
		func() runtime.Object { return &resourcev1.ResourceClaim{} }, func() runtime.Object { return &resourcev1.ResourceClaimList{} },
		&registry.Strategy{Default: registry.Default(DefaultResourceClaim), Validate: registry.Validate(ValidateResourceClaim),
			PrepareForCreate: registry.Prepare(func(c *resourcev1.ResourceClaim) { DropAlphaClaimSpecFields(&c.Spec, nil) }),
			PrepareForUpdate: registry.PrepareUpdate(func(c, old *resourcev1.ResourceClaim) { DropAlphaClaimSpecFields(&c.Spec, &old.Spec) }),
			ValidateUpdate:   registry.ValidateUpdate(ValidateResourceClaimUpdate), HasStatus: true, ReturnDeletedObject: true})
	claim.ValidateStatus = registry.ValidateUpdate(ValidateResourceClaimStatusUpdate)
	claim.PrepareStatus = registry.PrepareUpdate(PrepareResourceClaimStatusUpdate)
	claim.NewHooks = adminAccessHooks("ResourceClaim", func(o runtime.Object) (*metav1.ObjectMeta, []resourcev1.DeviceRequest) {
		c := o.(*resourcev1.ResourceClaim)
		return &c.ObjectMeta, c.Spec.Devices.Requests
	})

	template := registry.NewDefinition(group, "v1", "resourceclaimtemplates", "ResourceClaimTemplate", true,
		func() runtime.Object { return &resourcev1.ResourceClaimTemplate{} }, func() runtime.Object { return &resourcev1.ResourceClaimTemplateList{} },
		&registry.Strategy{Default: registry.Default(DefaultResourceClaimTemplate), Validate: registry.Validate(ValidateResourceClaimTemplate),
			PrepareForCreate: registry.Prepare(func(t *resourcev1.ResourceClaimTemplate) { DropAlphaClaimSpecFields(&t.Spec.Spec, nil) }),
			PrepareForUpdate: registry.PrepareUpdate(func(t, old *resourcev1.ResourceClaimTemplate) {
				DropAlphaClaimSpecFields(&t.Spec.Spec, &old.Spec.Spec)
			}),
			ValidateUpdate: registry.ValidateUpdate(ValidateResourceClaimTemplateUpdate), ReturnDeletedObject: true})
	template.NewHooks = adminAccessHooks("ResourceClaimTemplate", func(o runtime.Object) (*metav1.ObjectMeta, []resourcev1.DeviceRequest) {
		t := o.(*resourcev1.ResourceClaimTemplate)
		return &t.ObjectMeta, t.Spec.Spec.Devices.Requests
	})

	slice := registry.NewDefinition(group, "v1", "resourceslices", "ResourceSlice", false,
		func() runtime.Object { return &resourcev1.ResourceSlice{} }, func() runtime.Object { return &resourcev1.ResourceSliceList{} },
		&registry.Strategy{
			Default:          registry.Default(func(s *resourcev1.ResourceSlice) { DefaultResourceSlice(s, clk.Now()) }),
			PrepareForCreate: registry.Prepare(func(s *resourcev1.ResourceSlice) { DropAlphaResourceSliceFields(s, nil) }),
			PrepareForUpdate: registry.PrepareUpdate(DropAlphaResourceSliceFields),
			Validate:         registry.Validate(ValidateResourceSlice), ValidateUpdate: registry.ValidateUpdate(ValidateResourceSliceUpdate),
			Generation: true, ReturnDeletedObject: true, Fields: registry.Fields(ResourceSliceFields)})

	rule := registry.NewDefinition(group, "v1", "devicetaintrules", "DeviceTaintRule", false,
		func() runtime.Object { return &resourcev1.DeviceTaintRule{} }, func() runtime.Object { return &resourcev1.DeviceTaintRuleList{} },
		&registry.Strategy{
			Default: registry.Default(func(r *resourcev1.DeviceTaintRule) { DefaultDeviceTaintRule(r, clk.Now()) }),
			PrepareForUpdate: registry.PrepareUpdate(func(r, old *resourcev1.DeviceTaintRule) {
				PrepareDeviceTaintRuleUpdate(r, old, clk.Now())
			}),
			Validate: registry.Validate(ValidateDeviceTaintRule), ValidateUpdate: registry.ValidateUpdate(ValidateDeviceTaintRuleUpdate),
			Generation: true, HasStatus: true, ReturnDeletedObject: true})
	rule.ValidateStatus = registry.ValidateUpdate(ValidateDeviceTaintRuleStatusUpdate)

	return []*registry.Definition{class, claim, template, slice, rule}
}

// ResourceSliceFields are the field selectors of a ResourceSlice beyond
// metadata.name: spec.nodeName (empty for slices not bound to one node),
// spec.driver and spec.pool.name.
func ResourceSliceFields(s *resourcev1.ResourceSlice) map[string]string {
	node := ""
	if s.Spec.NodeName != nil {
		node = *s.Spec.NodeName
	}
	return map[string]string{
		resourcev1.ResourceSliceSelectorNodeName: node,
		resourcev1.ResourceSliceSelectorDriver:   s.Spec.Driver,
		resourcev1.ResourceSliceSelectorPoolName: s.Spec.Pool.Name,
	}
}
