package printers

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	batchv1beta1 "k8s.io/api/batch/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

func jobHandler() Handler {
	return Handler{
		Columns: append([]metav1.TableColumnDefinition{
			nameColumn(),
			col("Status", "string", "Status of the job."),
			col("Completions", "string", batchv1.JobStatus{}.SwaggerDoc()["succeeded"]),
			col("Duration", "string", "Time required to complete the job."),
			ageColumn(),
		}, append(containersColumns(), wideCol("Selector", "string", batchv1.JobSpec{}.SwaggerDoc()["selector"]))...),
		Cells: typed(func(job *batchv1.Job, now time.Time) ([]interface{}, error) {
			var completions string
			switch {
			case job.Spec.Completions != nil:
				completions = fmt.Sprintf("%d/%d", job.Status.Succeeded, *job.Spec.Completions)
			case deref(job.Spec.Parallelism) > 1:
				completions = fmt.Sprintf("%d/1 of %d", job.Status.Succeeded, *job.Spec.Parallelism)
			default:
				completions = fmt.Sprintf("%d/1", job.Status.Succeeded)
			}
			var took string
			switch {
			case job.Status.StartTime == nil:
			case job.Status.CompletionTime == nil:
				took = duration.HumanDuration(now.Sub(job.Status.StartTime.Time))
			default:
				took = duration.HumanDuration(job.Status.CompletionTime.Sub(job.Status.StartTime.Time))
			}
			names, images := layoutContainers(job.Spec.Template.Spec.Containers)
			return []interface{}{
				job.Name, jobStatus(job), completions, took, age(job.CreationTimestamp, now),
				names, images, metav1.FormatLabelSelector(job.Spec.Selector),
			}, nil
		}),
	}
}

// jobStatus picks the first that applies: Complete, Failed, Terminating,
// Suspended, FailureTarget, SuccessCriteriaMet, else Running (upstream's
// order since 1.31).
func jobStatus(job *batchv1.Job) string {
	switch {
	case jobCondition(job, batchv1.JobComplete):
		return "Complete"
	case jobCondition(job, batchv1.JobFailed):
		return "Failed"
	case job.DeletionTimestamp != nil:
		return "Terminating"
	case jobCondition(job, batchv1.JobSuspended):
		return "Suspended"
	case jobCondition(job, batchv1.JobFailureTarget):
		return "FailureTarget"
	case jobCondition(job, batchv1.JobSuccessCriteriaMet):
		return "SuccessCriteriaMet"
	}
	return "Running"
}

// jobCondition reports whether the first condition of type t is True.
func jobCondition(job *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func cronJobHandler() Handler {
	specDoc := batchv1beta1.CronJobSpec{}.SwaggerDoc()
	statusDoc := batchv1beta1.CronJobStatus{}.SwaggerDoc()
	return Handler{
		Columns: append([]metav1.TableColumnDefinition{
			nameColumn(),
			col("Schedule", "string", specDoc["schedule"]),
			col("Timezone", "string", specDoc["timeZone"]),
			col("Suspend", "boolean", specDoc["suspend"]),
			col("Active", "integer", statusDoc["active"]),
			col("Last Schedule", "string", statusDoc["lastScheduleTime"]),
			ageColumn(),
		}, append(containersColumns(), wideCol("Selector", "string", batchv1.JobSpec{}.SwaggerDoc()["selector"]))...),
		Cells: typed(func(cj *batchv1.CronJob, now time.Time) ([]interface{}, error) {
			last := "<none>"
			if cj.Status.LastScheduleTime != nil {
				last = age(*cj.Status.LastScheduleTime, now)
			}
			tz := "<none>"
			if cj.Spec.TimeZone != nil {
				tz = *cj.Spec.TimeZone
			}
			tmpl := cj.Spec.JobTemplate.Spec
			names, images := layoutContainers(tmpl.Template.Spec.Containers)
			return []interface{}{
				cj.Name, cj.Spec.Schedule, tz, boolString(cj.Spec.Suspend), int64(len(cj.Status.Active)), last,
				age(cj.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(tmpl.Selector),
			}, nil
		}),
	}
}
