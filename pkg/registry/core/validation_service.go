package core

// Validation of Services and Endpoints.

import (
	"fmt"
	"net"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxClientIPServiceAffinitySeconds is the longest ClientIP session
// affinity timeout (one day).
const maxClientIPServiceAffinitySeconds = 86400

// isHeadlessService: clusterIP "None" (the strategy keeps spec.clusterIP and
// spec.clusterIPs in sync before validation, as upstream does).
func isHeadlessService(svc *corev1.Service) bool {
	return len(svc.Spec.ClusterIPs) == 1 && svc.Spec.ClusterIPs[0] == corev1.ClusterIPNone
}

// ValidateService validates a Service being created. Service names are DNS
// labels that also start with a letter (RFC 1035), because they become DNS
// names and environment variable names.
//
// The caller (the strategy) must first make spec.clusterIPs agree with
// spec.clusterIP, as upstream's PrepareForCreate does.
func ValidateService(svc *corev1.Service) field.ErrorList {
	metaPath := field.NewPath("metadata")
	allErrs := ValidateObjectMeta(&svc.ObjectMeta, true, apivalidation.NameIsDNS1035Label, metaPath)
	spec := &svc.Spec
	specPath := field.NewPath("spec")

	hints, hintsSet := svc.Annotations[corev1.DeprecatedAnnotationTopologyAwareHints]
	mode, modeSet := svc.Annotations[corev1.AnnotationTopologyMode]
	if hintsSet && modeSet && hints != mode {
		allErrs = append(allErrs, field.Invalid(metaPath.Child("annotations").Key(corev1.AnnotationTopologyMode), mode,
			fmt.Sprintf("must match annotations[%s] when both are specified", corev1.DeprecatedAnnotationTopologyAwareHints)))
	}

	if len(spec.Ports) == 0 && !isHeadlessService(svc) && spec.Type != corev1.ServiceTypeExternalName {
		allErrs = append(allErrs, field.Required(specPath.Child("ports"), ""))
	}
	switch spec.Type {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
		if isHeadlessService(svc) {
			allErrs = append(allErrs, field.Invalid(specPath.Child("clusterIPs").Index(0), spec.ClusterIPs[0], fmt.Sprintf("may not be set to 'None' for %s services", spec.Type)))
		}
	case corev1.ServiceTypeExternalName:
		if len(spec.ClusterIPs) > 0 {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		if len(spec.IPFamilies) > 0 {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("ipFamilies"), "may not be set for ExternalName services"))
		}
		if spec.IPFamilyPolicy != nil {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("ipFamilyPolicy"), "may not be set for ExternalName services"))
		}
		// The name is a CNAME target; a trailing dot marks it fully qualified.
		if cname := strings.TrimSuffix(spec.ExternalName, "."); cname != "" {
			allErrs = append(allErrs, validateDNS1123Subdomain(cname, specPath.Child("externalName"))...)
		} else {
			allErrs = append(allErrs, field.Required(specPath.Child("externalName"), ""))
		}
	}

	portsPath := specPath.Child("ports")
	names := map[string]bool{}
	for i := range spec.Ports {
		allErrs = append(allErrs, validateServicePort(&spec.Ports[i], len(spec.Ports) > 1, names, portsPath.Index(i))...)
	}
	if spec.Selector != nil {
		allErrs = append(allErrs, metavalidation.ValidateLabels(spec.Selector, specPath.Child("selector"))...)
	}

	if spec.SessionAffinity == "" {
		allErrs = append(allErrs, field.Required(specPath.Child("sessionAffinity"), ""))
	} else if spec.SessionAffinity != corev1.ServiceAffinityClientIP && spec.SessionAffinity != corev1.ServiceAffinityNone {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("sessionAffinity"), spec.SessionAffinity, []corev1.ServiceAffinity{corev1.ServiceAffinityClientIP, corev1.ServiceAffinityNone}))
	}
	cfgPath := specPath.Child("sessionAffinityConfig")
	switch spec.SessionAffinity {
	case corev1.ServiceAffinityClientIP:
		when := fmt.Sprintf("when session affinity type is %s", corev1.ServiceAffinityClientIP)
		switch c := spec.SessionAffinityConfig; {
		case c == nil:
			allErrs = append(allErrs, field.Required(cfgPath, when))
		case c.ClientIP == nil:
			allErrs = append(allErrs, field.Required(cfgPath.Child("clientIP"), when))
		case c.ClientIP.TimeoutSeconds == nil:
			allErrs = append(allErrs, field.Required(cfgPath.Child("clientIP", "timeoutSeconds"), when))
		case *c.ClientIP.TimeoutSeconds <= 0 || *c.ClientIP.TimeoutSeconds > maxClientIPServiceAffinitySeconds:
			allErrs = append(allErrs, field.Invalid(cfgPath.Child("clientIP", "timeoutSeconds"), *c.ClientIP.TimeoutSeconds,
				fmt.Sprintf("must be greater than 0 and less than %d", maxClientIPServiceAffinitySeconds)))
		}
	case corev1.ServiceAffinityNone:
		if spec.SessionAffinityConfig != nil {
			allErrs = append(allErrs, field.Forbidden(cfgPath, fmt.Sprintf("must not be set when session affinity is %s", corev1.ServiceAffinityNone)))
		}
	}

	allErrs = append(allErrs, validateServiceClusterIPs(svc)...)

	for i, ip := range spec.ExternalIPs {
		p := specPath.Child("externalIPs").Index(i)
		if errs := validation.IsValidIP(p, ip); len(errs) != 0 {
			allErrs = append(allErrs, errs...)
		} else {
			allErrs = append(allErrs, validateNonSpecialIP(ip, p)...)
		}
	}

	allErrs = append(allErrs, validateEnum(specPath.Child("type"), spec.Type,
		corev1.ServiceTypeClusterIP, corev1.ServiceTypeExternalName, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort)...)

	// nodePort is only for NodePort and LoadBalancer services, and unique
	// per protocol; (protocol, port) pairs are unique too.
	nodePorts, ports := map[string]bool{}, map[string]bool{}
	for i, port := range spec.Ports {
		p := portsPath.Index(i)
		if port.NodePort != 0 {
			if spec.Type == corev1.ServiceTypeClusterIP {
				allErrs = append(allErrs, field.Forbidden(p.Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
			}
			key := fmt.Sprintf("%s/%d", port.Protocol, port.NodePort)
			if nodePorts[key] {
				allErrs = append(allErrs, field.Duplicate(p.Child("nodePort"), port.NodePort))
			}
			nodePorts[key] = true
		}
		key := fmt.Sprintf("%s/%d", port.Protocol, port.Port)
		if ports[key] {
			allErrs = append(allErrs, field.Duplicate(p, corev1.ServicePort{Protocol: port.Protocol, Port: port.Port}))
		}
		ports[key] = true
	}

	if len(spec.LoadBalancerSourceRanges) > 0 {
		p := specPath.Child("LoadBalancerSourceRanges") // sic, upstream's path
		if spec.Type != corev1.ServiceTypeLoadBalancer {
			allErrs = append(allErrs, field.Forbidden(p, "may only be used when `type` is 'LoadBalancer'"))
		}
		for i, cidr := range spec.LoadBalancerSourceRanges {
			allErrs = append(allErrs, validation.IsValidCIDR(p.Index(i), strings.TrimSpace(cidr))...)
		}
	} else if v, ok := svc.Annotations[corev1.AnnotationLoadBalancerSourceRangesKey]; ok {
		p := metaPath.Child("annotations").Key(corev1.AnnotationLoadBalancerSourceRangesKey)
		if spec.Type != corev1.ServiceTypeLoadBalancer {
			allErrs = append(allErrs, field.Forbidden(p, "may only be used when `type` is 'LoadBalancer'"))
		}
		if v = strings.TrimSpace(v); v != "" {
			for _, cidr := range strings.Split(v, ",") {
				allErrs = append(allErrs, validation.IsValidCIDR(p, strings.TrimSpace(cidr))...)
			}
		}
	}

	if spec.AllocateLoadBalancerNodePorts != nil && spec.Type != corev1.ServiceTypeLoadBalancer {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"))
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer && spec.AllocateLoadBalancerNodePorts == nil {
		allErrs = append(allErrs, field.Required(field.NewPath("allocateLoadBalancerNodePorts"), "")) // sic
	}
	if spec.LoadBalancerClass != nil {
		if spec.Type == corev1.ServiceTypeLoadBalancer {
			allErrs = append(allErrs, ValidateQualifiedName(*spec.LoadBalancerClass, specPath.Child("loadBalancerClass"))...)
		} else {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("loadBalancerClass"), "may only be used when `type` is 'LoadBalancer'"))
		}
	}

	// Traffic policies.
	if !externallyAccessible(svc) {
		if spec.ExternalTrafficPolicy != "" {
			allErrs = append(allErrs, field.Invalid(specPath.Child("externalTrafficPolicy"), spec.ExternalTrafficPolicy, "may only be set for externally-accessible services"))
		}
	} else {
		allErrs = append(allErrs, validateEnum(specPath.Child("externalTrafficPolicy"), spec.ExternalTrafficPolicy,
			corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal)...)
	}
	needsHealthCheck := spec.Type == corev1.ServiceTypeLoadBalancer && spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
	if !needsHealthCheck {
		if spec.HealthCheckNodePort != 0 {
			allErrs = append(allErrs, field.Invalid(specPath.Child("healthCheckNodePort"), spec.HealthCheckNodePort, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
		}
	} else if spec.HealthCheckNodePort == 0 {
		allErrs = append(allErrs, field.Required(specPath.Child("healthCheckNodePort"), ""))
	} else {
		allErrs = append(allErrs, validatePortNumber(spec.HealthCheckNodePort, specPath.Child("healthCheckNodePort"))...)
	}
	if itp := spec.InternalTrafficPolicy; itp == nil {
		switch spec.Type {
		case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
			allErrs = append(allErrs, field.Required(specPath.Child("internalTrafficPolicy"), ""))
		}
	} else if *itp != corev1.ServiceInternalTrafficPolicyCluster && *itp != corev1.ServiceInternalTrafficPolicyLocal {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("internalTrafficPolicy"), *itp, []corev1.ServiceInternalTrafficPolicy{corev1.ServiceInternalTrafficPolicyCluster, corev1.ServiceInternalTrafficPolicyLocal}))
	}
	if td := spec.TrafficDistribution; td != nil {
		valid := []string{corev1.ServiceTrafficDistributionPreferClose, corev1.ServiceTrafficDistributionPreferSameNode, corev1.ServiceTrafficDistributionPreferSameZone}
		allErrs = append(allErrs, validateEnumAllowEmpty(specPath.Child("trafficDistribution"), *td, valid...)...)
	}
	return allErrs
}

func validateServicePort(sp *corev1.ServicePort, requireName bool, names map[string]bool, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if requireName && sp.Name == "" {
		allErrs = append(allErrs, field.Required(p.Child("name"), ""))
	} else if sp.Name != "" {
		allErrs = append(allErrs, validateDNS1123Label(sp.Name, p.Child("name"))...)
		if names[sp.Name] {
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), sp.Name))
		}
		names[sp.Name] = true
	}
	allErrs = append(allErrs, validatePortNumber(sp.Port, p.Child("port"))...)
	allErrs = append(allErrs, validateProtocol(sp.Protocol, p.Child("protocol"))...)
	allErrs = append(allErrs, validatePortNumOrName(sp.TargetPort, p.Child("targetPort"))...)
	if sp.AppProtocol != nil {
		allErrs = append(allErrs, ValidateQualifiedName(*sp.AppProtocol, p.Child("appProtocol"))...)
	}
	return allErrs
}

// validateServiceClusterIPs checks spec.clusterIP(s), spec.ipFamilies and
// spec.ipFamilyPolicy together.
func validateServiceClusterIPs(svc *corev1.Service) field.ErrorList {
	spec := &svc.Spec
	if spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	var allErrs field.ErrorList
	specPath := field.NewPath("spec")
	ipsPath := specPath.Child("clusterIPs")
	if spec.ClusterIP != "" {
		if len(spec.ClusterIPs) == 0 {
			allErrs = append(allErrs, field.Required(ipsPath, ""))
		} else if spec.ClusterIPs[0] != spec.ClusterIP {
			allErrs = append(allErrs, field.Invalid(ipsPath, spec.ClusterIPs, "first value must match `clusterIP`"))
		}
	} else if len(spec.ClusterIPs) != 0 {
		allErrs = append(allErrs, field.Invalid(ipsPath, spec.ClusterIPs, "must be empty when `clusterIP` is not specified"))
	}
	seen := map[corev1.IPFamily]bool{}
	for i, f := range spec.IPFamilies {
		if f != corev1.IPv4Protocol && f != corev1.IPv6Protocol {
			allErrs = append(allErrs, field.NotSupported(specPath.Child("ipFamilies").Index(i), f, []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}))
		}
		if seen[f] {
			allErrs = append(allErrs, field.Duplicate(specPath.Child("ipFamilies").Index(i), f))
		}
		seen[f] = true
	}
	if pol := spec.IPFamilyPolicy; pol != nil {
		switch *pol {
		case corev1.IPFamilyPolicySingleStack, corev1.IPFamilyPolicyPreferDualStack, corev1.IPFamilyPolicyRequireDualStack:
		default:
			allErrs = append(allErrs, field.NotSupported(specPath.Child("ipFamilyPolicy"), *pol,
				[]corev1.IPFamilyPolicy{corev1.IPFamilyPolicyPreferDualStack, corev1.IPFamilyPolicyRequireDualStack, corev1.IPFamilyPolicySingleStack}))
		}
	}
	invalid := false
	for i, ip := range spec.ClusterIPs {
		if i == 0 && ip == corev1.ClusterIPNone {
			if len(spec.ClusterIPs) > 1 {
				invalid = true
				allErrs = append(allErrs, field.Invalid(ipsPath, spec.ClusterIPs, "'None' must be the first and only value"))
			}
			continue
		}
		errs := validation.IsValidIP(ipsPath.Index(i), ip)
		invalid = invalid || len(errs) > 0
		allErrs = append(allErrs, errs...)
	}
	if len(spec.ClusterIPs) > 2 {
		allErrs = append(allErrs, field.Invalid(ipsPath, spec.ClusterIPs, "may only hold up to 2 values"))
	}
	if invalid {
		return allErrs
	}
	if len(spec.ClusterIPs) == 2 && isIPv6(spec.ClusterIPs[0]) == isIPv6(spec.ClusterIPs[1]) {
		allErrs = append(allErrs, field.Invalid(ipsPath, spec.ClusterIPs, "may specify no more than one IP for each IP family"))
	}
	if !isHeadlessService(svc) {
		for i, ip := range spec.ClusterIPs {
			if i >= len(spec.IPFamilies) {
				break
			}
			if spec.IPFamilies[i] == corev1.IPv4Protocol && isIPv6(ip) {
				allErrs = append(allErrs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv4 value as indicated by `ipFamilies[%v]`", i)))
			}
			if spec.IPFamilies[i] == corev1.IPv6Protocol && !isIPv6(ip) {
				allErrs = append(allErrs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv6 value as indicated by `ipFamilies[%v]`", i)))
			}
		}
	}
	return allErrs
}

func isIPv6(ip string) bool {
	parsed := net.ParseIP(ip)
	return parsed != nil && parsed.To4() == nil
}

// validateNonSpecialIP rejects addresses that make no sense as endpoints or
// external IPs: unspecified, loopback and link-local.
func validateNonSpecialIP(ip string, p *field.Path) field.ErrorList {
	parsed := net.ParseIP(ip)
	if parsed == nil {
		return field.ErrorList{field.Invalid(p, ip, "must be a valid IP address")}
	}
	var allErrs field.ErrorList
	if parsed.IsUnspecified() {
		allErrs = append(allErrs, field.Invalid(p, ip, fmt.Sprintf("may not be unspecified (%v)", ip)))
	}
	if parsed.IsLoopback() {
		allErrs = append(allErrs, field.Invalid(p, ip, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if parsed.IsLinkLocalUnicast() {
		allErrs = append(allErrs, field.Invalid(p, ip, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if parsed.IsLinkLocalMulticast() {
		allErrs = append(allErrs, field.Invalid(p, ip, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return allErrs
}

// ValidateServiceUpdate validates an update of a Service. The cluster IPs
// and IP families cannot change once set (except when moving a service
// to or from ExternalName, or adding/removing the secondary family).
func ValidateServiceUpdate(svc, old *corev1.Service) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&svc.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateClusterIPsUpdate(old, svc)...)
	allErrs = append(allErrs, validateIPFamiliesUpdate(old, svc)...)
	if old.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		o, n := old.Spec.LoadBalancerClass, svc.Spec.LoadBalancerClass
		if (o == nil) != (n == nil) || (o != nil && *o != *n) {
			allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "loadBalancerClass"), n, "may not change once set"))
		}
	}
	needsHC := func(s *corev1.Service) bool {
		return s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
	}
	if needsHC(old) && needsHC(svc) && svc.Spec.HealthCheckNodePort != old.Spec.HealthCheckNodePort {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "healthCheckNodePort"), "field is immutable"))
	}
	return append(allErrs, ValidateService(svc)...)
}

func validateClusterIPsUpdate(old, svc *corev1.Service) field.ErrorList {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || old.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if isHeadlessService(old) && isHeadlessService(svc) {
		return nil
	}
	var allErrs field.ErrorList
	p := field.NewPath("spec", "clusterIPs")
	oldIPs, newIPs := old.Spec.ClusterIPs, svc.Spec.ClusterIPs
	switch {
	case len(oldIPs) == len(newIPs):
		for i := range oldIPs {
			if oldIPs[i] != newIPs[i] {
				allErrs = append(allErrs, field.Invalid(p.Index(i), newIPs, "may not change once set"))
			}
		}
	case len(oldIPs) > len(newIPs):
		if len(newIPs) == 0 {
			allErrs = append(allErrs, field.Invalid(p.Index(0), newIPs, "primary clusterIP can not be unset"))
		}
		if len(oldIPs) > 0 && len(newIPs) > 0 && newIPs[0] != oldIPs[0] {
			allErrs = append(allErrs, field.Invalid(p.Index(0), newIPs, "may not change once set"))
		}
		if len(newIPs) == 1 && (svc.Spec.IPFamilyPolicy == nil || *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack) {
			allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), svc.Spec.IPFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary clusterIP"))
		}
	default:
		if len(oldIPs) > 0 && newIPs[0] != oldIPs[0] {
			allErrs = append(allErrs, field.Invalid(p.Index(0), newIPs, "may not change once set"))
		}
	}
	return allErrs
}

func validateIPFamiliesUpdate(old, svc *corev1.Service) field.ErrorList {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || old.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if isHeadlessService(old) || isHeadlessService(svc) {
		return nil
	}
	var allErrs field.ErrorList
	p := field.NewPath("spec", "ipFamilies")
	oldF, newF := old.Spec.IPFamilies, svc.Spec.IPFamilies
	switch {
	case len(oldF) == len(newF):
		for i := range oldF {
			if oldF[i] != newF[i] {
				allErrs = append(allErrs, field.Invalid(p.Index(0), newF, "may not change once set"))
			}
		}
	case len(oldF) > len(newF):
		if len(svc.Spec.ClusterIPs) == 0 {
			allErrs = append(allErrs, field.Invalid(p.Index(0), newF, "primary ipFamily can not be unset"))
		}
		if len(newF) > 0 && newF[0] != oldF[0] {
			allErrs = append(allErrs, field.Invalid(p.Index(0), svc.Spec.ClusterIPs, "may not change once set"))
		}
		if len(newF) == 1 && (svc.Spec.IPFamilyPolicy == nil || *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack) {
			allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), svc.Spec.IPFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary ipFamily"))
		}
	default:
		if len(oldF) > 0 && len(newF) > 0 && newF[0] != oldF[0] {
			allErrs = append(allErrs, field.Invalid(p.Index(0), svc.Spec.ClusterIPs, "may not change once set"))
		}
	}
	return allErrs
}

// ValidateServiceStatusUpdate validates an update through services/status:
// the load balancer ingress points.
func ValidateServiceStatusUpdate(svc, old *corev1.Service) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&svc.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	ingPath := field.NewPath("status", "loadBalancer", "ingress")
	// AllowServiceLBStatusOnNonLB is off by default: only LoadBalancer
	// services have ingress points.
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer && len(svc.Status.LoadBalancer.Ingress) != 0 {
		return append(allErrs, field.Forbidden(ingPath, "may only be used when `spec.type` is 'LoadBalancer'"))
	}
	for i, ing := range svc.Status.LoadBalancer.Ingress {
		p := ingPath.Index(i)
		if ing.IP != "" {
			allErrs = append(allErrs, validation.IsValidIP(p.Child("ip"), ing.IP)...)
		}
		switch {
		case ing.IPMode == nil && ing.IP != "":
			allErrs = append(allErrs, field.Required(p.Child("ipMode"), "must be specified when `ip` is set"))
		case ing.IPMode != nil && ing.IP == "":
			allErrs = append(allErrs, field.Forbidden(p.Child("ipMode"), "may not be specified when `ip` is not set"))
		case ing.IPMode != nil && *ing.IPMode != corev1.LoadBalancerIPModeVIP && *ing.IPMode != corev1.LoadBalancerIPModeProxy:
			allErrs = append(allErrs, field.NotSupported(p.Child("ipMode"), *ing.IPMode, []corev1.LoadBalancerIPMode{corev1.LoadBalancerIPModeProxy, corev1.LoadBalancerIPModeVIP}))
		}
		if ing.Hostname != "" {
			allErrs = append(allErrs, validateDNS1123Subdomain(ing.Hostname, p.Child("hostname"))...)
			if net.ParseIP(ing.Hostname) != nil {
				allErrs = append(allErrs, field.Invalid(p.Child("hostname"), ing.Hostname, "must be a DNS name, not an IP address"))
			}
		}
	}
	return allErrs
}

// ValidateEndpoints validates an Endpoints object being created.
func ValidateEndpoints(ep *corev1.Endpoints) field.ErrorList {
	allErrs := ValidateObjectMeta(&ep.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	p := field.NewPath("subsets")
	for i := range ep.Subsets {
		ss := &ep.Subsets[i]
		sp := p.Index(i)
		if len(ss.Addresses) == 0 && len(ss.NotReadyAddresses) == 0 {
			allErrs = append(allErrs, field.Required(sp, "must specify `addresses` or `notReadyAddresses`"))
		}
		for j := range ss.Addresses {
			allErrs = append(allErrs, validateEndpointAddress(&ss.Addresses[j], sp.Child("addresses").Index(j))...)
		}
		for j := range ss.NotReadyAddresses {
			allErrs = append(allErrs, validateEndpointAddress(&ss.NotReadyAddresses[j], sp.Child("notReadyAddresses").Index(j))...)
		}
		for j, port := range ss.Ports {
			pp := sp.Child("ports").Index(j)
			if len(ss.Ports) > 1 && port.Name == "" {
				allErrs = append(allErrs, field.Required(pp.Child("name"), ""))
			} else if port.Name != "" {
				allErrs = append(allErrs, validateDNS1123Label(port.Name, pp.Child("name"))...)
			}
			allErrs = append(allErrs, validatePortNumber(port.Port, pp.Child("port"))...)
			allErrs = append(allErrs, validateProtocol(port.Protocol, pp.Child("protocol"))...)
			if port.AppProtocol != nil {
				allErrs = append(allErrs, ValidateQualifiedName(*port.AppProtocol, pp.Child("appProtocol"))...)
			}
		}
	}
	return allErrs
}

func validateEndpointAddress(a *corev1.EndpointAddress, p *field.Path) field.ErrorList {
	allErrs := validation.IsValidIP(p.Child("ip"), a.IP)
	if a.Hostname != "" {
		allErrs = append(allErrs, validateDNS1123Label(a.Hostname, p.Child("hostname"))...)
	}
	if a.NodeName != nil {
		allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, *a.NodeName, p.Child("nodeName"))...)
	}
	return append(allErrs, validateNonSpecialIP(a.IP, p.Child("ip"))...)
}

// ValidateEndpointsUpdate validates an update of an Endpoints object.
func ValidateEndpointsUpdate(ep, old *corev1.Endpoints) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&ep.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidateEndpoints(ep)...)
}
