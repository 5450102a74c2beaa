package networking

import (
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// expectMessages fails t unless errs render (as the 422's causes do) as
// want, in any order; each want is the full text or a prefix of it.
func expectMessages(t *testing.T, errs field.ErrorList, want ...string) {
	t.Helper()
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	sort.Strings(got)
	w := append([]string(nil), want...)
	sort.Strings(w)
	ok := len(got) == len(w)
	for i := 0; ok && i < len(w); i++ {
		ok = strings.HasPrefix(got[i], w[i])
	}
	if !ok {
		t.Errorf("errors:\n  got  %q\n  want %q", got, w)
	}
}

func ptr[T any](v T) *T { return &v }

func validIngress() *networkingv1.Ingress {
	prefix := networkingv1.PathTypePrefix
	return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: networkingv1.IngressSpec{
		IngressClassName: ptr("nginx"),
		TLS:              []networkingv1.IngressTLS{{Hosts: []string{"*.example.com"}, SecretName: "tls"}},
		Rules: []networkingv1.IngressRule{{Host: "www.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &prefix, Backend: networkingv1.IngressBackend{
				Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}},
	}}
}

func TestValidateIngress(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*networkingv1.Ingress)
		want   []string
	}{
		{name: "valid", mutate: func(*networkingv1.Ingress) {}},
		{name: "default backend only", mutate: func(i *networkingv1.Ingress) {
			i.Spec.DefaultBackend = &i.Spec.Rules[0].HTTP.Paths[0].Backend
			i.Spec.Rules = nil
		}},
		{name: "service name that is a DNS label but not DNS-1035", mutate: func(i *networkingv1.Ingress) {
			i.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name = "1web"
		}},
		{name: "nothing to route", mutate: func(i *networkingv1.Ingress) { i.Spec.Rules = nil },
			want: []string{"spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"}},
		{name: "host is an IP", mutate: func(i *networkingv1.Ingress) { i.Spec.Rules[0].Host = "10.0.0.1" },
			want: []string{`spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address`}},
		{name: "bad wildcard host", mutate: func(i *networkingv1.Ingress) { i.Spec.Rules[0].Host = "www.*.com" },
			want: []string{`spec.rules[0].host: Invalid value: "www.*.com": a wildcard DNS-1123 subdomain must start with '*.'`}},
		{name: "no path type", mutate: func(i *networkingv1.Ingress) { i.Spec.Rules[0].HTTP.Paths[0].PathType = nil },
			want: []string{"spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"}},
		{name: "unknown path type", mutate: func(i *networkingv1.Ingress) {
			i.Spec.Rules[0].HTTP.Paths[0].PathType = ptr(networkingv1.PathType("Regex"))
		}, want: []string{`spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix"`}},
		{name: "relative prefix path", mutate: func(i *networkingv1.Ingress) { i.Spec.Rules[0].HTTP.Paths[0].Path = "api" },
			want: []string{`spec.rules[0].http.paths[0].path: Invalid value: "api": must be an absolute path`}},
		{name: "path with dot segment", mutate: func(i *networkingv1.Ingress) { i.Spec.Rules[0].HTTP.Paths[0].Path = "/a/./b/.." },
			want: []string{`spec.rules[0].http.paths[0].path: Invalid value: "/a/./b/..": must not contain '/./'`,
				`spec.rules[0].http.paths[0].path: Invalid value: "/a/./b/..": cannot end with '/..'`}},
		{name: "no paths", mutate: func(i *networkingv1.Ingress) { i.Spec.Rules[0].HTTP.Paths = nil },
			want: []string{"spec.rules[0].http.paths: Required value"}},
		{name: "port name and number", mutate: func(i *networkingv1.Ingress) { i.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Port.Name = "http" },
			want: []string{`spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both port name & port number`}},
		{name: "no port", mutate: func(i *networkingv1.Ingress) { i.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Port.Number = 0 },
			want: []string{"spec.rules[0].http.paths[0].backend: Required value: port name or number is required"}},
		{name: "no backend", mutate: func(i *networkingv1.Ingress) { i.Spec.Rules[0].HTTP.Paths[0].Backend.Service = nil },
			want: []string{`spec.rules[0].http.paths[0].backend: Invalid value: "": resource or service backend is required`}},
		{name: "both backends", mutate: func(i *networkingv1.Ingress) {
			i.Spec.Rules[0].HTTP.Paths[0].Backend.Resource = &corev1.TypedLocalObjectReference{Kind: "Bucket", Name: "b"}
		}, want: []string{`spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both resource and service backends`}},
		{name: "resource backend without kind", mutate: func(i *networkingv1.Ingress) {
			i.Spec.Rules[0].HTTP.Paths[0].Backend = networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{Name: "a/b"}}
		}, want: []string{"spec.rules[0].http.paths[0].backend.resource.kind: Required value",
			`spec.rules[0].http.paths[0].backend.resource.name: Invalid value: "a/b": may not contain '/'`}},
		{name: "bad secret name", mutate: func(i *networkingv1.Ingress) { i.Spec.TLS[0].SecretName = "Bad_Name" },
			want: []string{`spec.tls[0].secretName: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of`}},
		{name: "class annotation disagrees", mutate: func(i *networkingv1.Ingress) {
			i.Annotations = map[string]string{"kubernetes.io/ingress.class": "traefik"}
		}, want: []string{`annotations.kubernetes.io/ingress.class: Invalid value: "traefik": must match ` + "`ingressClassName`" + ` when both are specified`}},
		{name: "bad finalizer", mutate: func(i *networkingv1.Ingress) { i.Finalizers = []string{"mine"} },
			want: []string{`metadata.finalizers[0]: Invalid value: "mine": name is neither a standard finalizer name nor is it fully qualified`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := validIngress()
			tt.mutate(i)
			expectMessages(t, ValidateIngress(i), tt.want...)
		})
	}
}

func TestValidateIngressUpdate(t *testing.T) {
	old := validIngress()
	old.ResourceVersion = "1"
	old.Spec.TLS[0].SecretName = "Legacy_Name"
	// A secret name an older server stored stays accepted...
	changed := old.DeepCopy()
	changed.Spec.Rules[0].Host = "api.example.com"
	expectMessages(t, ValidateIngressUpdate(changed, old))
	// ...but not on create.
	expectMessages(t, ValidateIngress(old), `spec.tls[0].secretName: Invalid value: "Legacy_Name"`)
}

func TestValidateIngressStatusUpdate(t *testing.T) {
	old := validIngress()
	old.ResourceVersion = "1"
	ing := old.DeepCopy()
	ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.1"}, {Hostname: "lb.example.com"}}
	expectMessages(t, ValidateIngressStatusUpdate(ing, old))
	ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "300.1.1.1"}, {Hostname: "192.0.2.1"}}
	expectMessages(t, ValidateIngressStatusUpdate(ing, old),
		`status.loadBalancer.ingress[0].ip: Invalid value: "300.1.1.1": must be a valid IP address`,
		`status.loadBalancer.ingress[1].hostname: Invalid value: "192.0.2.1": must be a DNS name, not an IP address`)
}

func TestIngressClass(t *testing.T) {
	ic := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: networkingv1.IngressClassSpec{
		Controller: "k8s.io/ingress-nginx", Parameters: &networkingv1.IngressClassParametersReference{APIGroup: ptr("k8s.example.com"), Kind: "IngressParameters", Name: "p"}}}
	DefaultIngressClass(ic)
	if s := ic.Spec.Parameters.Scope; s == nil || *s != "Cluster" {
		t.Fatalf("parameters.scope defaulted to %v, want Cluster", s)
	}
	expectMessages(t, ValidateIngressClass(ic))
	tests := []struct {
		name   string
		mutate func(*networkingv1.IngressClass)
		want   []string
	}{
		{name: "controller not domain-prefixed", mutate: func(c *networkingv1.IngressClass) { c.Spec.Controller = "nginx" },
			want: []string{`spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")`}},
		{name: "no controller", mutate: func(c *networkingv1.IngressClass) { c.Spec.Controller = "" },
			want: []string{"spec.controller: Required value"}},
		{name: "namespace scope without namespace", mutate: func(c *networkingv1.IngressClass) { c.Spec.Parameters.Scope = ptr("Namespace") },
			want: []string{"spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'"}},
		{name: "cluster scope with namespace", mutate: func(c *networkingv1.IngressClass) { c.Spec.Parameters.Namespace = ptr("default") },
			want: []string{"spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'"}},
		{name: "unknown scope", mutate: func(c *networkingv1.IngressClass) { c.Spec.Parameters.Scope = ptr("Global") },
			want: []string{`spec.parameters.scope: Unsupported value: "Global": supported values: "Cluster", "Namespace"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ic.DeepCopy()
			tt.mutate(c)
			expectMessages(t, ValidateIngressClass(c), tt.want...)
		})
	}
	old := ic.DeepCopy()
	old.ResourceVersion = "1"
	moved := old.DeepCopy()
	moved.Spec.Controller = "example.com/other"
	expectMessages(t, ValidateIngressClassUpdate(moved, old), `spec.controller: Invalid value: "example.com/other": field is immutable`)
}

func TestNetworkPolicy(t *testing.T) {
	np := func() *networkingv1.NetworkPolicy {
		return &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "allow", Namespace: "default"}, Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				Ports: []networkingv1.NetworkPolicyPort{{Port: ptr(intstr.FromInt32(5432))}},
				From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}},
			}},
			Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"10.1.0.0/16"}}}}}},
		}}
	}
	d := np()
	DefaultNetworkPolicy(d)
	if p := d.Spec.Ingress[0].Ports[0].Protocol; p == nil || *p != corev1.ProtocolTCP {
		t.Errorf("port protocol defaulted to %v, want TCP", p)
	}
	if got := d.Spec.PolicyTypes; len(got) != 2 || got[0] != "Ingress" || got[1] != "Egress" {
		t.Errorf("policyTypes defaulted to %v, want [Ingress Egress]", got)
	}
	ingressOnly := np()
	ingressOnly.Spec.Egress = nil
	DefaultNetworkPolicy(ingressOnly)
	if got := ingressOnly.Spec.PolicyTypes; len(got) != 1 || got[0] != "Ingress" {
		t.Errorf("policyTypes of an ingress-only policy defaulted to %v, want [Ingress]", got)
	}
	tests := []struct {
		name   string
		mutate func(*networkingv1.NetworkPolicy)
		want   []string
	}{
		{name: "valid", mutate: func(*networkingv1.NetworkPolicy) {}},
		{name: "empty peer", mutate: func(n *networkingv1.NetworkPolicy) { n.Spec.Ingress[0].From[0] = networkingv1.NetworkPolicyPeer{} },
			want: []string{"spec.ingress[0].from[0]: Required value: must specify a peer"}},
		{name: "ipBlock and selector", mutate: func(n *networkingv1.NetworkPolicy) {
			n.Spec.Egress[0].To[0].PodSelector = &metav1.LabelSelector{}
		}, want: []string{"spec.egress[0].to[0]: Forbidden: may not specify both ipBlock and another peer"}},
		{name: "except outside cidr", mutate: func(n *networkingv1.NetworkPolicy) { n.Spec.Egress[0].To[0].IPBlock.Except[0] = "192.168.0.0/16" },
			want: []string{`spec.egress[0].to[0].ipBlock.except[0]: Invalid value: "192.168.0.0/16": must be a strict subset of ` + "`cidr`"}},
		{name: "bad cidr", mutate: func(n *networkingv1.NetworkPolicy) { n.Spec.Egress[0].To[0].IPBlock.CIDR = "10.0.0.0" },
			want: []string{`spec.egress[0].to[0].ipBlock.cidr: Invalid value: "10.0.0.0": must be a valid CIDR value`}},
		{name: "no cidr", mutate: func(n *networkingv1.NetworkPolicy) { n.Spec.Egress[0].To[0].IPBlock.CIDR = "" },
			want: []string{"spec.egress[0].to[0].ipBlock.cidr: Required value"}},
		{name: "port out of range", mutate: func(n *networkingv1.NetworkPolicy) { n.Spec.Ingress[0].Ports[0].Port = ptr(intstr.FromInt32(70000)) },
			want: []string{"spec.ingress[0].ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive"}},
		{name: "endPort below port", mutate: func(n *networkingv1.NetworkPolicy) { n.Spec.Ingress[0].Ports[0].EndPort = ptr(int32(80)) },
			want: []string{"spec.ingress[0].ports[0].endPort: Invalid value: 5432: must be greater than or equal to `port`"}},
		{name: "endPort with named port", mutate: func(n *networkingv1.NetworkPolicy) {
			n.Spec.Ingress[0].Ports[0] = networkingv1.NetworkPolicyPort{Port: ptr(intstr.FromString("pg")), EndPort: ptr(int32(6000))}
		}, want: []string{"spec.ingress[0].ports[0].endPort: Invalid value: 6000: may not be specified when `port` is non-numeric"}},
		{name: "bad protocol", mutate: func(n *networkingv1.NetworkPolicy) {
			n.Spec.Ingress[0].Ports[0].Protocol = ptr(corev1.Protocol("ICMP"))
		},
			want: []string{`spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"`}},
		{name: "bad policy type", mutate: func(n *networkingv1.NetworkPolicy) { n.Spec.PolicyTypes = []networkingv1.PolicyType{"Both"} },
			want: []string{`spec.policyTypes[0]: Unsupported value: "Both": supported values: "Ingress", "Egress"`}},
		{name: "bad selector", mutate: func(n *networkingv1.NetworkPolicy) { n.Spec.PodSelector.MatchLabels["app"] = "not valid" },
			want: []string{`spec.podSelector.matchLabels: Invalid value: "not valid": a valid label must be`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := np()
			tt.mutate(n)
			expectMessages(t, ValidateNetworkPolicy(n), tt.want...)
		})
	}
	// A CIDR the old object held is accepted on update.
	old := np()
	old.ResourceVersion = "1"
	old.Spec.Egress[0].To[0].IPBlock = &networkingv1.IPBlock{CIDR: "10.0.0.1/8"}
	expectMessages(t, ValidateNetworkPolicy(old), `spec.egress[0].to[0].ipBlock.cidr: Invalid value: "10.0.0.1/8"`)
	upd := old.DeepCopy()
	upd.Labels = map[string]string{"x": "y"}
	expectMessages(t, ValidateNetworkPolicyUpdate(upd, old))
}
