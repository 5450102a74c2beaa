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

// newStatusManagerEnv is a status manager on a fresh API server (protobuf,
// as the kubelet's client) and the default namespace's pods.
func newStatusManagerEnv(t *testing.T) (context.Context, *client.Typed[*corev1.Pod, *corev1.PodList], *statusManager) {
	t.Helper()
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
	return ctx, pods, &statusManager{pods: client.For[*corev1.Pod, *corev1.PodList](c), last: map[types.UID]writtenStatus{}}
}

// createBoundPod creates pod name bound to node n1.
func createBoundPod(ctx context.Context, t *testing.T, pods *client.Typed[*corev1.Pod, *corev1.PodList], name string) *corev1.Pod {
	t.Helper()
	p, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The status manager's PUT: a stale base conflicts and is redone on a
// fresh copy keeping others' conditions and metadata; the informer's copy
// from before the manager's own last write builds on that write; a pod
// gone or replaced by another of the same name is left alone.
func TestStatusManagerWrites(t *testing.T) {
	ctx, pods, m := newStatusManagerEnv(t)
	create := func(name string) *corev1.Pod { return createBoundPod(ctx, t, pods, name) }
	status := func(phase corev1.PodPhase, ready corev1.ConditionStatus) corev1.PodStatus {
		return corev1.PodStatus{Phase: phase, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}}
	}
	get := func(name string) *corev1.Pod {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	stale := create("a")
	// Someone else changes the pod: a label and a condition of theirs.
	other := get("a")
	other.Labels = map[string]string{"x": "y"}
	other, err := pods.Update(ctx, other, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"}}
	if _, err = pods.UpdateStatus(ctx, other, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := m.set(ctx, stale, status(corev1.PodPending, corev1.ConditionFalse)); err != nil {
		t.Fatalf("write on a stale copy: %v", err)
	}
	got := get("a")
	if got.Status.Phase != corev1.PodPending || got.Labels["x"] != "y" || len(got.Status.Conditions) != 2 ||
		got.Status.Conditions[0].Type != corev1.DisruptionTarget || got.Status.Conditions[1].Type != corev1.PodReady {
		t.Fatalf("after the redone write: labels %v, status %+v", got.Labels, got.Status)
	}

	// The informer still has the copy from before that write: the next
	// write builds on the write's result.
	// (Statuses carry others' conditions from the copy, as the kubelet's.)
	informer := got.DeepCopy()
	if err := m.set(ctx, informer, withOthersConditions(status(corev1.PodRunning, corev1.ConditionFalse), informer.Status.Conditions)); err != nil {
		t.Fatal(err)
	}
	if err := m.set(ctx, informer, withOthersConditions(status(corev1.PodRunning, corev1.ConditionTrue), informer.Status.Conditions)); err != nil {
		t.Fatalf("second write from the same informer copy: %v", err)
	}
	got = get("a")
	if got.Status.Phase != corev1.PodRunning || got.Status.Conditions[1].Status != corev1.ConditionTrue {
		t.Fatalf("status %+v", got.Status)
	}
	// Unchanged: nothing is written.
	rv := got.ResourceVersion
	if got.Status.QOSClass != corev1.PodQOSBestEffort {
		t.Fatalf("qosClass %q: a field the kubelet's status leaves empty was lost", got.Status.QOSClass)
	}
	if err := m.set(ctx, informer, withOthersConditions(status(corev1.PodRunning, corev1.ConditionTrue), informer.Status.Conditions)); err != nil {
		t.Fatal(err)
	}
	if get("a").ResourceVersion != rv {
		t.Fatal("an unchanged status was written")
	}

	// Gone, or another pod of the name: no error, nothing written.
	old := create("b")
	zero := int64(0)
	if err := pods.Delete(ctx, "b", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if err := m.set(ctx, old, status(corev1.PodRunning, corev1.ConditionTrue)); err != nil {
		t.Fatalf("gone pod: %v", err)
	}
	create("b")
	if err := m.set(ctx, old, status(corev1.PodRunning, corev1.ConditionTrue)); err != nil {
		t.Fatalf("replaced pod: %v", err)
	}
	if p := get("b"); p.Status.Phase == corev1.PodRunning {
		t.Fatal("the status was written to another pod of the same name")
	}
}
