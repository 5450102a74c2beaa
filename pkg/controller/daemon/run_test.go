package daemon

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/clock"
)

// The running controller (informers, workqueue, two workers, real clock):
// one pod per node, then a rolling update finished as a stand-in kubelet
// marks pods Ready.
func TestRunRollsOut(t *testing.T) {
	h := newHarness(t, false)
	f := informers.NewSharedInformerFactory(h.c, 0)
	ctrl, err := New(Config{Client: h.c, Informers: f, Clock: clock.Real{}, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(h.ctx)
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	for i := range 3 {
		h.node(fmt.Sprintf("n%d", i), nil)
	}
	h.create(dsObj("agent"))
	kubelet := func() {
		l, err := h.pods.List(h.ctx, metav1.ListOptions{})
		if err != nil {
			return
		}
		for _, p := range l.Items {
			if p.Status.Phase != corev1.PodRunning && p.DeletionTimestamp == nil {
				p.Status.Phase = corev1.PodRunning
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
				_, _ = client.For[*corev1.Pod, *corev1.PodList](h.c).Namespace("default").UpdateStatus(h.ctx, &p, metav1.UpdateOptions{})
			}
		}
	}
	until := func(what string, cond func(st appsv1.DaemonSetStatus, gen int64) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			kubelet()
			ds := h.get("agent")
			if cond(ds.Status, ds.Generation) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s: %+v", what, ds.Status)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	until("3 available pods", func(st appsv1.DaemonSetStatus, gen int64) bool {
		return st.ObservedGeneration == gen && st.NumberAvailable == 3 && st.DesiredNumberScheduled == 3
	})
	h.update("agent", func(d *appsv1.DaemonSet) { d.Spec.Template.Spec.Containers[0].Image = "agent:2" })
	until("the rollout", func(st appsv1.DaemonSetStatus, gen int64) bool {
		return st.ObservedGeneration == gen && st.UpdatedNumberScheduled == 3 && st.NumberAvailable == 3
	})
	h.expectNodes("n0:1", "n1:1", "n2:1")
}
