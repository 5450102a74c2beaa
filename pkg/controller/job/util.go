package job

import (
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/skiff-sh/skiff/pkg/controller/internal/podutil"
)

func hasFinalizer(p *corev1.Pod) bool {
	return containsString(p.Finalizers, batchv1.JobTrackingFinalizer)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func equalStringPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// isFinished: the Job has a Complete or Failed condition that is True.
func isFinished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// managedByOther: spec.managedBy names another controller.
func managedByOther(j *batchv1.Job) bool {
	return j.Spec.ManagedBy != nil && *j.Spec.ManagedBy != ControllerName
}

func suspended(j *batchv1.Job) bool { return j.Spec.Suspend != nil && *j.Spec.Suspend }

// onlyReplaceFailedPods: podReplacementPolicy Failed (the default with a
// pod failure policy): a replacement waits until the old pod is Failed.
func onlyReplaceFailedPods(j *batchv1.Job) bool {
	if j.Spec.PodReplacementPolicy != nil && *j.Spec.PodReplacementPolicy == batchv1.Failed {
		return true
	}
	return j.Spec.PodFailurePolicy != nil
}

// isPodFailed: Failed, or (when terminating pods are replaced) being
// deleted before it succeeded: a deleted pod never reaches a phase.
func isPodFailed(p *corev1.Pod, j *batchv1.Job) bool {
	if p.Status.Phase == corev1.PodFailed {
		return true
	}
	if onlyReplaceFailedPods(j) {
		return false
	}
	return p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded
}

func filterActive(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if podutil.IsPodActive(p) {
			out = append(out, p)
		}
	}
	return out
}

// terminatingPods are being deleted and have not finished.
func terminatingPods(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out = append(out, p)
		}
	}
	return out
}

func countReady(pods []*corev1.Pod) int32 {
	var n int32
	for _, p := range pods {
		if podutil.IsPodReady(p) {
			n++
		}
	}
	return n
}

var phaseOrder = map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}

// activePodLess orders pods earliest stage first (upstream's ActivePods):
// unassigned < assigned, Pending < Unknown < Running, not ready < ready,
// ready more recently first, more restarts first, newer first.
func activePodLess(a, b *corev1.Pod) bool {
	if (a.Spec.NodeName == "") != (b.Spec.NodeName == "") {
		return a.Spec.NodeName == ""
	}
	if pa, pb := phaseOrder[a.Status.Phase], phaseOrder[b.Status.Phase]; pa != pb {
		return pa < pb
	}
	if ra, rb := podutil.IsPodReady(a), podutil.IsPodReady(b); ra != rb {
		return !ra
	}
	if podutil.IsPodReady(a) && podutil.IsPodReady(b) {
		ta, tb := podutil.ReadyCondition(a).LastTransitionTime, podutil.ReadyCondition(b).LastTransitionTime
		if !ta.Equal(&tb) {
			return tb.Before(&ta)
		}
	}
	if ra, rb := restarts(a), restarts(b); ra != rb {
		return ra > rb
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return b.CreationTimestamp.Before(&a.CreationTimestamp)
	}
	return false
}

func restarts(p *corev1.Pod) int32 {
	var n int32
	for _, cs := range p.Status.ContainerStatuses {
		n = max(n, cs.RestartCount)
	}
	return n
}

func findCondition(list []batchv1.JobCondition, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range list {
		if list[i].Type == t {
			return &list[i]
		}
	}
	return nil
}

func newCondition(t batchv1.JobConditionType, reason, message string, now time.Time) *batchv1.JobCondition {
	return &batchv1.JobCondition{
		Type: t, Status: corev1.ConditionTrue,
		LastProbeTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now),
		Reason: reason, Message: message,
	}
}

// ensureCondition sets the condition of type t (never adding a False one);
// it reports whether the list changed.
func ensureCondition(list []batchv1.JobCondition, t batchv1.JobConditionType, status corev1.ConditionStatus, reason, message string, now time.Time) ([]batchv1.JobCondition, bool) {
	if c := findCondition(list, t); c != nil {
		if c.Status != status || c.Reason != reason || c.Message != message {
			*c = *newCondition(t, reason, message, now)
			c.Status = status
			return list, true
		}
		return list, false
	}
	if status == corev1.ConditionFalse {
		return list, false
	}
	c := newCondition(t, reason, message, now)
	c.Status = status
	return append(list, *c), true
}

// finalizerExpectations are, per Job key, the pods whose tracking
// finalizer removal was requested and not yet observed: they are not
// counted twice.
type finalizerExpectations struct {
	mu sync.Mutex
	m  map[string]sets.Set[types.UID]
}

func newFinalizerExpectations() *finalizerExpectations {
	return &finalizerExpectations{m: map[string]sets.Set[types.UID]{}}
}

func (f *finalizerExpectations) expect(key string, uids []types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.m[key]
	if !ok {
		s = sets.New[types.UID]()
		f.m[key] = s
	}
	s.Insert(uids...)
}

func (f *finalizerExpectations) observed(key string, uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.m[key]; ok {
		s.Delete(uid)
		if s.Len() == 0 {
			delete(f.m, key)
		}
	}
}

func (f *finalizerExpectations) expected(key string) sets.Set[types.UID] {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m[key].Clone()
}

func (f *finalizerExpectations) delete(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.m, key)
}

// Per-index back-off (backoffLimitPerIndex).

func annotationCount(p *corev1.Pod, name string) int32 {
	v, ok := p.Annotations[name]
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0
	}
	return int32(n)
}

func indexFailureCount(p *corev1.Pod) int32 {
	return annotationCount(p, batchv1.JobIndexFailureCountAnnotation)
}

func absoluteIndexFailureCount(p *corev1.Pod) int32 {
	return indexFailureCount(p) + annotationCount(p, batchv1.JobIndexIgnoredFailureCountAnnotation)
}

// isIndexFailed: the pod failed by a FailIndex rule, or its counted
// failure exhausts backoffLimitPerIndex.
func isIndexFailed(job *batchv1.Job, p *corev1.Pod) bool {
	if !isPodFailed(p, job) {
		return false
	}
	counted := true
	if job.Spec.PodFailurePolicy != nil {
		_, count, action := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p)
		if action != nil && *action == batchv1.PodFailurePolicyActionFailIndex {
			return true
		}
		counted = count
	}
	return counted && indexFailureCount(p) >= *job.Spec.BackoffLimitPerIndex
}

// failedIndexes are status.failedIndexes plus the indexes failed now.
func failedIndexes(job *batchv1.Job, pods []*corev1.Pod) intervals {
	var prev intervals
	if job.Status.FailedIndexes != nil {
		prev = parseIndexes(*job.Status.FailedIndexes, int(*job.Spec.Completions))
	}
	var ixs []int
	for _, p := range pods {
		if validIndex(job, p) && isIndexFailed(job, p) {
			ixs = append(ixs, completionIndex(p))
		}
	}
	return prev.withIndexes(ixs)
}

// podsWithDelayedDeletionPerIndex: per index still to be retried, its last
// failed uncounted pod (the replacement copies its failure count).
func podsWithDelayedDeletionPerIndex(sc *syncCtx) map[int]*corev1.Pod {
	active := sets.New(indexesOf(sc.job, sc.activePods)...)
	out := map[int]*corev1.Pod{}
	for _, p := range sc.pods {
		if !hasFinalizer(p) || sc.expectedRmFinalizers.Has(p.UID) || !validIndex(sc.job, p) || !isPodFailed(p, sc.job) {
			continue
		}
		ix := completionIndex(p)
		if sc.succeededIndexes.has(ix) || (sc.failedIndexes != nil && sc.failedIndexes.has(ix)) || active.Has(ix) {
			continue
		}
		if last, ok := out[ix]; ok {
			if absoluteIndexFailureCount(last) <= absoluteIndexFailureCount(p) && !finishTime(p).Before(finishTime(last)) {
				out[ix] = p
			}
		} else {
			out[ix] = p
		}
	}
	return out
}

// indexesReadyForCreation keeps the indexes whose back-off has passed; if
// none, it returns the shortest wait.
func (c *Controller) indexesReadyForCreation(indexes []int, delayed map[int]*corev1.Pod) ([]int, time.Duration) {
	var now []int
	var minLeft time.Duration = -1
	for _, ix := range indexes {
		left := time.Duration(0)
		if p := delayed[ix]; p != nil {
			t := finishTime(p)
			left = remainingBackoff(c.cfg.Clock, absoluteIndexFailureCount(p)+1, &t)
		}
		if left == 0 {
			now = append(now, ix)
		} else if minLeft < 0 || left < minLeft {
			minLeft = left
		}
	}
	if len(now) > 0 || minLeft < 0 {
		return now, 0
	}
	return nil, minLeft
}

// addIndexFailureCount annotates a replacement pod with its index's
// failure counts, one more than the replaced pod's.
func addIndexFailureCount(t *corev1.PodTemplateSpec, job *batchv1.Job, replaced *corev1.Pod) {
	var failures, ignored int32
	if replaced != nil {
		failures, ignored = indexFailureCount(replaced), annotationCount(replaced, batchv1.JobIndexIgnoredFailureCountAnnotation)
		if _, count, _ := matchPodFailurePolicy(job.Spec.PodFailurePolicy, replaced); count {
			failures++
		} else {
			ignored++
		}
	}
	t.Annotations[batchv1.JobIndexFailureCountAnnotation] = strconv.Itoa(int(failures))
	if ignored > 0 {
		t.Annotations[batchv1.JobIndexIgnoredFailureCountAnnotation] = strconv.Itoa(int(ignored))
	}
}
