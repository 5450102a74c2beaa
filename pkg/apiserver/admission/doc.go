// Package admission is the API server's admission chain: after a request is
// decoded and before it is stored, each plugin may change the object
// (mutating) and then each may reject it (validating), as upstream's
// default plugin chain does (NamespaceLifecycle, LimitRanger,
// ServiceAccount, TaintNodesByCondition, Priority, DefaultTolerationSeconds,
// DefaultStorageClass, DefaultIngressClass).
//
// Invariants: plugins see the object in its storage version; mutation
// happens before the registry's own validation, validation after it; a
// plugin never writes to storage; rejections are 403 Forbidden (or 422
// Invalid for bad values) in upstream's wording.
package admission
