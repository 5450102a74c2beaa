package volumebinding_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/controllermanager"
	"github.com/skiff-sh/skiff/pkg/scheduler"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

func eventually(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (last error: %v)", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSchedulerBindsVolumes runs skiff's scheduler with the PV binder and
// the local-path provisioner against an in-process API server: a pod with
// a new local-path claim is placed on a node, the claim gets the
// scheduler's selected-node, the provisioner creates a volume there and
// the pod is bound only after its claim; a pod whose claim can only be
// served by a static local volume lands on that volume's node; a pod with
// an unbound Immediate claim stays Pending with upstream's reason.
func TestSchedulerBindsVolumes(t *testing.T) {
	// With RBAC, as kubeadm runs them: the scheduler as
	// system:kube-scheduler, each controller as its service account, with
	// upstream's bootstrap permissions only.
	env := testenv.StartT(t, testenv.Config{
		RBAC: true,
		ControllerManager: controllermanager.InProcess(controllermanager.Config{
			UseServiceAccountCredentials: true,
			Controllers:                  []string{"persistentvolume-binder-controller", "skiff-local-path-provisioner"},
			LocalPath:                    controllermanager.LocalPathConfig{StorageDir: filepath.Join(t.TempDir(), "storage")},
		}),
		Scheduler: scheduler.InProcess(nil, scheduler.Config{}),
	})
	t.Cleanup(func() {
		for _, f := range env.Forbidden() {
			if f.User == "system:kube-scheduler" || f.User == "system:kube-controller-manager" || strings.HasPrefix(f.User, "system:serviceaccount:kube-system:") {
				t.Errorf("a component was refused: %s", f)
			}
		}
	})
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := env.EnsureServiceAccount(ctx, "default", "default"); err != nil {
		t.Fatal(err)
	}
	nodes := client.For[*corev1.Node, *corev1.NodeList](c)
	for _, name := range []string{"node-1", "node-2"} {
		res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}}}
		created, err := nodes.Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created.Status = corev1.NodeStatus{Capacity: res, Allocatable: res, Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}
		if created, err = nodes.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		created.Spec.Taints = nil // the not-ready taint admission put on it; no node lifecycle controller here
		if _, err := nodes.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	scs := client.For[*storagev1.StorageClass, *storagev1.StorageClassList](c)
	wait, immediate := storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate
	for _, sc := range []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "local-storage"}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &wait},
		{ObjectMeta: metav1.ObjectMeta{Name: "manual"}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &immediate},
	} {
		if _, err := scs.Create(ctx, sc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the local-path StorageClass", func() (bool, error) {
		_, err := scs.Get(ctx, "local-path", metav1.GetOptions{})
		return err == nil, err
	})
	pvs := client.For[*corev1.PersistentVolume, *corev1.PersistentVolumeList](c)
	_, err = pvs.Create(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "local-on-node-2"},
		Spec: corev1.PersistentVolumeSpec{StorageClassName: "local-storage", AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")},
			PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/disk"}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{"node-2"}}}}}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pvcs := client.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](c).Namespace("default")
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	claimAndPod := func(name, class string) {
		t.Helper()
		if _, err := pvcs.Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(class), AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
				Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	claimAndPod("provisioned", "local-path")
	claimAndPod("static", "local-storage")
	claimAndPod("immediate", "manual")

	dump := func() {
		for _, n := range []string{"provisioned", "static", "immediate"} {
			p, _ := pods.Get(ctx, n, metav1.GetOptions{})
			cl, _ := pvcs.Get(ctx, n, metav1.GetOptions{})
			t.Logf("pod %s node=%q conds=%+v; claim phase=%q vol=%q ann=%v", n, p.Spec.NodeName, p.Status.Conditions, cl.Status.Phase, cl.Spec.VolumeName, cl.Annotations)
		}
		evs, _ := client.For[*corev1.Event, *corev1.EventList](c).Namespace("default").List(ctx, metav1.ListOptions{})
		for _, e := range evs.Items {
			t.Logf("event %s %s: %s", e.InvolvedObject.Name, e.Reason, e.Message)
		}
	}
	defer func() {
		if t.Failed() {
			dump()
		}
	}()
	var node string
	eventually(t, "the local-path pod bound", func() (bool, error) {
		p, err := pods.Get(ctx, "provisioned", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		node = p.Spec.NodeName
		return node != "", nil
	})
	claim, err := pvcs.Get(ctx, "provisioned", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// PreBind waited for the binding: the claim was bound before the pod.
	if claim.Status.Phase != corev1.ClaimBound || claim.Annotations["volume.kubernetes.io/selected-node"] != node {
		t.Errorf("claim: phase %q, selected-node %q; want Bound on %q", claim.Status.Phase, claim.Annotations["volume.kubernetes.io/selected-node"], node)
	}
	pv, err := pvs.Get(ctx, claim.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if na := pv.Spec.NodeAffinity; na == nil || na.Required == nil || na.Required.NodeSelectorTerms[0].MatchExpressions[0].Values[0] != node {
		t.Errorf("provisioned volume's node affinity %+v, want node %q", pv.Spec.NodeAffinity, node)
	}

	eventually(t, "the static-volume pod on node-2", func() (bool, error) {
		p, err := pods.Get(ctx, "static", metav1.GetOptions{})
		return err == nil && p.Spec.NodeName == "node-2", err
	})
	got, err := pvcs.Get(ctx, "static", metav1.GetOptions{})
	if err != nil || got.Spec.VolumeName != "local-on-node-2" || got.Status.Phase != corev1.ClaimBound {
		t.Errorf("static claim: %v %q %q, want bound to local-on-node-2", err, got.Spec.VolumeName, got.Status.Phase)
	}

	eventually(t, "the immediate-claim pod unschedulable", func() (bool, error) {
		p, err := pods.Get(ctx, "immediate", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse &&
				strings.Contains(cond.Message, "pod has unbound immediate PersistentVolumeClaims") {
				return p.Spec.NodeName == "", nil
			}
		}
		return false, nil
	})
}
