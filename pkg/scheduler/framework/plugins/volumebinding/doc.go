// Package volumebinding is the VolumeBinding plugin, as upstream
// kube-scheduler 1.34's (without storage capacity scoring, which is off
// by default in 1.34): it places pods with PersistentVolumeClaims where
// their volumes are or can be, and binds WaitForFirstConsumer claims on
// the chosen node.
//
//   - PreFilter: Skip for pods without claims (or generic ephemeral
//     volumes, whose claim is <pod>-<volume>). A missing claim
//     (`persistentvolumeclaim "x" not found`; for an ephemeral volume
//     "waiting for ephemeral volume controller to create the
//     persistentvolumeclaim ..."), a Lost claim, a claim being deleted and
//     an unbound Immediate (or pre-bound, not yet bound) claim ("pod has
//     unbound immediate PersistentVolumeClaims") are
//     UnschedulableAndUnresolvable.
//   - Filter: a bound claim's volume must accept the node's labels ("node(s)
//     didn't match PersistentVolume's node affinity"; a missing volume: "node(s)
//     unavailable due to one or more pvc(s) bound to non-existent pv(s)");
//     each unbound WaitForFirstConsumer claim needs, on the node, an
//     Available volume of its class (size, volume mode, selector, access
//     modes, node affinity; smallest first; a volume pre-bound to the
//     claim wins) or a class whose provisioner (not
//     kubernetes.io/no-provisioner) serves the node's topology (a CSI
//     driver with storage capacity tracking also needs a CSIStorageCapacity
//     of the class reachable from the node holding the request, else
//     "node(s) did not have enough free storage"); a claim
//     already given to another node's provisioner (selected-node) fails:
//     "node(s) didn't find available persistent volumes to bind". All
//     UnschedulableAndUnresolvable.
//   - Reserve assumes the choice in memory (volume claimRef, claim
//     volume.kubernetes.io/selected-node), so that the next pods do not
//     take the same volume; Unreserve forgets it.
//   - PreBind writes it through the API (volumes first, then claims), then
//     waits, polling the informers every second up to bindTimeoutSeconds
//     (VolumeBindingArgs, default 600), until the PV controller bound every
//     claim — a provisioner that gives up removes selected-node, which
//     fails the binding so the pod is retried.
//
// With skiff's PV controller and its local-path provisioner
// (skiff.io/local-path, WaitForFirstConsumer), a pod's new claim is
// annotated with the chosen node here, the binder hands it to the
// provisioner, which creates a hostPath volume with node affinity to that
// node, and the claim is bound before the pod.
//
// Differences from upstream: in-tree volumes are not translated to CSI
// (skiff has no in-tree volume plugins), PreBindPreFlight does not exist
// in skiff's framework; of upstream's metrics only
// scheduler_volume_scheduling_stage_error_total{operation} is kept
// (predicate/assume/bind failures; Register).
//
// Invariants: PreFilter and Filter read informer listers (through assume
// caches) and never the API; only PreBind writes, and only what Reserve
// assumed; an assumption gives way as soon as the informer shows a newer
// version of the object.
package volumebinding
