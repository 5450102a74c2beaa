package ephemeral

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func podWithEphemeral(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
				VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"type": "scratch"}, Annotations: map[string]string{"note": "tmp"}},
					Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
				}}}}}}}
}

func TestClaimsOfEphemeralVolumes(t *testing.T) {
	env := testenv.StartT(t)
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := env.EnsureServiceAccount(ctx, "default", "default"); err != nil {
		t.Fatal(err)
	}
	f := informers.NewSharedInformerFactory(c, 0)
	events := record.NewFakeRecorder(10)
	ctrl, err := New(Config{Client: c, Informers: f, Recorder: events, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx)
	f.WaitForCacheSync(ctx)
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	pvcs := client.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](c).Namespace("default")

	pod, err := pods.Create(ctx, podWithEphemeral("web"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "pod cached", func() bool { _, err := ctrl.pods.Namespace("default").Get("web"); return err == nil })
	if err := ctrl.sync(ctx, "default/web"); err != nil {
		t.Fatal(err)
	}
	pvc, err := pvcs.Get(ctx, "web-scratch", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(pvc, pod) || pvc.Labels["type"] != "scratch" || pvc.Annotations["note"] != "tmp" {
		t.Errorf("claim %+v", pvc.ObjectMeta)
	}
	if ref := metav1.GetControllerOf(pvc); ref.Kind != "Pod" || ref.APIVersion != "v1" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("owner %+v", ref)
	}
	if got := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; got.String() != "1Gi" {
		t.Errorf("request %s", got.String())
	}
	eventually(t, "claim cached", func() bool { _, err := ctrl.claims.Namespace("default").Get("web-scratch"); return err == nil })
	if err := ctrl.sync(ctx, "default/web"); err != nil {
		t.Fatalf("second sync: %v", err)
	}

	// A claim of that name the pod does not own is refused.
	if _, err := pvcs.Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "db-scratch"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(ctx, podWithEphemeral("db"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "pod and claim cached", func() bool {
		_, e1 := ctrl.pods.Namespace("default").Get("db")
		_, e2 := ctrl.claims.Namespace("default").Get("db-scratch")
		return e1 == nil && e2 == nil
	})
	if err := ctrl.sync(ctx, "default/db"); err == nil {
		t.Error("a claim the pod does not own was accepted")
	}
	select {
	case e := <-events.Events:
		if !strings.HasPrefix(e, "Warning FailedBinding ephemeral volume scratch: PVC default/db-scratch was not created for pod default/db (pod is not owner)") {
			t.Errorf("event %q", e)
		}
	default:
		t.Error("no event")
	}
}
