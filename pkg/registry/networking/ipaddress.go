package networking

import (
	"fmt"
	"net/netip"

	networkingv1 "k8s.io/api/networking/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/registry"
)

// Labels the Service IP allocator puts on the IPAddress objects it owns.
const (
	LabelIPFamily  = "ipaddress.kubernetes.io/ip-family"
	LabelManagedBy = "ipaddress.kubernetes.io/managed-by"
	// ManagedByAllocator is the allocator's name in LabelManagedBy.
	ManagedByAllocator = "ipallocator.k8s.io"
	// DefaultServiceCIDRName is the ServiceCIDR made from the API server's
	// --service-cluster-ip-range.
	DefaultServiceCIDRName = "kubernetes"
)

// AllocationDefinitions are the networking.k8s.io/v1 resources that record
// Service IP allocation: ipaddresses (one object per allocated address,
// named by it) and servicecidrs (the ranges addresses come from).
func AllocationDefinitions() []*registry.Definition {
	ip := registry.NewDefinition("networking.k8s.io", "v1", "ipaddresses", "IPAddress", false,
		func() runtime.Object { return &networkingv1.IPAddress{} }, func() runtime.Object { return &networkingv1.IPAddressList{} },
		&registry.Strategy{Validate: registry.Validate(ValidateIPAddress), ValidateUpdate: registry.ValidateUpdate(ValidateIPAddressUpdate)})
	ip.ShortNames = []string{"ip"}
	cidr := registry.NewDefinition("networking.k8s.io", "v1", "servicecidrs", "ServiceCIDR", false,
		func() runtime.Object { return &networkingv1.ServiceCIDR{} }, func() runtime.Object { return &networkingv1.ServiceCIDRList{} },
		&registry.Strategy{Validate: registry.Validate(ValidateServiceCIDR), ValidateUpdate: registry.ValidateUpdate(ValidateServiceCIDRUpdate),
			HasStatus: true, Generation: true})
	cidr.ValidateStatus = registry.ValidateUpdate(ValidateServiceCIDRStatusUpdate)
	return []*registry.Definition{ip, cidr}
}

// ValidateIPAddress: the name is the address in canonical form (so one
// address has exactly one possible object), and the parent is named.
func ValidateIPAddress(ip *networkingv1.IPAddress) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&ip.ObjectMeta, false, validateIPAddressName, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	ref := ip.Spec.ParentRef
	if ref == nil {
		return append(allErrs, field.Required(spec.Child("parentRef"), ""))
	}
	p := spec.Child("parentRef")
	if ref.Group != "" {
		for _, msg := range dnsSubdomain(ref.Group) {
			allErrs = append(allErrs, field.Invalid(p.Child("group"), ref.Group, msg))
		}
	}
	if ref.Resource == "" {
		allErrs = append(allErrs, field.Required(p.Child("resource"), ""))
	} else {
		for _, msg := range pathSegmentName(ref.Resource) {
			allErrs = append(allErrs, field.Invalid(p.Child("resource"), ref.Resource, msg))
		}
	}
	if ref.Name == "" {
		allErrs = append(allErrs, field.Required(p.Child("name"), ""))
	} else {
		for _, msg := range pathSegmentName(ref.Name) {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), ref.Name, msg))
		}
	}
	if ref.Namespace != "" {
		for _, msg := range apimachineryvalidation.ValidateNamespaceName(ref.Namespace, false) {
			allErrs = append(allErrs, field.Invalid(p.Child("namespace"), ref.Namespace, msg))
		}
	}
	return allErrs
}

// ValidateIPAddressUpdate: an IPAddress's parent never changes.
func ValidateIPAddressUpdate(ip, old *networkingv1.IPAddress) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&ip.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(ip.Spec.ParentRef, old.Spec.ParentRef, field.NewPath("spec", "parentRef"))...)
	return allErrs
}

func validateIPAddressName(name string, _ bool) []string {
	addr, err := netip.ParseAddr(name)
	if err != nil {
		return []string{"must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"}
	}
	if addr.Zone() != "" || addr.Is4In6() {
		return []string{"must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"}
	}
	if addr.String() != name {
		return []string{fmt.Sprintf("must be in canonical form (%q)", addr.String())}
	}
	return nil
}

// ValidateServiceCIDR: one CIDR, or two of different families
// (dual-stack), each a canonical network address; spec is immutable once
// set (checked on update).
func ValidateServiceCIDR(sc *networkingv1.ServiceCIDR) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&sc.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	p := field.NewPath("spec", "cidrs")
	switch n := len(sc.Spec.CIDRs); {
	case n == 0:
		return append(allErrs, field.Required(p, "at least one CIDR required"))
	case n > 2:
		return append(allErrs, field.Invalid(p, sc.Spec.CIDRs, "may only hold up to 2 values"))
	}
	var families []bool
	for i, c := range sc.Spec.CIDRs {
		pfx, err := netip.ParsePrefix(c)
		if err != nil {
			allErrs = append(allErrs, field.Invalid(p.Index(i), c, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"))
			continue
		}
		if pfx.Masked() != pfx {
			allErrs = append(allErrs, field.Invalid(p.Index(i), c, fmt.Sprintf("must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64); the address has bits set beyond the mask (%s)", pfx.Masked())))
			continue
		}
		families = append(families, pfx.Addr().Is4())
	}
	if len(families) == 2 && families[0] == families[1] {
		allErrs = append(allErrs, field.Invalid(p, sc.Spec.CIDRs, "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"))
	}
	return allErrs
}

// ValidateServiceCIDRUpdate: the ranges may only be completed to
// dual-stack (one CIDR becoming two, the first unchanged), never changed.
func ValidateServiceCIDRUpdate(sc, old *networkingv1.ServiceCIDR) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&sc.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	p := field.NewPath("spec", "cidrs")
	switch {
	case len(old.Spec.CIDRs) == 1 && len(sc.Spec.CIDRs) == 2 && old.Spec.CIDRs[0] == sc.Spec.CIDRs[0]:
		allErrs = append(allErrs, ValidateServiceCIDR(sc)...)
	case len(old.Spec.CIDRs) != len(sc.Spec.CIDRs):
		allErrs = append(allErrs, field.Invalid(p, sc.Spec.CIDRs, "field is immutable"))
	default:
		for i := range sc.Spec.CIDRs {
			if sc.Spec.CIDRs[i] != old.Spec.CIDRs[i] {
				allErrs = append(allErrs, field.Invalid(p.Index(i), sc.Spec.CIDRs[i], "field is immutable"))
			}
		}
	}
	return allErrs
}

// ValidateServiceCIDRStatusUpdate: as upstream, the conditions are not
// validated (upstream's own controller sets Ready without a reason).
func ValidateServiceCIDRStatusUpdate(sc, old *networkingv1.ServiceCIDR) field.ErrorList {
	return apimachineryvalidation.ValidateObjectMetaUpdate(&sc.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
}
