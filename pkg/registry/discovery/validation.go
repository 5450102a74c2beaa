package discovery

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Size limits, as upstream. A slice holds at most 1000 endpoints (the
// EndpointSlice controller puts 100 per slice by default).
const (
	maxTopologyLabels = 16
	maxAddresses      = 100
	maxPorts          = 20000
	maxEndpoints      = 1000
	maxZoneHints      = 8
	maxNodeHints      = 8
)

// ValidateEndpointSlice validates a new EndpointSlice (after defaulting).
func ValidateEndpointSlice(slice *discoveryv1.EndpointSlice) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&slice.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	allErrs = append(allErrs, validateAddressType(slice.AddressType)...)
	allErrs = append(allErrs, validateEndpoints(slice.Endpoints, slice.AddressType, field.NewPath("endpoints"))...)
	allErrs = append(allErrs, validatePorts(slice.Ports, field.NewPath("ports"))...)
	return allErrs
}

// ValidateEndpointSliceUpdate validates an update: everything may change
// except addressType.
func ValidateEndpointSliceUpdate(slice, old *discoveryv1.EndpointSlice) field.ErrorList {
	allErrs := ValidateEndpointSlice(slice)
	allErrs = append(allErrs, apimachineryvalidation.ValidateObjectMetaUpdate(&slice.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(slice.AddressType, old.AddressType, field.NewPath("addressType"))...)
	return allErrs
}

func validateAddressType(t discoveryv1.AddressType) field.ErrorList {
	path := field.NewPath("addressType")
	switch t {
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN:
		return nil
	case "":
		return field.ErrorList{field.Required(path, "")}
	default:
		return field.ErrorList{field.NotSupported(path, t, []string{"FQDN", "IPv4", "IPv6"})}
	}
}

func validateEndpoints(endpoints []discoveryv1.Endpoint, addressType discoveryv1.AddressType, fldPath *field.Path) field.ErrorList {
	if len(endpoints) > maxEndpoints {
		return field.ErrorList{field.TooMany(fldPath, len(endpoints), maxEndpoints)}
	}
	var allErrs field.ErrorList
	for i := range endpoints {
		ep := &endpoints[i]
		idxPath := fldPath.Index(i)
		addressesPath := idxPath.Child("addresses")

		if len(ep.Addresses) == 0 {
			allErrs = append(allErrs, field.Required(addressesPath, "must contain at least 1 address"))
		} else if len(ep.Addresses) > maxAddresses {
			allErrs = append(allErrs, field.TooMany(addressesPath, len(ep.Addresses), maxAddresses))
		}
		for j, address := range ep.Addresses {
			allErrs = append(allErrs, validateAddress(address, addressType, addressesPath.Index(j))...)
		}

		if ep.NodeName != nil {
			for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(*ep.NodeName, false) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("nodeName"), *ep.NodeName, msg))
			}
		}
		topologyPath := idxPath.Child("deprecatedTopology")
		if len(ep.DeprecatedTopology) > maxTopologyLabels {
			allErrs = append(allErrs, field.TooMany(topologyPath, len(ep.DeprecatedTopology), maxTopologyLabels))
		}
		allErrs = append(allErrs, metav1validation.ValidateLabels(ep.DeprecatedTopology, topologyPath)...)
		if ep.Hostname != nil {
			for _, msg := range content.IsDNS1123Label(*ep.Hostname) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("hostname"), *ep.Hostname, msg))
			}
		}
		if ep.Hints != nil {
			allErrs = append(allErrs, validateHints(ep.Hints, idxPath.Child("hints"))...)
		}
	}
	return allErrs
}

// validateAddress checks one address against the slice's addressType.
// Upstream also warns about non-canonical IPs; skiff only validates.
func validateAddress(address string, addressType discoveryv1.AddressType, fldPath *field.Path) field.ErrorList {
	switch addressType {
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6:
		family, want := "IPv4", func(a netip.Addr) bool { return a.Is4() }
		if addressType == discoveryv1.AddressTypeIPv6 {
			family, want = "IPv6", func(a netip.Addr) bool { return a.Is6() && !a.Is4In6() }
		}
		ip, err := netip.ParseAddr(address)
		if err != nil || ip.Zone() != "" || !want(ip) {
			return field.ErrorList{field.Invalid(fldPath, address, fmt.Sprintf("must be a valid %s address", family))}
		}
		return validateEndpointIP(ip, address, fldPath)
	case discoveryv1.AddressTypeFQDN:
		return utilvalidation.IsFullyQualifiedDomainName(fldPath, address)
	}
	// Unknown address types are reported once, on addressType.
	return nil
}

// validateEndpointIP rejects addresses that cannot reach a pod from
// elsewhere: unspecified, loopback and link-local ones. (Upstream's
// ValidateEndpointIP.)
func validateEndpointIP(ip netip.Addr, address string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if ip.IsUnspecified() {
		allErrs = append(allErrs, field.Invalid(fldPath, address, fmt.Sprintf("may not be unspecified (%v)", address)))
	}
	if ip.IsLoopback() {
		allErrs = append(allErrs, field.Invalid(fldPath, address, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if ip.IsLinkLocalUnicast() {
		allErrs = append(allErrs, field.Invalid(fldPath, address, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if ip.IsLinkLocalMulticast() {
		allErrs = append(allErrs, field.Invalid(fldPath, address, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return allErrs
}

// validateHints checks topology-aware routing hints: at most 8 distinct
// zones and 8 distinct nodes per endpoint.
func validateHints(hints *discoveryv1.EndpointHints, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList

	zonesPath := fldPath.Child("forZones")
	if len(hints.ForZones) > maxZoneHints {
		allErrs = append(allErrs, field.TooMany(zonesPath, len(hints.ForZones), maxZoneHints))
	} else {
		seen := map[string]bool{}
		for i, z := range hints.ForZones {
			namePath := zonesPath.Index(i).Child("name")
			if seen[z.Name] {
				allErrs = append(allErrs, field.Duplicate(namePath, z.Name))
			}
			seen[z.Name] = true
			for _, msg := range content.IsLabelValue(z.Name) {
				allErrs = append(allErrs, field.Invalid(namePath, z.Name, msg))
			}
		}
	}

	nodesPath := fldPath.Child("forNodes")
	if len(hints.ForNodes) > maxNodeHints {
		allErrs = append(allErrs, field.TooMany(nodesPath, len(hints.ForNodes), maxNodeHints))
	} else {
		seen := map[string]bool{}
		for i, n := range hints.ForNodes {
			namePath := nodesPath.Index(i).Child("name")
			if seen[n.Name] {
				allErrs = append(allErrs, field.Duplicate(namePath, n.Name))
			}
			seen[n.Name] = true
			for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(n.Name, false) {
				allErrs = append(allErrs, field.Invalid(namePath, n.Name, msg))
			}
		}
	}
	return allErrs
}

// validatePorts: port names are unique in the slice ("" counts as a name)
// and, when set, DNS labels; the port number itself may be unset (meaning
// all ports).
func validatePorts(ports []discoveryv1.EndpointPort, fldPath *field.Path) field.ErrorList {
	if len(ports) > maxPorts {
		return field.ErrorList{field.TooMany(fldPath, len(ports), maxPorts)}
	}
	var allErrs field.ErrorList
	names := map[string]bool{}
	for i := range ports {
		p := &ports[i]
		idxPath := fldPath.Index(i)

		name := ""
		if p.Name != nil {
			name = *p.Name
		}
		if name != "" {
			for _, msg := range content.IsDNS1123Label(name) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("name"), name, msg))
			}
		}
		if names[name] {
			allErrs = append(allErrs, field.Duplicate(idxPath.Child("name"), name))
		}
		names[name] = true

		switch {
		case p.Protocol == nil:
			allErrs = append(allErrs, field.Required(idxPath.Child("protocol"), ""))
		case *p.Protocol != corev1.ProtocolTCP && *p.Protocol != corev1.ProtocolUDP && *p.Protocol != corev1.ProtocolSCTP:
			allErrs = append(allErrs, field.NotSupported(idxPath.Child("protocol"), *p.Protocol, []string{"SCTP", "TCP", "UDP"}))
		}

		if p.AppProtocol != nil {
			for _, msg := range content.IsQualifiedName(*p.AppProtocol) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("appProtocol"), *p.AppProtocol, msg))
			}
		}
	}
	return allErrs
}
