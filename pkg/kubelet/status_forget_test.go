package kubelet

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The status manager remembers a written status only until the pod
// source delivers the write's result; afterwards that copy serves (no
// write for the same status, lastWritten is the copy's status), and a new
// status is written on it.
func TestStatusManagerForgetsDeliveredWrites(t *testing.T) {
	ctx, pods, m := newStatusManagerEnv(t)
	p := createBoundPod(ctx, t, pods, "a")
	running := corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	if err := m.set(ctx, p, running); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.cached(p.UID); !ok {
		t.Fatal("a write the source has not delivered is not remembered")
	}
	// The source still has the copy from before the write: remembered.
	if err := m.set(ctx, p, running); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.cached(p.UID); !ok {
		t.Fatal("forgotten before the source delivered the write")
	}
	delivered, err := pods.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.set(ctx, delivered, running); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.cached(p.UID); ok {
		t.Error("the delivered write is still remembered")
	}
	if st, ok := m.lastWritten(delivered); !ok || st.Phase != corev1.PodRunning {
		t.Errorf("lastWritten after delivery: %v %+v", ok, st)
	}
	// Nothing to write for the same status; a new one is written.
	if err := m.set(ctx, delivered, running); err != nil {
		t.Fatal(err)
	}
	if again, _ := pods.Get(ctx, "a", metav1.GetOptions{}); again.ResourceVersion != delivered.ResourceVersion {
		t.Errorf("the same status written again: resourceVersion %s -> %s", delivered.ResourceVersion, again.ResourceVersion)
	}
	succeeded := corev1.PodStatus{Phase: corev1.PodSucceeded, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}}
	if err := m.set(ctx, delivered, succeeded); err != nil {
		t.Fatal(err)
	}
	if got, _ := pods.Get(ctx, "a", metav1.GetOptions{}); got.Status.Phase != corev1.PodSucceeded {
		t.Errorf("new status not written: %+v", got.Status)
	}
	if _, ok := m.cached(p.UID); !ok {
		t.Error("the new write is not remembered")
	}
	m.forget(p.UID)
	if _, ok := m.lastWritten(delivered); ok {
		t.Error("lastWritten after forget")
	}
}
