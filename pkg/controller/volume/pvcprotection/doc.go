// Package pvcprotection is upstream's PVC protection controller
// ("persistentvolumeclaim-protection-controller"): a claim carries the
// kubernetes.io/pvc-protection finalizer while it exists, and once it is
// being deleted the finalizer is removed as soon as no pod uses it, so a
// claim is never deleted under a running pod.
//
// skiff's API server has no StorageObjectInUseProtection admission plugin
// (upstream's adds the finalizer at creation): this controller adds it to
// claims that lack it, as upstream's does for claims created before that
// plugin was enabled — so the finalizer appears moments after creation,
// not at it.
//
// A pod uses a claim when it is scheduled (spec.nodeName set: upstream
// ignores pods not on a node, which the kubelet never starts with a
// claim being deleted), is not finished (Succeeded/Failed) nor shut down
// (deleted with grace period 0), and names the claim in a
// persistentVolumeClaim volume or through a generic ephemeral volume.
//
// Invariants:
//   - The finalizer is removed only after both the informer cache and a
//     live list of the namespace's pods show no pod using the claim.
//   - Only the finalizer is written (Update with the cached
//     resourceVersion; a conflict retries).
//   - The sync of a claim (sync) is a function of the listers' state;
//     tests call it directly.
package pvcprotection
