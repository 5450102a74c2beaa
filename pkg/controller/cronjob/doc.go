// Package cronjob is the CronJob controller: it starts a Job for each time
// a CronJob's schedule fires, as upstream's (v2) controller.
//
// Schedules are parsed with github.com/robfig/cron/v3 ParseStandard, the
// library upstream uses: five fields (ranges, steps, lists, month and
// weekday names), the descriptors @yearly/@annually, @monthly, @weekly,
// @daily/@midnight, @hourly and @every <duration>; spec.timeZone (an IANA
// name, resolved with the embedded time zone database) becomes the
// schedule's TZ= prefix.
//
// One sync of a CronJob, at the injected clock's time:
//   - finished Jobs (a Complete or Failed condition) beyond
//     successfulJobsHistoryLimit / failedJobsHistoryLimit are deleted,
//     earliest started first (SuccessfulDelete);
//   - status.active follows the Jobs the CronJob controls (SawCompletedJob
//     when one finishes, MissingJob when one is gone from the server,
//     UnexpectedJob for an unfinished one it did not record);
//     status.lastSuccessfulTime is the latest completion time;
//   - unless the CronJob is being deleted, suspended, or its schedule or
//     time zone is invalid (UnparseableSchedule, InvalidSchedule,
//     UnknownTimeZone), the most recent schedule time since
//     status.lastScheduleTime (else the creation time) that is not older
//     than startingDeadlineSeconds is due: later than the deadline it is
//     MissSchedule; more than 100 missed times warn TooManyMissedTimes;
//     concurrencyPolicy Forbid skips it while a Job is active
//     (JobAlreadyActive), Replace deletes the active Jobs first, Allow
//     just starts it (SuccessfulCreate);
//   - the CronJob is requeued (workqueue AddAfter on the injected clock)
//     100ms after its next schedule time.
//
// Metrics (Config.Registry), upstream's:
// cronjob_controller_job_creation_skew_duration_seconds, from each Job's
// schedule time to its creation.
//
// Invariants, as upstream's:
//   - One Job per schedule time: its name is <cronjob>-<scheduled time in
//     Unix minutes>, so a retried creation finds it (AlreadyExists) instead
//     of making a second one. The Job carries the CronJob as controller,
//     the template's labels and annotations, and
//     batch.kubernetes.io/cronjob-scheduled-timestamp (RFC 3339 in the
//     CronJob's time zone).
//   - A schedule time is used at most once: lastScheduleTime moves to it in
//     the same status write that adds the Job to status.active.
//   - Jobs are deleted with background propagation; only finished Jobs are
//     deleted by the history limits, only active ones by Replace.
//   - The controller never waits on the wall clock: all time is the
//     Config's Clock, and the decision of a sync (Sync) depends only on
//     the caches, the server's answers and that time.
package cronjob
