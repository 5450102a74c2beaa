// Package ttlafterfinished is the TTL-after-finished controller: it
// deletes a finished Job ttlSecondsAfterFinished after it finished, as
// upstream's.
//
// A Job is finished when it has a Complete or Failed condition with status
// True; it finished at that condition's lastTransitionTime. A Job that is
// not finished, has no ttlSecondsAfterFinished, or is already being
// deleted is left alone. A finished Job whose TTL has not expired is
// requeued (workqueue AddAfter on the injected clock) for the time left.
//
// Metrics (Config.Registry), upstream's:
// ttl_after_finished_controller_job_deletion_duration_seconds, from a
// Job's expiry to its deletion.
//
// Invariants, as upstream's:
//   - Before deleting, the Job is read again from the server and its TTL
//     checked on that fresh copy (the user may have changed or removed
//     ttlSecondsAfterFinished since the cache saw it).
//   - The delete carries the fresh Job's UID as a precondition (a Job
//     re-created under the same name is never deleted by an old TTL) and
//     foreground propagation (upstream's choice: the Job goes once its
//     pods are gone).
//   - A Job that finished in the future (clock skew) waits until its TTL
//     has passed on this controller's clock; all time is the Config's
//     Clock.
package ttlafterfinished
