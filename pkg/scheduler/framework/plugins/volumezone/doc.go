// Package volumezone is the VolumeZone plugin, as upstream kube-scheduler
// 1.34's: the zone and region labels (topology.kubernetes.io/zone|region
// and their failure-domain.beta forms; a value may list several zones
// joined by "__") of the PersistentVolumes bound to the pod's claims must
// match the node's labels ("node(s) had no available volume zone",
// UnschedulableAndUnresolvable). A node without any of these labels
// admits every volume (single-zone clusters); a beta label on the volume
// matches the GA label on the node.
//
// PreFilter reads the pod's claims and their volumes through the shared
// informers' listers: unbound claims of a WaitForFirstConsumer class are
// left to VolumeBinding; a missing claim, volume or class, a claim with
// neither volume nor class, a class without volumeBindingMode or an
// unbound Immediate claim fail UnschedulableAndUnresolvable with
// upstream's messages. Pods without bound zoned volumes Skip.
//
// Invariants: Filter reads the PreFilter state and the node's labels only.
package volumezone
