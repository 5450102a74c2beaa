// Package persistentvolume is upstream's PersistentVolume binder
// ("persistentvolume-binder-controller"): it binds claims to volumes,
// asks provisioners for volumes, and reclaims volumes whose claim is gone.
//
// Claims (queue "claims") and volumes (queue "volumes") are synced
// separately, each by one worker, and both are re-queued every SyncPeriod
// (upstream's --pvclaimbinder-sync-period, 15s).
//
// Claim sync (syncClaim), as upstream's syncUnboundClaim/syncBoundClaim:
//   - Without pv.kubernetes.io/bind-completed, without spec.volumeName: the
//     best matching volume (findBestMatch: a volume pre-bound to the claim
//     by claimRef first; else an Available, unclaimed, not-deleting volume
//     of the claim's class — "" included —, matching the selector and
//     volumeMode, whose access modes contain the claim's, fewest extra
//     access modes first, then the smallest capacity that fits) is bound.
//     When the claim's class is WaitForFirstConsumer only pre-bound
//     volumes are bound here (the scheduler binds the others). With no
//     match: a claim without any class gets the default StorageClass
//     (upstream's retroactive default class; the API server's
//     DefaultStorageClass admission already does it at creation); then a
//     WaitForFirstConsumer claim without volume.kubernetes.io/selected-node
//     waits (event WaitForFirstConsumer, or WaitForPodScheduled naming the
//     unscheduled pods using it); a claim with a class is handed to its
//     provisioner (annotations volume.kubernetes.io/storage-provisioner and
//     its beta, event ExternalProvisioning: every provisioner is external
//     to skiff's binder, there are no in-tree volume plugins; a
//     "kubernetes.io/" provisioner has no plugin: ProvisioningFailed); a
//     claim without class gets FailedBinding. The claim stays Pending.
//   - With spec.volumeName: that volume is bound if it is free and
//     satisfies the claim (else VolumeMismatch), or if it is pre-bound to
//     the claim; a volume bound to another claim leaves the claim Pending
//     (FailedBinding).
//   - Binding writes the volume first (claimRef with the claim's UID,
//     pv.kubernetes.io/bound-by-controller when the binder chose it, phase
//     Bound), then the claim (spec.volumeName, bind-completed,
//     bound-by-controller when chosen by the binder; status Bound with the
//     volume's access modes and capacity).
//   - A bound claim whose volume is gone or belongs to another claim is
//     Lost (ClaimLost / ClaimMisbound).
//
// Volume sync (syncVolume), as upstream's syncVolume: no claimRef, or one
// without UID: Available; bound to an existing claim that names it: Bound;
// its claim gone (checked against the API server before acting, not only
// the cache): Released, then the reclaim policy — Retain keeps it,
// Delete of a volume made by a provisioner (pv.kubernetes.io/provisioned-by)
// is left to that provisioner, any other Delete or Recycle fails (Failed,
// VolumeFailedDelete / VolumeFailedRecycle: skiff has no in-tree volume
// plugins); a volume the binder bound to a claim that bound another volume
// is unbound again.
//
// Invariants:
//   - Every write is an Update with the cached resourceVersion: a stale
//     cache fails with a conflict and the key is retried, so a volume is
//     never bound to two claims.
//   - The binder never creates or deletes volumes: provisioners do.
//   - The syncs (syncClaim, syncVolume) are functions of the listers'
//     state; tests call them directly.
package persistentvolume
