// Package podgc is the pod garbage collector (upstream's
// pod-garbage-collector-controller): every 20 seconds of the injected
// clock (gcCheckPeriod) it deletes pods nothing else will ever delete.
//
// One pass (GC), on the informers' pods and nodes, as upstream's:
//   - Terminated pods (phase neither Pending, Running nor Unknown) beyond
//     TerminatedPodThreshold (the manager's --terminated-pod-gc-threshold,
//     12500; <= 0 turns this off) are deleted, evicted pods first (Failed
//     with reason Evicted), then the oldest by creation time, then by name;
//     a terminated pod whose force deletion was accepted and that only
//     waits for its finalizers counts but is not deleted again.
//   - Terminating pods (deletionTimestamp set) on a node that is not Ready
//     and carries the node.kubernetes.io/out-of-service taint are
//     force-deleted, in the same order.
//   - Orphaned pods, bound to a node that does not exist, are force-deleted
//     with a DisruptionTarget condition (reason DeletionByPodGC, "PodGC:
//     node no longer exists"): a missing node is first quarantined for 40
//     seconds (a delaying queue on the injected clock), then confirmed
//     absent by a GET on the server, so that a node the cache has not seen
//     yet is never taken for a deleted one.
//   - Unscheduled terminating pods (deletionTimestamp set, no nodeName) are
//     force-deleted.
//
// Metrics (Config.Registry), upstream's:
// pod_gc_collector_force_delete_pods_total and
// pod_gc_collector_force_delete_pod_errors_total by namespace and reason
// (terminated, out-of-service, orphaned, unscheduled).
//
// Invariants:
//   - Before a force delete (grace period 0), a pod that has not finished
//     is moved to phase Failed (with the condition, if any) by a
//     server-side apply of its status with field manager "PodGC", forced,
//     so that its phase never stays Running with no kubelet to end it.
//   - A pod already gone (404) is not an error; a failed pod is tried
//     again on the next pass.
//   - All time is the Config's Clock; the controller has no workers (one
//     loop, as upstream's).
package podgc
