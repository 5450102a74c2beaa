// Package nodevolumelimits is the NodeVolumeLimits plugin (upstream's
// CSILimits), as upstream kube-scheduler 1.34's: the CSI volumes of the
// pod's claims (and generic ephemeral volumes' claims) must not push a
// node over its attach limit per CSI driver ("node(s) exceed max volume
// count", Unschedulable). The limit of a driver is the CSINode's
// spec.drivers[].allocatable.count for the node (or the node's
// allocatable attachable-volumes-csi-<driver>); a node without limits —
// no CSINode object, as on a skiff cluster without CSI drivers — admits
// every pod. A volume used by several pods on the node counts once.
//
// A claim's driver and handle come from its bound PersistentVolume's
// spec.csi; an unbound claim (or one whose volume is not in the cache)
// counts against its StorageClass's provisioner with a placeholder
// handle unique to the claim, as upstream's.
//
// Differences from upstream: in-tree volume plugins migrated to CSI (EBS,
// GCE PD, Azure Disk, Cinder) are not translated and not counted — skiff
// has no in-tree volume plugins and no CSI migration.
//
// Invariants: Filter reads listers and the node's pods only, never the
// API, and does not change them. A pod's missing claim is
// UnschedulableAndUnresolvable in Filter, as upstream's.
package nodevolumelimits
