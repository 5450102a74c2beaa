package cronjob

import (
	"context"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/controllerref"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// t0 is when the fixtures' CronJobs are created (server and controller
// share its fake clock).
var t0 = at("2026-01-05T10:00:30Z")

type fixture struct {
	t    *testing.T
	ctx  context.Context
	clk  *clock.Fake
	c    *client.Client
	f    *informers.SharedInformerFactory
	ctrl *Controller
	rec  *record.FakeRecorder
	cjs  *client.Typed[*batchv1.CronJob, *batchv1.CronJobList]
	jobs *client.Typed[*batchv1.Job, *batchv1.JobList]
}

func newClient(t *testing.T, env *testenv.Environment) *client.Client {
	t.Helper()
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newFixture starts an API server on a fake clock at t0 and a controller
// whose informers are filled by hand (never started).
func newFixture(t *testing.T) *fixture {
	clk := clock.NewFake(t0)
	env := testenv.StartT(t, testenv.Config{Clock: clk})
	c := newClient(t, env)
	f := informers.NewSharedInformerFactory(c, 0)
	rec := record.NewFakeRecorder(100)
	ctrl, err := New(Config{Client: c, Informers: f, Recorder: rec, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, ctx: context.Background(), clk: clk, c: c, f: f, ctrl: ctrl, rec: rec,
		cjs:  client.For[*batchv1.CronJob, *batchv1.CronJobList](c),
		jobs: client.For[*batchv1.Job, *batchv1.JobList](c)}
}

func template() batchv1.JobTemplateSpec {
	return batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
}

// cronJob creates a CronJob "cj" on the server (at t0) and caches it.
func (f *fixture) cronJob(mut func(*batchv1.CronJob)) *batchv1.CronJob {
	f.t.Helper()
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cj"},
		Spec: batchv1.CronJobSpec{Schedule: "*/1 * * * *", JobTemplate: template()}}
	if mut != nil {
		mut(cj)
	}
	cj, err := f.cjs.Namespace("default").Create(f.ctx, cj, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	f.cache(cj)
	return cj
}

// status writes the CronJob's status and caches the result.
func (f *fixture) status(cj *batchv1.CronJob, mut func(*batchv1.CronJobStatus)) *batchv1.CronJob {
	f.t.Helper()
	cj = cj.DeepCopy()
	mut(&cj.Status)
	cj, err := f.cjs.Namespace("default").UpdateStatus(f.ctx, cj, metav1.UpdateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	f.cache(cj)
	return cj
}

func (f *fixture) cache(obj client.Object) {
	f.t.Helper()
	var err error
	switch o := obj.(type) {
	case *batchv1.CronJob:
		err = f.f.CronJobs().Informer().GetIndexer().Update(o)
	case *batchv1.Job:
		err = f.f.Jobs().Informer().GetIndexer().Update(o)
	}
	if err != nil {
		f.t.Fatal(err)
	}
}

// job creates a Job the CronJob controls (owner nil: none), in the
// given state ("", "Complete", "Failed"), started at start, and caches it.
func (f *fixture) job(owner *batchv1.CronJob, name, state string, start time.Time) *batchv1.Job {
	f.t.Helper()
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: template().Spec}
	if owner != nil {
		j.OwnerReferences = []metav1.OwnerReference{*controllerref.NewControllerRef(owner, controllerKind)}
	}
	j, err := f.jobs.Namespace("default").Create(f.ctx, j, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	j = finish(j, state, start)
	if j, err = f.jobs.Namespace("default").UpdateStatus(f.ctx, j, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	f.cache(j)
	return j
}

// finish gives a Job the status the Job controller would: started at
// start and, for Complete or Failed, finished a minute later.
func finish(j *batchv1.Job, state string, start time.Time) *batchv1.Job {
	j = j.DeepCopy()
	j.Status.StartTime = &metav1.Time{Time: start}
	end := metav1.Time{Time: start.Add(time.Minute)}
	cond := func(t batchv1.JobConditionType) batchv1.JobCondition {
		return batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, LastProbeTime: end, LastTransitionTime: end}
	}
	switch state {
	case "Complete":
		j.Status.Succeeded = 1
		j.Status.CompletionTime = &end
		j.Status.Conditions = append(j.Status.Conditions, cond(batchv1.JobSuccessCriteriaMet), cond(batchv1.JobComplete))
	case "Failed":
		j.Status.Failed = 1
		j.Status.Conditions = append(j.Status.Conditions, cond(batchv1.JobFailureTarget), cond(batchv1.JobFailed))
	}
	return j
}

func ref(j *batchv1.Job) corev1.ObjectReference { return jobRef(j) }

func (f *fixture) jobNames() []string {
	f.t.Helper()
	l, err := f.jobs.Namespace("default").List(f.ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, j := range l.Items {
		out = append(out, j.Name)
	}
	sort.Strings(out)
	return out
}

func (f *fixture) get() *batchv1.CronJob {
	f.t.Helper()
	cj, err := f.cjs.Namespace("default").Get(f.ctx, "cj", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return cj
}

func activeNames(cj *batchv1.CronJob) []string {
	var out []string
	for _, r := range cj.Status.Active {
		out = append(out, r.Name)
	}
	sort.Strings(out)
	return out
}

// reasons are the events' "<type> <reason>" prefixes.
func reasons(events []string) []string {
	var out []string
	for _, e := range events {
		p := strings.SplitN(e, " ", 3)
		out = append(out, p[0]+" "+p[1])
	}
	return out
}

// Schedule times of "*/1 * * * *" after t0 (10:00:30), and their Job names.
var (
	m1, m2, m3          = at("2026-01-05T10:01:00Z"), at("2026-01-05T10:02:00Z"), at("2026-01-05T10:03:00Z")
	name1, name2, name3 = "cj-29460121", "cj-29460122", "cj-29460123"
)

// TestSync runs one sync on a given state at a given time and checks the
// Jobs on the server, the CronJob's status, the events and the requeue.
func TestSync(t *testing.T) {
	tests := []struct {
		name string
		// setup creates the CronJob and its Jobs; returns the time to sync at.
		setup        func(f *fixture) time.Time
		jobs         []string // on the server afterwards
		active       []string
		lastSchedule time.Time
		lastSuccess  time.Time
		events       []string // "<type> <reason>"
		requeue      time.Duration
		noRequeue    bool
	}{
		{
			name:    "nothing due yet",
			setup:   func(f *fixture) time.Time { f.cronJob(nil); return t0.Add(10 * time.Second) },
			requeue: 20*time.Second + nextScheduleDelta,
		},
		{
			name:         "due: a Job is started",
			setup:        func(f *fixture) time.Time { f.cronJob(nil); return m1.Add(2 * time.Second) },
			jobs:         []string{name1},
			active:       []string{name1},
			lastSchedule: m1,
			events:       []string{"Normal SuccessfulCreate"},
			requeue:      58*time.Second + nextScheduleDelta,
		},
		{
			name: "several missed: only the most recent is started",
			setup: func(f *fixture) time.Time {
				f.cronJob(nil)
				return m3.Add(time.Second)
			},
			jobs: []string{name3}, active: []string{name3}, lastSchedule: m3,
			events: []string{"Normal SuccessfulCreate"}, requeue: 59*time.Second + nextScheduleDelta,
		},
		{
			name: "already scheduled at this time",
			setup: func(f *fixture) time.Time {
				cj := f.cronJob(nil)
				f.status(cj, func(s *batchv1.CronJobStatus) { s.LastScheduleTime = &metav1.Time{Time: m1} })
				return m1.Add(30 * time.Second)
			},
			lastSchedule: m1, requeue: 30*time.Second + nextScheduleDelta,
		},
		{
			name: "suspended",
			setup: func(f *fixture) time.Time {
				f.cronJob(func(cj *batchv1.CronJob) { cj.Spec.Suspend = ptr(true) })
				return m1.Add(time.Second)
			},
			noRequeue: true,
		},
		{
			name: "unknown time zone",
			setup: func(f *fixture) time.Time {
				cj := f.cronJob(nil)
				cj.Spec.TimeZone = ptr("Mars/Olympus") // only a stale client could store it
				f.cache(cj)
				return m1.Add(time.Second)
			},
			events: []string{"Warning UnknownTimeZone"}, noRequeue: true,
		},
		{
			// The deadline moves the earliest time considered up to
			// now-deadline, so the missed time is not even seen (upstream's
			// MissSchedule cannot fire either).
			name: "starting deadline passed",
			setup: func(f *fixture) time.Time {
				f.cronJob(func(cj *batchv1.CronJob) { cj.Spec.StartingDeadlineSeconds = ptr(int64(10)) })
				return m1.Add(15 * time.Second)
			},
			requeue: 45*time.Second + nextScheduleDelta,
		},
		{
			name: "Forbid: an active Job holds the next one back",
			setup: func(f *fixture) time.Time {
				cj := f.cronJob(func(cj *batchv1.CronJob) { cj.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent })
				j := f.job(cj, name1, "", m1)
				f.status(cj, func(s *batchv1.CronJobStatus) {
					s.Active = []corev1.ObjectReference{ref(j)}
					s.LastScheduleTime = &metav1.Time{Time: m1}
				})
				return m2.Add(time.Second)
			},
			jobs: []string{name1}, active: []string{name1}, lastSchedule: m1,
			events: []string{"Normal JobAlreadyActive"}, requeue: 59*time.Second + nextScheduleDelta,
		},
		{
			name: "Allow: runs side by side",
			setup: func(f *fixture) time.Time {
				cj := f.cronJob(nil)
				j := f.job(cj, name1, "", m1)
				f.status(cj, func(s *batchv1.CronJobStatus) {
					s.Active = []corev1.ObjectReference{ref(j)}
					s.LastScheduleTime = &metav1.Time{Time: m1}
				})
				return m2.Add(time.Second)
			},
			jobs: []string{name1, name2}, active: []string{name1, name2}, lastSchedule: m2,
			events: []string{"Normal SuccessfulCreate"}, requeue: 59*time.Second + nextScheduleDelta,
		},
		{
			name: "Replace: the active Job is deleted first",
			setup: func(f *fixture) time.Time {
				cj := f.cronJob(func(cj *batchv1.CronJob) { cj.Spec.ConcurrencyPolicy = batchv1.ReplaceConcurrent })
				j := f.job(cj, name1, "", m1)
				f.status(cj, func(s *batchv1.CronJobStatus) {
					s.Active = []corev1.ObjectReference{ref(j)}
					s.LastScheduleTime = &metav1.Time{Time: m1}
				})
				return m2.Add(time.Second)
			},
			jobs: []string{name2}, active: []string{name2}, lastSchedule: m2,
			events: []string{"Normal SuccessfulDelete", "Normal SuccessfulCreate"}, requeue: 59*time.Second + nextScheduleDelta,
		},
		{
			name: "an active Job finished",
			setup: func(f *fixture) time.Time {
				cj := f.cronJob(nil)
				j := f.job(cj, name1, "Complete", m1)
				f.status(cj, func(s *batchv1.CronJobStatus) {
					s.Active = []corev1.ObjectReference{ref(j)}
					s.LastScheduleTime = &metav1.Time{Time: m1}
				})
				return m1.Add(50 * time.Second)
			},
			// lastSuccessfulTime follows on the next sync, once the Job
			// is no longer active (as upstream).
			jobs: []string{name1}, lastSchedule: m1,
			events: []string{"Normal SawCompletedJob"}, requeue: 10*time.Second + nextScheduleDelta,
		},
		{
			name: "the latest completion is the last success",
			setup: func(f *fixture) time.Time {
				cj := f.cronJob(nil)
				f.job(cj, name1, "Complete", m1)
				f.job(cj, name2, "Complete", m2)
				f.job(cj, "cj-other", "Failed", m2)
				f.status(cj, func(s *batchv1.CronJobStatus) {
					s.LastScheduleTime = &metav1.Time{Time: m2}
					s.LastSuccessfulTime = &metav1.Time{Time: m1.Add(time.Minute)}
				})
				return m2.Add(30 * time.Second)
			},
			jobs: []string{name1, name2, "cj-other"}, lastSchedule: m2, lastSuccess: m2.Add(time.Minute),
			requeue: 30*time.Second + nextScheduleDelta,
		},
		{
			name: "an active Job went missing",
			setup: func(f *fixture) time.Time {
				cj := f.cronJob(nil)
				f.status(cj, func(s *batchv1.CronJobStatus) {
					s.Active = []corev1.ObjectReference{{Kind: "Job", APIVersion: "batch/v1", Namespace: "default", Name: name1, UID: "gone"}}
					s.LastScheduleTime = &metav1.Time{Time: m1}
				})
				return m1.Add(30 * time.Second)
			},
			lastSchedule: m1, events: []string{"Normal MissingJob"}, requeue: 30*time.Second + nextScheduleDelta,
		},
		{
			name: "a Job the CronJob did not record",
			setup: func(f *fixture) time.Time {
				cj := f.cronJob(nil)
				f.job(cj, "manual", "", m1)
				f.status(cj, func(s *batchv1.CronJobStatus) { s.LastScheduleTime = &metav1.Time{Time: m1} })
				return m1.Add(30 * time.Second)
			},
			jobs: []string{"manual"}, lastSchedule: m1, events: []string{"Warning UnexpectedJob"}, requeue: 30*time.Second + nextScheduleDelta,
		},
		{
			name: "the Job exists already (a status write was lost)",
			setup: func(f *fixture) time.Time {
				cj := f.cronJob(nil)
				j := f.job(cj, name1, "", m1)
				// The informer has not seen it yet.
				_ = f.f.Jobs().Informer().GetIndexer().Delete(j)
				return m1.Add(time.Second)
			},
			jobs: []string{name1}, active: []string{name1}, lastSchedule: m1, requeue: 59*time.Second + nextScheduleDelta,
		},
		{
			name: "someone else's Job of that name",
			setup: func(f *fixture) time.Time {
				f.cronJob(nil)
				f.job(nil, name1, "", m1)
				return m1.Add(time.Second)
			},
			jobs: []string{name1}, noRequeue: true,
		},
		{
			name: "history limits: oldest finished Jobs deleted",
			setup: func(f *fixture) time.Time {
				cj := f.cronJob(func(cj *batchv1.CronJob) {
					cj.Spec.SuccessfulJobsHistoryLimit = ptr(int32(1))
					cj.Spec.FailedJobsHistoryLimit = ptr(int32(1))
				})
				f.job(cj, "s1", "Complete", m1)
				f.job(cj, "s3", "Complete", m3)
				f.job(cj, "s2", "Complete", m2)
				f.job(cj, "f1", "Failed", m1)
				f.job(cj, "f2", "Failed", m2)
				f.job(cj, "running", "", m1)
				f.job(nil, "unowned", "Complete", m1)
				f.status(cj, func(s *batchv1.CronJobStatus) {
					s.LastScheduleTime = &metav1.Time{Time: m3}
					s.Active = []corev1.ObjectReference{ref(f.getJob("running"))}
				})
				return m3.Add(30 * time.Second)
			},
			jobs: []string{"f2", "running", "s3", "unowned"}, active: []string{"running"}, lastSchedule: m3, lastSuccess: m3.Add(time.Minute),
			events:  []string{"Normal SuccessfulDelete", "Normal SuccessfulDelete", "Normal SuccessfulDelete"},
			requeue: 30*time.Second + nextScheduleDelta,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			now := tt.setup(f)
			f.clk.SetTime(now)
			drain(f.rec)
			after, err := f.ctrl.Sync(f.ctx, "default/cj")
			if err != nil {
				t.Fatalf("sync: %v", err)
			}
			switch {
			case tt.noRequeue && after != nil:
				t.Errorf("requeue after %v, want none", *after)
			case !tt.noRequeue && (after == nil || *after != tt.requeue):
				t.Errorf("requeue after %v, want %v", after, tt.requeue)
			}
			if got := f.jobNames(); !slices.Equal(got, tt.jobs) {
				t.Errorf("jobs %v, want %v", got, tt.jobs)
			}
			cj := f.get()
			if got := activeNames(cj); !slices.Equal(got, tt.active) {
				t.Errorf("active %v, want %v", got, tt.active)
			}
			if got := cj.Status.LastScheduleTime; (got == nil) != tt.lastSchedule.IsZero() || got != nil && !got.Time.Equal(tt.lastSchedule) {
				t.Errorf("lastScheduleTime %v, want %v", got, tt.lastSchedule)
			}
			if got := cj.Status.LastSuccessfulTime; (got == nil) != tt.lastSuccess.IsZero() || got != nil && !got.Time.Equal(tt.lastSuccess) {
				t.Errorf("lastSuccessfulTime %v, want %v", got, tt.lastSuccess)
			}
			if got := reasons(drain(f.rec)); !slices.Equal(got, tt.events) {
				t.Errorf("events %v, want %v", got, tt.events)
			}
		})
	}
}

func (f *fixture) getJob(name string) *batchv1.Job {
	f.t.Helper()
	j, err := f.jobs.Namespace("default").Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return j
}

// TestCreatedJob: the Job a CronJob starts is upstream's.
func TestCreatedJob(t *testing.T) {
	f := newFixture(t)
	cj := f.cronJob(func(cj *batchv1.CronJob) {
		cj.Spec.TimeZone = ptr("Europe/Paris")
		cj.Spec.JobTemplate.Labels = map[string]string{"team": "a"}
	})
	f.clk.SetTime(m1.Add(time.Second))
	if _, err := f.ctrl.Sync(f.ctx, "default/cj"); err != nil {
		t.Fatal(err)
	}
	j := f.getJob(name1)
	if got := j.Annotations["batch.kubernetes.io/cronjob-scheduled-timestamp"]; got != "2026-01-05T11:01:00+01:00" {
		t.Errorf("scheduled timestamp %q", got)
	}
	if !controllerref.IsControlledBy(j, cj) || j.Labels["team"] != "a" {
		t.Errorf("job metadata %+v", j.ObjectMeta)
	}
	r := f.get().Status.Active
	if len(r) != 1 || r[0].Kind != "Job" || r[0].APIVersion != "batch/v1" || r[0].UID != j.UID || r[0].Namespace != "default" {
		t.Errorf("active %+v", r)
	}
	if ev := drain(f.rec); len(ev) != 1 || ev[0] != "Normal SuccessfulCreate Created job "+name1 {
		t.Errorf("events %q", ev)
	}
	// The Job was created a second after its schedule time.
	var m dto.Metric
	if err := f.ctrl.skew.(prometheus.Metric).Write(&m); err != nil {
		t.Fatal(err)
	}
	if h := m.GetHistogram(); h.GetSampleCount() != 1 || h.GetSampleSum() != 1 {
		t.Errorf("job_creation_skew_duration_seconds count %d sum %v, want 1 and 1", h.GetSampleCount(), h.GetSampleSum())
	}
	// A sync from a stale cache at the same time makes no second Job: it
	// finds the Job and fails to write the stale status (retried later).
	if _, err := f.ctrl.Sync(f.ctx, "default/cj"); !apierrors.IsConflict(err) {
		t.Fatalf("stale sync: %v", err)
	}
	if got := f.jobNames(); !slices.Equal(got, []string{name1}) {
		t.Errorf("jobs %v", got)
	}
	if _, err := f.ctrl.Sync(f.ctx, "default/absent"); err != nil {
		t.Errorf("sync of a CronJob gone: %v", err)
	}
	if _, err := f.jobs.Namespace("default").Get(f.ctx, "cj-0", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("%v", err)
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestController runs the controller on a fake clock: a Job starts only
// when the clock reaches a schedule time (the requeue is the queue's
// AddAfter on that clock), finished Jobs leave status.active, and the
// history limit deletes the oldest successful Job.
func TestController(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	// A fresh controller whose informers run.
	inf := informers.NewSharedInformerFactory(f.c, 0)
	ctrl, err := New(Config{Client: f.c, Informers: inf, Recorder: f.rec, Clock: f.clk, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		inf.Shutdown()
	}()
	cj := f.cronJob(func(cj *batchv1.CronJob) { cj.Spec.SuccessfulJobsHistoryLimit = ptr(int32(1)) })
	hasJobs := func(want ...string) func() bool {
		return func() bool { return slices.Equal(f.jobNames(), want) }
	}
	// Wait until the first sync asked to be woken at 10:01:00.1.
	eventually(t, "the requeue timer", func() bool { return f.clk.Waiters() > 0 && ctrl.queue.Len() == 0 })
	f.clk.SetTime(m1.Add(time.Second))
	eventually(t, "the first Job", hasJobs(name1))
	eventually(t, "the first Job active", func() bool { return slices.Equal(activeNames(f.get()), []string{name1}) })
	f.clk.SetTime(m2.Add(time.Second))
	eventually(t, "the second Job", hasJobs(name1, name2))
	eventually(t, "both active", func() bool { return slices.Equal(activeNames(f.get()), []string{name1, name2}) })
	for _, n := range []string{name1, name2} {
		j := f.getJob(n)
		if _, err := f.jobs.Namespace("default").UpdateStatus(f.ctx, finish(j, "Complete", j.CreationTimestamp.Time), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the oldest successful Job deleted", hasJobs(name2))
	last := f.getJob(name2).Status.CompletionTime.Time
	eventually(t, "nothing active, last success recorded", func() bool {
		cj := f.get()
		return len(cj.Status.Active) == 0 && cj.Status.LastSuccessfulTime != nil && cj.Status.LastSuccessfulTime.Time.Equal(last)
	})
	if got := f.get().Status.LastScheduleTime; got == nil || !got.Time.Equal(m2) {
		t.Errorf("lastScheduleTime %v", got)
	}
	var seen []string
	for _, e := range reasons(drain(f.rec)) {
		if !slices.Contains(seen, e) {
			seen = append(seen, e)
		}
	}
	for _, want := range []string{"Normal SuccessfulCreate", "Normal SawCompletedJob", "Normal SuccessfulDelete"} {
		if !slices.Contains(seen, want) {
			t.Errorf("no %s event in %v", want, seen)
		}
	}
	_ = cj
}
