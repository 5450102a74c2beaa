// Package resource defines the resource.k8s.io/v1 resources of dynamic
// resource allocation (DRA): deviceclasses, resourceclaims (+status),
// resourceclaimtemplates, resourceslices and devicetaintrules (+status).
// It holds upstream's defaulting and validation as pure functions over the
// k8s.io/api types, and the registry Definitions (names, strategies, field
// selectors, subresources) the API server serves them from.
//
// Invariants: defaulting is idempotent and only fills unset fields (the
// one time-dependent default, a device taint's timeAdded, takes the time
// from the clock the Definitions were built with); validation never
// mutates; error paths and messages follow upstream's so that kubectl
// prints the same errors. A ResourceClaim's and ResourceClaimTemplate's
// spec is immutable; a claim's status changes only through the status
// subresource. A claim or claim template asking for admin access to
// devices is created only in a namespace labelled
// resource.kubernetes.io/admin-access=true (a create hook reads the
// namespace, as upstream's strategy does). CEL selector expressions are
// compiled with github.com/google/cel-go when written (not when unchanged
// by an update), with upstream's messages; skiff never evaluates them.
package resource
