package pvcprotection

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/controller/internal/volumeutil"
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

// TestProtection: the finalizer is added; a claim being deleted keeps it
// while a scheduled, running pod uses it (an unscheduled pod does not
// count), and loses it once that pod has finished.
func TestProtection(t *testing.T) {
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
	ctrl, err := New(Config{Client: c, Informers: f, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx)
	f.WaitForCacheSync(ctx)
	pvcs := client.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](c).Namespace("default")
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	// synced runs sync once the cache holds the server's claim.
	synced := func() {
		t.Helper()
		live, err := pvcs.Get(ctx, "data", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "claim cached", func() bool {
			cached, err := ctrl.claims.Namespace("default").Get("data")
			return err == nil && cached.ResourceVersion == live.ResourceVersion
		})
		if err := ctrl.sync(ctx, "default/data"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pvcs.Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	synced()
	got, _ := pvcs.Get(ctx, "data", metav1.GetOptions{})
	if !slices.Contains(got.Finalizers, volumeutil.PVCProtectionFinalizer) {
		t.Fatalf("finalizers %v", got.Finalizers)
	}
	for _, p := range []struct{ name, node string }{{"unscheduled", ""}, {"running", "node-1"}} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.name},
			Spec: corev1.PodSpec{NodeName: p.node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
				Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}}}
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "pods cached", func() bool { return len(ctrl.podIdx.List()) == 2 })
	if err := pvcs.Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	synced()
	if got, err := pvcs.Get(ctx, "data", metav1.GetOptions{}); err != nil || got.DeletionTimestamp == nil {
		t.Fatalf("claim used by a running pod: %v %+v, want it Terminating", err, got)
	}
	// The running pod finishes: the claim goes.
	running, _ := pods.Get(ctx, "running", metav1.GetOptions{})
	running.Status.Phase = corev1.PodSucceeded
	if _, err := pods.UpdateStatus(ctx, running, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "pod finished in the cache", func() bool {
		objs, _ := volumeutil.PodsUsingClaim(ctrl.podIdx, "default", "data")
		for _, p := range objs {
			if p.Name == "running" && p.Status.Phase == corev1.PodSucceeded {
				return true
			}
		}
		return false
	})
	synced()
	if _, err := pvcs.Get(ctx, "data", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("claim no pod uses: %v, want it deleted", err)
	}
}
