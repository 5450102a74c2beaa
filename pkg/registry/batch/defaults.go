package batch

// Defaulting for the batch/v1 kinds, after upstream
// k8s.io/kubernetes/pkg/apis/batch/v1/defaults.go and its generated walker.

import (
	"math"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/skiff-sh/skiff/pkg/registry/core"
)

func ptrOf[T any](v T) *T { return &v }

// DefaultJob applies the defaults of a Job.
//
// The pod selector and the matching template labels are not defaults: the
// strategy generates them from the Job's UID when the object is created
// (unless spec.manualSelector is true).
func DefaultJob(job *batchv1.Job) {
	spec := &job.Spec
	// A plain Job runs one pod to completion.
	if spec.Completions == nil && spec.Parallelism == nil {
		spec.Completions = ptrOf(int32(1))
		spec.Parallelism = ptrOf(int32(1))
	}
	if spec.Parallelism == nil {
		spec.Parallelism = ptrOf(int32(1))
	}
	if spec.BackoffLimit == nil {
		// With a per-index backoff limit the global one is effectively off.
		if spec.BackoffLimitPerIndex != nil {
			spec.BackoffLimit = ptrOf(int32(math.MaxInt32))
		} else {
			spec.BackoffLimit = ptrOf(int32(6))
		}
	}
	// A Job without labels takes its pod template's labels.
	if spec.Template.Labels != nil && len(job.Labels) == 0 {
		job.Labels = spec.Template.Labels
	}
	if spec.CompletionMode == nil {
		spec.CompletionMode = ptrOf(batchv1.NonIndexedCompletion)
	}
	if spec.Suspend == nil {
		spec.Suspend = ptrOf(false)
	}
	// JobPodReplacementPolicy is GA: by default a replacement pod is created
	// as soon as the old one is terminating, unless a pod failure policy
	// needs to see the final phase.
	if spec.PodReplacementPolicy == nil {
		if spec.PodFailurePolicy != nil {
			spec.PodReplacementPolicy = ptrOf(batchv1.Failed)
		} else {
			spec.PodReplacementPolicy = ptrOf(batchv1.TerminatingOrFailed)
		}
	}
	if spec.ManualSelector == nil {
		spec.ManualSelector = ptrOf(false)
	}
	defaultPodFailurePolicy(spec.PodFailurePolicy)
	core.DefaultPodTemplateSpec(&spec.Template)
}

func defaultPodFailurePolicy(p *batchv1.PodFailurePolicy) {
	if p == nil {
		return
	}
	for i := range p.Rules {
		for j := range p.Rules[i].OnPodConditions {
			if p.Rules[i].OnPodConditions[j].Status == "" {
				p.Rules[i].OnPodConditions[j].Status = corev1.ConditionTrue
			}
		}
	}
}

// DefaultCronJob applies the defaults of a CronJob: concurrent runs allowed,
// not suspended, three successful and one failed Job kept.
//
// The Job template only gets the nested defaults (pod template, pod failure
// policy); the Job-level defaults (backoffLimit, ...) are applied to each
// Job when the controller creates it.
func DefaultCronJob(cj *batchv1.CronJob) {
	spec := &cj.Spec
	if spec.ConcurrencyPolicy == "" {
		spec.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if spec.Suspend == nil {
		spec.Suspend = ptrOf(false)
	}
	if spec.SuccessfulJobsHistoryLimit == nil {
		spec.SuccessfulJobsHistoryLimit = ptrOf(int32(3))
	}
	if spec.FailedJobsHistoryLimit == nil {
		spec.FailedJobsHistoryLimit = ptrOf(int32(1))
	}
	defaultPodFailurePolicy(spec.JobTemplate.Spec.PodFailurePolicy)
	core.DefaultPodTemplateSpec(&spec.JobTemplate.Spec.Template)
}
