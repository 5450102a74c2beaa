// Package intern shares equal sub-structures among the objects an
// informer caches ("hash-consing"): pods stamped from one template carry
// deep-equal containers' images and resource maps, tolerations, projected
// service-account volume sources, security contexts, labels and owner
// references, and after decoding each pod holds its own copy of all of
// them. An Interner replaces each such part of a freshly decoded object by
// a canonical instance looked up by its content, so that the pods of one
// ReplicaSet share one copy.
//
//	in := intern.New()
//	factory := informers.NewSharedInformerFactory(c, resync, informers.WithTransform(in.Transform))
//
// Transform handles *corev1.Pod (other objects pass through unchanged);
// Pod interns one pod in place.
//
// # Invariants
//
//   - Read-only objects. A part is shared only after the object holding it
//     has been handed to Transform, and cached objects are read-only by the
//     contract of pkg/client/cache (as client-go's): a consumer that wants
//     to change a cached object DeepCopies it first. Writing through a
//     cached object (a label into its Labels map, an element of its
//     Tolerations) would change every object sharing that part. Shared
//     slices have cap == len, so an append never writes into a shared
//     backing array.
//   - Equal values only. Two parts are shared only when their content keys
//     are equal: the protobuf encoding for API structs and slices of them
//     (length-prefixed elements), the sorted entries for maps, the bytes
//     for strings and scalars, one key space per Go type. A decoded
//     object's observable values never change; only which memory holds
//     them.
//   - No leak. The table holds its canonical instances weakly (package
//     weak) and each entry is removed by a cleanup (runtime.AddCleanup)
//     once the last object using that instance is unreachable. Canonical
//     strings and scalars are allocated outside the runtime's tiny-object
//     batching, so that their cleanups run.
//   - Parts unique to one object cost no entry (an entry costs more than
//     the copy it saves): names, UIDs, resourceVersions, the generated
//     service-account volume name and condition times are never looked
//     up, and any other part becomes canonical only at its second
//     sighting among recent misses (a bounded set of key hashes), so a
//     StatefulSet pod's name label or a DaemonSet pod's node affinity
//     stays the pod's own. The first object of a template keeps its own
//     parts; the second and later share. Within one pod, a volume
//     mount's name shares the volume's name.
//   - Cost: one protobuf encoding of each shared part into a reused buffer
//     and one map lookup per part, under one mutex per object.
package intern
