// Package garbagecollector is skiff's garbage collector controller
// (upstream's kube-controller-manager "garbage-collector"): it deletes
// objects whose owners are gone and carries out the Foreground and Orphan
// propagation policies.
//
// A graph builder follows the metadata (PartialObjectMetadata informers,
// pkg/client/metadata) of every resource discovery lists with the list,
// watch and delete verbs — custom resources included; discovery is redone
// every DiscoveryPeriod and monitors are started and stopped as resources
// appear and disappear — and keeps an ownership graph: one node per object
// UID with its owner references and its dependents, and "virtual" nodes for
// owners referenced but not (yet) observed. Two work queues act on it, as
// upstream's:
//
//   - attemptToDelete: an object whose owners may all be gone. Its owner
//     references are classified by a live GET (NotFound or another UID:
//     dangling, remembered in an absent-owner cache; being deleted with the
//     foregroundDeletion finalizer: waiting for dependents; else solid). With
//     a solid owner the other references are removed; otherwise the object
//     is deleted (Foreground when an owner waits for it and it has
//     dependents, else with the policy its own finalizers say). An owner
//     being deleted in Foreground loses its foregroundDeletion finalizer
//     exactly when no dependent with blockOwnerDeletion=true is left.
//   - attemptToOrphan: an owner being deleted with the orphan finalizer:
//     its reference is removed from every dependent, then the finalizer.
//     Events of different resources come in no particular order, so a
//     dependent created just before the owner's deletion can be observed
//     after the orphaning: the collector remembers the owners it orphaned
//     with their resourceVersion then (bounded) and removes the reference
//     to one from a dependent last written before that revision instead of
//     collecting it (upstream leaves this race open and deletes it); a
//     dependent written later with such a reference is collected.
//
// A namespaced owner is looked up in its dependent's namespace (an owner in
// another namespace is absent); a cluster-scoped dependent referring to a
// namespaced kind cannot be resolved and is kept, with an
// OwnerRefInvalidNamespace warning event, as upstream.
//
// Invariants:
//   - Every delete carries a UID precondition; every metadata patch
//     carries the resourceVersion it was computed from (a conflict is
//     retried), so a recreated or changed object is never acted on by
//     mistake.
//   - Nothing is deleted because of an owner that was not confirmed absent
//     by the API server (a live GET), never from the cache alone.
//   - The controller talks to the API server only through pkg/client.
package garbagecollector
