package ttlafterfinished

import (
	"context"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

var t0 = time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

type fixture struct {
	t    *testing.T
	ctx  context.Context
	clk  *clock.Fake
	c    *client.Client
	f    *informers.SharedInformerFactory
	ctrl *Controller
	jobs *client.Typed[*batchv1.Job, *batchv1.JobList]
}

func newFixture(t *testing.T) *fixture {
	clk := clock.NewFake(t0)
	env := testenv.StartT(t, testenv.Config{Clock: clk})
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	f := informers.NewSharedInformerFactory(c, 0)
	ctrl, err := New(Config{Client: c, Informers: f, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, ctx: context.Background(), clk: clk, c: c, f: f, ctrl: ctrl,
		jobs: client.For[*batchv1.Job, *batchv1.JobList](c).Namespace("default")}
}

// job creates Job "j" with the TTL; state "" (running), "Complete" or
// "Failed", finished at finishedAt.
func (f *fixture) job(ttl *int32, state string, finishedAt time.Time) *batchv1.Job {
	f.t.Helper()
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "j"}, Spec: batchv1.JobSpec{
		TTLSecondsAfterFinished: ttl,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	j, err := f.jobs.Create(f.ctx, j, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	if state != "" {
		j = finish(j, state, finishedAt)
		if j, err = f.jobs.UpdateStatus(f.ctx, j, metav1.UpdateOptions{}); err != nil {
			f.t.Fatal(err)
		}
	}
	return j
}

func finish(j *batchv1.Job, state string, at time.Time) *batchv1.Job {
	j = j.DeepCopy()
	start := metav1.Time{Time: at.Add(-time.Minute)}
	end := metav1.Time{Time: at}
	j.Status.StartTime = &start
	cond := func(t batchv1.JobConditionType) batchv1.JobCondition {
		return batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, LastProbeTime: end, LastTransitionTime: end}
	}
	if state == "Complete" {
		j.Status.Succeeded = 1
		j.Status.CompletionTime = &end
		j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet), cond(batchv1.JobComplete)}
	} else {
		j.Status.Failed = 1
		j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget), cond(batchv1.JobFailed)}
	}
	return j
}

func (f *fixture) cache(j *batchv1.Job) {
	f.t.Helper()
	if err := f.f.Jobs().Informer().GetIndexer().Update(j); err != nil {
		f.t.Fatal(err)
	}
}

// deleting says whether Job j is gone or being deleted (no garbage
// collector runs here: a foreground deletion waits with its finalizer).
func (f *fixture) deleting() (bool, []string) {
	f.t.Helper()
	j, err := f.jobs.Get(f.ctx, "j", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return j.DeletionTimestamp != nil, j.Finalizers
}

// TestSync: one sync at a given time on a given cache and server state.
func TestSync(t *testing.T) {
	tests := []struct {
		name string
		// setup returns the Job as the cache sees it (nil: not cached).
		setup       func(f *fixture) *batchv1.Job
		now         time.Time
		wantDeleted bool
		requeue     time.Duration // 0: not requeued
		wantErr     bool
	}{
		{name: "complete, TTL expired", setup: func(f *fixture) *batchv1.Job { return f.job(ptr(int32(100)), "Complete", t0) },
			now: t0.Add(100 * time.Second), wantDeleted: true},
		{name: "failed, TTL expired", setup: func(f *fixture) *batchv1.Job { return f.job(ptr(int32(0)), "Failed", t0) },
			now: t0, wantDeleted: true},
		{name: "TTL not expired: requeued for the time left", setup: func(f *fixture) *batchv1.Job { return f.job(ptr(int32(100)), "Complete", t0) },
			now: t0.Add(60 * time.Second), requeue: 40 * time.Second},
		{name: "finished in the future (clock skew)", setup: func(f *fixture) *batchv1.Job { return f.job(ptr(int32(10)), "Complete", t0.Add(time.Hour)) },
			now: t0, requeue: time.Hour + 10*time.Second},
		{name: "running", setup: func(f *fixture) *batchv1.Job { return f.job(ptr(int32(0)), "", t0) }, now: t0.Add(time.Hour)},
		{name: "no TTL", setup: func(f *fixture) *batchv1.Job { return f.job(nil, "Complete", t0) }, now: t0.Add(time.Hour)},
		{name: "not in the cache", setup: func(f *fixture) *batchv1.Job { f.job(ptr(int32(0)), "Complete", t0); return nil }, now: t0.Add(time.Hour)},
		{name: "already being deleted", setup: func(f *fixture) *batchv1.Job {
			j := f.job(ptr(int32(0)), "Complete", t0)
			j.DeletionTimestamp = &metav1.Time{Time: t0}
			return j
		}, now: t0.Add(time.Hour)},
		{name: "stale cache: the TTL was removed since", setup: func(f *fixture) *batchv1.Job {
			j := f.job(ptr(int32(0)), "Complete", t0)
			fresh := j.DeepCopy()
			fresh.Spec.TTLSecondsAfterFinished = nil
			if _, err := f.jobs.Update(f.ctx, fresh, metav1.UpdateOptions{}); err != nil {
				f.t.Fatal(err)
			}
			return j
		}, now: t0.Add(time.Hour)},
		{name: "stale cache: the TTL was extended since", setup: func(f *fixture) *batchv1.Job {
			j := f.job(ptr(int32(0)), "Complete", t0)
			fresh := j.DeepCopy()
			fresh.Spec.TTLSecondsAfterFinished = ptr(int32(7200))
			if _, err := f.jobs.Update(f.ctx, fresh, metav1.UpdateOptions{}); err != nil {
				f.t.Fatal(err)
			}
			return j
		}, now: t0.Add(time.Hour), requeue: time.Hour},
		{name: "stale cache: a new Job of that name, still running", setup: func(f *fixture) *batchv1.Job {
			j := f.job(ptr(int32(0)), "Complete", t0)
			if err := f.jobs.Delete(f.ctx, "j", metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationBackground)}); err != nil {
				f.t.Fatal(err)
			}
			f.job(ptr(int32(0)), "", t0)
			return j
		}, now: t0.Add(time.Hour)},
		{name: "finished without a transition time", setup: func(f *fixture) *batchv1.Job {
			j := f.job(ptr(int32(0)), "Complete", t0)
			j.Status.Conditions[1].LastTransitionTime = metav1.Time{}
			return j
		}, now: t0.Add(time.Hour), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if j := tt.setup(f); j != nil {
				f.cache(j)
			}
			f.clk.SetTime(tt.now)
			err := f.ctrl.Sync(f.ctx, "default/j")
			if (err != nil) != tt.wantErr {
				t.Fatalf("sync: %v", err)
			}
			deleted, finalizers := f.deleting()
			if deleted != tt.wantDeleted {
				t.Errorf("deleted %v, want %v", deleted, tt.wantDeleted)
			}
			if deleted && !slices.Contains(finalizers, metav1.FinalizerDeleteDependents) {
				t.Errorf("finalizers %v: not a foreground deletion", finalizers)
			}
			var m dto.Metric
			if err := f.ctrl.deletion.(prometheus.Metric).Write(&m); err != nil {
				t.Fatal(err)
			}
			if n := m.GetHistogram().GetSampleCount(); n != map[bool]uint64{true: 1}[tt.wantDeleted] {
				t.Errorf("%d deletions observed", n)
			}
			// A requeue waits on the queue's clock for exactly the time left.
			if n := f.ctrl.queue.Len(); n != 0 {
				t.Fatalf("%d keys queued at once", n)
			}
			if tt.requeue > 0 {
				f.clk.Step(tt.requeue - time.Millisecond)
				if f.ctrl.queue.Len() != 0 {
					t.Errorf("requeued before %v", tt.requeue)
				}
			}
			f.clk.Step(time.Millisecond)
			waitLen(t, f.ctrl, tt.requeue > 0)
		})
	}
}

// waitLen waits until the queue holds the key (want) or checks that it
// does not.
func waitLen(t *testing.T, c *Controller, want bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for want && c.queue.Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("not requeued")
		}
		time.Sleep(time.Millisecond)
	}
	if !want && c.queue.Len() != 0 {
		t.Error("requeued")
	}
}

// TestController: a running controller deletes a finished Job once the
// fake clock reaches its TTL, and leaves a Job without TTL alone.
func TestController(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	inf := informers.NewSharedInformerFactory(f.c, 0)
	ctrl, err := New(Config{Client: f.c, Informers: inf, Clock: f.clk})
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
	j := f.job(ptr(int32(30)), "", t0)
	j.Spec.TTLSecondsAfterFinished = ptr(int32(30))
	if _, err := f.jobs.UpdateStatus(f.ctx, finish(j, "Complete", t0.Add(10*time.Second)), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Finished at t0+10s: expires at t0+40s.
	deadline := time.Now().Add(30 * time.Second)
	for ctrl.queue.Len() != 0 || f.clk.Waiters() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the Job was never put off until its TTL")
		}
		time.Sleep(time.Millisecond)
	}
	if d, _ := f.deleting(); d {
		t.Fatal("deleted before its TTL")
	}
	f.clk.SetTime(t0.Add(40 * time.Second))
	for {
		if d, _ := f.deleting(); d {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("not deleted after its TTL")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
