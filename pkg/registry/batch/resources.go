package batch

import (
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/registry"
)

// Labels a job's pods carry, set from the job's uid and name.
const (
	ControllerUIDLabel       = "batch.kubernetes.io/controller-uid"
	LegacyControllerUIDLabel = "controller-uid"
	JobNameLabel             = "batch.kubernetes.io/job-name"
	LegacyJobNameLabel       = "job-name"
)

// Definitions are the batch/v1 resources.
func Definitions() []*registry.Definition {
	jobs := registry.NewDefinition("batch", "v1", "jobs", "Job", true,
		func() runtime.Object { return &batchv1.Job{} }, func() runtime.Object { return &batchv1.JobList{} },
		&registry.Strategy{
			Default:          registry.Default(DefaultJob),
			PrepareForCreate: registry.Prepare(generateSelector),
			Validate:         registry.Validate(ValidateJob),
			ValidateUpdate:   registry.ValidateUpdate(ValidateJobUpdate),
			Generation:       true,
			HasStatus:        true,
			Fields: registry.Fields(func(j *batchv1.Job) map[string]string {
				return map[string]string{"status.successful": strconv.Itoa(int(j.Status.Succeeded))}
			}),
		})
	jobs.Categories = []string{"all"}
	jobs.ValidateStatus = registry.ValidateUpdate(ValidateJobStatusUpdate)

	cronJobs := registry.NewDefinition("batch", "v1", "cronjobs", "CronJob", true,
		func() runtime.Object { return &batchv1.CronJob{} }, func() runtime.Object { return &batchv1.CronJobList{} },
		&registry.Strategy{
			Default:        registry.Default(DefaultCronJob),
			Validate:       registry.Validate(ValidateCronJob),
			ValidateUpdate: registry.ValidateUpdate(ValidateCronJobUpdate),
			Generation:     true,
			HasStatus:      true,
		})
	cronJobs.ShortNames, cronJobs.Categories = []string{"cj"}, []string{"all"}
	cronJobs.ValidateStatus = registry.ValidateUpdate(ValidateCronJobStatusUpdate)
	return []*registry.Definition{jobs, cronJobs}
}

// generateSelector gives a job without manualSelector: true a selector on
// its own uid, and labels its pod template to match, as upstream does.
func generateSelector(job *batchv1.Job) {
	if job.Spec.ManualSelector != nil && *job.Spec.ManualSelector {
		return
	}
	uid := string(job.UID)
	labels := job.Spec.Template.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range map[string]string{
		ControllerUIDLabel: uid, LegacyControllerUIDLabel: uid,
		JobNameLabel: job.Name, LegacyJobNameLabel: job.Name,
	} {
		if _, ok := labels[k]; !ok {
			labels[k] = v
		}
	}
	job.Spec.Template.Labels = labels
	if job.Spec.Selector == nil {
		job.Spec.Selector = &metav1.LabelSelector{}
	}
	if job.Spec.Selector.MatchLabels == nil {
		job.Spec.Selector.MatchLabels = map[string]string{}
	}
	job.Spec.Selector.MatchLabels[ControllerUIDLabel] = uid
}
