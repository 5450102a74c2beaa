// Package volumerestrictions is the VolumeRestrictions plugin, as
// upstream kube-scheduler 1.34's:
//
//   - the same GCE PD (unless every mount is read-only), AWS EBS volume,
//     iSCSI IQN (unless read-only) or Ceph RBD image (overlapping monitors,
//     same pool and image, unless read-only) used by a pod already on the
//     node: "node(s) had no available disk" (Unschedulable);
//   - a PersistentVolumeClaim with the ReadWriteOncePod access mode that a
//     scheduled pod already uses (anywhere in the cluster): "node(s)
//     unavailable due to PersistentVolumeClaim with ReadWriteOncePod access
//     mode already in-use by another pod" (Unschedulable: preempting that
//     pod helps);
//   - a claim of the pod that does not exist: PreFilter fails
//     UnschedulableAndUnresolvable with the lister's message
//     (`persistentvolumeclaim "x" not found`).
//
// PreFilter Skips pods without such volumes and without in-use
// ReadWriteOncePod claims; AddPod/RemovePod keep the count of conflicting
// claim references for preemption's simulations.
//
// Invariants: Filter reads the PreFilter state and the node's pods only,
// never the API; claims are read through the shared informer's lister.
package volumerestrictions
