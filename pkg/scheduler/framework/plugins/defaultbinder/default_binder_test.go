package defaultbinder

import (
	"context"
	"log/slog"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// fakeHandle serves the API client; nothing else of the Handle is used.
type fakeHandle struct {
	framework.Handle
	c *client.Client
}

func (h fakeHandle) Client() *client.Client { return h.c }
func (h fakeHandle) Logger() *slog.Logger   { return slog.New(slog.DiscardHandler) }

// TestDefaultBinder binds through a real API server: the pod gets its
// nodeName, and failures (already bound, stale UID, no such pod) are
// Error statuses carrying the API error.
func TestDefaultBinder(t *testing.T) {
	env := testenv.StartT(t)
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := env.EnsureServiceAccount(ctx, "default", "default"); err != nil {
		t.Fatal(err)
	}
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	mk := func(name string) *corev1.Pod {
		p, err := pods.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	pl, err := New(ctx, nil, fakeHandle{c: c})
	if err != nil {
		t.Fatal(err)
	}
	binder := pl.(framework.BindPlugin)
	if binder.Name() != "DefaultBinder" {
		t.Fatalf("Name() = %q", binder.Name())
	}

	foo := mk("foo")
	if st := binder.Bind(ctx, framework.NewCycleState(), foo, "foohost.kubernetes.mydomain.com"); !st.IsSuccess() {
		t.Fatalf("Bind() = %v", st)
	}
	got, err := pods.Get(ctx, "foo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.NodeName != "foohost.kubernetes.mydomain.com" {
		t.Errorf("nodeName = %q after Bind", got.Spec.NodeName)
	}

	stale := mk("bar")
	stale.UID = "not-the-uid"
	for _, tt := range []struct {
		name  string
		pod   *corev1.Pod
		check func(error) bool
	}{
		{"already bound", foo, apierrors.IsConflict},
		{"stale UID", stale, apierrors.IsConflict},
		{"no such pod", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "missing", Namespace: "default"}}, apierrors.IsNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := binder.Bind(ctx, framework.NewCycleState(), tt.pod, "other-node")
			if st.Code() != framework.Error || !tt.check(st.AsError()) {
				t.Errorf("Bind() = %v (%T), want an Error status with the API error", st, st.AsError())
			}
		})
	}
	if got, _ := pods.Get(ctx, "bar", metav1.GetOptions{}); got.Spec.NodeName != "" {
		t.Errorf("pod bar bound to %q despite the stale UID", got.Spec.NodeName)
	}
}
