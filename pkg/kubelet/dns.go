package kubelet

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// DNS limits of the API's validation (resolv.conf's).
const (
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
	maxDNSSearchPathLen   = 253
)

// dnsWarning is an event about the pod's DNS configuration (reason,
// message; node: also about the node).
type dnsWarning struct {
	Reason, Message string
	Node            bool
}

// parseResolvConf reads nameservers, search domains (the last search
// line; "." dropped, trailing dots trimmed) and options (later ones win
// by name), as upstream's.
func parseResolvConf(content string) (servers, searches, options []string, err error) {
	servers, searches, options = []string{}, []string{}, []string{}
	var errs []string
	for _, line := range strings.Split(content, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "nameserver":
			if len(f) >= 2 {
				servers = append(servers, f[1])
			} else {
				errs = append(errs, "nameserver list is empty ")
			}
		case "search":
			searches = []string{}
			for _, s := range f[1:] {
				if s != "." {
					searches = append(searches, strings.TrimSuffix(s, "."))
				}
			}
		case "options":
			options = mergeOptionStrings(options, f[1:]...)
		}
	}
	if len(errs) == 1 {
		err = errors.New(errs[0])
	} else if len(errs) > 1 {
		err = errors.New("[" + strings.Join(errs, ", ") + "]")
	}
	return servers, searches, options, err
}

// mergeOptionStrings merges "name[:value]" options, later ones winning
// by name; sorted (upstream's order is a map's).
func mergeOptionStrings(options []string, more ...string) []string {
	byName := map[string]string{}
	for _, o := range append(append([]string(nil), options...), more...) {
		name, _, _ := strings.Cut(o, ":")
		byName[name] = o
	}
	out := make([]string, 0, len(byName))
	for _, o := range byName {
		out = append(out, o)
	}
	sort.Strings(out)
	return out
}

func omitDuplicates(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// podDNS is the pod's CRI DNS configuration, as upstream's GetPodDNS:
// ClusterFirst (and ClusterFirstWithHostNet) use the cluster DNS servers
// with the cluster search domains before the host's and ndots:5; Default
// (and ClusterFirst with hostNetwork) the node's resolv.conf; None
// nothing; spec.dnsConfig is merged in last. Without cluster DNS servers
// ClusterFirst falls back to Default with a MissingClusterDNS warning.
func (b *podConfig) podDNS(pod *corev1.Pod) (*runtimeapi.DNSConfig, []dnsWarning, error) {
	cfg := &runtimeapi.DNSConfig{}
	if b.ResolvConf != "" {
		content, err := os.ReadFile(b.ResolvConf)
		if err != nil {
			return nil, nil, err
		}
		cfg.Servers, cfg.Searches, cfg.Options, err = parseResolvConf(string(content))
		if err != nil {
			return nil, nil, fmt.Errorf("Encountered error while parsing resolv conf file. Error: %w", err)
		}
	}
	var warnings []dnsWarning
	cluster := true
	switch pod.Spec.DNSPolicy {
	case corev1.DNSNone:
		cfg, cluster = &runtimeapi.DNSConfig{}, false
	case corev1.DNSDefault:
		cluster = false
	case corev1.DNSClusterFirst, "":
		cluster = !pod.Spec.HostNetwork
	}
	if cluster && len(b.ClusterDNS) == 0 {
		msg := fmt.Sprintf("kubelet does not have ClusterDNS IP configured and cannot create Pod using %q policy. Falling back to %q policy.", corev1.DNSClusterFirst, corev1.DNSDefault)
		warnings = append(warnings, dnsWarning{Reason: "MissingClusterDNS", Message: msg, Node: true})
		cluster = false
	}
	switch {
	case cluster:
		cfg.Servers = append([]string(nil), b.ClusterDNS...)
		if b.ClusterDomain != "" {
			cfg.Searches = omitDuplicates(append([]string{pod.Namespace + ".svc." + b.ClusterDomain, "svc." + b.ClusterDomain, b.ClusterDomain}, cfg.Searches...))
		}
		cfg.Options = []string{"ndots:5"}
	case pod.Spec.DNSPolicy != corev1.DNSNone && b.ResolvConf == "":
		for _, ip := range b.HostIPs {
			if a, err := netip.ParseAddr(ip); err == nil && a.Is6() && !a.Is4In6() {
				cfg.Servers = append(cfg.Servers, "::1")
			} else {
				cfg.Servers = append(cfg.Servers, "127.0.0.1")
			}
		}
		if len(cfg.Servers) == 0 {
			cfg.Servers = []string{"127.0.0.1"}
		}
		cfg.Searches = []string{"."}
	}
	if dc := pod.Spec.DNSConfig; dc != nil {
		cfg.Servers = omitDuplicates(append(cfg.Servers, dc.Nameservers...))
		cfg.Searches = omitDuplicates(append(cfg.Searches, dc.Searches...))
		var opts []string
		for _, o := range dc.Options {
			if o.Value != nil && *o.Value != "" {
				opts = append(opts, o.Name+":"+*o.Value)
			} else {
				opts = append(opts, o.Name)
			}
		}
		cfg.Options = mergeOptionStrings(cfg.Options, opts...)
	}
	if len(cfg.Servers) > maxDNSNameservers {
		cfg.Servers = cfg.Servers[:maxDNSNameservers]
		warnings = append(warnings, dnsWarning{Reason: "DNSConfigForming", Message: "Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: " + strings.Join(cfg.Servers, " ")})
	}
	exceeded := false
	if len(cfg.Searches) > maxDNSSearchPaths {
		cfg.Searches, exceeded = cfg.Searches[:maxDNSSearchPaths], true
	}
	kept := cfg.Searches[:0]
	for _, s := range cfg.Searches {
		if len(s) > maxDNSSearchPathLen {
			exceeded = true
			continue
		}
		kept = append(kept, s)
	}
	cfg.Searches = kept
	if n := len(strings.Join(cfg.Searches, " ")); n > maxDNSSearchListChars {
		cut := 0
		for i := len(cfg.Searches) - 1; i >= 0 && n > maxDNSSearchListChars; i-- {
			n -= len(cfg.Searches[i]) + 1
			cut++
		}
		cfg.Searches, exceeded = cfg.Searches[:len(cfg.Searches)-cut], true
	}
	if exceeded {
		warnings = append(warnings, dnsWarning{Reason: "DNSConfigForming", Message: "Search Line limits were exceeded, some search paths have been omitted, the applied search line is: " + strings.Join(cfg.Searches, " ")})
	}
	return cfg, warnings, nil
}

// hostnameAndDomain are the pod's hostname (spec.hostname or its name,
// cut to 63 characters) and domain (<subdomain>.<ns>.svc.<cluster
// domain> with spec.subdomain), as upstream's.
func (b *podConfig) hostnameAndDomain(pod *corev1.Pod) (string, string, error) {
	hostname := pod.Name
	if pod.Spec.Hostname != "" {
		hostname = pod.Spec.Hostname
	}
	if len(hostname) > 63 {
		hostname = strings.TrimRight(hostname[:63], "-.")
		if hostname == "" {
			return "", "", fmt.Errorf("hostname for pod %q was invalid: %q", pod.Name, pod.Spec.Hostname)
		}
	}
	domain := ""
	if pod.Spec.Subdomain != "" {
		domain = fmt.Sprintf("%s.%s.svc.%s", pod.Spec.Subdomain, pod.Namespace, b.ClusterDomain)
	}
	return hostname, domain, nil
}

// kernelHostname is the hostname the sandbox gets: the FQDN with
// setHostnameAsFQDN (at most 64 characters), else the short name.
func kernelHostname(hostname, domain string, asFQDN *bool) (string, error) {
	if domain == "" || asFQDN == nil || !*asFQDN {
		return hostname, nil
	}
	fqdn := hostname + "." + domain
	if len(fqdn) > 64 {
		return "", fmt.Errorf("failed to construct FQDN from pod hostname and cluster domain, FQDN %s is too long (%d characters is the max, %d characters requested)", fqdn, 64, len(fqdn))
	}
	return fqdn, nil
}
