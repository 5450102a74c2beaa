// Package admission is the API server's admission chain: after a request is
// decoded and before it is stored, each plugin may change the object
// (mutating) and then each may reject it (validating), as upstream's
// default plugin chain does (NamespaceLifecycle, LimitRanger,
// ServiceAccount, TaintNodesByCondition, Priority, DefaultTolerationSeconds,
// DefaultStorageClass, CertificateSubjectRestriction, DefaultIngressClass,
// PodSecurity (pkg/podsecurity), MutatingAdmissionPolicy,
// MutatingAdmissionWebhook, ValidatingAdmissionPolicy and
// ValidatingAdmissionWebhook (packages policy and webhook, given through
// Deps.External; both match requests with package matching),
// ResourceQuota; and, off by default as upstream,
// AlwaysAdmit, AlwaysDeny, NamespaceExists, LimitPodHardAntiAffinityTopology,
// AlwaysPullImages, ExtendedResourceToleration, DenyServiceExternalIPs).
//
// registry.go holds upstream's plugin names in upstream's recommended
// order and its default-on set: --enable-admission-plugins and
// --disable-admission-plugins (EnabledPlugins) change the set, never the
// order; names upstream has and skiff does not implement are accepted and
// left out. Plugins add warnings with AddWarning (sent as HTTP Warning
// headers).
//
// Attributes carry the requesting user, the request's served version and
// options, and a converter between the storage form and served versions
// (Versions); a mutating plugin may ask for the mutating chain to run once
// more (Reinvocation), as upstream's reinvocation.
//
// Invariants: plugins see the object in its storage version; mutation
// happens before the registry's own validation, validation after it; the
// only plugin that writes is ResourceQuota (a quota's status.used, through
// Deps.Status, with the resourceVersion precondition); rejections are 403
// Forbidden (or 422 Invalid for bad values) in upstream's wording.
package admission
