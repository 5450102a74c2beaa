package job

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/skiff-sh/skiff/pkg/client/cache"
)

// Completions 3, parallelism 2: two pods at a time with the Job's labels,
// controller reference and tracking finalizer; each success is counted
// through uncountedTerminatedPods and the finalizer's removal; the Job
// gets SuccessCriteriaMet, then Complete.
func TestParallelismAndCompletions(t *testing.T) {
	h := newHarness(t, true)
	j := h.create(newJob("pi", i32(3), i32(2)))
	h.sync("pi")
	pods := h.podsOf("pi")
	if len(pods) != 2 {
		t.Fatalf("want 2 pods, got %d", len(pods))
	}
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.UID != j.UID || ref.Kind != "Job" || !*ref.BlockOwnerDeletion {
			t.Errorf("pod %s controller ref %+v", p.Name, ref)
		}
		if !strings.HasPrefix(p.Name, "pi-") || p.Labels[batchv1.ControllerUidLabel] != string(j.UID) || p.Labels[batchv1.JobNameLabel] != "pi" {
			t.Errorf("pod %s labels %v", p.Name, p.Labels)
		}
		if !slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer) {
			t.Errorf("pod %s finalizers %v", p.Name, p.Finalizers)
		}
	}
	if h.ev.count("Normal SuccessfulCreate Created pod: pi-") != 2 {
		t.Errorf("events %v", h.ev.list)
	}
	got := h.job("pi")
	if got.Status.Active != 2 || got.Status.StartTime == nil || !got.Status.StartTime.Time.Equal(h.start) || ptr.Deref(got.Status.Ready, -1) != 0 || ptr.Deref(got.Status.Terminating, -1) != 0 {
		t.Fatalf("status %+v", got.Status)
	}
	h.markReady(pods[0])
	h.sync("pi")
	if got := h.job("pi"); ptr.Deref(got.Status.Ready, -1) != 1 {
		t.Fatalf("ready %v", got.Status.Ready)
	}

	h.finish(pods[0], 0)
	h.sync("pi")
	got = h.job("pi")
	if got.Status.Succeeded != 1 || got.Status.Active != 2 || len(got.Status.UncountedTerminatedPods.Succeeded) != 0 {
		t.Fatalf("after one success: %+v", got.Status)
	}
	done, _ := h.pods.Get(h.ctx, pods[0].Name, metav1.GetOptions{})
	if slices.Contains(done.Finalizers, batchv1.JobTrackingFinalizer) {
		t.Fatal("finalizer of the counted pod not removed")
	}
	// Two completions remain, two pods run: nothing more to create.
	for _, p := range activeOf(h.podsOf("pi")) {
		h.finish(p, 0)
	}
	h.sync("pi")
	got = h.job("pi")
	if got.Status.Succeeded != 3 || got.Status.Active != 0 {
		t.Fatalf("after three successes: %+v", got.Status)
	}
	sc, complete := condition(got, batchv1.JobSuccessCriteriaMet), condition(got, batchv1.JobComplete)
	if sc == nil || complete == nil || complete.Reason != batchv1.JobReasonCompletionsReached || complete.Message != "Reached expected number of succeeded pods" {
		t.Fatalf("conditions %v", conditionTypes(got))
	}
	if got.Status.CompletionTime == nil || !h.ev.has("Normal Completed Job completed") {
		t.Fatalf("completionTime %v events %v", got.Status.CompletionTime, h.ev.list)
	}
	// upstream's metrics
	for _, m := range []struct {
		c    prometheus.Collector
		want float64
	}{
		{h.ctrl.metrics.jobsFinished.WithLabelValues("NonIndexed", "succeeded", ""), 1},
		{h.ctrl.metrics.podsFinished.WithLabelValues("NonIndexed", "succeeded"), 3},
		{h.ctrl.metrics.podsCreation.WithLabelValues("new", "succeeded"), 3},
		{h.ctrl.metrics.syncs.WithLabelValues("NonIndexed", "success", "pods_created"), 2},
	} {
		if got := counterValue(t, m.c); got != m.want {
			t.Errorf("%s = %v, want %v", m.c.(prometheus.Metric).Desc(), got, m.want)
		}
	}
	families, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
	}
	for _, n := range []string{"job_controller_job_sync_duration_seconds", "job_controller_terminated_pods_tracking_finalizer_total", "job_controller_jobs_finished_total"} {
		if !names[n] {
			t.Errorf("%s not gathered (%v)", n, names)
		}
	}
	// A finished Job is left alone.
	h.sync("pi")
	if n := len(h.podsOf("pi")); n != 3 {
		t.Fatalf("pods after completion %d", n)
	}
}

// Without completions (a work queue), the first success ends pod creation
// and the Job completes when the others finished.
func TestWorkQueueJob(t *testing.T) {
	h := newHarness(t, true)
	h.create(newJob("wq", nil, i32(2)))
	h.sync("wq")
	pods := h.podsOf("wq")
	if len(pods) != 2 {
		t.Fatalf("pods %d", len(pods))
	}
	h.finish(pods[0], 0)
	h.sync("wq")
	if got := h.job("wq"); got.Status.Active != 1 || condition(got, batchv1.JobComplete) != nil {
		t.Fatalf("status %+v", got.Status)
	}
	h.finish(pods[1], 0)
	h.sync("wq")
	if got := h.job("wq"); got.Status.Succeeded != 2 || condition(got, batchv1.JobComplete) == nil {
		t.Fatalf("status %+v %v", got.Status, conditionTypes(got))
	}
}

// Indexed: one pod per index, named <job>-<index>-..., annotated and
// labelled with the index, hostname <job>-<index>, JOB_COMPLETION_INDEX
// from the annotation; completedIndexes in the compressed form.
func TestIndexedJob(t *testing.T) {
	h := newHarness(t, true)
	j := newJob("idx", i32(5), i32(3))
	j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	h.create(j)
	h.sync("idx")
	pods := h.podsOf("idx")
	if len(pods) != 3 {
		t.Fatalf("pods %d", len(pods))
	}
	byIndex := map[int]*corev1.Pod{}
	for _, p := range pods {
		ix := completionIndex(p)
		byIndex[ix] = p
		if !strings.HasPrefix(p.Name, fmt.Sprintf("idx-%d-", ix)) || p.Labels[batchv1.JobCompletionIndexAnnotation] != fmt.Sprint(ix) || p.Spec.Hostname != fmt.Sprintf("idx-%d", ix) {
			t.Errorf("pod %s index %d labels %v hostname %q", p.Name, ix, p.Labels, p.Spec.Hostname)
		}
		env := p.Spec.Containers[0].Env
		if len(env) != 1 || env[0].Name != "JOB_COMPLETION_INDEX" || env[0].ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
			t.Errorf("pod %s env %+v", p.Name, env)
		}
	}
	if len(byIndex) != 3 || byIndex[0] == nil || byIndex[1] == nil || byIndex[2] == nil {
		t.Fatalf("indexes %v", byIndex)
	}
	h.finish(byIndex[0], 0)
	h.finish(byIndex[2], 0)
	h.sync("idx")
	got := h.job("idx")
	if got.Status.CompletedIndexes != "0,2" || got.Status.Succeeded != 2 || got.Status.Active != 3 {
		t.Fatalf("status %+v", got.Status)
	}
	// Indexes 3 and 4 were created next.
	idx := map[int]bool{}
	for _, p := range activeOf(h.podsOf("idx")) {
		idx[completionIndex(p)] = true
	}
	if !idx[1] || !idx[3] || !idx[4] {
		t.Fatalf("active indexes %v", idx)
	}
	for _, p := range activeOf(h.podsOf("idx")) {
		h.finish(p, 0)
	}
	h.sync("idx")
	got = h.job("idx")
	if got.Status.CompletedIndexes != "0-4" || got.Status.Succeeded != 5 || condition(got, batchv1.JobComplete) == nil {
		t.Fatalf("status %+v %v", got.Status, conditionTypes(got))
	}
}

// A failed pod is replaced after 10s, the next after 20s (back-off from
// the last failure, on the fake clock); past backoffLimit the Job fails
// with BackoffLimitExceeded.
func TestBackoffLimitAndBackoffDelay(t *testing.T) {
	h := newHarness(t, true)
	j := newJob("flaky", i32(1), i32(1))
	j.Spec.BackoffLimit = i32(2)
	h.create(j)
	h.sync("flaky")
	failOnly := func() {
		t.Helper()
		act := activeOf(h.podsOf("flaky"))
		if len(act) != 1 {
			t.Fatalf("active pods %d", len(act))
		}
		h.finish(act[0], 1)
		h.sync("flaky")
	}
	failOnly()
	if got := h.job("flaky"); got.Status.Failed != 1 || got.Status.Active != 0 {
		t.Fatalf("status %+v", got.Status)
	}
	h.clock.Step(9 * time.Second)
	h.sync("flaky")
	if n := len(activeOf(h.podsOf("flaky"))); n != 0 {
		t.Fatalf("replacement created within the 10s back-off (%d)", n)
	}
	h.clock.Step(time.Second)
	h.sync("flaky")
	if n := len(activeOf(h.podsOf("flaky"))); n != 1 {
		t.Fatalf("no replacement after 10s (%d)", n)
	}
	failOnly()
	h.clock.Step(19 * time.Second)
	h.sync("flaky")
	if n := len(activeOf(h.podsOf("flaky"))); n != 0 {
		t.Fatalf("replacement created within the 20s back-off (%d)", n)
	}
	h.clock.Step(time.Second)
	h.sync("flaky")
	if n := len(activeOf(h.podsOf("flaky"))); n != 1 {
		t.Fatalf("no replacement after 20s (%d)", n)
	}
	failOnly()
	got := h.job("flaky")
	ft, failed := condition(got, batchv1.JobFailureTarget), condition(got, batchv1.JobFailed)
	if got.Status.Failed != 3 || ft == nil || failed == nil || failed.Reason != batchv1.JobReasonBackoffLimitExceeded || failed.Message != "Job has reached the specified backoff limit" {
		t.Fatalf("status %+v %v", got.Status, conditionTypes(got))
	}
	if !h.ev.has("Warning BackoffLimitExceeded Job has reached the specified backoff limit") {
		t.Fatalf("events %v", h.ev.list)
	}
	if got := counterValue(t, h.ctrl.metrics.podsCreation.WithLabelValues("recreate_terminating_or_failed", "succeeded")); got != 2 {
		t.Errorf("recreated pods %v", got)
	}
	if got := counterValue(t, h.ctrl.metrics.jobsFinished.WithLabelValues("NonIndexed", "failed", "BackoffLimitExceeded")); got != 1 {
		t.Errorf("failed jobs %v", got)
	}
}

func TestBackoffRemaining(t *testing.T) {
	c := clockAt(t0)
	last := t0.Add(-5 * time.Second) // the last failure was 5s ago
	for _, tc := range []struct {
		failures int32
		want     time.Duration
	}{
		{0, 0},
		{1, 5 * time.Second},                // 10s
		{2, 15 * time.Second},               // 20s
		{3, 35 * time.Second},               // 40s
		{7, 10*time.Minute - 5*time.Second}, // 640s, capped at 10 min
		{20, 10*time.Minute - 5*time.Second},
	} {
		if got := remainingBackoff(c, tc.failures, &last); got != tc.want {
			t.Errorf("failures %d: %v, want %v", tc.failures, got, tc.want)
		}
	}
}

// activeDeadlineSeconds: past it, the running pods are deleted (and
// counted failed), FailureTarget is set at once and Failed only once no
// pod is terminating.
func TestActiveDeadline(t *testing.T) {
	h := newHarness(t, true)
	j := newJob("slow", i32(2), i32(2))
	j.Spec.ActiveDeadlineSeconds = ptr.To[int64](30)
	h.create(j)
	h.sync("slow")
	if n := len(h.podsOf("slow")); n != 2 {
		t.Fatalf("pods %d", n)
	}
	h.clock.Step(29 * time.Second)
	h.sync("slow")
	if got := h.job("slow"); len(got.Status.Conditions) != 0 {
		t.Fatalf("conditions before the deadline %v", conditionTypes(got))
	}
	h.clock.Step(time.Second)
	if err := h.ctrl.Sync(h.ctx, "default/slow"); err != nil {
		t.Fatal(err)
	}
	got := h.job("slow")
	if ft := condition(got, batchv1.JobFailureTarget); ft == nil || ft.Reason != batchv1.JobReasonDeadlineExceeded || condition(got, batchv1.JobFailed) != nil {
		t.Fatalf("after the deadline: %v %+v", conditionTypes(got), got.Status)
	}
	if ptr.Deref(got.Status.Terminating, 0) != 2 || got.Status.Active != 0 {
		t.Fatalf("terminating %v active %d", got.Status.Terminating, got.Status.Active)
	}
	h.waitPodsCached()
	h.waitCachedJob(got)
	h.sync("slow")
	h.sync("slow")
	got = h.job("slow")
	failed := condition(got, batchv1.JobFailed)
	if failed == nil || failed.Reason != batchv1.JobReasonDeadlineExceeded || failed.Message != "Job was active longer than specified deadline" || got.Status.Failed != 2 {
		t.Fatalf("status %+v %v", got.Status, conditionTypes(got))
	}
	if n := len(h.podsOf("slow")); n != 0 {
		t.Fatalf("pods left %d", n)
	}
	if !h.ev.has("Warning DeadlineExceeded Job was active longer than specified deadline") {
		t.Fatalf("events %v", h.ev.list)
	}
}

// podFailurePolicy: a DisruptionTarget failure is ignored (not counted,
// replaced at once), exit code 42 fails the Job with upstream's message.
func TestPodFailurePolicy(t *testing.T) {
	h := newHarness(t, true)
	j := newJob("pfp", i32(1), i32(1))
	j.Spec.BackoffLimit = i32(0)
	j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{ContainerName: ptr.To("c"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}}},
		{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget}}},
	}}
	h.create(j)
	h.sync("pfp")
	p := activeOf(h.podsOf("pfp"))[0]
	now := metav1.NewTime(h.clock.Now())
	h.setStatus(p, func(st *corev1.PodStatus) {
		st.Phase = corev1.PodFailed
		st.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler"}}
		st.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", Image: "busybox", ImageID: "busybox",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, StartedAt: now, FinishedAt: now}}}}
	})
	h.sync("pfp")
	got := h.job("pfp")
	if got.Status.Failed != 0 || len(got.Status.Conditions) != 0 {
		t.Fatalf("ignored failure counted: %+v %v", got.Status, conditionTypes(got))
	}
	h.clock.Step(10 * time.Second)
	h.sync("pfp")
	act := activeOf(h.podsOf("pfp"))
	if len(act) != 1 {
		t.Fatalf("no replacement (%d)", len(act))
	}
	h.finish(act[0], 42)
	h.sync("pfp")
	got = h.job("pfp")
	failed := condition(got, batchv1.JobFailed)
	want := fmt.Sprintf("Container c for pod default/%s failed with exit code 42 matching FailJob rule at index 0", act[0].Name)
	if condition(got, batchv1.JobFailureTarget) == nil || failed == nil || failed.Reason != batchv1.JobReasonPodFailurePolicy || failed.Message != want || got.Status.Failed != 1 {
		t.Fatalf("status %+v %v (%v)", got.Status, conditionTypes(got), failed)
	}
	for action, want := range map[string]float64{"Ignore": 1, "FailJob": 1} {
		if got := counterValue(t, h.ctrl.metrics.failuresByPolicy.WithLabelValues(action)); got != want {
			t.Errorf("failures handled by %s: %v", action, got)
		}
	}
}

func TestMatchPodFailurePolicy(t *testing.T) {
	pod := func(code int32, conds ...corev1.PodConditionType) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}, Status: corev1.PodStatus{Phase: corev1.PodFailed,
			ContainerStatuses: []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}}}}
		for _, c := range conds {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue})
		}
		return p
	}
	policy := &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}},
		{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpNotIn, Values: []int32{1, 2}}},
		{Action: batchv1.PodFailurePolicyActionCount, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{2}}},
	}}
	for _, tc := range []struct {
		name      string
		pod       *corev1.Pod
		msg       string
		count     bool
		action    batchv1.PodFailurePolicyAction
		hasAction bool
	}{
		{"disruption ignored", pod(3, corev1.DisruptionTarget), "", false, batchv1.PodFailurePolicyActionIgnore, true},
		{"exit 3 fails the job", pod(3), "Container main for pod ns/p failed with exit code 3 matching FailJob rule at index 1", true, batchv1.PodFailurePolicyActionFailJob, true},
		{"exit 2 counted", pod(2), "", true, batchv1.PodFailurePolicyActionCount, true},
		{"exit 1 default", pod(1), "", true, "", false},
	} {
		msg, count, action := matchPodFailurePolicy(policy, tc.pod)
		if ptr.Deref(msg, "") != tc.msg || count != tc.count || (action != nil) != tc.hasAction || (action != nil && *action != tc.action) {
			t.Errorf("%s: %v %v %v", tc.name, ptr.Deref(msg, ""), count, action)
		}
	}
}

// suspend deletes the active pods and sets Suspended; resuming creates
// pods again and restarts status.startTime.
func TestSuspendAndResume(t *testing.T) {
	h := newHarness(t, true)
	h.create(newJob("sus", i32(4), i32(2)))
	h.sync("sus")
	if n := len(activeOf(h.podsOf("sus"))); n != 2 {
		t.Fatalf("pods %d", n)
	}
	j := h.job("sus")
	j.Spec.Suspend = ptr.To(true)
	j, err := h.jobs.Update(h.ctx, j, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.waitCachedJob(j)
	h.sync("sus")
	got := h.job("sus")
	s := condition(got, batchv1.JobSuspended)
	if s == nil || s.Status != corev1.ConditionTrue || s.Reason != "JobSuspended" || got.Status.Active != 0 || len(h.podsOf("sus")) != 0 {
		t.Fatalf("suspended: %+v %v pods %d", got.Status, conditionTypes(got), len(h.podsOf("sus")))
	}
	if got.Status.Failed != 0 || !h.ev.has("Normal Suspended Job suspended") || h.ev.count("Normal SuccessfulDelete") != 2 {
		t.Fatalf("failed %d events %v", got.Status.Failed, h.ev.list)
	}
	h.clock.Step(time.Minute)
	got.Spec.Suspend = ptr.To(false)
	got, err = h.jobs.Update(h.ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.waitCachedJob(got)
	h.sync("sus")
	got = h.job("sus")
	s = condition(got, batchv1.JobSuspended)
	if s == nil || s.Status != corev1.ConditionFalse || s.Reason != "JobResumed" || !got.Status.StartTime.Time.Equal(h.start.Add(time.Minute)) || len(activeOf(h.podsOf("sus"))) != 2 {
		t.Fatalf("resumed: %+v %v", got.Status, conditionTypes(got))
	}
}

// A Job created suspended has no startTime and no pods.
func TestCreatedSuspended(t *testing.T) {
	h := newHarness(t, true)
	j := newJob("later", i32(1), i32(1))
	j.Spec.Suspend = ptr.To(true)
	h.create(j)
	h.sync("later")
	got := h.job("later")
	if got.Status.StartTime != nil || len(h.podsOf("later")) != 0 || condition(got, batchv1.JobSuspended) == nil {
		t.Fatalf("status %+v", got.Status)
	}
}

// A pod deleted by someone else keeps the tracking finalizer until the
// controller counted it as failed; then it goes and is replaced (after
// the back-off).
func TestPodDeletedExternally(t *testing.T) {
	h := newHarness(t, true)
	h.create(newJob("del", i32(1), i32(1)))
	h.sync("del")
	p := h.podsOf("del")[0]
	if err := h.pods.Delete(h.ctx, p.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitPodsCached()
	cur, err := h.pods.Get(h.ctx, p.Name, metav1.GetOptions{})
	if err != nil || cur.DeletionTimestamp == nil {
		t.Fatalf("the finalizer should hold the pod: %v %v", cur, err)
	}
	h.sync("del")
	got := h.job("del")
	if got.Status.Failed != 1 || len(h.podsOf("del")) != 0 {
		t.Fatalf("status %+v pods %d", got.Status, len(h.podsOf("del")))
	}
	// The back-off counts from the deletion (the server's clock).
	h.clock.SetTime(cur.DeletionTimestamp.Add(9 * time.Second))
	h.sync("del")
	if n := len(activeOf(h.podsOf("del"))); n != 0 {
		t.Fatalf("replacement within the back-off (%d)", n)
	}
	h.clock.Step(time.Second)
	h.sync("del")
	if n := len(activeOf(h.podsOf("del"))); n != 1 {
		t.Fatalf("no replacement (%d)", n)
	}
}

// Deleting a Job releases its pods' finalizers (the orphan-pod queue).
func TestDeletedJobReleasesFinalizers(t *testing.T) {
	h := newHarness(t, true)
	h.create(newJob("gone", i32(2), i32(2)))
	h.sync("gone")
	pods := h.podsOf("gone")
	// No garbage collector runs here: the pods keep their (dangling)
	// owner reference, as they do upstream until the collector gets to them.
	if err := h.jobs.Delete(h.ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "job gone from the cache", func() (bool, error) {
		_, err := h.ctrl.jobIn.Lister().Namespace("default").Get("gone")
		return err != nil, nil
	})
	h.waitPodsCached()
	for _, p := range pods {
		if err := h.ctrl.SyncOrphanPod(h.ctx, "default/"+p.Name); err != nil {
			t.Fatal(err)
		}
		cur, err := h.pods.Get(h.ctx, p.Name, metav1.GetOptions{})
		if err != nil || slices.Contains(cur.Finalizers, batchv1.JobTrackingFinalizer) {
			t.Fatalf("pod %s: %v %v", p.Name, cur.Finalizers, err)
		}
	}
}

// A burst of syncs before the pod informer saw the new pods must not
// create more than parallelism pods: the pod informer is held back.
func TestExpectationsUnderEventBurst(t *testing.T) {
	h := newHarness(t, false)
	var creates atomic.Int32
	go h.ctrl.jobIn.Informer().Run(h.ctx)
	j := h.create(newJob("burst", i32(10), i32(5)))
	_ = j
	for range 30 {
		// The status writes after the first conflict with the stale
		// cached Job: errors are expected, over-creation is not.
		_ = h.ctrl.Sync(h.ctx, "default/burst")
	}
	l, err := h.pods.List(h.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	creates.Store(int32(len(l.Items)))
	if creates.Load() != 5 {
		t.Fatalf("%d pods created, want 5", creates.Load())
	}
	if adds, _ := h.ctrl.Expectations.Pending("default/burst"); adds != 5 {
		t.Fatalf("pending creations %d", adds)
	}
	// Once the pods are observed, nothing more is created.
	go h.ctrl.podIn.Informer().Run(h.ctx)
	if !cache.WaitForCacheSync(h.ctx, h.ctrl.podIn.HasSynced) {
		t.Fatal("pod cache")
	}
	h.sync("burst")
	if n := len(h.podsOf("burst")); n != 5 {
		t.Fatalf("%d pods after the burst", n)
	}
}

// A Job managed by another controller is not touched.
func TestManagedByOther(t *testing.T) {
	h := newHarness(t, true)
	j := newJob("ext", i32(1), i32(1))
	j.Spec.ManagedBy = ptr.To("example.com/other")
	h.create(j)
	h.sync("ext")
	if got := h.job("ext"); len(h.podsOf("ext")) != 0 || got.Status.StartTime != nil {
		t.Fatalf("external Job synced: %+v", got.Status)
	}
}

// successPolicy: index 0 succeeding is enough; the other pods are deleted
// (not counted as failed) and the Job completes with reason SuccessPolicy.
func TestSuccessPolicy(t *testing.T) {
	h := newHarness(t, true)
	j := newJob("leader", i32(3), i32(3))
	j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("0")}}}
	h.create(j)
	h.sync("leader")
	for _, p := range h.podsOf("leader") {
		if completionIndex(p) == 0 {
			h.finish(p, 0)
		}
	}
	h.sync("leader")
	got := h.job("leader")
	if c := condition(got, batchv1.JobSuccessCriteriaMet); c == nil || c.Reason != batchv1.JobReasonSuccessPolicy || c.Message != "Matched rules at index 0" {
		t.Fatalf("conditions %v", conditionTypes(got))
	}
	h.sync("leader")
	h.sync("leader")
	got = h.job("leader")
	if c := condition(got, batchv1.JobComplete); c == nil || c.Reason != batchv1.JobReasonSuccessPolicy || got.Status.Failed != 0 || got.Status.Succeeded != 1 || got.Status.CompletedIndexes != "0" {
		t.Fatalf("status %+v %v", got.Status, conditionTypes(got))
	}
}

// podReplacementPolicy Failed: a terminating pod is not replaced until it
// is Failed.
func TestPodReplacementPolicyFailed(t *testing.T) {
	h := newHarness(t, true)
	j := newJob("repl", i32(1), i32(1))
	j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
	h.create(j)
	h.sync("repl")
	p := h.podsOf("repl")[0]
	if err := h.pods.Delete(h.ctx, p.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitPodsCached()
	h.sync("repl")
	got := h.job("repl")
	if len(h.podsOf("repl")) != 1 || ptr.Deref(got.Status.Terminating, 0) != 1 || got.Status.Failed != 0 {
		t.Fatalf("status %+v pods %d", got.Status, len(h.podsOf("repl")))
	}
	h.finish(p, 1)
	h.sync("repl")
	h.clock.Step(10 * time.Second)
	h.sync("repl")
	got = h.job("repl")
	if got.Status.Failed != 1 || len(activeOf(h.podsOf("repl"))) != 1 {
		t.Fatalf("status %+v pods %d", got.Status, len(h.podsOf("repl")))
	}
}

// backoffLimitPerIndex: a failed index is retried after its own back-off
// by a pod carrying the failure count; past the limit the index fails,
// and with every index succeeded or failed the Job fails (FailedIndexes).
func TestBackoffLimitPerIndex(t *testing.T) {
	h := newHarness(t, true)
	j := newJob("per", i32(2), i32(2))
	j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	j.Spec.BackoffLimitPerIndex = i32(1)
	h.create(j)
	if got := h.job("per"); *got.Spec.BackoffLimit != 2147483647 {
		t.Fatalf("backoffLimit defaulted to %d", *got.Spec.BackoffLimit)
	}
	h.sync("per")
	byIndex := func() map[int]*corev1.Pod {
		m := map[int]*corev1.Pod{}
		for _, p := range activeOf(h.podsOf("per")) {
			m[completionIndex(p)] = p
		}
		return m
	}
	first := byIndex()
	if len(first) != 2 || first[0].Annotations[batchv1.JobIndexFailureCountAnnotation] != "0" {
		t.Fatalf("pods %v", first)
	}
	h.finish(first[0], 1)
	h.sync("per")
	// The failed pod keeps its finalizer until its replacement exists.
	failedPod, _ := h.pods.Get(h.ctx, first[0].Name, metav1.GetOptions{})
	if !slices.Contains(failedPod.Finalizers, batchv1.JobTrackingFinalizer) || len(byIndex()) != 1 {
		t.Fatalf("finalizers %v active %d", failedPod.Finalizers, len(byIndex()))
	}
	h.clock.Step(10 * time.Second)
	h.sync("per")
	h.sync("per")
	second := byIndex()
	if second[0] == nil || second[0].Annotations[batchv1.JobIndexFailureCountAnnotation] != "1" {
		t.Fatalf("replacement of index 0: %v", second[0])
	}
	got := h.job("per")
	if got.Status.Failed != 1 || got.Status.FailedIndexes == nil || *got.Status.FailedIndexes != "" {
		t.Fatalf("status %+v", got.Status)
	}
	h.finish(second[0], 1)
	h.sync("per")
	got = h.job("per")
	if got.Status.FailedIndexes == nil || *got.Status.FailedIndexes != "0" || len(got.Status.Conditions) != 0 {
		t.Fatalf("status %+v %v", got.Status, conditionTypes(got))
	}
	h.finish(second[1], 0)
	h.sync("per")
	h.sync("per")
	got = h.job("per")
	if f := condition(got, batchv1.JobFailed); f == nil || f.Reason != batchv1.JobReasonFailedIndexes || got.Status.CompletedIndexes != "1" {
		t.Fatalf("status %+v %v", got.Status, conditionTypes(got))
	}
}

// An orphan pod the Job's selector matches is adopted: controller
// reference and tracking finalizer, counted as active (no pod created).
func TestAdoptsOrphanPod(t *testing.T) {
	h := newHarness(t, true)
	j := h.create(newJob("adopt", i32(1), i32(1)))
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "stray", Namespace: "default", Labels: map[string]string{
		batchv1.ControllerUidLabel: string(j.UID), batchv1.JobNameLabel: "adopt"}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	if _, err := h.pods.Create(h.ctx, orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitPodsCached()
	h.sync("adopt")
	pods := h.podsOf("adopt")
	if len(pods) != 1 || pods[0].Name != "stray" {
		t.Fatalf("pods %d", len(pods))
	}
	ref := metav1.GetControllerOf(pods[0])
	if ref == nil || ref.UID != j.UID || !slices.Contains(pods[0].Finalizers, batchv1.JobTrackingFinalizer) {
		t.Fatalf("adopted pod ref %+v finalizers %v", ref, pods[0].Finalizers)
	}
	if got := h.job("adopt"); got.Status.Active != 1 {
		t.Fatalf("active %d", got.Status.Active)
	}
}

func TestPastBackoffLimitOnFailure(t *testing.T) {
	pod := func(phase corev1.PodPhase, restarts ...int32) *corev1.Pod {
		p := &corev1.Pod{Status: corev1.PodStatus{Phase: phase}}
		for _, r := range restarts {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{RestartCount: r})
		}
		return p
	}
	for _, tc := range []struct {
		name    string
		policy  corev1.RestartPolicy
		limit   int32
		pods    []*corev1.Pod
		exceeds bool
	}{
		{"restarts reach the limit", corev1.RestartPolicyOnFailure, 3, []*corev1.Pod{pod(corev1.PodRunning, 1, 1), pod(corev1.PodPending, 1)}, true},
		{"below the limit", corev1.RestartPolicyOnFailure, 3, []*corev1.Pod{pod(corev1.PodRunning, 2)}, false},
		{"finished pods do not count", corev1.RestartPolicyOnFailure, 1, []*corev1.Pod{pod(corev1.PodFailed, 5)}, false},
		{"limit 0: any restart", corev1.RestartPolicyOnFailure, 0, []*corev1.Pod{pod(corev1.PodRunning, 1)}, true},
		{"restartPolicy Never", corev1.RestartPolicyNever, 1, []*corev1.Pod{pod(corev1.PodRunning, 5)}, false},
	} {
		j := newJob("j", i32(1), i32(1))
		j.Spec.BackoffLimit = i32(tc.limit)
		j.Spec.Template.Spec.RestartPolicy = tc.policy
		if got := pastBackoffLimitOnFailure(j, tc.pods); got != tc.exceeds {
			t.Errorf("%s: %v", tc.name, got)
		}
	}
}

// The running controller (informer handlers, queue, workers) on the real
// clock: pods appear, their success completes the Job.
func TestRunCompletesJob(t *testing.T) {
	h := newHarness(t, false)
	ctrl, err := New(Config{Client: h.c, Informers: h.f, Recorder: h.ev, SyncBatchPeriod: 10 * time.Millisecond, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	h.ctrl = ctrl
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(h.ctx) }()
	if _, err := h.jobs.Create(h.ctx, newJob("run", i32(2), i32(2)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "two pods", func() (bool, error) { return len(h.podsOf("run")) == 2, nil })
	for _, p := range h.podsOf("run") {
		h.finish(p, 0)
	}
	waitFor(t, "Complete", func() (bool, error) {
		j := h.job("run")
		return condition(j, batchv1.JobComplete) != nil && j.Status.Succeeded == 2, nil
	})
	waitFor(t, "finalizers removed", func() (bool, error) {
		for _, p := range h.podsOf("run") {
			if hasFinalizer(p) {
				return false, nil
			}
		}
		return true, nil
	})
	h.cancelRun()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func counterValue(t *testing.T, c prometheus.Collector) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 1)
	c.Collect(ch)
	var m dto.Metric
	if err := (<-ch).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
