// Package replicaset is the ReplicaSet and ReplicationController controller
// (one implementation, as upstream's: a ReplicationController is handled as
// the ReplicaSet it converts to, and its status is written back as a
// ReplicationController's).
//
// For each ReplicaSet the controller claims the active pods of its namespace
// (adopting orphans its selector matches, releasing owned pods it no longer
// matches, through controller references), creates or deletes pods until the
// count matches spec.replicas and writes status (replicas,
// fullyLabeledReplicas, readyReplicas, availableReplicas under
// minReadySeconds, observedGeneration, the ReplicaFailure condition and, for
// ReplicaSets, terminatingReplicas: pods being deleted, as upstream since
// DeploymentReplicaSetTerminatingReplicas went beta in 1.35).
//
// Invariants, as upstream's:
//   - Expectations: after issuing N creations or deletions for a ReplicaSet
//     the controller does not manage its replicas again until the informer
//     has observed them all (or 5 minutes passed), so a burst of events never
//     over-creates or over-deletes.
//   - Creations go in slow-start batches (1, 2, 4, ...) and stop at the first
//     failing batch; at most BurstReplicas (500) pods are created or deleted
//     in one sync.
//   - Pods are deleted in upstream's preference order (ActivePodsWithRanks):
//     unassigned before assigned, Pending < Unknown < Running, not ready
//     before ready, lower pod-deletion-cost first, pods doubled up on a node
//     first, recently ready first, more restarts first, newer first (ready
//     and creation times compared on a logarithmic scale).
//   - A failed creation or deletion sets ReplicaFailure (FailedCreate /
//     FailedDelete) with the error as message; a successful manage removes it.
//   - Pod names are <owner>-<5 random chars>: generateName by default, or
//     Config.NameGenerator when injected.
package replicaset
