package controllermanager_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/controllermanager"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// The binder and the local-path provisioner together, as skiff up runs
// them: the default local-path class appears; a claim without a class
// gets it (DefaultStorageClass admission) and waits for its first
// consumer; a pod on a node makes the provisioner create a hostPath
// volume (and its directory) there, which the binder binds; deleting the
// claim (once its pod is gone: pvc-protection) releases the volume, which
// the provisioner deletes with its directory (pv-protection lets it go).
func TestLocalPathProvisioningWithBinder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "storage")
	env := testenv.StartT(t, testenv.Config{RBAC: true, ControllerManager: controllermanager.InProcess(controllermanager.Config{
		UseServiceAccountCredentials: true,
		Controllers:                  []string{"persistentvolume-binder-controller", "skiff-local-path-provisioner", "pvc-protection", "pv-protection"},
		LocalPath:                    controllermanager.LocalPathConfig{StorageDir: dir, ManageDirectories: true},
	})})
	t.Cleanup(func() { checkNotRefused(t, env) })
	c := mustClient(t, env)
	ctx := context.Background()
	if err := env.EnsureServiceAccount(ctx, "default", "default"); err != nil {
		t.Fatal(err)
	}
	scs := client.For[*storagev1.StorageClass, *storagev1.StorageClassList](c)
	pvcs := client.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](c).Namespace("default")
	pvs := client.For[*corev1.PersistentVolume, *corev1.PersistentVolumeList](c)
	eventually(t, "the default local-path StorageClass", func() bool {
		sc, err := scs.Get(ctx, "local-path", metav1.GetOptions{})
		return err == nil && sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true"
	})
	claim, err := pvcs.Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if claim.Spec.StorageClassName == nil || *claim.Spec.StorageClassName != "local-path" {
		t.Fatalf("storageClassName %v, want the default local-path", claim.Spec.StorageClassName)
	}
	events := client.For[*corev1.Event, *corev1.EventList](c).Namespace("default")
	hasEvent := func(reason string) func() bool {
		return func() bool {
			l, err := events.List(ctx, metav1.ListOptions{})
			if err != nil {
				return false
			}
			for _, e := range l.Items {
				if e.InvolvedObject.Name == "data" && e.Reason == reason {
					return true
				}
			}
			return false
		}
	}
	eventually(t, "WaitForFirstConsumer event", hasEvent("WaitForFirstConsumer"))

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}}}
	if _, err := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pvName := "pvc-" + string(claim.UID)
	eventually(t, "claim Bound to the provisioned volume", func() bool {
		got, err := pvcs.Get(ctx, "data", metav1.GetOptions{})
		return err == nil && got.Status.Phase == corev1.ClaimBound && got.Spec.VolumeName == pvName &&
			got.Annotations["volume.kubernetes.io/selected-node"] == "node-1" &&
			got.Annotations["volume.kubernetes.io/storage-provisioner"] == "skiff.io/local-path"
	})
	pv, err := pvs.Get(ctx, pvName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, pvName+"_default_data")
	if pv.Status.Phase != corev1.VolumeBound || pv.Spec.HostPath == nil || pv.Spec.HostPath.Path != path {
		t.Errorf("volume: %q %+v", pv.Status.Phase, pv.Spec.HostPath)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("volume directory: %v", err)
	}
	for _, reason := range []string{"ExternalProvisioning", "Provisioning", "ProvisioningSucceeded"} {
		eventually(t, reason+" event", hasEvent(reason))
	}

	eventually(t, "protection finalizers", func() bool {
		got, err1 := pvcs.Get(ctx, "data", metav1.GetOptions{})
		pv, err2 := pvs.Get(ctx, pvName, metav1.GetOptions{})
		return err1 == nil && err2 == nil && slices.Contains(got.Finalizers, "kubernetes.io/pvc-protection") &&
			slices.Contains(pv.Finalizers, "kubernetes.io/pv-protection")
	})
	if err := pvcs.Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The pod (on its node, Pending: no kubelet) still uses the claim.
	eventually(t, "claim Terminating", func() bool {
		got, err := pvcs.Get(ctx, "data", metav1.GetOptions{})
		return err == nil && got.DeletionTimestamp != nil
	})
	if pv, err := pvs.Get(ctx, pvName, metav1.GetOptions{}); err != nil || pv.Status.Phase != corev1.VolumeBound {
		t.Fatalf("volume of a claim still in use: %v %v", err, pv)
	}
	if err := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default").Delete(ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the released volume deleted", func() bool {
		_, err := pvs.Get(ctx, pvName, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("volume directory after deletion: %v", err)
	}
}
