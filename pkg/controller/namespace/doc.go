// Package namespace is skiff's namespace controller (upstream's
// kube-controller-manager "namespace" controller): it empties a namespace
// being deleted and then releases it.
//
// For a namespace with a deletionTimestamp and the "kubernetes" finalizer
// in spec.finalizers it
//  1. sets status.phase Terminating;
//  2. discovers the namespaced resources (preferred versions, delete verb),
//     custom resources included;
//  3. deletes the pods first (deletecollection where supported, else one
//     by one) and waits until none is left — as upstream's ordered
//     namespace deletion — then every other resource the same way;
//  4. records what it found as upstream's five deletion conditions
//     (NamespaceDeletionDiscoveryFailure, NamespaceDeletionGroupVersionParsingFailure,
//     NamespaceDeletionContentFailure, NamespaceContentRemaining,
//     NamespaceFinalizersRemaining) with upstream's reasons and messages;
//  5. once nothing is left, removes "kubernetes" through the
//     namespaces/finalize subresource, and the API server deletes the
//     namespace.
//
// While content remains the namespace is looked at again after half the
// estimated time to finish (graceful pod termination, or 15 s for objects
// held by finalizers), as upstream.
//
// Invariants:
//   - The conditions report what the last pass saw: a namespace holding an
//     object with a finalizer stays Terminating with ContentRemaining and
//     FinalizersRemaining true, naming the resource and the finalizer.
//   - Nothing but pods is deleted while pods remain.
//   - The controller talks to the API server only through pkg/client.
package namespace
