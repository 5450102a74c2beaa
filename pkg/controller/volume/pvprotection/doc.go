// Package pvprotection is upstream's PV protection controller
// ("persistentvolume-protection-controller"): a volume carries the
// kubernetes.io/pv-protection finalizer while it exists, and once it is
// being deleted the finalizer is removed as soon as the volume is no
// longer Bound, so a volume is never deleted under its claim.
//
// skiff's API server has no StorageObjectInUseProtection admission plugin
// (upstream's adds the finalizer at creation): this controller adds it to
// volumes that lack it, as upstream's does for older volumes.
//
// Invariants:
//   - A Bound volume keeps its finalizer; nothing but the finalizer is
//     written (Update with the cached resourceVersion).
//   - The sync of a volume (sync) is a function of the lister's state;
//     tests call it directly.
package pvprotection
