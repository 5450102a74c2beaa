// Package statefulset is the StatefulSet controller, with upstream's
// semantics.
//
// For each StatefulSet it adopts orphan ControllerRevisions its selector
// matches, claims the pods named "<set>-<ordinal>" its selector matches,
// snapshots the template as a ControllerRevision (shared history helper:
// names "<set>-<hash>" equal upstream's, revision numbers, rollback by
// re-numbering an equal revision, a latest revision holding the same
// template in another serialization reused (upstream's
// StatefulSetSemanticRevisionComparison), revisionHistoryLimit trimming)
// and reconciles:
//   - replicas at ordinals [start, start+replicas) (spec.ordinals.start):
//     pod "<set>-<i>" with hostname = its name, subdomain = serviceName,
//     labels statefulset.kubernetes.io/pod-name, apps.kubernetes.io/pod-index
//     and controller-revision-hash, and one PVC per volumeClaimTemplate,
//     "<template>-<set>-<i>" (template labels + selector labels), created
//     before the pod;
//   - OrderedReady: pods created one at a time in ordinal order, each
//     waiting for the previous to be Running and Ready (and available
//     under minReadySeconds); pods beyond the range deleted from the
//     highest ordinal, one at a time, never while another is unhealthy.
//     Parallel: all at once (slow-start batches);
//   - failed or succeeded replicas are deleted and recreated;
//   - RollingUpdate: pods not at the update revision are deleted from the
//     highest ordinal down to spec.updateStrategy.rollingUpdate.partition,
//     at most maxUnavailable (default 1) unavailable at a time; pods below
//     the partition are (re)created at the current revision. OnDelete:
//     only deleted pods get the update revision;
//   - persistentVolumeClaimRetentionPolicy as upstream: whenDeleted=Delete
//     gives each claim a controller reference to the set, whenScaled=Delete
//     gives a condemned pod's claims a controller reference to the pod, so
//     the garbage collector deletes them; Retain leaves them unowned;
//   - status: replicas, readyReplicas, currentReplicas, updatedReplicas,
//     availableReplicas, currentRevision, updateRevision, collisionCount,
//     observedGeneration; the update revision becomes current once every
//     replica is updated and ready.
//
// Events are upstream's: SuccessfulCreate "create Pod web-0 in StatefulSet
// web successful", SuccessfulDelete, FailedCreate, claim creations.
//
// Invariants:
//   - A pod is never created while a claim of its ordinal is being deleted
//     or still owned by a previous pod of that ordinal.
//   - The controller never deletes more than one pod per sync in
//     OrderedReady mode, and never a revision a live pod still names.
//   - Availability is judged on the injected clock.
package statefulset
