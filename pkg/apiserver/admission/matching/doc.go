// Package matching decides whether an admission request matches a set of
// resource rules, a namespace selector and an object selector, as
// upstream's k8s.io/apiserver admission matching (webhook predicates
// rules/namespace/object and policy/matching): a rule matches by scope,
// operation, API group, version and resource/subresource ("*" for all
// resources, "*/scale" for a subresource of any, "pods/*" for any
// subresource of pods); with matchPolicy Equivalent a rule naming another
// served version (or group, for events) of the same stored resource
// matches too, and the matched resource and kind are that version's; a
// namespace selector is matched against the labels of the request's
// namespace (a namespace's own labels for a namespace), an object selector
// against the new or the old object's labels. Admission policies
// (package policy) and admission webhooks (package webhook) use it.
//
// Invariants: matching never writes and never mutates the attributes; a
// missing namespace answers 404 as upstream; a cluster-scoped request
// other than for a namespace always matches a namespace selector.
package matching
