package job

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/controllerref"
	"github.com/skiff-sh/skiff/pkg/controller/internal/podutil"
)

// syncCtx is the state one sync works on.
type syncCtx struct {
	job                  *batchv1.Job
	pods                 []*corev1.Pod
	activePods           []*corev1.Pod
	finishedCondition    *batchv1.JobCondition
	succeeded, failed    int32
	prevSucceededIndexes intervals
	succeededIndexes     intervals
	failedIndexes        *intervals
	newBackoff           backoffRecord
	expectedRmFinalizers sets.Set[types.UID]
	uncountedSucceeded   sets.Set[types.UID]
	uncountedFailed      sets.Set[types.UID]
	terminating          int32
	ready                int32
	// delayedPerIndex is, with backoffLimitPerIndex, the last failed pod
	// of each index whose finalizer removal waits for its replacement.
	delayedPerIndex map[int]*corev1.Pod
}

// Sync reconciles one Job (key "namespace/name"), as upstream's syncJob:
// count finished pods through the tracking finalizers, decide whether the
// Job failed (pod failure policy, backoffLimit, activeDeadlineSeconds,
// failed indexes) or succeeded (completions, success policy), create or
// delete pods when expectations allow, and write status.
func (c *Controller) Sync(ctx context.Context, key string) (rerr error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	shared, err := c.jobIn.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.Expectations.Delete(key)
		c.finalizers.delete(key)
		c.backoff.remove(key)
		return nil
	}
	if err != nil {
		return err
	}
	if managedByOther(shared) {
		return nil
	}
	job := shared.DeepCopy()
	if isFinished(job) {
		c.backoff.remove(key)
		return nil
	}
	if job.Spec.CompletionMode != nil && *job.Spec.CompletionMode != batchv1.NonIndexedCompletion && *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		c.cfg.Recorder.Event(job, corev1.EventTypeWarning, "UnknownCompletionMode", "Skipped Job sync because completion mode is unknown")
		return nil
	}
	if job.Spec.Parallelism == nil || job.Spec.BackoffLimit == nil {
		return nil // not defaulted: not served by an API server we know
	}
	start, action := c.cfg.Clock.Now(), actionReconciling
	defer func() {
		result := "success"
		if rerr != nil {
			result = "error"
		}
		mode := completionModeLabel(job)
		c.metrics.syncDuration.WithLabelValues(mode, result, action).Observe(c.cfg.Clock.Since(start).Seconds())
		c.metrics.syncs.WithLabelValues(mode, result, action).Inc()
	}()
	if job.Status.UncountedTerminatedPods == nil {
		job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	// Expectations first: a pod created after this check is seen next time.
	satisfied := c.Expectations.Satisfied(key)
	pods, err := c.podsForJob(ctx, job)
	if err != nil {
		return err
	}
	sc := &syncCtx{
		job:                  job,
		pods:                 pods,
		activePods:           filterActive(pods),
		expectedRmFinalizers: c.finalizers.expected(key),
		uncountedSucceeded:   sets.New(job.Status.UncountedTerminatedPods.Succeeded...),
		uncountedFailed:      sets.New(job.Status.UncountedTerminatedPods.Failed...),
		terminating:          int32(len(terminatingPods(pods))),
	}
	sc.ready = countReady(sc.activePods)
	active := int32(len(sc.activePods))
	newSucceeded, newFailed := newFinishedPods(sc)
	sc.succeeded = job.Status.Succeeded + int32(len(newSucceeded)) + int32(sc.uncountedSucceeded.Len())
	sc.failed = job.Status.Failed + int32(nonIgnoredFailed(job, newFailed)) + int32(sc.uncountedFailed.Len())
	now := c.cfg.Clock.Now()
	if job.Status.StartTime == nil && !suspended(job) {
		t := metav1.NewTime(now)
		job.Status.StartTime = &t
	}
	sc.newBackoff = c.backoff.newRecord(key, newSucceeded, newFailed)

	if scm := findCondition(job.Status.Conditions, batchv1.JobSuccessCriteriaMet); scm != nil && scm.Status == corev1.ConditionTrue {
		sc.finishedCondition = scm
	}
	if sc.finishedCondition == nil {
		if ft := findCondition(job.Status.Conditions, batchv1.JobFailureTarget); ft != nil && ft.Status == corev1.ConditionTrue {
			sc.finishedCondition = newCondition(batchv1.JobFailed, ft.Reason, ft.Message, now)
		} else if msg := failJobMessage(job, pods); msg != nil {
			sc.finishedCondition = newCondition(batchv1.JobFailureTarget, batchv1.JobReasonPodFailurePolicy, *msg, now)
		}
	}
	if sc.finishedCondition == nil {
		switch {
		case sc.failed > *job.Spec.BackoffLimit || pastBackoffLimitOnFailure(job, pods):
			sc.finishedCondition = newCondition(batchv1.JobFailureTarget, batchv1.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit", now)
		case c.pastActiveDeadline(job):
			sc.finishedCondition = newCondition(batchv1.JobFailureTarget, batchv1.JobReasonDeadlineExceeded, "Job was active longer than specified deadline", now)
		case job.Spec.ActiveDeadlineSeconds != nil && !suspended(job):
			left := time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second - c.cfg.Clock.Since(job.Status.StartTime.Time)
			c.queue.AddAfter(key, left)
		}
	}
	if isIndexed(job) {
		sc.prevSucceededIndexes, sc.succeededIndexes = succeededIndexes(job, pods)
		sc.succeeded = int32(sc.succeededIndexes.total())
		if job.Spec.BackoffLimitPerIndex != nil {
			fi := failedIndexes(job, pods)
			sc.failedIndexes = &fi
			if sc.finishedCondition == nil {
				switch {
				case job.Spec.MaxFailedIndexes != nil && fi.total() > int(*job.Spec.MaxFailedIndexes):
					sc.finishedCondition = newCondition(batchv1.JobFailureTarget, batchv1.JobReasonMaxFailedIndexesExceeded, "Job has exceeded the specified maximal number of failed indexes", now)
				case fi.total() > 0 && fi.total()+sc.succeededIndexes.total() >= int(*job.Spec.Completions):
					sc.finishedCondition = newCondition(batchv1.JobFailureTarget, batchv1.JobReasonFailedIndexes, "Job has failed indexes", now)
				}
			}
			sc.delayedPerIndex = podsWithDelayedDeletionPerIndex(sc)
		}
		if sc.finishedCondition == nil {
			if msg, met := matchSuccessPolicy(job.Spec.SuccessPolicy, *job.Spec.Completions, sc.succeededIndexes); met {
				sc.finishedCondition = newCondition(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonSuccessPolicy, msg, now)
			}
		}
	}

	var manageErr error
	suspendChanged := false
	if sc.finishedCondition != nil {
		deletedReady, deleted, err := c.deleteActivePods(ctx, job, sc.activePods)
		if deleted != active || !satisfied {
			// Pods may still be running or not yet in the cache.
			sc.finishedCondition = nil
		}
		active -= deleted
		sc.terminating += deleted
		sc.ready -= deletedReady
		manageErr = err
	} else {
		manageCalled := false
		if satisfied && job.DeletionTimestamp == nil {
			active, action, manageErr = c.manageJob(ctx, job, sc)
			manageCalled = true
		}
		var complete bool
		if job.Spec.Completions == nil {
			complete = sc.succeeded > 0 && active == 0
		} else {
			complete = sc.succeeded >= *job.Spec.Completions && active == 0
		}
		switch {
		case complete:
			sc.finishedCondition = newCondition(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonCompletionsReached, "Reached expected number of succeeded pods", now)
		case manageCalled && suspended(job):
			var changed bool
			job.Status.Conditions, changed = ensureCondition(job.Status.Conditions, batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended", now)
			if changed {
				suspendChanged = true
				c.cfg.Recorder.Event(job, corev1.EventTypeNormal, "Suspended", "Job suspended")
			}
		case manageCalled:
			var changed bool
			job.Status.Conditions, changed = ensureCondition(job.Status.Conditions, batchv1.JobSuspended, corev1.ConditionFalse, "JobResumed", "Job resumed", now)
			if changed {
				suspendChanged = true
				c.cfg.Recorder.Event(job, corev1.EventTypeNormal, "Resumed", "Job resumed")
				// activeDeadlineSeconds counts from the resumption.
				t := metav1.NewTime(now)
				job.Status.StartTime = &t
			}
		}
	}
	terminating := sc.terminating
	needsUpdate := suspendChanged || active != job.Status.Active ||
		job.Status.Ready == nil || *job.Status.Ready != sc.ready ||
		job.Status.Terminating == nil || *job.Status.Terminating != terminating
	job.Status.Active = active
	job.Status.Ready = &sc.ready
	job.Status.Terminating = &terminating
	if err := c.trackStatusAndRemoveFinalizers(ctx, sc, needsUpdate); err != nil {
		return fmt.Errorf("tracking status: %w", err)
	}
	return manageErr
}

// podsForJob claims the Job's pods (adopting orphans its selector matches
// and giving them the tracking finalizer, releasing owned pods it no
// longer matches). Pods the Job still owns but no longer selects are kept
// out; the returned pods are cache pointers (or copies).
func (c *Controller) podsForJob(ctx context.Context, job *batchv1.Job) ([]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("couldn't convert Job selector: %w", err)
	}
	// The Job's own pods and the namespace's orphans (ControllerUIDIndex).
	all, err := controllerref.Controlled[*corev1.Pod](c.podIn.Informer().GetIndexer(), job.Namespace, job.UID, true)
	if err != nil {
		return nil, err
	}
	orphans := map[types.UID]bool{}
	for _, p := range all {
		if metav1.GetControllerOfNoCopy(p) == nil {
			orphans[p.UID] = true
		}
	}
	m := &controllerref.Manager{
		Controller: job,
		Kind:       jobKind,
		Selector:   sel,
		CanAdopt: controllerref.RecheckDeletionTimestamp(job, func(ctx context.Context) (metav1.Object, error) {
			fresh, err := c.jobs.Namespace(job.Namespace).Get(ctx, job.Name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			if fresh.UID != job.UID {
				return nil, fmt.Errorf("original Job %s/%s is gone: got uid %s, wanted %s", job.Namespace, job.Name, fresh.UID, job.UID)
			}
			return fresh, nil
		}),
		Patch: controllerref.PatcherFor(c.pods),
	}
	pods, err := controllerref.Claim(ctx, m, all)
	for i, p := range pods {
		if orphans[p.UID] && !hasFinalizer(p) {
			// Adopted: count it through the tracking finalizer too.
			patch := []byte(`{"metadata":{"finalizers":["` + batchv1.JobTrackingFinalizer + `"]}}`)
			if _, perr := c.pods.Namespace(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); perr != nil && err == nil && !apierrors.IsNotFound(perr) {
				err = perr
			}
			cp := p.DeepCopy()
			cp.Finalizers = append(cp.Finalizers, batchv1.JobTrackingFinalizer)
			pods[i] = cp
		}
	}
	return pods, err
}

// manageJob creates or deletes pods towards the wanted number of active
// pods; it returns the new active count.
func (c *Controller) manageJob(ctx context.Context, job *batchv1.Job, sc *syncCtx) (int32, string, error) {
	key := keyOf(job)
	active := int32(len(sc.activePods))
	if suspended(job) {
		victims := podsForRemoval(job, sc.activePods, int(active))
		ready, removed, err := c.deleteJobPods(ctx, job, key, victims)
		sc.terminating += removed
		sc.ready -= ready
		return active - removed, actionPodsDeleted, err
	}
	parallelism := *job.Spec.Parallelism
	var want int32
	if job.Spec.Completions == nil {
		// Work-queue Jobs: once one pod succeeded, let the rest finish.
		if sc.succeeded > 0 {
			want = active
		} else {
			want = parallelism
		}
	} else {
		want = max(0, min(*job.Spec.Completions-sc.succeeded, parallelism))
	}
	victims := podsForRemoval(job, sc.activePods, int(max(0, active-want)))
	if len(victims) > MaxPodCreateDeletePerSync {
		victims = victims[:MaxPodCreateDeletePerSync]
	}
	if len(victims) > 0 {
		// Deletion and creation never happen in one sync; deletion first.
		ready, removed, err := c.deleteJobPods(ctx, job, key, victims)
		sc.terminating += removed
		sc.ready -= ready
		return active - removed, actionPodsDeleted, err
	}
	var terminating int32
	if onlyReplaceFailedPods(job) {
		terminating = sc.terminating
	}
	diff := want - terminating - active
	if diff <= 0 {
		return active, actionTracking, nil
	}
	if job.Spec.BackoffLimitPerIndex == nil {
		if left := sc.newBackoff.remaining(c.cfg.Clock); left > 0 {
			c.enqueue(job, max(left, c.cfg.SyncBatchPeriod))
			return active, actionPodsCreated, nil
		}
	}
	diff = min(diff, MaxPodCreateDeletePerSync)
	var indexes []int
	if isIndexed(job) {
		indexes = firstPendingIndexes(sc, int(diff), int(*job.Spec.Completions))
		if job.Spec.BackoffLimitPerIndex != nil {
			var left time.Duration
			indexes, left = c.indexesReadyForCreation(indexes, sc.delayedPerIndex)
			if left > 0 {
				c.enqueue(job, max(left, c.cfg.SyncBatchPeriod))
				return active, actionPodsCreated, nil
			}
		}
		diff = int32(len(indexes))
		if diff == 0 {
			return active, actionPodsCreated, nil
		}
	}
	c.Expectations.ExpectCreations(key, int(diff))
	template := job.Spec.Template.DeepCopy()
	if isIndexed(job) {
		addCompletionIndexEnv(template)
	}
	if !containsString(template.Finalizers, batchv1.JobTrackingFinalizer) {
		template.Finalizers = append(template.Finalizers, batchv1.JobTrackingFinalizer)
	}
	ref := controllerref.NewControllerRef(job, jobKind)
	var created, attempted atomic.Int32
	// Slow start: batches of 1, 2, 4, ... stopping after a failing batch.
	_, err := podutil.SlowStartBatch(int(diff), 1, func(i int) error {
		attempted.Add(1)
		ix := unknownIndex
		if i < len(indexes) {
			ix = indexes[i]
		}
		err := c.createPod(ctx, job, template, ref, ix, sc)
		if err == nil {
			created.Add(1)
			return nil
		}
		c.Expectations.CreationObserved(key)
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil // every later creation fails alike; not an error
		}
		return err
	})
	// Creations never attempted are not expected either.
	for range int(diff) - int(attempted.Load()) {
		c.Expectations.CreationObserved(key)
	}
	reason := podCreationReason(job, sc)
	if n := created.Load(); n > 0 {
		c.metrics.podsCreation.WithLabelValues(reason, resultSucceeded).Add(float64(n))
	}
	if n := attempted.Load() - created.Load(); n > 0 {
		c.metrics.podsCreation.WithLabelValues(reason, resultFailed).Add(float64(n))
	}
	return active + created.Load(), actionPodsCreated, err
}

func (c *Controller) createPod(ctx context.Context, job *batchv1.Job, template *corev1.PodTemplateSpec, ref *metav1.OwnerReference, ix int, sc *syncCtx) error {
	t := template
	generateName := job.Name + "-"
	if ix != unknownIndex {
		t = template.DeepCopy()
		if t.Annotations == nil {
			t.Annotations = map[string]string{}
		}
		if t.Labels == nil {
			t.Labels = map[string]string{}
		}
		t.Annotations[batchv1.JobCompletionIndexAnnotation] = fmt.Sprint(ix)
		t.Labels[batchv1.JobCompletionIndexAnnotation] = fmt.Sprint(ix)
		t.Spec.Hostname = fmt.Sprintf("%s-%d", job.Name, ix)
		generateName = podGenerateName(job.Name, ix)
		if job.Spec.BackoffLimitPerIndex != nil {
			addIndexFailureCount(t, job, sc.delayedPerIndex[ix])
		}
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       job.Namespace,
			GenerateName:    generateName,
			Labels:          t.Labels,
			Annotations:     t.Annotations,
			Finalizers:      t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{*ref},
		},
		Spec: t.Spec,
	}
	createdPod, err := c.pods.Namespace(job.Namespace).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			c.cfg.Recorder.Eventf(job, corev1.EventTypeWarning, FailedCreateReason, "Error creating: %v", err)
		}
		return err
	}
	c.cfg.Recorder.Eventf(job, corev1.EventTypeNormal, SuccessfulCreateReason, "Created pod: %v", createdPod.Name)
	return nil
}

// addCompletionIndexEnv gives every container JOB_COMPLETION_INDEX from
// the pod's completion-index annotation (downward API), as upstream's
// controller does.
func addCompletionIndexEnv(t *corev1.PodTemplateSpec) {
	add := func(cs []corev1.Container) {
		for i := range cs {
			found := false
			for _, e := range cs[i].Env {
				if e.Name == "JOB_COMPLETION_INDEX" {
					found = true
				}
			}
			if !found {
				cs[i].Env = append(cs[i].Env, corev1.EnvVar{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{FieldPath: fmt.Sprintf("metadata.annotations['%s']", batchv1.JobCompletionIndexAnnotation)},
				}})
			}
		}
	}
	add(t.Spec.InitContainers)
	add(t.Spec.Containers)
}

// deleteJobPods deletes pods (removing the tracking finalizer first, so
// that they are not counted as failed) under deletion expectations.
func (c *Controller) deleteJobPods(ctx context.Context, job *batchv1.Job, key string, pods []*corev1.Pod) (int32, int32, error) {
	if len(pods) == 0 {
		return 0, 0, nil
	}
	keys := make([]string, len(pods))
	for i, p := range pods {
		keys[i] = keyOf(p)
	}
	c.Expectations.ExpectDeletions(key, keys)
	var ready, removed atomic.Int32
	errCh := make(chan error, len(pods))
	var wg sync.WaitGroup
	for i, p := range pods {
		wg.Go(func() {
			fail := func(err error) {
				c.Expectations.DeletionObserved(key, keys[i])
				if !apierrors.IsNotFound(err) {
					errCh <- err
				}
			}
			err := c.removeFinalizer(ctx, p)
			if err == nil {
				err = c.deletePodAPI(ctx, job, p)
			} else {
				err = fmt.Errorf("removing completion finalizer: %w", err)
			}
			if err != nil {
				fail(err)
				if !apierrors.IsNotFound(err) {
					return
				}
			}
			removed.Add(1)
			if podutil.IsPodReady(p) {
				ready.Add(1)
			}
		})
	}
	wg.Wait()
	close(errCh)
	return ready.Load(), removed.Load(), <-errCh
}

// deleteActivePods deletes pods of a finished Job keeping their
// finalizers: they are counted (as failed) before they go.
func (c *Controller) deleteActivePods(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod) (int32, int32, error) {
	var ready, removed atomic.Int32
	errCh := make(chan error, len(pods))
	var wg sync.WaitGroup
	for _, p := range pods {
		wg.Go(func() {
			if err := c.deletePodAPI(ctx, job, p); err != nil && !apierrors.IsNotFound(err) {
				errCh <- err
				return
			}
			removed.Add(1)
			if podutil.IsPodReady(p) {
				ready.Add(1)
			}
		})
	}
	wg.Wait()
	close(errCh)
	return ready.Load(), removed.Load(), <-errCh
}

func (c *Controller) deletePodAPI(ctx context.Context, job *batchv1.Job, p *corev1.Pod) error {
	err := c.pods.Namespace(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{})
	if err != nil {
		if !apierrors.IsNotFound(err) {
			c.cfg.Recorder.Eventf(job, corev1.EventTypeWarning, FailedDeleteReason, "Error deleting: %v", err)
		}
		return err
	}
	c.cfg.Recorder.Eventf(job, corev1.EventTypeNormal, SuccessfulDeleteReason, "Deleted pod: %v", p.Name)
	return nil
}

// trackStatusAndRemoveFinalizers records finished pods in
// status.uncountedTerminatedPods (or completedIndexes), removes their
// tracking finalizers, moves them into succeeded/failed, and adds the
// interim (SuccessCriteriaMet, FailureTarget) and final (Complete,
// Failed) conditions, the final one only once no pod is uncounted or
// terminating.
func (c *Controller) trackStatusAndRemoveFinalizers(ctx context.Context, sc *syncCtx, needsFlush bool) error {
	job := sc.job
	indexed := isIndexed(job)
	if indexed {
		sort.SliceStable(sc.pods, func(i, j int) bool { return completionIndex(sc.pods[i]) < completionIndex(sc.pods[j]) })
	}
	withFinalizer := sets.New[types.UID]()
	for _, p := range sc.pods {
		if hasFinalizer(p) && !sc.expectedRmFinalizers.Has(p.UID) {
			withFinalizer.Insert(p.UID)
		}
	}
	if cleanUncounted(&job.Status, withFinalizer) {
		needsFlush = true
	}
	uncounted := job.Status.UncountedTerminatedPods
	oldCounters := *job.Status.DeepCopy()
	byPolicyAction := map[batchv1.PodFailurePolicyAction]int{}
	var toRemove []*corev1.Pod
	var newSucceededIndexes []int
	reachedMax := false
	for _, p := range sc.pods {
		if !hasFinalizer(p) || sc.expectedRmFinalizers.Has(p.UID) {
			continue // counted in an earlier sync
		}
		failed := isPodFailed(p, job)
		if !canRemoveFinalizer(sc, p, failed) {
			continue
		}
		toRemove = append(toRemove, p)
		switch {
		case p.Status.Phase == corev1.PodSucceeded && !sc.uncountedFailed.Has(p.UID):
			if indexed {
				if validIndex(job, p) && !sc.prevSucceededIndexes.has(completionIndex(p)) {
					newSucceededIndexes = append(newSucceededIndexes, completionIndex(p))
					needsFlush = true
				}
			} else if !sc.uncountedSucceeded.Has(p.UID) {
				needsFlush = true
				uncounted.Succeeded = append(uncounted.Succeeded, p.UID)
			}
		case failed || (sc.finishedCondition != nil && sc.finishedCondition.Type != batchv1.JobSuccessCriteriaMet):
			// Once the Job is finishing, every unfinished pod fails.
			if !sc.uncountedFailed.Has(p.UID) && (!indexed || validIndex(job, p)) {
				_, count, action := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p)
				if action != nil {
					byPolicyAction[*action]++
				}
				if count {
					needsFlush = true
					uncounted.Failed = append(uncounted.Failed, p.UID)
				}
			}
		}
		if len(newSucceededIndexes)+len(uncounted.Succeeded)+len(uncounted.Failed) >= MaxUncountedPods {
			reachedMax = true
			break
		}
	}
	if indexed {
		sc.succeededIndexes = sc.succeededIndexes.withIndexes(newSucceededIndexes)
		s := sc.succeededIndexes.String()
		if s != job.Status.CompletedIndexes {
			needsFlush = true
		}
		job.Status.Succeeded = int32(sc.succeededIndexes.total())
		job.Status.CompletedIndexes = s
		var fs *string
		if sc.failedIndexes != nil {
			v := sc.failedIndexes.String()
			fs = &v
		}
		if !equalStringPtr(job.Status.FailedIndexes, fs) {
			job.Status.FailedIndexes = fs
			needsFlush = true
		}
	}
	now := c.cfg.Clock.Now()
	if fc := sc.finishedCondition; fc != nil && fc.Type == batchv1.JobFailureTarget {
		job.Status.Conditions = append(job.Status.Conditions, *fc)
		needsFlush = true
		sc.finishedCondition = newCondition(batchv1.JobFailed, fc.Reason, fc.Message, now)
	}
	if fc := sc.finishedCondition; fc != nil && fc.Type == batchv1.JobSuccessCriteriaMet {
		if findCondition(job.Status.Conditions, batchv1.JobSuccessCriteriaMet) == nil {
			job.Status.Conditions = append(job.Status.Conditions, *fc)
			needsFlush = true
		}
		sc.finishedCondition = newCondition(batchv1.JobComplete, fc.Reason, fc.Message, now)
	}
	needsFlush, err := c.flushAndRemoveFinalizers(ctx, sc, toRemove, withFinalizer, needsFlush, &oldCounters)
	for a, n := range byPolicyAction {
		c.metrics.failuresByPolicy.WithLabelValues(string(a)).Add(float64(n))
	}
	if err != nil {
		return err
	}
	finished := !reachedMax && c.enactFinished(sc)
	if finished {
		needsFlush = true
	}
	if needsFlush {
		updated, err := c.updateStatus(ctx, sc.job)
		if err != nil {
			return fmt.Errorf("removing uncounted pods from status: %w", err)
		}
		sc.job = updated
		if finished {
			c.recordFinished(sc.job, sc.finishedCondition)
		}
		c.metrics.observePodsFinished(sc.job, &oldCounters)
	}
	return nil
}

func (c *Controller) flushAndRemoveFinalizers(ctx context.Context, sc *syncCtx, toRemove []*corev1.Pod, withFinalizer sets.Set[types.UID], needsFlush bool, oldCounters *batchv1.JobStatus) (bool, error) {
	if needsFlush {
		updated, err := c.updateStatus(ctx, sc.job)
		if err != nil {
			return needsFlush, fmt.Errorf("adding uncounted pods to status: %w", err)
		}
		sc.job = updated
		c.metrics.observePodsFinished(sc.job, oldCounters)
		c.backoff.update(sc.newBackoff)
		needsFlush = false
	}
	var rmErr error
	if len(toRemove) > 0 {
		var ok []bool
		ok, rmErr = c.removeFinalizers(ctx, keyOf(sc.job), toRemove)
		for i, p := range toRemove {
			if ok[i] {
				withFinalizer.Delete(p.UID)
			}
		}
	}
	if sc.job.Status.UncountedTerminatedPods == nil {
		sc.job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	if cleanUncounted(&sc.job.Status, withFinalizer) {
		needsFlush = true
	}
	if rmErr != nil && needsFlush {
		updated, err := c.updateStatus(ctx, sc.job)
		if err != nil {
			return needsFlush, fmt.Errorf("removing uncounted pods from status: %w", err)
		}
		sc.job = updated
		c.metrics.observePodsFinished(sc.job, oldCounters)
	}
	return needsFlush, rmErr
}

// removeFinalizers removes the tracking finalizer from pods under
// finalizer expectations; ok[i] tells whether pods[i] lost it (or is gone).
func (c *Controller) removeFinalizers(ctx context.Context, key string, pods []*corev1.Pod) ([]bool, error) {
	ok := make([]bool, len(pods))
	uids := make([]types.UID, len(pods))
	for i, p := range pods {
		uids[i] = p.UID
	}
	c.finalizers.expect(key, uids)
	errCh := make(chan error, len(pods))
	var wg sync.WaitGroup
	for i, p := range pods {
		wg.Go(func() {
			if err := c.removeFinalizer(ctx, p); err != nil {
				// No update will show the removal: stop expecting it.
				c.finalizers.observed(key, p.UID)
				if !apierrors.IsNotFound(err) {
					errCh <- err
					return
				}
			}
			ok[i] = true
		})
	}
	wg.Wait()
	close(errCh)
	return ok, <-errCh
}

// cleanUncounted moves the uncounted pods that lost their finalizer into
// the succeeded/failed counters.
func cleanUncounted(st *batchv1.JobStatus, withFinalizer sets.Set[types.UID]) bool {
	u := st.UncountedTerminatedPods
	keep := func(uids []types.UID) []types.UID {
		var out []types.UID
		for _, uid := range uids {
			if withFinalizer.Has(uid) {
				out = append(out, uid)
			}
		}
		return out
	}
	changed := false
	if k := keep(u.Succeeded); len(k) != len(u.Succeeded) {
		st.Succeeded += int32(len(u.Succeeded) - len(k))
		u.Succeeded, changed = k, true
	}
	if k := keep(u.Failed); len(k) != len(u.Failed) {
		st.Failed += int32(len(u.Failed) - len(k))
		u.Failed, changed = k, true
	}
	return changed
}

// enactFinished adds the final condition once nothing is uncounted and no
// pod is terminating.
func (c *Controller) enactFinished(sc *syncCtx) bool {
	fc := sc.finishedCondition
	if fc == nil {
		return false
	}
	if u := sc.job.Status.UncountedTerminatedPods; u != nil && len(u.Succeeded)+len(u.Failed) > 0 {
		return false
	}
	if sc.terminating > 0 {
		return false
	}
	sc.job.Status.Conditions, _ = ensureCondition(sc.job.Status.Conditions, fc.Type, fc.Status, fc.Reason, fc.Message, c.cfg.Clock.Now())
	if fc.Type == batchv1.JobComplete {
		t := fc.LastTransitionTime
		sc.job.Status.CompletionTime = &t
	}
	return true
}

func (c *Controller) recordFinished(job *batchv1.Job, fc *batchv1.JobCondition) {
	mode := completionModeLabel(job)
	if fc.Type == batchv1.JobComplete {
		c.metrics.jobsFinished.WithLabelValues(mode, resultSucceeded, "").Inc()
		if job.Spec.Completions != nil && job.Status.Succeeded > *job.Spec.Completions {
			c.cfg.Recorder.Event(job, corev1.EventTypeWarning, "TooManySucceededPods", "Too many succeeded pods running after completion count reached")
		}
		c.cfg.Recorder.Event(job, corev1.EventTypeNormal, "Completed", "Job completed")
		return
	}
	c.metrics.jobsFinished.WithLabelValues(mode, resultFailed, fc.Reason).Inc()
	c.cfg.Recorder.Event(job, corev1.EventTypeWarning, fc.Reason, fc.Message)
}

func (c *Controller) updateStatus(ctx context.Context, job *batchv1.Job) (*batchv1.Job, error) {
	out, err := c.jobs.Namespace(job.Namespace).UpdateStatus(ctx, job, metav1.UpdateOptions{})
	if err != nil {
		return job, err
	}
	if out.Status.UncountedTerminatedPods == nil {
		out.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	return out, nil
}

func (c *Controller) pastActiveDeadline(job *batchv1.Job) bool {
	if job.Spec.ActiveDeadlineSeconds == nil || job.Status.StartTime == nil || suspended(job) {
		return false
	}
	return c.cfg.Clock.Since(job.Status.StartTime.Time) >= time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second
}

// canRemoveFinalizer: the Job is going away or finishing, the pod
// succeeded, or it failed (unless, with backoffLimitPerIndex, it is the
// failed pod its index's replacement inherits the failure count from).
func canRemoveFinalizer(sc *syncCtx, p *corev1.Pod, failed bool) bool {
	if sc.job.DeletionTimestamp != nil || sc.finishedCondition != nil || p.Status.Phase == corev1.PodSucceeded {
		return true
	}
	if !failed {
		return false
	}
	if sc.job.Spec.BackoffLimitPerIndex != nil {
		if d, ok := sc.delayedPerIndex[completionIndex(p)]; ok && d.UID == p.UID {
			return false
		}
	}
	return true
}

// newFinishedPods are the finished pods not counted yet (finalizer still
// on, not uncounted, with a valid index for Indexed Jobs).
func newFinishedPods(sc *syncCtx) (succeeded, failed []*corev1.Pod) {
	for _, p := range sc.pods {
		if !hasFinalizer(p) || sc.expectedRmFinalizers.Has(p.UID) {
			continue
		}
		if isIndexed(sc.job) && !validIndex(sc.job, p) {
			continue
		}
		if p.Status.Phase == corev1.PodSucceeded && !sc.uncountedSucceeded.Has(p.UID) {
			succeeded = append(succeeded, p)
		} else if isPodFailed(p, sc.job) && !sc.uncountedFailed.Has(p.UID) {
			failed = append(failed, p)
		}
	}
	return succeeded, failed
}

func nonIgnoredFailed(job *batchv1.Job, failed []*corev1.Pod) int {
	n := len(failed)
	if job.Spec.PodFailurePolicy != nil {
		for _, p := range failed {
			if _, count, _ := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p); !count {
				n--
			}
		}
	}
	return n
}

// pastBackoffLimitOnFailure: with restartPolicy OnFailure, the restarts of
// the running and pending pods reach backoffLimit.
func pastBackoffLimitOnFailure(job *batchv1.Job, pods []*corev1.Pod) bool {
	if job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		return false
	}
	var restarts int32
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodPending {
			for _, cs := range p.Status.InitContainerStatuses {
				restarts += cs.RestartCount
			}
			for _, cs := range p.Status.ContainerStatuses {
				restarts += cs.RestartCount
			}
		}
	}
	if *job.Spec.BackoffLimit == 0 {
		return restarts > 0
	}
	return restarts >= *job.Spec.BackoffLimit
}

// podsForRemoval picks rmAtLeast active pods to delete (plus, for Indexed
// Jobs, duplicates and pods with invalid indexes), earliest-stage pods
// first.
func podsForRemoval(job *batchv1.Job, pods []*corev1.Pod, rmAtLeast int) []*corev1.Pod {
	var rm, left []*corev1.Pod
	if isIndexed(job) {
		rm, left = duplicateIndexPods(job, pods)
	} else {
		left = append(left, pods...)
	}
	if len(rm) < rmAtLeast {
		sort.SliceStable(left, func(i, j int) bool { return activePodLess(left[i], left[j]) })
		rm = append(rm, left[:min(len(left), rmAtLeast-len(rm))]...)
	}
	return rm
}
