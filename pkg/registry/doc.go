// Package registry is the generic REST storage of a resource (Store) and
// the description of a resource (Definition, Strategy). Store turns API
// verbs into storage operations and applies the Kubernetes object
// lifecycle; each resource's differences live in its Strategy, defined in
// the group packages under pkg/registry/<group>.
//
// Invariants:
//   - uid, creationTimestamp, resourceVersion, deletionTimestamp and
//     generation are the server's: clients cannot set or change them.
//   - generation starts at 1 and increases only when something outside
//     metadata and status changes (for resources with Strategy.Generation).
//   - With a status subresource, the main resource ignores status changes
//     and the status subresource ignores everything but status.
//   - An object with finalizers, or under graceful deletion, is only marked
//     (deletionTimestamp) by a delete; the update that removes its last
//     finalizer, or a delete with grace period 0, removes it.
//   - Every update is a compare-and-swap on resourceVersion; a client
//     resourceVersion that is not current is a 409 Conflict.
package registry
