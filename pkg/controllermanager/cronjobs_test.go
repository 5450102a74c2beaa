package controllermanager_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/controllermanager"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// The batch housekeeping controllers in the manager: the pod garbage
// collector keeps --terminated-pod-gc-threshold terminated pods, the
// TTL-after-finished controller deletes a finished Job with TTL 0, and
// their metrics (and the CronJob controller's) are on the manager's
// registry under upstream's names.
func TestManagerBatchHousekeeping(t *testing.T) {
	env := testenv.StartT(t, testenv.Config{RBAC: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := env.EnsureServiceAccount(ctx, "default", "default"); err != nil {
		t.Fatal(err)
	}
	c := mustClient(t, env)
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	for _, n := range []string{"p1", "p2", "p3"} {
		p, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: n},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Status.Phase = corev1.PodSucceeded
		if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	jobs := client.For[*batchv1.Job, *batchv1.JobList](c).Namespace("default")
	ttl := int32(0)
	j, err := jobs.Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "done"}, Spec: batchv1.JobSpec{TTLSecondsAfterFinished: &ttl,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	j.Status = batchv1.JobStatus{StartTime: &now, CompletionTime: &now, Succeeded: 1, Conditions: []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now}}}
	if _, err := jobs.UpdateStatus(ctx, j, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	reg := prometheus.NewRegistry()
	m, err := controllermanager.New(controllermanager.Config{ClientConfig: managerClientConfig(t, env), UseServiceAccountCredentials: true,
		Controllers:              []string{"cronjob", "ttl-after-finished", "podgc"},
		TerminatedPodGCThreshold: 1, Registry: reg, Gatherer: reg})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		l, err := pods.List(ctx, metav1.ListOptions{})
		j, jerr := jobs.Get(ctx, "done", metav1.GetOptions{})
		// No garbage collector runs: the foreground deletion stays pending.
		if err == nil && len(l.Items) == 1 && l.Items[0].Name == "p3" && jerr == nil && j.DeletionTimestamp != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pods %d (err %v), job %v (err %v)", len(l.Items), err, j, jerr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range families {
		got[f.GetName()] = true
	}
	for _, name := range []string{"cronjob_controller_job_creation_skew_duration_seconds",
		"ttl_after_finished_controller_job_deletion_duration_seconds", "pod_gc_collector_force_delete_pods_total"} {
		if !got[name] {
			t.Errorf("no %s on the manager's registry", name)
		}
	}
}
