// Package job is the Job controller (upstream's job-controller): it runs
// a Job's pods to completion and keeps the Job's status.
//
// What it does, as upstream's since 1.31:
//   - Creates pods from spec.template (generateName "<job>-", labels
//     batch.kubernetes.io/controller-uid and job-name from the template the
//     API server generated, the Job as controller, the
//     batch.kubernetes.io/job-tracking finalizer) up to spec.parallelism
//     and the remaining completions; deletes surplus pods earliest stage
//     first. Expectations hold back the next create/delete until the
//     informer saw the last ones, so an event burst never over-creates.
//   - Indexed completion mode: one pod per pending index, named
//     "<job>-<index>-<random>", annotation and label
//     batch.kubernetes.io/job-completion-index, hostname "<job>-<index>"
//     (the subdomain is the user's spec.subdomain), and a
//     JOB_COMPLETION_INDEX env var from the annotation through the downward
//     API (the kubelet resolves it); status.completedIndexes and
//     status.failedIndexes in the compressed "1,3-5" form.
//   - Finalizer tracking: a finished pod is first recorded in
//     status.uncountedTerminatedPods (Indexed: completedIndexes), then its
//     finalizer is removed, then it moves into status.succeeded/failed. A
//     pod deleted before finishing counts as failed (unless only Failed
//     pods are replaced). Pods of deleted or finished Jobs lose the
//     finalizer through an orphan-pod queue.
//   - Failure: podFailurePolicy rules (FailJob, Ignore, Count, FailIndex on
//     exit codes and pod conditions), backoffLimit (and restarts with
//     restartPolicy OnFailure), backoffLimitPerIndex/maxFailedIndexes,
//     activeDeadlineSeconds. Replacement pods wait an exponential back-off
//     (10s doubling, capped at 10 minutes as upstream's code; per index
//     with backoffLimitPerIndex) measured on the injected clock.
//   - Conditions: FailureTarget, then Failed once no pod is uncounted or
//     terminating; SuccessCriteriaMet (completions reached, or a
//     successPolicy rule), then Complete likewise. Events Completed,
//     BackoffLimitExceeded, DeadlineExceeded, PodFailurePolicy, ... with
//     upstream's reasons and messages.
//   - suspend deletes the active pods and sets Suspended; resuming resets
//     status.startTime. status.ready and status.terminating are kept.
//     podReplacementPolicy Failed waits for terminating pods to fail.
//   - Jobs whose spec.managedBy is not kubernetes.io/job-controller are
//     left alone.
//
// Metrics (Config.Registry): upstream's job_controller_* set —
// job_sync_duration_seconds, job_syncs_total, jobs_finished_total,
// job_pods_finished_total, job_finished_indexes_total,
// job_pods_creation_total, pod_failures_handled_by_failure_policy_total,
// terminated_pods_tracking_finalizer_total,
// jobs_by_external_controller_total — with upstream's labels.
//
// Sync(ctx, key) is the whole decision for one Job over the informer
// caches and the clock; tests call it directly.
//
// Invariants: a pod is counted once (uncounted list, then finalizer
// removal, then counter); Complete/Failed are only added when no pod is
// uncounted or terminating; the controller talks to the API only through
// pkg/client.
package job
