// Package daemon is the DaemonSet controller, with upstream's semantics.
//
// For each DaemonSet it claims its ControllerRevisions and pods (adopting
// orphans its selector matches, releasing owned ones it no longer matches)
// and keeps one pod on every eligible node:
//   - eligibility (NodeShouldRunDaemonPod): the template's nodeName, its
//     nodeSelector and required node affinity (matchExpressions on labels,
//     matchFields on metadata.name), and the node's NoSchedule/NoExecute
//     taints against the template's tolerations plus upstream's automatic
//     daemon tolerations (not-ready and unreachable NoExecute; disk-,
//     memory-, pid-pressure and unschedulable NoSchedule; network-
//     unavailable for hostNetwork pods). A pod already on a node whose
//     NoSchedule taint it does not tolerate stays; NoExecute evicts it.
//   - pods are created unbound with a required node affinity on
//     metadata.name (upstream's approach: the scheduler binds them), the
//     daemon tolerations, and labels controller-revision-hash (the
//     template's pod-template-hash, upstream's hash) and
//     pod-template-generation (the DaemonSet's
//     deprecated.daemonset.template.generation annotation, kept by the
//     registry); in slow-start batches, at most 250 per sync, under
//     expectations so a burst of syncs never over-creates.
//   - duplicates on a node are deleted (oldest kept); failed pods are
//     deleted (and so recreated) with a per-node back-off of 1s doubling to
//     15m on the injected clock; succeeded pods are deleted.
//   - RollingUpdate with maxUnavailable (old pods deleted while at most
//     that many nodes lack an available pod) or maxSurge (a new pod started
//     next to the old one, which goes once the new one is available);
//     OnDelete replaces only deleted pods.
//   - revisions "<ds>-<hash>" hold upstream's template patch (kubectl
//     rollout history/undo read them), renumbered when a template comes
//     back, trimmed beyond revisionHistoryLimit unless a pod carries their
//     hash; a name collision bumps status.collisionCount.
//   - status: desiredNumberScheduled, currentNumberScheduled,
//     numberMisscheduled, numberReady, numberAvailable (minReadySeconds),
//     numberUnavailable, updatedNumberScheduled, observedGeneration (only
//     after a sync that could act).
//
// Events are upstream's: SuccessfulCreate "Created pod: <name>",
// SuccessfulDelete, FailedCreate, FailedDaemonPod, SucceededDaemonPod,
// SelectingAll.
package daemon
