package resource

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/registry/core"
)

// ValidateDeviceClass validates a new DeviceClass.
func ValidateDeviceClass(c *resourcev1.DeviceClass) field.ErrorList {
	allErrs := core.ValidateObjectMeta(&c.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validateDeviceClassSpec(&c.Spec, nil, field.NewPath("spec"))...)
}

// ValidateDeviceClassUpdate validates an update: the spec may change.
func ValidateDeviceClassUpdate(c, old *resourcev1.DeviceClass) field.ErrorList {
	allErrs := core.ValidateObjectMeta(&c.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	allErrs = append(allErrs, core.ValidateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
	return append(allErrs, validateDeviceClassSpec(&c.Spec, &old.Spec, field.NewPath("spec"))...)
}

func validateDeviceClassSpec(spec, old *resourcev1.DeviceClassSpec, p *field.Path) field.ErrorList {
	stored := old != nil && equality.Semantic.DeepEqual(spec.Selectors, old.Selectors)
	allErrs := validateSlice(spec.Selectors, resourcev1.DeviceSelectorsMaxSize,
		func(sel resourcev1.DeviceSelector, p *field.Path) field.ErrorList {
			return validateSelectorStored(sel, p, stored)
		}, p.Child("selectors"))
	allErrs = append(allErrs, validateSlice(spec.Config, resourcev1.DeviceConfigMaxSize,
		func(c resourcev1.DeviceClassConfiguration, p *field.Path) field.ErrorList {
			return validateDeviceConfiguration(c.DeviceConfiguration, p)
		}, p.Child("config"))...)
	if n := spec.ExtendedResourceName; n != nil && !isExtendedResourceName(*n) {
		allErrs = append(allErrs, field.Invalid(p.Child("extendedResourceName"), *n, "must be a valid extended resource name"))
	}
	return allErrs
}

// isExtendedResourceName: a domain-qualified resource name outside the
// kubernetes.io domains and not "requests."-prefixed, usable as a
// resource quota name.
func isExtendedResourceName(name string) bool {
	if !strings.Contains(name, "/") || strings.HasPrefix(name, "requests.") {
		return false
	}
	domain := name[:strings.Index(name, "/")]
	if domain == "kubernetes.io" || strings.HasSuffix(domain, ".kubernetes.io") {
		return false
	}
	return len(content.IsQualifiedName("requests."+name)) == 0
}

// ValidateResourceClaim validates a new ResourceClaim.
func ValidateResourceClaim(c *resourcev1.ResourceClaim) field.ErrorList {
	allErrs := core.ValidateObjectMeta(&c.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validateDeviceClaim(&c.Spec.Devices, field.NewPath("spec", "devices"))...)
}

// ValidateResourceClaimUpdate: a claim's spec is immutable, so an update
// is checked for that alone (its contents were checked on create).
func ValidateResourceClaimUpdate(c, old *resourcev1.ResourceClaim) field.ErrorList {
	allErrs := core.ValidateObjectMeta(&c.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	allErrs = append(allErrs, core.ValidateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
	return append(allErrs, apimachineryvalidation.ValidateImmutableField(c.Spec, old.Spec, field.NewPath("spec"))...)
}

// ValidateResourceClaimStatusUpdate validates what the scheduler and the
// drivers write into a claim's status: consumers only while allocated, no
// new consumers once deletion started, an allocation set once and then
// left alone, device status only for allocated devices.
func ValidateResourceClaimStatusUpdate(c, old *resourcev1.ResourceClaim) field.ErrorList {
	allErrs := core.ValidateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	p := field.NewPath("status")
	status, oldStatus := &c.Status, &old.Status
	names := gatherRequestNames(&c.Spec.Devices)
	allErrs = append(allErrs, validateSet(status.ReservedFor, resourcev1.ResourceClaimReservedForMaxSize, validateConsumerReference,
		func(r resourcev1.ResourceClaimConsumerReference) string { return string(r.UID) }, p.Child("reservedFor"))...)
	allocated := map[string]bool{}
	if status.Allocation != nil {
		for _, r := range status.Allocation.Devices.Results {
			allocated[deviceID(r.Driver, r.Pool, r.Device, (*string)(r.ShareID))] = true
		}
	}
	allErrs = append(allErrs, validateSet(status.Devices, -1,
		func(d resourcev1.AllocatedDeviceStatus, p *field.Path) field.ErrorList {
			return validateDeviceStatus(d, p, allocated)
		},
		func(d resourcev1.AllocatedDeviceStatus) string {
			return deviceID(d.Driver, d.Pool, d.Device, d.ShareID)
		}, p.Child("devices"))...)
	if len(status.ReservedFor) > 0 {
		if status.Allocation == nil {
			allErrs = append(allErrs, field.Forbidden(p.Child("reservedFor"), "may not be specified when `allocated` is not set"))
		} else if c.DeletionTimestamp != nil {
			had := map[resourcev1.ResourceClaimConsumerReference]bool{}
			for _, r := range oldStatus.ReservedFor {
				had[r] = true
			}
			for _, r := range status.ReservedFor {
				if !had[r] {
					allErrs = append(allErrs, field.Forbidden(p.Child("reservedFor"), "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set"))
					break
				}
			}
		}
	}
	switch {
	case oldStatus.Allocation != nil && status.Allocation != nil:
		allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(status.Allocation, oldStatus.Allocation, p.Child("allocation"))...)
	case status.Allocation != nil:
		allErrs = append(allErrs, validateAllocationResult(status.Allocation, p.Child("allocation"), names)...)
	}
	return allErrs
}

func deviceID(driver, pool, device string, shareID *string) string {
	id := driver + "/" + pool + "/" + device
	if shareID != nil {
		id += "/" + *shareID
	}
	return id
}

func validateConsumerReference(r resourcev1.ResourceClaimConsumerReference, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if r.Resource == "" {
		allErrs = append(allErrs, field.Required(p.Child("resource"), ""))
	}
	if r.Name == "" {
		allErrs = append(allErrs, field.Required(p.Child("name"), ""))
	}
	if r.UID == "" {
		allErrs = append(allErrs, field.Required(p.Child("uid"), ""))
	}
	return allErrs
}

func validateAllocationResult(a *resourcev1.AllocationResult, p *field.Path, names requestNames) field.ErrorList {
	dp := p.Child("devices")
	allErrs := validateSlice(a.Devices.Results, resourcev1.AllocationResultsMaxSize,
		func(r resourcev1.DeviceRequestAllocationResult, p *field.Path) field.ErrorList {
			errs := validateRequestNameRef(r.Request, p.Child("request"), names)
			errs = append(errs, validateDriverName(r.Driver, p.Child("driver"))...)
			errs = append(errs, validatePoolName(r.Pool, p.Child("pool"))...)
			errs = append(errs, validateDNSLabel(r.Device, p.Child("device"))...)
			errs = append(errs, validateBindingConditions(r.BindingConditions, r.BindingFailureConditions, p)...)
			for i, t := range r.Tolerations {
				errs = append(errs, validateToleration(t, p.Child("tolerations").Index(i))...)
			}
			if r.ShareID != nil {
				errs = append(errs, validateUID(string(*r.ShareID), p.Child("shareID"))...)
			}
			return append(errs, validateSkipNodeOperations(r.SkipNodeOperations, p.Child("skipNodeOperations"))...)
		}, dp.Child("results"))
	allErrs = append(allErrs, validateSlice(a.Devices.Config, 2*resourcev1.DeviceConfigMaxSize,
		func(c resourcev1.DeviceAllocationConfiguration, p *field.Path) field.ErrorList {
			var errs field.ErrorList
			switch c.Source {
			case "":
				errs = append(errs, field.Required(p.Child("source"), ""))
			case resourcev1.AllocationConfigSourceClaim, resourcev1.AllocationConfigSourceClass:
			default:
				errs = append(errs, field.NotSupported(p.Child("source"), c.Source, []resourcev1.AllocationConfigSource{resourcev1.AllocationConfigSourceClaim, resourcev1.AllocationConfigSourceClass}))
			}
			errs = append(errs, validateSet(c.Requests, resourcev1.DeviceRequestsMaxSize,
				func(n string, p *field.Path) field.ErrorList { return validateRequestNameRef(n, p, names) }, stringKey, p.Child("requests"))...)
			return append(errs, validateDeviceConfiguration(c.DeviceConfiguration, p)...)
		}, dp.Child("config"))...)
	if a.NodeSelector != nil {
		allErrs = append(allErrs, core.ValidateNodeSelector(a.NodeSelector, p.Child("nodeSelector"))...)
	}
	return allErrs
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func validateUID(uid string, p *field.Path) field.ErrorList {
	if !uuidRE.MatchString(uid) || uid != strings.ToLower(uid) {
		return field.ErrorList{field.Invalid(p, uid, "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters")}
	}
	return nil
}

func validateDeviceStatus(d resourcev1.AllocatedDeviceStatus, p *field.Path, allocated map[string]bool) field.ErrorList {
	allErrs := validateDriverName(d.Driver, p.Child("driver"))
	allErrs = append(allErrs, validatePoolName(d.Pool, p.Child("pool"))...)
	allErrs = append(allErrs, validateDNSLabel(d.Device, p.Child("device"))...)
	if d.ShareID != nil {
		allErrs = append(allErrs, validateUID(*d.ShareID, p.Child("shareID"))...)
	}
	if id := deviceID(d.Driver, d.Pool, d.Device, d.ShareID); !allocated[id] {
		allErrs = append(allErrs, field.Invalid(p, id, "must be an allocated device in the claim"))
	}
	if len(d.Conditions) > resourcev1.AllocatedDeviceStatusMaxConditions {
		allErrs = append(allErrs, field.TooMany(p.Child("conditions"), len(d.Conditions), resourcev1.AllocatedDeviceStatusMaxConditions))
	}
	allErrs = append(allErrs, metav1validation.ValidateConditions(d.Conditions, p.Child("conditions"))...)
	if d.Data != nil && len(d.Data.Raw) > 0 {
		allErrs = append(allErrs, validateRawExtension(*d.Data, p.Child("data"), resourcev1.AllocatedDeviceStatusDataMaxLength)...)
	}
	if nd := d.NetworkData; nd != nil {
		np := p.Child("networkData")
		if len(nd.InterfaceName) > resourcev1.NetworkDeviceDataInterfaceNameMaxLength {
			allErrs = append(allErrs, field.TooLong(np.Child("interfaceName"), "", resourcev1.NetworkDeviceDataInterfaceNameMaxLength))
		}
		if len(nd.HardwareAddress) > resourcev1.NetworkDeviceDataHardwareAddressMaxLength {
			allErrs = append(allErrs, field.TooLong(np.Child("hardwareAddress"), "", resourcev1.NetworkDeviceDataHardwareAddressMaxLength))
		}
		allErrs = append(allErrs, validateSet(nd.IPs, resourcev1.NetworkDeviceDataMaxIPs,
			func(a string, p *field.Path) field.ErrorList { return validation.IsValidInterfaceAddress(p, a) }, stringKey, np.Child("ips"))...)
	}
	return allErrs
}

// ValidateResourceClaimTemplate validates a new ResourceClaimTemplate.
func ValidateResourceClaimTemplate(t *resourcev1.ResourceClaimTemplate) field.ErrorList {
	allErrs := core.ValidateObjectMeta(&t.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validateResourceClaimTemplateSpec(&t.Spec, field.NewPath("spec"))...)
}

// ValidateResourceClaimTemplateUpdate: a template's spec is immutable, so
// an update is checked for that alone.
func ValidateResourceClaimTemplateUpdate(t, old *resourcev1.ResourceClaimTemplate) field.ErrorList {
	allErrs := core.ValidateObjectMetaUpdate(&t.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, apimachineryvalidation.ValidateImmutableField(t.Spec, old.Spec, field.NewPath("spec"))...)
}

func validateResourceClaimTemplateSpec(spec *resourcev1.ResourceClaimTemplateSpec, p *field.Path) field.ErrorList {
	allErrs := core.ValidateTemplateObjectMeta(&spec.ObjectMeta, p.Child("metadata"))
	return append(allErrs, validateDeviceClaim(&spec.Spec.Devices, p.Child("spec", "devices"))...)
}

func validateDeviceClaim(dc *resourcev1.DeviceClaim, p *field.Path) field.ErrorList {
	names := gatherRequestNames(dc)
	allErrs := validateSet(dc.Requests, resourcev1.DeviceRequestsMaxSize, validateDeviceRequest,
		func(r resourcev1.DeviceRequest) string { return r.Name }, p.Child("requests"))
	allErrs = append(allErrs, validateSlice(dc.Constraints, resourcev1.DeviceConstraintsMaxSize,
		func(c resourcev1.DeviceConstraint, p *field.Path) field.ErrorList {
			errs := validateSet(c.Requests, resourcev1.DeviceRequestsMaxSize,
				func(n string, p *field.Path) field.ErrorList { return validateRequestNameRef(n, p, names) }, stringKey, p.Child("requests"))
			switch {
			case c.MatchAttribute != nil:
				errs = append(errs, validateFullyQualifiedName(*c.MatchAttribute, p.Child("matchAttribute"))...)
			case c.DistinctAttribute != nil:
				errs = append(errs, validateFullyQualifiedName(*c.DistinctAttribute, p.Child("distinctAttribute"))...)
			default:
				errs = append(errs, field.Required(p, `exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set`))
			}
			return errs
		}, p.Child("constraints"))...)
	allErrs = append(allErrs, validateSlice(dc.Config, resourcev1.DeviceConfigMaxSize,
		func(c resourcev1.DeviceClaimConfiguration, p *field.Path) field.ErrorList {
			errs := validateSet(c.Requests, resourcev1.DeviceRequestsMaxSize,
				func(n string, p *field.Path) field.ErrorList { return validateRequestNameRef(n, p, names) }, stringKey, p.Child("requests"))
			return append(errs, validateDeviceConfiguration(c.DeviceConfiguration, p)...)
		}, p.Child("config"))...)
	return allErrs
}

// requestNames maps each request's name to the names of its subrequests
// (nil for an exact request).
type requestNames map[string]map[string]bool

func gatherRequestNames(dc *resourcev1.DeviceClaim) requestNames {
	names := requestNames{}
	for _, r := range dc.Requests {
		if len(r.FirstAvailable) == 0 {
			names[r.Name] = nil
			continue
		}
		subs := map[string]bool{}
		for _, s := range r.FirstAvailable {
			subs[s.Name] = true
		}
		names[r.Name] = subs
	}
	return names
}

func (r requestNames) has(ref string) bool {
	parts := strings.Split(ref, "/")
	subs, ok := r[parts[0]]
	switch {
	case len(parts) > 2 || !ok:
		return false
	case len(parts) == 1:
		return true
	}
	return subs[parts[1]]
}

const requestRefMsg = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"

func validateRequestNameRef(name string, p *field.Path, names requestNames) field.ErrorList {
	parts := strings.Split(name, "/")
	if len(parts) > 2 {
		return field.ErrorList{field.Invalid(p, name, requestRefMsg)}
	}
	var allErrs field.ErrorList
	for _, part := range parts {
		allErrs = append(allErrs, validateDNSLabel(part, p)...)
	}
	if !names.has(name) {
		allErrs = append(allErrs, field.Invalid(p, name, requestRefMsg))
	}
	return allErrs
}

func validateDeviceRequest(r resourcev1.DeviceRequest, p *field.Path) field.ErrorList {
	allErrs := validateDNSLabel(r.Name, p.Child("name"))
	switch first, exact := len(r.FirstAvailable) > 0, r.Exactly != nil; {
	case !first && !exact:
		allErrs = append(allErrs, field.Required(p, "exactly one of `exactly` or `firstAvailable` is required"))
	case first && exact:
		allErrs = append(allErrs, field.Invalid(p, nil, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"))
	case first:
		allErrs = append(allErrs, validateSet(r.FirstAvailable, resourcev1.FirstAvailableDeviceRequestMaxSize,
			func(s resourcev1.DeviceSubRequest, p *field.Path) field.ErrorList {
				errs := validateDNSLabel(s.Name, p.Child("name"))
				return append(errs, validateExact(s.DeviceClassName, s.Selectors, s.AllocationMode, s.Count, s.Tolerations, p)...)
			},
			func(s resourcev1.DeviceSubRequest) string { return s.Name }, p.Child("firstAvailable"))...)
	default:
		e := r.Exactly
		allErrs = append(allErrs, validateExact(e.DeviceClassName, e.Selectors, e.AllocationMode, e.Count, e.Tolerations, p.Child("exactly"))...)
	}
	return allErrs
}

func validateExact(class string, selectors []resourcev1.DeviceSelector, mode resourcev1.DeviceAllocationMode, count int64, tolerations []resourcev1.DeviceToleration, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if class == "" {
		allErrs = append(allErrs, field.Required(p.Child("deviceClassName"), ""))
	} else {
		allErrs = append(allErrs, validateDNSSubdomain(class, p.Child("deviceClassName"))...)
	}
	allErrs = append(allErrs, validateSlice(selectors, resourcev1.DeviceSelectorsMaxSize, validateSelector, p.Child("selectors"))...)
	switch mode {
	case resourcev1.DeviceAllocationModeAll:
		if count != 0 {
			allErrs = append(allErrs, field.Invalid(p.Child("count"), count, fmt.Sprintf("must not be specified when allocationMode is '%s'", mode)))
		}
	case resourcev1.DeviceAllocationModeExactCount:
		if count <= 0 {
			allErrs = append(allErrs, field.Invalid(p.Child("count"), count, "must be greater than zero"))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(p.Child("allocationMode"), mode, []resourcev1.DeviceAllocationMode{resourcev1.DeviceAllocationModeAll, resourcev1.DeviceAllocationModeExactCount}))
	}
	for i, t := range tolerations {
		allErrs = append(allErrs, validateToleration(t, p.Child("tolerations").Index(i))...)
	}
	return allErrs
}

func validateSelector(s resourcev1.DeviceSelector, p *field.Path) field.ErrorList {
	return validateSelectorStored(s, p, false)
}

// validateSelectorStored: a stored expression (unchanged by an update) is
// not compiled again, as upstream, so a stricter compiler never makes a
// stored object unwritable.
func validateSelectorStored(s resourcev1.DeviceSelector, p *field.Path, stored bool) field.ErrorList {
	if s.CEL == nil {
		return field.ErrorList{field.Required(p.Child("cel"), "")}
	}
	if stored {
		return nil
	}
	ep := p.Child("cel", "expression")
	if len(s.CEL.Expression) > resourcev1.CELSelectorExpressionMaxLength {
		return field.ErrorList{field.TooLong(ep, "", resourcev1.CELSelectorExpressionMaxLength)}
	}
	if msg := compileSelector(s.CEL.Expression); msg != "" {
		return field.ErrorList{field.Invalid(ep, s.CEL.Expression, msg)}
	}
	return nil
}

func validateDeviceConfiguration(c resourcev1.DeviceConfiguration, p *field.Path) field.ErrorList {
	if c.Opaque == nil {
		return field.ErrorList{field.Required(p.Child("opaque"), "")}
	}
	op := p.Child("opaque")
	allErrs := validateDriverName(c.Opaque.Driver, op.Child("driver"))
	return append(allErrs, validateRawExtension(c.Opaque.Parameters, op.Child("parameters"), resourcev1.OpaqueParametersMaxLength)...)
}

// validateRawExtension: opaque parameters are a JSON object of bounded
// size.
func validateRawExtension(raw runtime.RawExtension, p *field.Path, maxLen int) field.ErrorList {
	var v any
	switch {
	case len(raw.Raw) == 0:
		return field.ErrorList{field.Required(p, "")}
	case len(raw.Raw) > maxLen:
		return field.ErrorList{field.TooLong(p, "", maxLen)}
	}
	if err := json.Unmarshal(raw.Raw, &v); err != nil {
		return field.ErrorList{field.Invalid(p, "<value omitted>", "error parsing data as JSON: "+err.Error())}
	}
	if v == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	if _, ok := v.(map[string]any); !ok {
		return field.ErrorList{field.Invalid(p, "<value omitted>", "must be a valid JSON object")}
	}
	return nil
}

var validTaintEffects = []resourcev1.DeviceTaintEffect{resourcev1.DeviceTaintEffectNoExecute, resourcev1.DeviceTaintEffectNoSchedule, resourcev1.DeviceTaintEffectNone}

func validTaintEffect(e resourcev1.DeviceTaintEffect) bool {
	for _, v := range validTaintEffects {
		if e == v {
			return true
		}
	}
	return false
}

func validateToleration(t resourcev1.DeviceToleration, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if t.Key != "" {
		allErrs = append(allErrs, metav1validation.ValidateLabelName(t.Key, p.Child("key"))...)
	}
	switch t.Operator {
	case resourcev1.DeviceTolerationOpExists:
		if t.Value != "" {
			allErrs = append(allErrs, field.Invalid(p.Child("value"), t.Value, "must be empty for operator `Exists`"))
		}
	case resourcev1.DeviceTolerationOpEqual:
		allErrs = append(allErrs, validateLabelValue(t.Value, p.Child("value"))...)
	case "":
		allErrs = append(allErrs, field.Required(p.Child("operator"), ""))
	default:
		allErrs = append(allErrs, field.NotSupported(p.Child("operator"), t.Operator, []resourcev1.DeviceTolerationOperator{resourcev1.DeviceTolerationOpEqual, resourcev1.DeviceTolerationOpExists}))
	}
	if t.Effect != "" && !validTaintEffect(t.Effect) {
		allErrs = append(allErrs, field.NotSupported(p.Child("effect"), t.Effect, validTaintEffects))
	}
	return allErrs
}

// validateTaint checks a device taint; its effect only when new or
// changed (old is nil for a new taint).
func validateTaint(t resourcev1.DeviceTaint, old *resourcev1.DeviceTaint, p *field.Path) field.ErrorList {
	allErrs := metav1validation.ValidateLabelName(t.Key, p.Child("key"))
	if t.Value != "" {
		allErrs = append(allErrs, validateLabelValue(t.Value, p.Child("value"))...)
	}
	if old == nil || old.Effect != t.Effect {
		switch {
		case t.Effect == "":
			allErrs = append(allErrs, field.Required(p.Child("effect"), ""))
		case !validTaintEffect(t.Effect):
			allErrs = append(allErrs, field.NotSupported(p.Child("effect"), t.Effect, validTaintEffects))
		}
	}
	return allErrs
}

// ValidateResourceSlice validates a new ResourceSlice.
func ValidateResourceSlice(s *resourcev1.ResourceSlice) field.ErrorList {
	allErrs := core.ValidateObjectMeta(&s.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validateResourceSliceSpec(&s.Spec, nil, field.NewPath("spec"))...)
}

// ValidateResourceSliceUpdate: driver, pool name and node name are fixed;
// a device's capacity and taints are checked again only when they change.
func ValidateResourceSliceUpdate(s, old *resourcev1.ResourceSlice) field.ErrorList {
	allErrs := core.ValidateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateResourceSliceSpec(&s.Spec, &old.Spec, field.NewPath("spec"))...)
}

func validateResourceSliceSpec(spec, old *resourcev1.ResourceSliceSpec, p *field.Path) field.ErrorList {
	allErrs := validateDriverName(spec.Driver, p.Child("driver"))
	pp := p.Child("pool")
	allErrs = append(allErrs, validatePoolName(spec.Pool.Name, pp.Child("name"))...)
	if spec.Pool.ResourceSliceCount <= 0 {
		allErrs = append(allErrs, field.Invalid(pp.Child("resourceSliceCount"), spec.Pool.ResourceSliceCount, "must be greater than zero"))
	}
	if spec.Pool.Generation < 0 {
		allErrs = append(allErrs, field.Invalid(pp.Child("generation"), spec.Pool.Generation, "must be greater than or equal to zero"))
	}
	if old != nil {
		allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(spec.Pool.Name, old.Pool.Name, pp.Child("name"))...)
		allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(spec.Driver, old.Driver, p.Child("driver"))...)
		allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(spec.NodeName, old.NodeName, p.Child("nodeName"))...)
	}
	var set []string
	if spec.NodeName != nil {
		if *spec.NodeName != "" {
			set = append(set, "`nodeName`")
			allErrs = append(allErrs, validateNodeName(*spec.NodeName, p.Child("nodeName"))...)
		} else {
			allErrs = append(allErrs, field.Invalid(p.Child("nodeName"), "", "must be either unset or set to a non-empty string"))
		}
	}
	if spec.NodeSelector != nil {
		set = append(set, "`nodeSelector`")
		allErrs = append(allErrs, core.ValidateNodeSelector(spec.NodeSelector, p.Child("nodeSelector"))...)
		if len(spec.NodeSelector.NodeSelectorTerms) != 1 {
			allErrs = append(allErrs, field.Invalid(p.Child("nodeSelector", "nodeSelectorTerms"), spec.NodeSelector.NodeSelectorTerms, "must have exactly one node selector term"))
		}
	}
	for _, f := range []struct {
		name string
		v    *bool
	}{{"allNodes", spec.AllNodes}, {"perDeviceNodeSelection", spec.PerDeviceNodeSelection}} {
		if f.v == nil {
			continue
		}
		if *f.v {
			set = append(set, "`"+f.name+"`")
		} else {
			allErrs = append(allErrs, field.Invalid(p.Child(f.name), false, "must be either unset or set to true"))
		}
	}
	switch len(set) {
	case 0:
		allErrs = append(allErrs, field.Required(p, "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"))
	case 1:
	default:
		allErrs = append(allErrs, field.Invalid(p, "{"+strings.Join(set, ", ")+"}", "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"))
	}
	// Counter sets live in slices of their own; devices consume them from
	// any slice of the same pool.
	if spec.SharedCounters != nil && spec.Devices != nil {
		allErrs = append(allErrs, field.Invalid(p, "", "only one of `sharedCounters` or `devices` is allowed"))
	}
	maxDevices := resourcev1.ResourceSliceMaxDevices
	if usesAdvancedFeatures(spec) {
		maxDevices = resourcev1.ResourceSliceMaxDevicesWithAdvancedFeatures
	}
	perDevice := spec.PerDeviceNodeSelection != nil && *spec.PerDeviceNodeSelection
	allErrs = append(allErrs, validateSet(spec.Devices, maxDevices,
		func(d resourcev1.Device, p *field.Path) field.ErrorList {
			return validateDevice(d, lookupDevice(old, d.Name), p, perDevice)
		},
		func(d resourcev1.Device) string { return d.Name }, p.Child("devices"))...)
	allErrs = append(allErrs, validateSet(spec.SharedCounters, resourcev1.ResourceSliceMaxCounterSets,
		func(cs resourcev1.CounterSet, p *field.Path) field.ErrorList {
			var errs field.ErrorList
			if cs.Name == "" {
				errs = append(errs, field.Required(p.Child("name"), ""))
			} else {
				errs = append(errs, validateDNSLabel(cs.Name, p.Child("name"))...)
			}
			if len(cs.Counters) == 0 {
				return append(errs, field.Required(p.Child("counters"), ""))
			}
			return append(errs, validateMap(cs.Counters, resourcev1.ResourceSliceMaxCountersPerCounterSet, validation.DNS1123LabelMaxLength,
				validateDNSLabel, nil, p.Child("counters"))...)
		},
		func(cs resourcev1.CounterSet) string { return cs.Name }, p.Child("sharedCounters"))...)
	if spec.PartitionTypeAttribute != nil {
		allErrs = append(allErrs, validatePartitionTypeAttribute(spec, p)...)
	}
	return append(allErrs, validateSkipNodeOperations(spec.SkipNodeOperations, p.Child("skipNodeOperations"))...)
}

// usesAdvancedFeatures: a slice whose devices have taints, consume
// counters or carry list attributes may hold at most 64 devices.
func usesAdvancedFeatures(spec *resourcev1.ResourceSliceSpec) bool {
	for _, d := range spec.Devices {
		if len(d.Taints) > 0 || len(d.ConsumesCounters) > 0 {
			return true
		}
		for _, a := range d.Attributes {
			if a.BoolValues != nil || a.IntValues != nil || a.StringValues != nil || a.VersionValues != nil {
				return true
			}
		}
	}
	return false
}

func lookupDevice(spec *resourcev1.ResourceSliceSpec, name string) *resourcev1.Device {
	if spec == nil {
		return nil
	}
	for i := range spec.Devices {
		if spec.Devices[i].Name == name {
			return &spec.Devices[i]
		}
	}
	return nil
}

// validatePartitionTypeAttribute: only a slice whose devices consume
// counters names a partition type attribute, and each such device carries
// it as a string (a name in the driver's domain may be given bare).
func validatePartitionTypeAttribute(spec *resourcev1.ResourceSliceSpec, p *field.Path) field.ErrorList {
	name := string(*spec.PartitionTypeAttribute)
	consumes := false
	for _, d := range spec.Devices {
		consumes = consumes || len(d.ConsumesCounters) > 0
	}
	if !consumes {
		return field.ErrorList{field.Invalid(p.Child("partitionTypeAttribute"), name, "may only be set on a slice which declares devices that consume counters")}
	}
	allErrs := validateFullyQualifiedName(*spec.PartitionTypeAttribute, p.Child("partitionTypeAttribute"))
	if len(allErrs) > 0 {
		return allErrs
	}
	bare, _ := strings.CutPrefix(name, spec.Driver+"/")
	for i, d := range spec.Devices {
		if len(d.ConsumesCounters) == 0 {
			continue
		}
		ap := p.Child("devices").Index(i).Child("attributes").Key(name)
		a, ok := d.Attributes[resourcev1.QualifiedName(name)]
		if !ok && bare != "" {
			a, ok = d.Attributes[resourcev1.QualifiedName(bare)]
		}
		switch {
		case !ok:
			allErrs = append(allErrs, field.Required(ap, "device consumes counters and `partitionTypeAttribute` names this attribute, so it must be set"))
		case a.StringValue == nil:
			allErrs = append(allErrs, field.Invalid(ap, a, "must be a string value because `partitionTypeAttribute` names this attribute"))
		}
	}
	return allErrs
}

// validateSkipNodeOperations: NodePrepareResources is skipped only
// together with NodeUnprepareResources (or "*").
func validateSkipNodeOperations(ops []resourcev1.SkipNodeOperation, p *field.Path) field.ErrorList {
	has := map[resourcev1.SkipNodeOperation]bool{}
	for _, o := range ops {
		has[o] = true
	}
	if has[resourcev1.SkipNodeOperationNodePrepareResources] && !has[resourcev1.SkipNodeOperationNodeUnprepareResources] && !has[resourcev1.SkipNodeOperationAll] {
		return field.ErrorList{field.Invalid(p, ops, "NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped")}
	}
	return nil
}

var semverRE = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?` +
	`(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$`)

// attributeAndCapacityMaxKeyLength bounds the key shown in error paths.
const attributeAndCapacityMaxKeyLength = resourcev1.DeviceMaxDomainLength + 1 + resourcev1.DeviceMaxIDLength

func validateDevice(d resourcev1.Device, old *resourcev1.Device, p *field.Path, perDevice bool) field.ErrorList {
	allErrs := validateDNSLabel(d.Name, p.Child("name"))
	if n := len(d.Attributes) + len(d.Capacity); n > resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice {
		allErrs = append(allErrs, field.Invalid(p, n, fmt.Sprintf("the total number of attributes and capacities must not exceed %d", resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice)))
	}
	values := 0
	for _, a := range d.Attributes {
		if n := len(a.BoolValues) + len(a.IntValues) + len(a.StringValues) + len(a.VersionValues); n > 0 {
			values += n
		} else {
			values++
		}
	}
	if values > resourcev1.ResourceSliceMaxAttributeValuesPerDevice {
		allErrs = append(allErrs, field.Invalid(p, values, fmt.Sprintf("the total number of attribute values must not exceed %d", resourcev1.ResourceSliceMaxAttributeValuesPerDevice)))
	}
	allErrs = append(allErrs, validateMap(d.Attributes, -1, attributeAndCapacityMaxKeyLength, validateQualifiedName, validateAttribute, p.Child("attributes"))...)
	if old == nil || !equality.Semantic.DeepEqual(old.Capacity, d.Capacity) {
		multi := d.AllowMultipleAllocations != nil && *d.AllowMultipleAllocations
		allErrs = append(allErrs, validateMap(d.Capacity, -1, attributeAndCapacityMaxKeyLength, validateQualifiedName,
			func(c resourcev1.DeviceCapacity, p *field.Path) field.ErrorList {
				if c.RequestPolicy != nil && !multi {
					return field.ErrorList{field.Forbidden(p.Child("requestPolicy"), "allowMultipleAllocations must be true")}
				}
				return nil
			}, p.Child("capacity"))...)
	}
	if old == nil || !equality.Semantic.DeepEqual(old.Taints, d.Taints) {
		allErrs = append(allErrs, validateSlice(d.Taints, resourcev1.DeviceTaintsMaxLength,
			func(t resourcev1.DeviceTaint, p *field.Path) field.ErrorList { return validateTaint(t, nil, p) }, p.Child("taints"))...)
	}
	allErrs = append(allErrs, validateSet(d.ConsumesCounters, resourcev1.ResourceSliceMaxDeviceCounterConsumptionsPerDevice,
		func(c resourcev1.DeviceCounterConsumption, p *field.Path) field.ErrorList {
			var errs field.ErrorList
			if c.CounterSet == "" {
				errs = append(errs, field.Required(p.Child("counterSet"), ""))
			} else {
				errs = append(errs, validateDNSLabel(c.CounterSet, p.Child("counterSet"))...)
			}
			if len(c.Counters) == 0 {
				return append(errs, field.Required(p.Child("counters"), ""))
			}
			return append(errs, validateMap(c.Counters, resourcev1.ResourceSliceMaxCountersPerDeviceCounterConsumption, validation.DNS1123LabelMaxLength,
				validateDNSLabel, nil, p.Child("counters"))...)
		},
		func(c resourcev1.DeviceCounterConsumption) string { return c.CounterSet }, p.Child("consumesCounters"))...)
	const perDeviceMsg = "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec"
	if perDevice {
		var set []string
		if d.NodeName != nil {
			if *d.NodeName != "" {
				set = append(set, "`nodeName`")
				allErrs = append(allErrs, validateNodeName(*d.NodeName, p.Child("nodeName"))...)
			} else {
				allErrs = append(allErrs, field.Invalid(p.Child("nodeName"), "", "must not be empty"))
			}
		}
		if d.NodeSelector != nil {
			set = append(set, "`nodeSelector`")
			allErrs = append(allErrs, core.ValidateNodeSelector(d.NodeSelector, p.Child("nodeSelector"))...)
		}
		if d.AllNodes != nil {
			if *d.AllNodes {
				set = append(set, "`allNodes`")
			} else {
				allErrs = append(allErrs, field.Invalid(p.Child("allNodes"), false, "must be either unset or set to true"))
			}
		}
		switch len(set) {
		case 0:
			allErrs = append(allErrs, field.Required(p, perDeviceMsg))
		case 1:
		default:
			allErrs = append(allErrs, field.Invalid(p, "{"+strings.Join(set, ", ")+"}", perDeviceMsg))
		}
	} else if d.NodeName != nil || d.NodeSelector != nil || d.AllNodes != nil {
		allErrs = append(allErrs, field.Invalid(p, nil, "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec"))
	}
	return append(allErrs, validateBindingConditions(d.BindingConditions, d.BindingFailureConditions, p)...)
}

func validateAttribute(a resourcev1.DeviceAttribute, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	n := 0
	value := func(v *string, child string, version bool) {
		vp := p.Child(child)
		if version && !semverRE.MatchString(*v) {
			allErrs = append(allErrs, field.Invalid(vp, *v, "must be a string compatible with semver.org spec 2.0.0"))
		}
		if len(*v) > resourcev1.DeviceAttributeMaxValueLength {
			allErrs = append(allErrs, field.TooLong(vp, "", resourcev1.DeviceAttributeMaxValueLength))
		}
	}
	list := func(set bool, length int, child string, items any) {
		if !set {
			return
		}
		n++
		if length == 0 {
			allErrs = append(allErrs, field.Invalid(p.Child(child), items, "must not be empty if specified"))
		}
	}
	for _, set := range []bool{a.BoolValue != nil, a.IntValue != nil} {
		if set {
			n++
		}
	}
	if a.StringValue != nil {
		n++
		value(a.StringValue, "string", false)
	}
	if a.VersionValue != nil {
		n++
		value(a.VersionValue, "version", true)
	}
	list(a.BoolValues != nil, len(a.BoolValues), "bools", a.BoolValues)
	list(a.IntValues != nil, len(a.IntValues), "ints", a.IntValues)
	list(a.StringValues != nil, len(a.StringValues), "strings", a.StringValues)
	for i := range a.StringValues {
		if len(a.StringValues[i]) > resourcev1.DeviceAttributeMaxValueLength {
			allErrs = append(allErrs, field.TooLong(p.Child("strings").Index(i), "", resourcev1.DeviceAttributeMaxValueLength))
		}
	}
	list(a.VersionValues != nil, len(a.VersionValues), "versions", a.VersionValues)
	for i := range a.VersionValues {
		v := a.VersionValues[i]
		if !semverRE.MatchString(v) {
			allErrs = append(allErrs, field.Invalid(p.Child("versions").Index(i), v, "must be a string compatible with semver.org spec 2.0.0"))
		}
		if len(v) > resourcev1.DeviceAttributeMaxValueLength {
			allErrs = append(allErrs, field.TooLong(p.Child("versions").Index(i), "", resourcev1.DeviceAttributeMaxValueLength))
		}
	}
	switch n {
	case 0:
		allErrs = append(allErrs, field.Invalid(p, "", "exactly one value must be specified"))
	case 1:
	default:
		allErrs = append(allErrs, field.Invalid(p, a, "exactly one value must be specified"))
	}
	return allErrs
}

func validateBindingConditions(conds, failure []string, p *field.Path) field.ErrorList {
	allErrs := validateSlice(conds, resourcev1.BindingConditionsMaxSize, metav1validation.ValidateLabelName, p.Child("bindingConditions"))
	allErrs = append(allErrs, validateSlice(failure, resourcev1.BindingFailureConditionsMaxSize, metav1validation.ValidateLabelName, p.Child("bindingFailureConditions"))...)
	seen := map[string]bool{}
	for i, c := range conds {
		if seen[c] {
			allErrs = append(allErrs, field.Duplicate(p.Child("bindingConditions").Index(i), c))
		}
		seen[c] = true
	}
	seenFailure := map[string]bool{}
	for i, c := range failure {
		if seenFailure[c] {
			allErrs = append(allErrs, field.Duplicate(p.Child("bindingFailureConditions").Index(i), c))
		}
		seenFailure[c] = true
		if seen[c] {
			allErrs = append(allErrs, field.Invalid(p.Child("bindingFailureConditions").Index(i), c, "bindingFailureConditions must not overlap with bindingConditions"))
		}
	}
	if len(conds) == 0 && len(failure) > 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("bindingConditions"), conds, "bindingConditions are required to use bindingFailureConditions"))
	}
	if len(failure) == 0 && len(conds) > 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("bindingFailureConditions"), failure, "bindingFailureConditions are required to use bindingConditions"))
	}
	return allErrs
}

// ValidateDeviceTaintRule validates a new DeviceTaintRule.
func ValidateDeviceTaintRule(r *resourcev1.DeviceTaintRule) field.ErrorList {
	allErrs := core.ValidateObjectMeta(&r.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validateDeviceTaintRuleSpec(&r.Spec, nil, field.NewPath("spec"))...)
}

// ValidateDeviceTaintRuleUpdate validates an update; the spec may change
// (the taint's effect is checked only when it changes).
func ValidateDeviceTaintRuleUpdate(r, old *resourcev1.DeviceTaintRule) field.ErrorList {
	allErrs := core.ValidateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateDeviceTaintRuleSpec(&r.Spec, &old.Spec.Taint, field.NewPath("spec"))...)
}

// ValidateDeviceTaintRuleStatusUpdate: at most 8 conditions, unique by
// type, each valid.
func ValidateDeviceTaintRuleStatusUpdate(r, old *resourcev1.DeviceTaintRule) field.ErrorList {
	allErrs := core.ValidateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	cp := field.NewPath("status", "conditions")
	if n := len(r.Status.Conditions); n > resourcev1.DeviceTaintRuleStatusMaxConditions {
		allErrs = append(allErrs, field.TooMany(cp, n, resourcev1.DeviceTaintRuleStatusMaxConditions))
	}
	return append(allErrs, metav1validation.ValidateConditions(r.Status.Conditions, cp)...)
}

func validateDeviceTaintRuleSpec(spec *resourcev1.DeviceTaintRuleSpec, oldTaint *resourcev1.DeviceTaint, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if s := spec.DeviceSelector; s != nil {
		sp := p.Child("deviceSelector")
		if s.Driver != nil {
			allErrs = append(allErrs, validateDriverName(*s.Driver, sp.Child("driver"))...)
		}
		if s.Pool != nil {
			allErrs = append(allErrs, validatePoolName(*s.Pool, sp.Child("pool"))...)
		}
		if s.Device != nil {
			allErrs = append(allErrs, validateDNSLabel(*s.Device, sp.Child("device"))...)
		}
	}
	return append(allErrs, validateTaint(spec.Taint, oldTaint, p.Child("taint"))...)
}

// validateDriverName: a driver is named like a CSI driver (a DNS subdomain
// of at most 63 characters, case ignored).
func validateDriverName(name string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if len(name) > resourcev1.DriverNameMaxLength {
		allErrs = append(allErrs, field.TooLong(p, "", resourcev1.DriverNameMaxLength))
	}
	for _, msg := range content.IsDNS1123Subdomain(strings.ToLower(name)) {
		allErrs = append(allErrs, field.Invalid(p, name, msg))
	}
	return allErrs
}

// validatePoolName: one or more DNS subdomains separated by "/", at most
// 253 characters in all.
func validatePoolName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var allErrs field.ErrorList
	if len(name) > resourcev1.PoolNameMaxLength {
		allErrs = append(allErrs, field.TooLong(p, "", resourcev1.PoolNameMaxLength))
	}
	for _, part := range strings.Split(name, "/") {
		allErrs = append(allErrs, validateDNSSubdomain(part, p)...)
	}
	return allErrs
}

func validateNodeName(name string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(name, false) {
		allErrs = append(allErrs, field.Invalid(p, name, msg))
	}
	return allErrs
}

func validateDNSLabel(v string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range content.IsDNS1123Label(v) {
		allErrs = append(allErrs, field.Invalid(p, v, msg))
	}
	return allErrs
}

func validateDNSSubdomain(v string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range content.IsDNS1123Subdomain(v) {
		allErrs = append(allErrs, field.Invalid(p, v, msg))
	}
	return allErrs
}

func validateLabelValue(v string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range content.IsLabelValue(v) {
		allErrs = append(allErrs, field.Invalid(p, v, msg))
	}
	return allErrs
}

// validateQualifiedName: an attribute or capacity name, a C identifier
// optionally prefixed by a driver-like domain and "/".
func validateQualifiedName(name string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	parts := strings.Split(name, "/")
	switch len(parts) {
	case 1:
		allErrs = append(allErrs, validateCIdentifier(parts[0], p)...)
	case 2:
		if parts[0] == "" {
			allErrs = append(allErrs, field.Invalid(p, "", "the domain must not be empty"))
		} else {
			allErrs = append(allErrs, validateDriverName(parts[0], p)...)
		}
		if parts[1] == "" {
			allErrs = append(allErrs, field.Invalid(p, "", "the name must not be empty"))
		} else {
			allErrs = append(allErrs, validateCIdentifier(parts[1], p)...)
		}
	default:
		allErrs = append(allErrs, field.Invalid(p, name, "must not contain more than one slash"))
	}
	return allErrs
}

func validateFullyQualifiedName(name resourcev1.FullyQualifiedName, p *field.Path) field.ErrorList {
	allErrs := validateQualifiedName(string(name), p)
	if !strings.Contains(string(name), "/") {
		allErrs = append(allErrs, field.Invalid(p, name, "a fully qualified name must be a domain and a name separated by a slash"))
	}
	return allErrs
}

func validateCIdentifier(id string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(id) > resourcev1.DeviceMaxIDLength {
		allErrs = append(allErrs, field.TooLong(p, "", resourcev1.DeviceMaxIDLength))
	}
	for _, msg := range validation.IsCIdentifier(id) {
		allErrs = append(allErrs, field.Invalid(p, id, msg))
	}
	return allErrs
}

// validateSlice checks the length first (a negative max means unbounded):
// an over-long list gets only a TooMany error that shows the count, as
// upstream (a guard against huge inputs); otherwise every item is checked.
func validateSlice[T any](items []T, max int, item func(T, *field.Path) field.ErrorList, p *field.Path) field.ErrorList {
	if max >= 0 && len(items) > max {
		return field.ErrorList{field.TooMany(p, len(items), max)}
	}
	var allErrs field.ErrorList
	for i, it := range items {
		allErrs = append(allErrs, item(it, p.Index(i))...)
	}
	return allErrs
}

// validateSet is validateSlice plus uniqueness by key (reported at the
// index of the later duplicate).
func validateSet[T any, K comparable](items []T, max int, item func(T, *field.Path) field.ErrorList, key func(T) K, p *field.Path) field.ErrorList {
	if max >= 0 && len(items) > max {
		return field.ErrorList{field.TooMany(p, len(items), max)}
	}
	allErrs := validateSlice(items, -1, item, p)
	seen := map[K]bool{}
	for i, it := range items {
		k := key(it)
		if seen[k] {
			allErrs = append(allErrs, field.Duplicate(p.Index(i), k))
		}
		seen[k] = true
	}
	return allErrs
}

// validateMap checks a map's size (an over-long map gets only TooMany),
// then each key (errors at the map's path, as upstream) and each value
// (at the key's path, long keys shortened in the middle).
func validateMap[K ~string, V any](m map[K]V, max, truncateKeyLen int, key func(string, *field.Path) field.ErrorList, value func(V, *field.Path) field.ErrorList, p *field.Path) field.ErrorList {
	if max >= 0 && len(m) > max {
		return field.ErrorList{field.TooMany(p, len(m), max)}
	}
	var allErrs field.ErrorList
	for _, k := range sortedKeys(m) {
		allErrs = append(allErrs, key(string(k), p)...)
		if value != nil {
			allErrs = append(allErrs, value(m[k], p.Key(truncateKey(string(k), truncateKeyLen)))...)
		}
	}
	return allErrs
}

func truncateKey(s string, max int) string {
	if max < 16 {
		max = 16
	}
	if len(s) <= max {
		return s
	}
	rest := max - len("...")
	return s[:(rest+1)/2] + "..." + s[len(s)-rest/2:]
}

func stringKey(s string) string { return s }

func sortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}

// PrepareResourceClaimStatusUpdate drops, as upstream, the status of
// devices the update deallocates (status.devices entries for devices the
// old allocation held and the new one does not).
func PrepareResourceClaimStatusUpdate(c, old *resourcev1.ResourceClaim) {
	gone := map[string]bool{}
	if old.Status.Allocation != nil {
		for _, r := range old.Status.Allocation.Devices.Results {
			gone[deviceID(r.Driver, r.Pool, r.Device, (*string)(r.ShareID))] = true
		}
	}
	if c.Status.Allocation != nil {
		for _, r := range c.Status.Allocation.Devices.Results {
			delete(gone, deviceID(r.Driver, r.Pool, r.Device, (*string)(r.ShareID)))
		}
	}
	kept := c.Status.Devices[:0]
	for _, d := range c.Status.Devices {
		if !gone[deviceID(d.Driver, d.Pool, d.Device, d.ShareID)] {
			kept = append(kept, d)
		}
	}
	c.Status.Devices = kept
	if len(c.Status.Devices) == 0 {
		c.Status.Devices = nil
	}
}
