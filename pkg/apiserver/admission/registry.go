package admission

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// AllOrderedPlugins are upstream's admission plugin names in upstream's
// recommended order (kube-apiserver 1.34): the chain always runs the
// enabled ones in this order, whatever the order of the flags.
var AllOrderedPlugins = []string{
	"AlwaysAdmit",
	"NamespaceAutoProvision",
	"NamespaceLifecycle",
	"NamespaceExists",
	"LimitPodHardAntiAffinityTopology",
	"LimitRanger",
	"ServiceAccount",
	"NodeRestriction",
	"TaintNodesByCondition",
	"AlwaysPullImages",
	"ImagePolicyWebhook",
	"PodSecurity",
	"PodNodeSelector",
	"Priority",
	"DefaultTolerationSeconds",
	"PodTolerationRestriction",
	"EventRateLimit",
	"ExtendedResourceToleration",
	"DefaultStorageClass",
	"StorageObjectInUseProtection",
	"OwnerReferencesPermissionEnforcement",
	"PersistentVolumeClaimResize",
	"RuntimeClass",
	"CertificateApproval",
	"CertificateSigning",
	"ClusterTrustBundleAttest",
	"CertificateSubjectRestriction",
	"DefaultIngressClass",
	"DenyServiceExternalIPs",
	"PodTopologyLabels",
	"MutatingAdmissionPolicy",
	"MutatingAdmissionWebhook",
	"ValidatingAdmissionPolicy",
	"ValidatingAdmissionWebhook",
	"ResourceQuota",
	"AlwaysDeny",
}

// defaultOn are the plugins upstream enables without flags.
var defaultOn = map[string]bool{
	"NamespaceLifecycle": true, "LimitRanger": true, "ServiceAccount": true, "DefaultStorageClass": true,
	"PersistentVolumeClaimResize": true, "DefaultTolerationSeconds": true, "MutatingAdmissionWebhook": true,
	"ValidatingAdmissionWebhook": true, "ResourceQuota": true, "StorageObjectInUseProtection": true,
	"Priority": true, "TaintNodesByCondition": true, "RuntimeClass": true, "CertificateApproval": true,
	"CertificateSigning": true, "ClusterTrustBundleAttest": true, "CertificateSubjectRestriction": true,
	"DefaultIngressClass": true, "PodSecurity": true, "PodTopologyLabels": true,
	"MutatingAdmissionPolicy": true, "ValidatingAdmissionPolicy": true,
}

// factories are the plugins skiff implements, by upstream's name. A name
// of AllOrderedPlugins without a factory is accepted by the flags (so that
// kube-apiserver command lines keep working) and left out of the chain.
var factories = map[string]func(Deps) Plugin{
	"AlwaysAdmit":                      func(Deps) Plugin { return alwaysAdmit{} },
	"NamespaceExists":                  func(d Deps) Plugin { return &namespaceExists{d: d} },
	"LimitPodHardAntiAffinityTopology": func(Deps) Plugin { return limitPodHardAntiAffinityTopology{} },
	"AlwaysPullImages":                 func(Deps) Plugin { return alwaysPullImages{} },
	"ExtendedResourceToleration":       func(Deps) Plugin { return extendedResourceToleration{} },
	"DenyServiceExternalIPs":           func(Deps) Plugin { return denyServiceExternalIPs{} },
	"AlwaysDeny":                       func(Deps) Plugin { return alwaysDeny{} },
	"NamespaceLifecycle": func(d Deps) Plugin {
		return &namespaceLifecycle{d: d, deleted: map[string]time.Time{}}
	},
	"LimitRanger":                   func(d Deps) Plugin { return &limitRanger{d: d} },
	"ServiceAccount":                func(d Deps) Plugin { return &serviceAccount{d: d} },
	"TaintNodesByCondition":         func(Deps) Plugin { return &taintNodesByCondition{} },
	"Priority":                      func(d Deps) Plugin { return &priority{d: d} },
	"DefaultTolerationSeconds":      func(Deps) Plugin { return &defaultTolerationSeconds{} },
	"DefaultStorageClass":           func(d Deps) Plugin { return &defaultStorageClass{d: d} },
	"CertificateSubjectRestriction": func(Deps) Plugin { return &certificateSubjectRestriction{} },
	"CertificateApproval":           func(d Deps) Plugin { return &certificateApproval{d: d} },
	"RuntimeClass":                  func(d Deps) Plugin { return &runtimeClass{d: d} },
	"CertificateSigning":            func(d Deps) Plugin { return &certificateSigning{d: d} },
	"DefaultIngressClass":           func(d Deps) Plugin { return &defaultIngressClass{d: d} },
	"ResourceQuota":                 func(d Deps) Plugin { return newResourceQuota(d) },
	"PodSecurity":                   func(d Deps) Plugin { return newPodSecurity(d) },
	"NodeRestriction":               func(d Deps) Plugin { return &nodeRestriction{d: d} },
	"PodTopologyLabels":             func(d Deps) Plugin { return &podTopologyLabels{d: d} },
	"StorageObjectInUseProtection":  func(Deps) Plugin { return storageObjectInUseProtection{} },
	"PersistentVolumeClaimResize":   func(d Deps) Plugin { return &persistentVolumeClaimResize{d: d} },
}

// Implemented reports whether skiff has the plugin named (the webhook
// plugins are built by package webhook, the policy plugins by package
// policy).
func Implemented(name string) bool {
	switch name {
	case "MutatingAdmissionWebhook", "ValidatingAdmissionWebhook", "ValidatingAdmissionPolicy", "MutatingAdmissionPolicy":
		return true
	}
	return factories[name] != nil
}

// EnabledPlugins is upstream's enabledPluginNames: the default-on plugins,
// plus enable, minus disable, in upstream's recommended order. An unknown
// name, or one both enabled and disabled, is an error naming the valid
// ones (upstream's flag validation).
func EnabledPlugins(enable, disable []string) ([]string, error) {
	var errs []error
	for _, f := range []struct {
		flag  string
		names []string
	}{{"enable-admission-plugins", enable}, {"disable-admission-plugins", disable}} {
		for _, n := range f.names {
			if !slices.Contains(AllOrderedPlugins, n) {
				errs = append(errs, fmt.Errorf("%s plugin %q is unknown", f.flag, n))
			}
		}
	}
	var both []string
	for _, n := range enable {
		if slices.Contains(disable, n) && !slices.Contains(both, n) {
			both = append(both, n)
		}
	}
	if len(both) > 0 {
		slices.Sort(both)
		errs = append(errs, fmt.Errorf("[%s] in enable-admission-plugins and disable-admission-plugins overlapped", strings.Join(both, " ")))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w (valid admission plugins: %s)", errors.Join(errs...), strings.Join(AllOrderedPlugins, ", "))
	}
	var out []string
	for _, n := range AllOrderedPlugins {
		on := (defaultOn[n] || slices.Contains(enable, n)) && !slices.Contains(disable, n)
		if on {
			out = append(out, n)
		}
	}
	return out, nil
}

// NewChainFor builds the chain of the named plugins, in the order given,
// leaving out those skiff does not implement (returned as skipped).
func NewChainFor(names []string, d Deps) (c *Chain, skipped []string) {
	var ps []Plugin
	for _, n := range names {
		if p := d.External[n]; p != nil {
			ps = append(ps, p)
			continue
		}
		f := factories[n]
		if f == nil {
			skipped = append(skipped, n)
			continue
		}
		ps = append(ps, f(d))
	}
	return NewChain(ps...), skipped
}

// alwaysAdmit is upstream's AlwaysAdmit (deprecated): admits everything.
type alwaysAdmit struct{}

func (alwaysAdmit) Name() string                                { return "AlwaysAdmit" }
func (alwaysAdmit) Handles(Operation) bool                      { return true }
func (alwaysAdmit) Validate(context.Context, *Attributes) error { return nil }

// alwaysDeny is upstream's AlwaysDeny (deprecated): rejects every request
// it sees.
type alwaysDeny struct{}

func (alwaysDeny) Name() string           { return "AlwaysDeny" }
func (alwaysDeny) Handles(Operation) bool { return true }
func (alwaysDeny) Admit(_ context.Context, a *Attributes) error {
	return forbidden(a, errors.New("admission control is denying all modifications"))
}
