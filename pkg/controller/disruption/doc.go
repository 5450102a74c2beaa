// Package disruption is the disruption controller (upstream's
// disruption-controller): it keeps the status of every
// PodDisruptionBudget, which the eviction subresource of pods (served by
// the API server) reads and decrements.
//
// For each PodDisruptionBudget (key "namespace/name") Sync computes, from
// the pods its selector matches (policy/v1: an empty selector matches
// every pod of the namespace):
//   - expectedPods and desiredHealthy: with an integer minAvailable,
//     desiredHealthy is that number and expectedPods the number of
//     matching pods; with a percentage minAvailable or any maxUnavailable,
//     expectedPods is the summed scale of the pods' controllers
//     (Deployments through their ReplicaSets, ReplicaSets,
//     ReplicationControllers and StatefulSets through their objects, any
//     other controller through its scale subresource) and the percentage
//     is rounded up, as upstream; pods without a controller are reported
//     by an UnmanagedPods event and not counted;
//   - currentHealthy: the Ready pods not being deleted and not recorded in
//     status.disruptedPods within the last 2 minutes (DeletionTimeout);
//   - disruptedPods: the entries of pods still present, not being deleted
//     and evicted less than 2 minutes ago (an older entry gets a
//     NotDeleted event on its pod and is dropped); the budget is synced
//     again when the oldest entry expires;
//   - disruptionsAllowed: currentHealthy - desiredHealthy, never negative,
//     and 0 while expectedPods is 0;
//   - observedGeneration and the DisruptionAllowed condition
//     (SufficientPods/InsufficientPods), written only when something
//     changed.
//
// A sync that fails for another reason than a conflict sets
// disruptionsAllowed to 0 and DisruptionAllowed False with reason
// SyncFailed and the error as message (upstream's fail-safe).
//
// A pod that carries a DisruptionTarget condition True (an eviction's
// mark) but was not deleted within 2 minutes gets the condition set to
// False again (server-side apply, field manager DisruptionController),
// unless the kubelet set it (reason TerminationByKubelet) or the pod has
// finished.
//
// Invariants: every time comes from the injected clock; the status is
// written through the status subresource only.
package disruption
