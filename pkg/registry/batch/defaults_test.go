package batch

import (
	"math"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

type check struct {
	name      string
	got, want any
}

func runChecks(t *testing.T, checks []check) {
	t.Helper()
	for _, c := range checks {
		if !apiequality.Semantic.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func jobPodTemplate() corev1.PodTemplateSpec {
	t := corev1.PodTemplateSpec{}
	t.Labels = map[string]string{"app": "pi"}
	t.Spec.RestartPolicy = corev1.RestartPolicyNever
	t.Spec.Containers = []corev1.Container{{Name: "pi", Image: "perl:5.34"}}
	return t
}

func TestDefaultJob(t *testing.T) {
	job := &batchv1.Job{Spec: batchv1.JobSpec{Template: jobPodTemplate()}}
	DefaultJob(job)
	s := job.Spec
	runChecks(t, []check{
		{"completions", *s.Completions, int32(1)},
		{"parallelism", *s.Parallelism, int32(1)},
		{"backoffLimit", *s.BackoffLimit, int32(6)},
		{"completionMode", *s.CompletionMode, batchv1.NonIndexedCompletion},
		{"suspend", *s.Suspend, false},
		{"manualSelector", *s.ManualSelector, false},
		{"podReplacementPolicy", *s.PodReplacementPolicy, batchv1.TerminatingOrFailed},
		{"job labels from template", job.Labels, map[string]string{"app": "pi"}},
		{"template dnsPolicy", s.Template.Spec.DNSPolicy, corev1.DNSClusterFirst},
		{"template restartPolicy kept", s.Template.Spec.RestartPolicy, corev1.RestartPolicyNever},
	})

	// Parallel job: completions stay unset, parallelism as given.
	par := &batchv1.Job{Spec: batchv1.JobSpec{Parallelism: ptrOf(int32(3)), Template: jobPodTemplate()}}
	DefaultJob(par)
	if par.Spec.Completions != nil || *par.Spec.Parallelism != 3 {
		t.Errorf("work-queue job: completions=%v parallelism=%v", par.Spec.Completions, *par.Spec.Parallelism)
	}

	// Per-index backoff and a pod failure policy.
	idx := &batchv1.Job{Spec: batchv1.JobSpec{
		BackoffLimitPerIndex: ptrOf(int32(1)),
		PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget}},
		}}},
		Template: jobPodTemplate(),
	}}
	DefaultJob(idx)
	runChecks(t, []check{
		{"backoffLimit with per-index", *idx.Spec.BackoffLimit, int32(math.MaxInt32)},
		{"podReplacementPolicy with failure policy", *idx.Spec.PodReplacementPolicy, batchv1.Failed},
		{"condition pattern status", idx.Spec.PodFailurePolicy.Rules[0].OnPodConditions[0].Status, corev1.ConditionTrue},
	})
}

func TestDefaultCronJob(t *testing.T) {
	cj := &batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: "*/5 * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: jobPodTemplate()}}}}
	DefaultCronJob(cj)
	s := cj.Spec
	runChecks(t, []check{
		{"concurrencyPolicy", s.ConcurrencyPolicy, batchv1.AllowConcurrent},
		{"suspend", *s.Suspend, false},
		{"successfulJobsHistoryLimit", *s.SuccessfulJobsHistoryLimit, int32(3)},
		{"failedJobsHistoryLimit", *s.FailedJobsHistoryLimit, int32(1)},
		{"job template pod defaults", s.JobTemplate.Spec.Template.Spec.SchedulerName, corev1.DefaultSchedulerName},
		// Job-level defaults are applied to each Job, not to the template.
		{"job template backoffLimit", s.JobTemplate.Spec.BackoffLimit == nil, true},
	})
}
