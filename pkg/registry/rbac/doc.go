// Package rbac defines the rbac.authorization.k8s.io/v1 roles and bindings:
// upstream's defaulting and validation as pure functions over the
// k8s.io/api types, and the registry Definitions (names, strategy,
// subresources) the API server serves them from, with upstream's privilege-escalation prevention
// (escalation.go): creating or updating a role with rules the requesting
// user does not hold needs the escalate verb, binding a role whose rules it
// does not hold needs the bind verb; system:masters and the server's own
// writes are exempt.
//
// Invariants: defaulting is idempotent and only fills unset fields;
// validation never mutates; error paths and messages follow upstream's so
// that kubectl prints the same errors.
package rbac
