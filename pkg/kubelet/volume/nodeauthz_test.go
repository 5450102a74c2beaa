package volume

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// With the Node authorizer, a kubelet (system:node:n1) reads exactly what
// the manager needs for the pods bound to it — configMaps, secrets, the
// PVC and its PV by name, tokens of the pod's service account — and
// nothing of a pod bound elsewhere.
func TestNodeIdentity(t *testing.T) {
	env := testenv.StartT(t, testenv.Config{RBAC: true})
	ctx := context.Background()
	if err := env.EnsureServiceAccount(ctx, "default", "default"); err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := env.UserCertificate("system:node:n1", "system:nodes")
	if err != nil {
		t.Fatal(err)
	}
	node, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: cert, KeyData: key, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	cms := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](admin).Namespace("default")
	for _, name := range []string{"kube-root-ca.crt", "cfg", "other"} {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"ca.crt": "PEM", "k": "v"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.For[*corev1.Secret, *corev1.SecretList](admin).Namespace("default").Create(ctx,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sec"}, Data: map[string][]byte{"pw": []byte("x")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pvcs := client.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](admin).Namespace("default")
	pvc, err := pvcs.Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "claim"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeName: "pv",
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hostDir := t.TempDir()
	if _, err := client.For[*corev1.PersistentVolume, *corev1.PersistentVolumeList](admin).Create(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv"},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostDir}},
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			ClaimRef: &corev1.ObjectReference{Namespace: "default", Name: "claim", UID: pvc.UID}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pvc.Status.Phase = corev1.ClaimBound
	if _, err := pvcs.UpdateStatus(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := client.For[*corev1.Pod, *corev1.PodList](admin).Namespace("default")
	mk := func(name, nodeName, cm string) *corev1.Pod {
		p, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: nodeName,
			Containers: []corev1.Container{{Name: "c", Image: "busybox", VolumeMounts: []corev1.VolumeMount{
				{Name: "cfg", MountPath: "/cfg"}, {Name: "sec", MountPath: "/sec"}, {Name: "data", MountPath: "/data"}}}},
			Volumes: []corev1.Volume{
				{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}},
				{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "sec"}}},
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "claim"}}},
			}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	mine := mk("mine", "n1", "cfg")
	theirs := mk("theirs", "n2", "other")
	m, err := New(Config{Client: node, RootDir: t.TempDir(), Clock: clock.NewFake(time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	// The authorizer's graph follows the pods asynchronously.
	deadline := time.Now().Add(10 * time.Second)
	for {
		err = m.SetUp(ctx, mine)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("SetUp of a pod bound to the node: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Another node's pod: its configMap is out of reach (and so is the
	// token of a pod not bound here).
	theirs.Spec.NodeName = "n1" // as if the kubelet were confused
	err = m.SetUp(ctx, theirs)
	if err == nil || !strings.Contains(err.Error(), `MountVolume.SetUp failed for volume "cfg"`) || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("SetUp of another node's pod: %v", err)
	}
}
