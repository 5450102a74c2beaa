package kubelet

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// The status manager remembers a written status only until the pod
// source delivers the write's result; afterwards that copy serves (no
// write for the same status, lastWritten is the copy's status), and a new
// status is written on it.
func TestStatusManagerForgetsDeliveredWrites(t *testing.T) {
	env := testenv.StartT(t)
	ctx := context.Background()
	if err := env.EnsureServiceAccount(ctx, "default", "default"); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1,
		ContentType: client.ContentTypeProtobuf})
	if err != nil {
		t.Fatal(err)
	}
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	m := &statusManager{pods: client.For[*corev1.Pod, *corev1.PodList](c), last: map[types.UID]writtenStatus{}}
	p, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a"},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
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
