// Package deployment is the Deployment controller: it rolls a Deployment's
// pod template out through ReplicaSets, as upstream's.
//
// Each template has one ReplicaSet named <deployment>-<pod-template-hash>,
// whose selector and pod labels carry pod-template-hash. The newest
// template's ReplicaSet takes revision max(old revisions)+1
// (deployment.kubernetes.io/revision, older revisions kept in
// revision-history), the Deployment carries its revision, and ReplicaSets
// carry deployment.kubernetes.io/desired-replicas and max-replicas.
//
// Invariants, as upstream's:
//   - RollingUpdate never exceeds spec.replicas+maxSurge pods (surge rounded
//     up) and never goes below spec.replicas-maxUnavailable available
//     (rounded down; both zero means maxUnavailable 1); old ReplicaSets are
//     scaled down oldest first, unhealthy replicas first. Recreate scales
//     every old ReplicaSet to zero and waits for their pods to end before
//     creating the new one.
//   - A scale of the Deployment during a rollout is spread over the active
//     ReplicaSets in proportion to their size (leftovers to the largest).
//   - Paused deployments are only scaled; history cleanup keeps
//     revisionHistoryLimit old ReplicaSets (only ones at zero replicas are
//     deleted).
//   - Conditions: Available (MinimumReplicasAvailable /
//     MinimumReplicasUnavailable), Progressing (NewReplicaSetCreated,
//     FoundNewReplicaSet, ReplicaSetUpdated, NewReplicaSetAvailable,
//     DeploymentPaused, DeploymentResumed, ProgressDeadlineExceeded after
//     progressDeadlineSeconds without progress) and ReplicaFailure copied
//     from a ReplicaSet, with upstream's messages.
//   - Rollback is the client's business (kubectl rollout undo patches the
//     template back), restart is a template annotation: both are ordinary
//     template changes here.
//
// The pod-template-hash is upstream's: FNV-32a over the template's spew
// dump (apimachinery's dump.ForHash) and the collision count, so the same
// template with the same API types gets the ReplicaSet name upstream's
// controller gives it (types of another release may dump differently).
package deployment
