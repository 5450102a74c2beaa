package statefulset

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/clock"
)

// The running controller (informers, workqueue, workers, real clock):
// three ordered replicas, then a rolling update, as a stand-in kubelet
// marks pods Ready.
func TestRunRollsOut(t *testing.T) {
	h := newHarness(t)
	f := informers.NewSharedInformerFactory(h.ctrl.cfg.Client, 0)
	ctrl, err := New(Config{Client: h.ctrl.cfg.Client, Informers: f, Clock: clock.Real{}, Workers: 5})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(h.ctx)
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	h.create(setObj("web", 3))
	kubelet := func() {
		l, err := h.pods.List(h.ctx, metav1.ListOptions{})
		if err != nil {
			return
		}
		for _, p := range l.Items {
			if p.Status.Phase != corev1.PodRunning && p.DeletionTimestamp == nil {
				p.Status.Phase = corev1.PodRunning
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
				_, _ = h.pods.UpdateStatus(h.ctx, &p, metav1.UpdateOptions{})
			}
		}
	}
	until := func(what string, cond func(s *appsv1.StatefulSet) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			kubelet()
			s := h.get("web")
			if cond(s) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s: %+v", what, s.Status)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	until("3 ready replicas", func(s *appsv1.StatefulSet) bool {
		return s.Status.ObservedGeneration == s.Generation && s.Status.ReadyReplicas == 3
	})
	h.update("web", func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "nginx:2" })
	until("the rollout", func(s *appsv1.StatefulSet) bool {
		st := s.Status
		return st.ObservedGeneration == s.Generation && st.UpdatedReplicas == 3 && st.ReadyReplicas == 3 && st.CurrentRevision == st.UpdateRevision
	})
	h.expectPods("web-0", "web-1", "web-2")
}
