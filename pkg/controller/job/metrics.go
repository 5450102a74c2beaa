package job

import (
	"errors"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/prometheus/client_golang/prometheus"
)

// The metrics of upstream's job controller (subsystem job_controller),
// with upstream's names, labels and buckets.
type metrics struct {
	syncDuration          *prometheus.HistogramVec // completion_mode, result, action
	syncs                 *prometheus.CounterVec   // completion_mode, result, action
	jobsFinished          *prometheus.CounterVec   // completion_mode, result, reason
	byExternalController  *prometheus.CounterVec   // controller_name
	podsFinished          *prometheus.CounterVec   // completion_mode, result
	failuresByPolicy      *prometheus.CounterVec   // action
	terminatedWithTracker *prometheus.CounterVec   // event
	finishedIndexes       *prometheus.CounterVec   // status, backoffLimit
	podsCreation          *prometheus.CounterVec   // reason, status
}

// Values of the metrics' labels, as upstream's.
const (
	actionReconciling = "reconciling"
	actionTracking    = "tracking"
	actionPodsCreated = "pods_created"
	actionPodsDeleted = "pods_deleted"

	resultSucceeded = "succeeded"
	resultFailed    = "failed"

	podCreateNew                   = "new"
	podRecreateTerminatingOrFailed = "recreate_terminating_or_failed"
	podRecreateFailed              = "recreate_failed"
)

const subsystem = "job_controller"

// newMetrics creates the metrics and registers them on reg (nil: not
// registered); vectors already registered there are shared.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: subsystem, Name: name, Help: help}, labels)
	}
	m := &metrics{
		syncDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: subsystem, Name: "job_sync_duration_seconds",
			Help: "The time it took to sync a job", Buckets: prometheus.ExponentialBuckets(0.004, 2, 15)},
			[]string{"completion_mode", "result", "action"}),
		syncs:                 counter("job_syncs_total", "The number of job syncs", "completion_mode", "result", "action"),
		jobsFinished:          counter("jobs_finished_total", "The number of finished jobs", "completion_mode", "result", "reason"),
		byExternalController:  counter("jobs_by_external_controller_total", "The number of Jobs managed by an external controller", "controller_name"),
		podsFinished:          counter("job_pods_finished_total", "The number of finished Pods that are fully tracked", "completion_mode", "result"),
		failuresByPolicy:      counter("pod_failures_handled_by_failure_policy_total", "The number of failed Pods handled by failure policy with respect to the failure policy action applied based on the matched rule.", "action"),
		terminatedWithTracker: counter("terminated_pods_tracking_finalizer_total", "The number of terminated pods (phase=Failed|Succeeded) that have the finalizer batch.kubernetes.io/job-tracking. The event label can be \"add\" or \"delete\".", "event"),
		finishedIndexes:       counter("job_finished_indexes_total", "The number of finished indexes.", "status", "backoffLimit"),
		podsCreation:          counter("job_pods_creation_total", "The number of Pods created by the Job controller labelled with a reason for the Pod creation.", "reason", "status"),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	if m.syncDuration, err = share(reg, m.syncDuration); err != nil {
		return nil, err
	}
	for _, v := range []**prometheus.CounterVec{&m.syncs, &m.jobsFinished, &m.byExternalController, &m.podsFinished,
		&m.failuresByPolicy, &m.terminatedWithTracker, &m.finishedIndexes, &m.podsCreation} {
		if *v, err = share(reg, *v); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func share[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

func completionModeLabel(j *batchv1.Job) string {
	if isIndexed(j) {
		return string(batchv1.IndexedCompletion)
	}
	return string(batchv1.NonIndexedCompletion)
}

// finishedWithTracker: a terminated pod still carrying the finalizer.
func finishedWithTracker(p *corev1.Pod) bool {
	return p != nil && (p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded) && hasFinalizer(p)
}

// observePodTransition counts pods entering or leaving the "terminated
// with the tracking finalizer" state (nil: no pod).
func (m *metrics) observePodTransition(old, cur *corev1.Pod) {
	was, is := finishedWithTracker(old), finishedWithTracker(cur)
	if was == is {
		return
	}
	event := "delete"
	if is {
		event = "add"
	}
	m.terminatedWithTracker.WithLabelValues(event).Inc()
}

// observePodsFinished counts the pods (and indexes) newly counted in the
// Job's status since old.
func (m *metrics) observePodsFinished(job *batchv1.Job, old *batchv1.JobStatus) {
	mode := completionModeLabel(job)
	var diff int
	if isIndexed(job) {
		completions := int(*job.Spec.Completions)
		diff = parseIndexes(job.Status.CompletedIndexes, completions).total() - parseIndexes(old.CompletedIndexes, completions).total()
		backoffLimit := "global"
		if job.Spec.BackoffLimitPerIndex != nil {
			backoffLimit = "perIndex"
		}
		if diff > 0 {
			m.finishedIndexes.WithLabelValues(resultSucceeded, backoffLimit).Add(float64(diff))
		}
		if job.Spec.BackoffLimitPerIndex != nil {
			count := func(s *string) int {
				if s == nil {
					return 0
				}
				return parseIndexes(*s, completions).total()
			}
			if d := count(job.Status.FailedIndexes) - count(old.FailedIndexes); d > 0 {
				m.finishedIndexes.WithLabelValues(resultFailed, backoffLimit).Add(float64(d))
			}
		}
	} else {
		diff = int(job.Status.Succeeded - old.Succeeded)
	}
	if diff > 0 {
		m.podsFinished.WithLabelValues(mode, resultSucceeded).Add(float64(diff))
	}
	if d := job.Status.Failed - old.Failed; d > 0 {
		m.podsFinished.WithLabelValues(mode, resultFailed).Add(float64(d))
	}
	*old = *job.Status.DeepCopy()
}

// podCreationReason is why pods are created now.
func podCreationReason(job *batchv1.Job, sc *syncCtx) string {
	switch {
	case job.Spec.PodReplacementPolicy != nil && *job.Spec.PodReplacementPolicy == batchv1.Failed && sc.failed > 0:
		return podRecreateFailed
	case sc.failed > 0 || sc.terminating > 0:
		return podRecreateTerminatingOrFailed
	}
	return podCreateNew
}
