package networking

import (
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	annotationIngressClass       = "kubernetes.io/ingress.class"
	maxLenIngressClassController = 250
)

var (
	supportedPathTypes   = []string{string(networkingv1.PathTypeExact), string(networkingv1.PathTypeImplementationSpecific), string(networkingv1.PathTypePrefix)}
	invalidPathSequences = []string{"//", "/./", "/../", "%2f", "%2F"}
	invalidPathSuffixes  = []string{"/..", "/."}
)

// validateObjectMeta is core's object metadata validation (apimachinery's
// plus the rule that a finalizer without a "/" is a built-in one); core
// imports this package, so it is repeated here.
func validateObjectMeta(m *metav1.ObjectMeta, namespaced bool, name apimachineryvalidation.ValidateNameFunc) field.ErrorList {
	p := field.NewPath("metadata")
	allErrs := apimachineryvalidation.ValidateObjectMeta(m, namespaced, name, p)
	return append(allErrs, validateFinalizers(m.Finalizers, p.Child("finalizers"))...)
}

func validateObjectMetaUpdate(m, old *metav1.ObjectMeta) field.ErrorList {
	p := field.NewPath("metadata")
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(m, old, p)
	return append(allErrs, validateFinalizers(m.Finalizers, p.Child("finalizers"))...)
}

func validateFinalizers(fs []string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, f := range fs {
		switch {
		case strings.Contains(f, "/"), f == string(corev1.FinalizerKubernetes), f == metav1.FinalizerOrphanDependents, f == metav1.FinalizerDeleteDependents:
		default:
			allErrs = append(allErrs, field.Invalid(p.Index(i), f, "name is neither a standard finalizer name nor is it fully qualified"))
		}
	}
	return allErrs
}

// ingressOptions relax validation for values an older server stored.
type ingressOptions struct {
	allowInvalidSecretName       bool
	allowInvalidWildcardHostRule bool
}

// ValidateIngress validates a new Ingress; the legacy class annotation
// must agree with spec.ingressClassName when both are set.
func ValidateIngress(ing *networkingv1.Ingress) field.ErrorList {
	allErrs := validateIngress(ing, ingressOptions{})
	if v, ok := ing.Annotations[annotationIngressClass]; ok && ing.Spec.IngressClassName != nil && v != *ing.Spec.IngressClassName {
		allErrs = append(allErrs, field.Invalid(field.NewPath("annotations").Child(annotationIngressClass), v, "must match `ingressClassName` when both are specified"))
	}
	return allErrs
}

// ValidateIngressUpdate validates an update; TLS secret names and wildcard
// rules that were already invalid when stored stay accepted.
func ValidateIngressUpdate(ing, old *networkingv1.Ingress) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&ing.ObjectMeta, &old.ObjectMeta)
	opts := ingressOptions{}
	for _, tls := range old.Spec.TLS {
		if len(validateTLSSecretName(tls.SecretName)) > 0 {
			opts.allowInvalidSecretName = true
		}
	}
	for _, r := range old.Spec.Rules {
		if strings.Contains(r.Host, "*") && len(validateIngressRuleValue(&r.IngressRuleValue, nil, ingressOptions{})) > 0 {
			opts.allowInvalidWildcardHostRule = true
		}
	}
	return append(allErrs, validateIngress(ing, opts)...)
}

func validateIngress(ing *networkingv1.Ingress, opts ingressOptions) field.ErrorList {
	allErrs := validateObjectMeta(&ing.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain)
	spec, p := &ing.Spec, field.NewPath("spec")
	if len(spec.Rules) == 0 && spec.DefaultBackend == nil {
		allErrs = append(allErrs, field.Invalid(p, spec.Rules, "either `defaultBackend` or `rules` must be specified"))
	}
	if spec.DefaultBackend != nil {
		allErrs = append(allErrs, validateIngressBackend(spec.DefaultBackend, p.Child("defaultBackend"))...)
	}
	for i := range spec.Rules {
		allErrs = append(allErrs, validateIngressRule(&spec.Rules[i], p.Child("rules").Index(i), opts)...)
	}
	for ti, tls := range spec.TLS {
		tp := p.Child("tls").Index(ti)
		for i, host := range tls.Hosts {
			allErrs = append(allErrs, validateHost(host, tp.Child("hosts").Index(i))...)
		}
		if !opts.allowInvalidSecretName {
			for _, msg := range validateTLSSecretName(tls.SecretName) {
				allErrs = append(allErrs, field.Invalid(tp.Child("secretName"), tls.SecretName, msg))
			}
		}
	}
	if n := spec.IngressClassName; n != nil {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(*n, false) {
			allErrs = append(allErrs, field.Invalid(p.Child("ingressClassName"), *n, msg))
		}
	}
	return allErrs
}

func validateTLSSecretName(name string) []string {
	if name == "" {
		return nil
	}
	return apimachineryvalidation.NameIsDNSSubdomain(name, false)
}

// validateHost: a DNS subdomain, or a wildcard one ("*.example.com").
func validateHost(host string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	msgs := validation.IsDNS1123Subdomain(host)
	if strings.Contains(host, "*") {
		msgs = validation.IsWildcardDNS1123Subdomain(host)
	}
	for _, msg := range msgs {
		allErrs = append(allErrs, field.Invalid(p, host, msg))
	}
	return allErrs
}

func validateIngressRule(r *networkingv1.IngressRule, p *field.Path, opts ingressOptions) field.ErrorList {
	var allErrs field.ErrorList
	wildcard := false
	if r.Host != "" {
		if _, err := netip.ParseAddr(r.Host); err == nil {
			allErrs = append(allErrs, field.Invalid(p.Child("host"), r.Host, "must be a DNS name, not an IP address"))
		}
		wildcard = strings.Contains(r.Host, "*")
		allErrs = append(allErrs, validateHost(r.Host, p.Child("host"))...)
	}
	if !wildcard || !opts.allowInvalidWildcardHostRule {
		allErrs = append(allErrs, validateIngressRuleValue(&r.IngressRuleValue, p, opts)...)
	}
	return allErrs
}

func validateIngressRuleValue(v *networkingv1.IngressRuleValue, p *field.Path, _ ingressOptions) field.ErrorList {
	if v.HTTP == nil {
		return nil
	}
	hp := p.Child("http")
	var allErrs field.ErrorList
	if len(v.HTTP.Paths) == 0 {
		allErrs = append(allErrs, field.Required(hp.Child("paths"), ""))
	}
	for i := range v.HTTP.Paths {
		allErrs = append(allErrs, validateHTTPIngressPath(&v.HTTP.Paths[i], hp.Child("paths").Index(i))...)
	}
	return allErrs
}

func validateHTTPIngressPath(path *networkingv1.HTTPIngressPath, p *field.Path) field.ErrorList {
	if path.PathType == nil {
		return field.ErrorList{field.Required(p.Child("pathType"), "pathType must be specified")}
	}
	var allErrs field.ErrorList
	pp := p.Child("path")
	switch *path.PathType {
	case networkingv1.PathTypeExact, networkingv1.PathTypePrefix:
		if !strings.HasPrefix(path.Path, "/") {
			allErrs = append(allErrs, field.Invalid(pp, path.Path, "must be an absolute path"))
		}
		for _, seq := range invalidPathSequences {
			if strings.Contains(path.Path, seq) {
				allErrs = append(allErrs, field.Invalid(pp, path.Path, fmt.Sprintf("must not contain '%s'", seq)))
			}
		}
		for _, suf := range invalidPathSuffixes {
			if strings.HasSuffix(path.Path, suf) {
				allErrs = append(allErrs, field.Invalid(pp, path.Path, fmt.Sprintf("cannot end with '%s'", suf)))
			}
		}
	case networkingv1.PathTypeImplementationSpecific:
		if path.Path != "" && !strings.HasPrefix(path.Path, "/") {
			allErrs = append(allErrs, field.Invalid(pp, path.Path, "must be an absolute path"))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(p.Child("pathType"), *path.PathType, supportedPathTypes))
	}
	return append(allErrs, validateIngressBackend(&path.Backend, p.Child("backend"))...)
}

// validateIngressBackend: exactly one of a Service (by name, with a port
// name or number) or a typed resource reference. Service names are DNS
// labels (upstream's RelaxedServiceNameValidation, on by default).
func validateIngressBackend(b *networkingv1.IngressBackend, p *field.Path) field.ErrorList {
	switch {
	case b.Resource != nil && b.Service != nil:
		return field.ErrorList{field.Invalid(p, "", "cannot set both resource and service backends")}
	case b.Resource != nil:
		return validateTypedReference(b.Resource.APIGroup, b.Resource.Kind, b.Resource.Name, p.Child("resource"))
	case b.Service == nil:
		return field.ErrorList{field.Invalid(p, "", "resource or service backend is required")}
	}
	var allErrs field.ErrorList
	sp := p.Child("service")
	if b.Service.Name == "" {
		allErrs = append(allErrs, field.Required(sp.Child("name"), ""))
	} else {
		for _, msg := range apimachineryvalidation.NameIsDNSLabel(b.Service.Name, false) {
			allErrs = append(allErrs, field.Invalid(sp.Child("name"), b.Service.Name, msg))
		}
	}
	port := b.Service.Port
	switch {
	case port.Name != "" && port.Number != 0:
		allErrs = append(allErrs, field.Invalid(p, "", "cannot set both port name & port number"))
	case port.Name != "":
		for _, msg := range validation.IsValidPortName(port.Name) {
			allErrs = append(allErrs, field.Invalid(sp.Child("port", "name"), port.Name, msg))
		}
	case port.Number != 0:
		for _, msg := range validation.IsValidPortNum(int(port.Number)) {
			allErrs = append(allErrs, field.Invalid(sp.Child("port", "number"), port.Number, msg))
		}
	default:
		allErrs = append(allErrs, field.Required(p, "port name or number is required"))
	}
	return allErrs
}

func validateTypedReference(group *string, kind, name string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if group != nil {
		for _, msg := range dnsSubdomain(*group) {
			allErrs = append(allErrs, field.Invalid(p.Child("apiGroup"), *group, msg))
		}
	}
	for _, f := range []struct{ name, value string }{{"kind", kind}, {"name", name}} {
		if f.value == "" {
			allErrs = append(allErrs, field.Required(p.Child(f.name), ""))
			continue
		}
		for _, msg := range pathSegmentName(f.value) {
			allErrs = append(allErrs, field.Invalid(p.Child(f.name), f.value, msg))
		}
	}
	return allErrs
}

// ValidateIngressStatusUpdate: load-balancer addresses are IPs and DNS
// names (addresses already stored stay accepted).
func ValidateIngressStatusUpdate(ing, old *networkingv1.Ingress) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&ing.ObjectMeta, &old.ObjectMeta)
	var oldIPs []string
	for _, in := range old.Status.LoadBalancer.Ingress {
		if in.IP != "" {
			oldIPs = append(oldIPs, in.IP)
		}
	}
	p := field.NewPath("status", "loadBalancer", "ingress")
	for i, in := range ing.Status.LoadBalancer.Ingress {
		ip := p.Index(i)
		if in.IP != "" {
			allErrs = append(allErrs, validation.IsValidIPForLegacyField(ip.Child("ip"), in.IP, true, oldIPs)...)
		}
		if in.Hostname != "" {
			for _, msg := range validation.IsDNS1123Subdomain(in.Hostname) {
				allErrs = append(allErrs, field.Invalid(ip.Child("hostname"), in.Hostname, msg))
			}
			if _, err := netip.ParseAddr(in.Hostname); err == nil {
				allErrs = append(allErrs, field.Invalid(ip.Child("hostname"), in.Hostname, "must be a DNS name, not an IP address"))
			}
		}
	}
	return allErrs
}

// DefaultIngressClass: a parameters reference without a scope is
// cluster-scoped.
func DefaultIngressClass(ic *networkingv1.IngressClass) {
	if ic.Spec.Parameters != nil && ic.Spec.Parameters.Scope == nil {
		scope := networkingv1.IngressClassParametersReferenceScopeCluster
		ic.Spec.Parameters.Scope = &scope
	}
}

// ValidateIngressClass validates a new IngressClass.
func ValidateIngressClass(ic *networkingv1.IngressClass) field.ErrorList {
	allErrs := validateObjectMeta(&ic.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain)
	p := field.NewPath("spec")
	switch c := ic.Spec.Controller; {
	case c == "":
		allErrs = append(allErrs, field.Required(p.Child("controller"), ""))
	case len(c) > maxLenIngressClassController:
		allErrs = append(allErrs, field.TooLong(p.Child("controller"), "", maxLenIngressClassController))
		fallthrough
	default:
		allErrs = append(allErrs, validation.IsDomainPrefixedPath(p.Child("controller"), c)...)
	}
	if params := ic.Spec.Parameters; params != nil {
		pp := p.Child("parameters")
		allErrs = append(allErrs, validateTypedReference(params.APIGroup, params.Kind, params.Name, pp)...)
		switch {
		case params.Scope == nil:
			allErrs = append(allErrs, field.Required(pp.Child("scope"), ""))
		case *params.Scope == networkingv1.IngressClassParametersReferenceScopeNamespace:
			if params.Namespace == nil {
				allErrs = append(allErrs, field.Required(pp.Child("namespace"), "`parameters.scope` is set to 'Namespace'"))
			} else {
				for _, msg := range apimachineryvalidation.ValidateNamespaceName(*params.Namespace, false) {
					allErrs = append(allErrs, field.Invalid(pp.Child("namespace"), *params.Namespace, msg))
				}
			}
		case *params.Scope == networkingv1.IngressClassParametersReferenceScopeCluster:
			if params.Namespace != nil {
				allErrs = append(allErrs, field.Forbidden(pp.Child("namespace"), "`parameters.scope` is set to 'Cluster'"))
			}
		default:
			allErrs = append(allErrs, field.NotSupported(pp.Child("scope"), *params.Scope,
				[]string{networkingv1.IngressClassParametersReferenceScopeCluster, networkingv1.IngressClassParametersReferenceScopeNamespace}))
		}
	}
	return allErrs
}

// ValidateIngressClassUpdate: the controller is immutable.
func ValidateIngressClassUpdate(ic, old *networkingv1.IngressClass) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&ic.ObjectMeta, &old.ObjectMeta)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(ic.Spec.Controller, old.Spec.Controller, field.NewPath("spec", "controller"))...)
	return append(allErrs, ValidateIngressClass(ic)...)
}
