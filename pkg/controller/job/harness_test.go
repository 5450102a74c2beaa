package job

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// events records events in memory.
type events struct {
	mu   sync.Mutex
	list []string
}

func (e *events) Event(_ runtime.Object, typ, reason, msg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, typ+" "+reason+" "+msg)
}
func (e *events) Eventf(o runtime.Object, typ, reason, f string, args ...any) {
	e.Event(o, typ, reason, fmt.Sprintf(f, args...))
}
func (e *events) AnnotatedEventf(o runtime.Object, _ map[string]string, typ, reason, f string, args ...any) {
	e.Eventf(o, typ, reason, f, args...)
}

func (e *events) has(prefix string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range e.list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

func (e *events) count(prefix string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, s := range e.list {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

type harness struct {
	t   *testing.T
	ctx context.Context
	// cancelRun ends ctx.
	cancelRun context.CancelFunc
	c         *client.Client
	f         *informers.SharedInformerFactory
	clock     *clock.Fake
	// start is the fake clock's start: the server's own timestamps
	// (creation, deletion) are on the real clock, so the fake one starts
	// at real now.
	start time.Time
	ev    *events
	reg   *prometheus.Registry
	ctrl  *Controller
	jobs  *client.Typed[*batchv1.Job, *batchv1.JobList]
	pods  *client.Typed[*corev1.Pod, *corev1.PodList]
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// newHarness starts an API server, the informers and a controller on a
// fake clock; workers are not run: tests call Sync.
func newHarness(t *testing.T, start bool) *harness {
	t.Helper()
	env := testenv.StartT(t)
	if err := env.EnsureServiceAccount(context.Background(), "default", "default"); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h := &harness{t: t, ctx: ctx, cancelRun: cancel, c: c, f: informers.NewSharedInformerFactory(c, 0), ev: &events{}, reg: prometheus.NewRegistry(),
		jobs: client.For[*batchv1.Job, *batchv1.JobList](c).Namespace("default"),
		pods: client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")}
	h.start = time.Now().Truncate(time.Second)
	h.clock = clock.NewFake(h.start)
	h.ctrl, err = New(Config{Client: c, Informers: h.f, Clock: h.clock, Recorder: h.ev, Registry: h.reg})
	if err != nil {
		t.Fatal(err)
	}
	if start {
		h.f.Start(ctx)
		if !cache.WaitForCacheSync(ctx, h.ctrl.podIn.HasSynced, h.ctrl.jobIn.HasSynced) {
			t.Fatal("caches did not sync")
		}
	}
	return h
}

func waitFor(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second) // generous: CI machines are shared
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (last error %v)", what, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func newJob(name string, completions, parallelism *int32) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: batchv1.JobSpec{Completions: completions, Parallelism: parallelism,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}},
	}
}

func (h *harness) create(j *batchv1.Job) *batchv1.Job {
	h.t.Helper()
	out, err := h.jobs.Create(h.ctx, j, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	h.waitCachedJob(out)
	return out
}

// waitCachedJob waits until the informer holds j's resourceVersion or a
// later one.
func (h *harness) waitCachedJob(j *batchv1.Job) {
	h.t.Helper()
	waitFor(h.t, "job "+j.Name+" in the cache", func() (bool, error) {
		got, err := h.ctrl.jobIn.Lister().Namespace(j.Namespace).Get(j.Name)
		return err == nil && rvAtLeast(got.ResourceVersion, j.ResourceVersion), err
	})
}

func rvAtLeast(a, b string) bool {
	if len(a) != len(b) {
		return len(a) > len(b)
	}
	return a >= b
}

// sync runs one Sync and waits until the caches hold what it wrote (the
// expectations say so for pods; the Job's resourceVersion for status).
func (h *harness) sync(name string) {
	h.t.Helper()
	key := "default/" + name
	if err := h.ctrl.Sync(h.ctx, key); err != nil {
		h.t.Logf("sync %s: %v", key, err)
	}
	waitFor(h.t, "expectations of "+key, func() (bool, error) { return h.ctrl.Expectations.Satisfied(key), nil })
	if j, err := h.jobs.Get(h.ctx, name, metav1.GetOptions{}); err == nil {
		h.waitCachedJob(j)
	}
	// Pods whose finalizer removal was requested: wait to see it.
	waitFor(h.t, "finalizer removals of "+key, func() (bool, error) { return h.ctrl.finalizers.expected(key).Len() == 0, nil })
	h.waitPodsCached()
}

// waitPodsCached waits until the pod cache matches the API server.
func (h *harness) waitPodsCached() {
	h.t.Helper()
	waitFor(h.t, "pod cache", func() (bool, error) {
		l, err := h.pods.List(h.ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		cached, _ := h.ctrl.podIn.Lister().Namespace("default").List(everything)
		if len(cached) != len(l.Items) {
			return false, nil
		}
		rv := map[string]string{}
		for _, p := range cached {
			rv[p.Name] = p.ResourceVersion
		}
		for _, p := range l.Items {
			if rv[p.Name] != p.ResourceVersion {
				return false, nil
			}
		}
		return true, nil
	})
}

func (h *harness) job(name string) *batchv1.Job {
	h.t.Helper()
	j, err := h.jobs.Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return j
}

// podsOf lists the Job's pods (all of them, terminating included), by
// creation order then name.
func (h *harness) podsOf(name string) []*corev1.Pod {
	h.t.Helper()
	l, err := h.pods.List(h.ctx, metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=" + name})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []*corev1.Pod
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out
}

func activeOf(pods []*corev1.Pod) []*corev1.Pod { return filterActive(pods) }

// setStatus updates a pod's status through pods/status.
func (h *harness) setStatus(p *corev1.Pod, mutate func(*corev1.PodStatus)) {
	h.t.Helper()
	for range 5 {
		cur, err := h.pods.Get(h.ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		mutate(&cur.Status)
		if _, err = h.pods.UpdateStatus(h.ctx, cur, metav1.UpdateOptions{}); err == nil {
			h.waitPodsCached()
			return
		}
		h.t.Logf("update status of %s: %v", p.Name, err)
	}
	h.t.Fatalf("could not update the status of %s", p.Name)
}

// finish marks a pod Succeeded, or Failed with exitCode, finished at the
// fake clock's now.
func (h *harness) finish(p *corev1.Pod, exitCode int32) {
	h.t.Helper()
	now := metav1.NewTime(h.clock.Now())
	h.setStatus(p, func(st *corev1.PodStatus) {
		st.Phase = corev1.PodSucceeded
		if exitCode != 0 {
			st.Phase = corev1.PodFailed
		}
		st.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", Image: "busybox", ImageID: "busybox",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exitCode, StartedAt: now, FinishedAt: now}}}}
	})
}

func (h *harness) markReady(p *corev1.Pod) {
	h.t.Helper()
	now := metav1.NewTime(h.clock.Now())
	h.setStatus(p, func(st *corev1.PodStatus) {
		st.Phase = corev1.PodRunning
		st.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	})
}

func condition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	return findCondition(j.Status.Conditions, t)
}

func conditionTypes(j *batchv1.Job) []string {
	var out []string
	for _, c := range j.Status.Conditions {
		out = append(out, string(c.Type)+"="+string(c.Status))
	}
	return out
}

var everything = labelsEverything()

func i32(v int32) *int32 { return ptr.To(v) }

func labelsEverything() labels.Selector { return labels.Everything() }
