package cronjob

import (
	"errors"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/robfig/cron/v3"

	"github.com/skiff-sh/skiff/pkg/client/controllerref"
	"github.com/skiff-sh/skiff/pkg/client/record"
)

// nextScheduleDelta pads every requeue past the schedule time (clock skew
// between this process and whoever stepped the time), as upstream's 100ms.
const nextScheduleDelta = 100 * time.Millisecond

// manyMissedLimit: beyond this many missed start times the controller warns
// (TooManyMissedTimes) instead of thinking about every one of them.
const manyMissedLimit = 100

// missed says how many start times were missed since the earliest time.
type missed int

const (
	noneMissed missed = iota
	fewMissed
	manyMissed
)

// parseSchedule parses the CronJob's schedule in its time zone with the
// standard five-field parser (robfig/cron v3 ParseStandard, as upstream:
// descriptors, @every and an explicit TZ=/CRON_TZ= prefix included).
func parseSchedule(cj *batchv1.CronJob, recorder record.EventRecorder) (cron.Schedule, error) {
	return cron.ParseStandard(formatSchedule(cj, recorder))
}

// formatSchedule is the schedule with spec.timeZone as a TZ= prefix. A
// schedule that names its own TZ (tolerated for CronJobs stored before
// validation refused it) is taken as is, with a warning event.
func formatSchedule(cj *batchv1.CronJob, recorder record.EventRecorder) string {
	if strings.Contains(cj.Spec.Schedule, "TZ") {
		if recorder != nil {
			recorder.Eventf(cj, corev1.EventTypeWarning, "UnsupportedSchedule", "CRON_TZ or TZ used in schedule %q is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details", cj.Spec.Schedule)
		}
		return cj.Spec.Schedule
	}
	if cj.Spec.TimeZone != nil {
		if _, err := time.LoadLocation(*cj.Spec.TimeZone); err != nil {
			return cj.Spec.Schedule
		}
		return fmt.Sprintf("TZ=%s %s", *cj.Spec.TimeZone, cj.Spec.Schedule)
	}
	return cj.Spec.Schedule
}

// mostRecentScheduleTime returns the earliest time considered (the last
// schedule time, else the creation time, moved up to now minus
// startingDeadlineSeconds when includeDeadline), the most recent schedule
// time in (earliest, now] (nil when there is none), how many were missed,
// and an error for a schedule that parses but never fires sensibly (the
// 31st of February: two consecutive times less than a second apart).
func mostRecentScheduleTime(cj *batchv1.CronJob, now time.Time, sched cron.Schedule, includeDeadline bool) (time.Time, *time.Time, missed, error) {
	earliest := cj.CreationTimestamp.Time
	if cj.Status.LastScheduleTime != nil {
		earliest = cj.Status.LastScheduleTime.Time
	}
	if includeDeadline && cj.Spec.StartingDeadlineSeconds != nil {
		deadline := now.Add(-time.Duration(*cj.Spec.StartingDeadlineSeconds) * time.Second)
		if deadline.After(earliest) {
			earliest = deadline
		}
	}
	t1 := sched.Next(earliest)
	t2 := sched.Next(t1)
	if now.Before(t1) {
		return earliest, nil, noneMissed, nil
	}
	if now.Before(t2) {
		return earliest, &t1, noneMissed, nil
	}
	between := int64(t2.Sub(t1).Round(time.Second).Seconds())
	if between < 1 {
		return earliest, nil, noneMissed, errors.New("time difference between two schedules is less than 1 second")
	}
	// The number of missed times is estimated from the first interval;
	// the walk starts one interval before the estimate so that irregular
	// schedules (30 6-16/4 * * 1-5) and @every land on their real times.
	elapsed := int64(now.Sub(t1).Seconds())
	n := elapsed/between + 1
	var recent time.Time
	start := t1.Add(time.Duration((n-2)*between) * time.Second)
	for t := sched.Next(start); !t.After(now); t = sched.Next(t) {
		recent = t
	}
	m := noneMissed
	switch {
	case n > manyMissedLimit:
		m = manyMissed
	case n > 0:
		m = fewMissed
	}
	if recent.IsZero() {
		return earliest, nil, m, nil
	}
	return earliest, &recent, m, nil
}

// nextScheduleTime is the schedule time a Job is due for now (nil: none
// due yet), within startingDeadlineSeconds. More than 100 missed times
// are reported with a TooManyMissedTimes warning.
func nextScheduleTime(cj *batchv1.CronJob, now time.Time, sched cron.Schedule, recorder record.EventRecorder) (*time.Time, error) {
	_, recent, m, err := mostRecentScheduleTime(cj, now, sched, true)
	if recent == nil || recent.After(now) {
		return nil, err
	}
	if m == manyMissed && recorder != nil {
		recorder.Eventf(cj, corev1.EventTypeWarning, "TooManyMissedTimes", "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew")
	}
	return recent, err
}

// nextScheduleTimeDuration is how long from now to requeue the CronJob: to
// the schedule time after the most recent one (after now when times were
// missed or the schedule is broken), plus nextScheduleDelta.
func nextScheduleTimeDuration(cj *batchv1.CronJob, now time.Time, sched cron.Schedule) time.Duration {
	earliest, recent, m, err := mostRecentScheduleTime(cj, now, sched, false)
	from := now
	switch {
	case err != nil:
	case recent != nil:
		from = *recent
	case m == noneMissed:
		from = earliest
	}
	return sched.Next(from).Add(nextScheduleDelta).Sub(now)
}

// jobName is <cronjob>-<scheduled time in Unix minutes>: one name per
// scheduled time, so a Job is never created twice for the same time.
func jobName(cj *batchv1.CronJob, scheduled time.Time) string {
	return fmt.Sprintf("%s-%d", cj.Name, scheduled.Unix()/60)
}

// jobFromTemplate is the Job the CronJob starts for the scheduled time:
// the template's labels, annotations and spec, the scheduled time (in the
// CronJob's time zone, RFC 3339) in batch.kubernetes.io/cronjob-scheduled-timestamp,
// and the CronJob as controller.
func jobFromTemplate(cj *batchv1.CronJob, scheduled time.Time) (*batchv1.Job, error) {
	tz := ""
	if cj.Spec.TimeZone != nil {
		tz = *cj.Spec.TimeZone
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{}
	for k, v := range cj.Spec.JobTemplate.Labels {
		labels[k] = v
	}
	annotations := map[string]string{}
	for k, v := range cj.Spec.JobTemplate.Annotations {
		annotations[k] = v
	}
	annotations[batchv1.CronJobScheduledTimestampAnnotation] = scheduled.In(loc).Format(time.RFC3339)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:              jobName(cj, scheduled),
			Namespace:         cj.Namespace,
			Labels:            labels,
			Annotations:       annotations,
			CreationTimestamp: metav1.Time{Time: scheduled},
			OwnerReferences:   []metav1.OwnerReference{*controllerref.NewControllerRef(cj, controllerKind)},
		},
	}
	cj.Spec.JobTemplate.Spec.DeepCopyInto(&job.Spec)
	return job, nil
}
