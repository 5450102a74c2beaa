// Package queue is the scheduler's scheduling queue (upstream's
// pkg/scheduler/backend/queue, kube-scheduler 1.34 semantics with
// queueing hints and SchedulerPopFromBackoffQ on).
//
// A pending pod lives in one of four places:
//   - activeQ: a heap ordered by the QueueSort plugin's Less
//     (PrioritySort: higher priority first, then earlier Timestamp). Pop
//     takes its head, blocking while it is empty.
//   - backoffQ: pods that failed and wait for their back-off to end, in
//     two heaps ordered by back-off expiry: pods a plugin rejected, and
//     pods that failed with an error (no rejecting plugin). The back-off is
//     initial*2^(n-1) capped at max (1s → 2s → 4s → 8s → 10s), n being
//     the consecutive errors if the last attempt failed with an error,
//     else the number of rejections; counted from the last failure and, as
//     upstream's, aligned to 1s windows. When activeQ is empty Pop takes
//     the first rejected pod of backoffQ early (never an errored one).
//     Run flushes pods whose back-off ended to activeQ every second.
//   - the unschedulable pool: pods rejected by plugins
//     (UnschedulablePlugins, PendingPlugins) waiting for an event one of
//     those plugins registered (QueueingHints), and pods gated by a
//     PreEnqueue plugin (GatingPlugin; counted as "gated"). Run moves pods
//     parked longer than PodMaxInUnschedulablePodsDuration (5m) out every
//     30s (EventUnschedulableTimeout).
//   - in flight: popped, being scheduled, until Done (or
//     AddUnschedulableIfNotPresent, which calls Done).
//
// Invariants:
//   - A pod (by namespace/name) is in at most one of activeQ, backoffQ and
//     the unschedulable pool, and is in none of them while in flight
//     (unless it was added again meanwhile; Pop then drops the duplicate).
//   - No event is lost for a pod in flight: every event the queue is told
//     about while pods are in flight (MoveAllToActiveOrBackoffQueue,
//     AssignedPod*, the pod's own Update, Activate) is recorded after the
//     in-flight pods in one list; when a pod comes back unschedulable, the
//     events received since it was popped go through its rejecting
//     plugins' hints exactly as if they arrived while it was parked.
//     Events older than the oldest in-flight pod are dropped on Done.
//   - An event moves a parked pod only if a plugin that rejected it
//     registered a matching event and its hint does not say QueueSkip (a
//     nil hint function, or one returning an error, means Queue); Queue
//     from a Pending plugin goes straight to activeQ, from an
//     Unschedulable plugin to backoffQ while backing off, else activeQ.
//     Wildcard events (UnschedulableTimeout, ForceActivate) move every pod
//     (ForceActivate naming a pod: only that pod). A gated pod only moves
//     on events its gating plugin registered, and goes to activeQ only
//     when every PreEnqueue plugin of its profile passes.
//   - A pod rejected by no plugin (an error) always goes back to backoffQ.
//   - Pop counts an attempt (Attempts++), sets InitialAttemptTimestamp once,
//     and clears the rejecting and gating plugins of the last attempt.
//   - The nominator holds each pod on at most one node.
//   - Time comes only from the configured clock; the queue keeps no
//     package-level state. One lock guards everything (Pop waits on a
//     condition variable of it); PreEnqueue plugins and hint functions run
//     under it and must not call back into the queue.
//
// Metrics (with a Registerer): scheduler_pending_pods{queue=active|backoff|
// unschedulable|gated}, scheduler_queue_incoming_pods_total{event,queue}
// and scheduler_unschedulable_pods{plugin,profile}, upstream's names and
// labels (the last one, unlike upstream's, also drops a deleted pod's
// plugins and counts a gating plugin once per pod).
//
// Event matching is upstream's MatchClusterEvents (see matchEvent): a
// registered Pod event also matches pending pods' (UnscheduledPod) events,
// and an incoming plain Update only reaches plugins registering Update.
package queue
