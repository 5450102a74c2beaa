package pvprotection

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

// TestProtection: the finalizer is added; a Bound volume being deleted
// keeps it, and loses it once it is no longer Bound.
func TestProtection(t *testing.T) {
	env := testenv.StartT(t)
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := informers.NewSharedInformerFactory(c, 0)
	ctrl, err := New(Config{Client: c, Informers: f, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx)
	f.WaitForCacheSync(ctx)
	pvs := client.For[*corev1.PersistentVolume, *corev1.PersistentVolumeList](c)
	synced := func() {
		t.Helper()
		live, err := pvs.Get(ctx, "vol", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			if cached, err := ctrl.volumes.Get("vol"); err == nil && cached.ResourceVersion == live.ResourceVersion {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("volume not cached")
			}
			time.Sleep(5 * time.Millisecond)
		}
		if err := ctrl.sync(ctx, "vol"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pvs.Create(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "vol"},
		Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/vol"}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	synced()
	pv, _ := pvs.Get(ctx, "vol", metav1.GetOptions{})
	if !slices.Contains(pv.Finalizers, volumeutil.PVProtectionFinalizer) {
		t.Fatalf("finalizers %v", pv.Finalizers)
	}
	pv.Status.Phase = corev1.VolumeBound
	if _, err := pvs.UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pvs.Delete(ctx, "vol", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	synced()
	pv, err = pvs.Get(ctx, "vol", metav1.GetOptions{})
	if err != nil || pv.DeletionTimestamp == nil {
		t.Fatalf("Bound volume: %v, want it Terminating", err)
	}
	pv.Status.Phase = corev1.VolumeReleased
	if _, err := pvs.UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	synced()
	if _, err := pvs.Get(ctx, "vol", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("released volume: %v, want it deleted", err)
	}
}
