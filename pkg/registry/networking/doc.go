// Package networking holds the networking.k8s.io/v1 resources: defaulting,
// validation and strategy, with upstream's field paths and messages.
// ingresses (+status), ingressclasses and networkpolicies are served as
// upstream's (Definitions). ipaddresses and servicecidrs record Service IP
// allocation (AllocationDefinitions: the Service allocator in
// pkg/registry/core creates one IPAddress per allocated cluster IP; the
// object's name is the address in canonical form, so storage's
// create-if-absent makes an address belong to at most one Service, across
// any number of API servers).
//
// Invariants: defaulting is idempotent and only fills unset fields;
// validation never mutates; updates accept values an older server stored
// (invalid TLS secret names, wildcard-host rules, selector label values,
// CIDRs) as upstream does. pkg/registry/core imports this package, so it
// never imports core.
package networking
