// Package ephemeral is upstream's ephemeral volume controller
// ("ephemeral-volume-controller", --concurrent-ephemeralvolume-syncs):
// every generic ephemeral volume of a pod (spec.volumes[].ephemeral) gets
// its claim, named "<pod>-<volume>", made from the volume's
// volumeClaimTemplate (labels, annotations, spec) and controlled by the
// pod, so the garbage collector deletes it with the pod.
//
// Pods are queued when added or updated and when a claim one of their
// ephemeral volumes names is deleted. A pod being deleted gets no claims.
// A claim of that name that the pod does not control is never adopted:
// a Warning event (FailedBinding, "ephemeral volume <v>: PVC <ns>/<name>
// was not created for pod <ns>/<pod> (pod is not owner)") and retries.
//
// Invariants:
//   - Claims are only created, never updated or deleted (deletion is the
//     garbage collector's, through the owner reference).
//   - The sync of a pod (sync) is a function of the listers' state; tests
//     call it directly.
package ephemeral
