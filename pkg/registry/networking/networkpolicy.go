package networking

import (
	"net"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DefaultNetworkPolicy: ports without a protocol are TCP; a policy without
// policyTypes governs Ingress, and Egress too when it has egress rules.
func DefaultNetworkPolicy(np *networkingv1.NetworkPolicy) {
	tcp := func(ports []networkingv1.NetworkPolicyPort) {
		for i := range ports {
			if ports[i].Protocol == nil {
				p := corev1.ProtocolTCP
				ports[i].Protocol = &p
			}
		}
	}
	for i := range np.Spec.Ingress {
		tcp(np.Spec.Ingress[i].Ports)
	}
	for i := range np.Spec.Egress {
		tcp(np.Spec.Egress[i].Ports)
	}
	if len(np.Spec.PolicyTypes) == 0 {
		np.Spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(np.Spec.Egress) != 0 {
			np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
	}
}

// ValidateNetworkPolicy validates a new NetworkPolicy.
func ValidateNetworkPolicy(np *networkingv1.NetworkPolicy) field.ErrorList {
	allErrs := validateObjectMeta(&np.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain)
	return append(allErrs, validateNetworkPolicySpec(&np.Spec, metav1validation.LabelSelectorValidationOptions{}, nil)...)
}

// ValidateNetworkPolicyUpdate validates an update; a pod selector with
// label values an older server accepted, and CIDRs already stored, stay
// accepted.
func ValidateNetworkPolicyUpdate(np, old *networkingv1.NetworkPolicy) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&np.ObjectMeta, &old.ObjectMeta)
	opts := metav1validation.LabelSelectorValidationOptions{}
	if len(metav1validation.ValidateLabelSelector(&old.Spec.PodSelector, opts, nil)) > 0 {
		opts.AllowInvalidLabelValueInSelector = true
	}
	var cidrs []string
	add := func(peers []networkingv1.NetworkPolicyPeer) {
		for _, peer := range peers {
			if peer.IPBlock != nil {
				cidrs = append(cidrs, peer.IPBlock.CIDR)
				cidrs = append(cidrs, peer.IPBlock.Except...)
			}
		}
	}
	for _, r := range old.Spec.Ingress {
		add(r.From)
	}
	for _, r := range old.Spec.Egress {
		add(r.To)
	}
	return append(allErrs, validateNetworkPolicySpec(&np.Spec, opts, cidrs)...)
}

func validateNetworkPolicySpec(spec *networkingv1.NetworkPolicySpec, opts metav1validation.LabelSelectorValidationOptions, oldCIDRs []string) field.ErrorList {
	p := field.NewPath("spec")
	allErrs := metav1validation.ValidateLabelSelector(&spec.PodSelector, opts, p.Child("podSelector"))
	rules := func(path string, peersName string, ports func(i int) []networkingv1.NetworkPolicyPort, peers func(i int) []networkingv1.NetworkPolicyPeer, n int) {
		for i := 0; i < n; i++ {
			rp := p.Child(path).Index(i)
			for j, port := range ports(i) {
				allErrs = append(allErrs, validateNetworkPolicyPort(&port, rp.Child("ports").Index(j))...)
			}
			for j, peer := range peers(i) {
				allErrs = append(allErrs, validateNetworkPolicyPeer(&peer, opts, oldCIDRs, rp.Child(peersName).Index(j))...)
			}
		}
	}
	rules("ingress", "from", func(i int) []networkingv1.NetworkPolicyPort { return spec.Ingress[i].Ports },
		func(i int) []networkingv1.NetworkPolicyPeer { return spec.Ingress[i].From }, len(spec.Ingress))
	rules("egress", "to", func(i int) []networkingv1.NetworkPolicyPort { return spec.Egress[i].Ports },
		func(i int) []networkingv1.NetworkPolicyPeer { return spec.Egress[i].To }, len(spec.Egress))
	if len(spec.PolicyTypes) > 2 {
		return append(allErrs, field.Invalid(p.Child("policyTypes"), &spec.PolicyTypes, "may not specify more than two policyTypes"))
	}
	for i, t := range spec.PolicyTypes {
		if t != networkingv1.PolicyTypeIngress && t != networkingv1.PolicyTypeEgress {
			allErrs = append(allErrs, field.NotSupported(p.Child("policyTypes").Index(i), t, []string{string(networkingv1.PolicyTypeIngress), string(networkingv1.PolicyTypeEgress)}))
		}
	}
	return allErrs
}

func validateNetworkPolicyPort(port *networkingv1.NetworkPolicyPort, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if pr := port.Protocol; pr != nil && *pr != corev1.ProtocolTCP && *pr != corev1.ProtocolUDP && *pr != corev1.ProtocolSCTP {
		allErrs = append(allErrs, field.NotSupported(p.Child("protocol"), *pr, []string{string(corev1.ProtocolTCP), string(corev1.ProtocolUDP), string(corev1.ProtocolSCTP)}))
	}
	switch {
	case port.Port == nil:
		if port.EndPort != nil {
			allErrs = append(allErrs, field.Invalid(p.Child("endPort"), *port.EndPort, "may not be specified when `port` is not specified"))
		}
	case port.Port.Type == intstr.Int:
		for _, msg := range validation.IsValidPortNum(int(port.Port.IntVal)) {
			allErrs = append(allErrs, field.Invalid(p.Child("port"), port.Port.IntVal, msg))
		}
		if port.EndPort != nil {
			if *port.EndPort < port.Port.IntVal {
				allErrs = append(allErrs, field.Invalid(p.Child("endPort"), port.Port.IntVal, "must be greater than or equal to `port`"))
			}
			for _, msg := range validation.IsValidPortNum(int(*port.EndPort)) {
				allErrs = append(allErrs, field.Invalid(p.Child("endPort"), *port.EndPort, msg))
			}
		}
	default:
		if port.EndPort != nil {
			allErrs = append(allErrs, field.Invalid(p.Child("endPort"), *port.EndPort, "may not be specified when `port` is non-numeric"))
		}
		for _, msg := range validation.IsValidPortName(port.Port.StrVal) {
			allErrs = append(allErrs, field.Invalid(p.Child("port"), port.Port.StrVal, msg))
		}
	}
	return allErrs
}

func validateNetworkPolicyPeer(peer *networkingv1.NetworkPolicyPeer, opts metav1validation.LabelSelectorValidationOptions, oldCIDRs []string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	n := 0
	if peer.PodSelector != nil {
		n++
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(peer.PodSelector, opts, p.Child("podSelector"))...)
	}
	if peer.NamespaceSelector != nil {
		n++
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(peer.NamespaceSelector, opts, p.Child("namespaceSelector"))...)
	}
	if peer.IPBlock != nil {
		n++
		allErrs = append(allErrs, validateIPBlock(peer.IPBlock, oldCIDRs, p.Child("ipBlock"))...)
	}
	switch {
	case n == 0:
		allErrs = append(allErrs, field.Required(p, "must specify a peer"))
	case n > 1 && peer.IPBlock != nil:
		allErrs = append(allErrs, field.Forbidden(p, "may not specify both ipBlock and another peer"))
	}
	return allErrs
}

// validateIPBlock: a CIDR and exceptions strictly inside it; CIDRs the
// old object held are accepted as they are.
func validateIPBlock(b *networkingv1.IPBlock, oldCIDRs []string, p *field.Path) field.ErrorList {
	if b.CIDR == "" {
		return field.ErrorList{field.Required(p.Child("cidr"), "")}
	}
	allErrs := validation.IsValidCIDRForLegacyField(p.Child("cidr"), b.CIDR, true, oldCIDRs)
	_, cidr, err := net.ParseCIDR(b.CIDR)
	if err != nil {
		return allErrs
	}
	for i, e := range b.Except {
		ep := p.Child("except").Index(i)
		allErrs = append(allErrs, validation.IsValidCIDRForLegacyField(ep, e, true, oldCIDRs)...)
		_, except, err := net.ParseCIDR(e)
		if err != nil {
			continue
		}
		outer, _ := cidr.Mask.Size()
		inner, _ := except.Mask.Size()
		if !cidr.Contains(except.IP) || outer >= inner {
			allErrs = append(allErrs, field.Invalid(ep, e, "must be a strict subset of `cidr`"))
		}
	}
	return allErrs
}
