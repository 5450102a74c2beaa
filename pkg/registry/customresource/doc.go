// Package customresource serves the objects of CustomResourceDefinitions:
// from one CRD it builds everything the API server needs to serve its
// resource (New), as unstructured objects through the generic
// registry.Store: names, scope, per-version strategies (validation,
// defaulting and pruning of that version's schema), None conversion between
// versions (only apiVersion changes), the status and scale subresources,
// selectable fields and printer columns.
//
// It also holds the CRD conditions upstream's apiextensions-apiserver
// controllers maintain (NamesAccepted, Established, Terminating) as pure
// functions (conditions.go), and the cleanup finalizer name.
//
// Invariants:
//   - Objects are stored in the CRD's storage version under
//     /registry/<group>/<plural>/; reads in another version only rewrite
//     apiVersion (None conversion), on a copy: stored objects are never
//     mutated.
//   - With a status subresource, the main resource ignores status changes
//     and the status subresource ignores everything but status (and
//     managedFields); metadata.generation starts at 1 and increases on every
//     change outside metadata (and outside status with the subresource).
//   - Everything here is a pure function of the CRD: building it twice
//     gives equivalent resources.
package customresource
