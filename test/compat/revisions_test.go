package compat

// Upstream's kube-controller-manager is the oracle for what skiff's
// controllers derive from a template: attached to `skiff up
// --disable=controller-manager`, it creates a StatefulSet's and a
// DaemonSet's ControllerRevisions and pods, and skiff's functions must
// compute the same revision data, StatefulSet revision names (FNV-32 of
// the data) and pods (statefulset.NewPod, daemon.NewPod: identity, labels,
// owner references, claims' volumes, node affinity, tolerations, all the
// spec after the server's defaulting).
//
// The pod-template-hash (DaemonSet revision names, pod labels, Deployment
// ReplicaSets) is FNV-32a of a spew dump of the Go PodTemplateSpec, so it
// depends on the k8s.io/api version's struct fields, not only on the
// object: upstream 1.34 (k8s.io/api v0.34) and skiff (v0.37) differ for
// the same template, as two upstream releases do (upstream finds a
// Deployment's ReplicaSet by template equality, not by hash, for that
// reason). The same algorithm over v0.34's types gives upstream 1.34's
// value (checked by hand when this test was written); here only its
// inputs are compared.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/controller/daemon"
	"github.com/skiff-sh/skiff/pkg/controller/statefulset"
)

func TestUpstreamRevisionsAndPodsMatchSkiffs(t *testing.T) {
	bin := upstreamBinaries(t)
	work := t.TempDir()
	skiff := filepath.Join(work, "skiff")
	build := exec.Command("go", "build", "-o", skiff, "./cmd/skiff")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building skiff: %v\n%s", err, out)
	}
	data := filepath.Join(work, "data")
	startProc(t, skiff, "up", "--storage=memory", "--data-dir", data, "--secure-port", strconv.Itoa(freeTCPPort(t)),
		"--disable=controller-manager,scheduler")
	kubeconfig := filepath.Join(data, "kubeconfig")
	waitFor(t, "skiff's kubeconfig", func() (bool, string) {
		_, err := os.Stat(kubeconfig)
		return err == nil, fmt.Sprint(err)
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	waitFor(t, "skiff to serve", func() (bool, string) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	startProc(t, filepath.Join(bin, "kube-controller-manager"), "--kubeconfig", kubeconfig,
		"--authentication-kubeconfig", kubeconfig, "--authorization-kubeconfig", kubeconfig,
		"--leader-elect=false", "--secure-port", strconv.Itoa(freeTCPPort(t)), "--bind-address=127.0.0.1",
		"--controllers=statefulset,daemonset")

	labels := map[string]string{"app": "web"}
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"note": "x"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "web", Image: "nginx:1.27", Ports: []corev1.ContainerPort{{ContainerPort: 80}},
			Env:       []corev1.EnvVar{{Name: "A", Value: "b"}},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
		}}},
	}
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{"kubernetes.io/change-cause": "first"}},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](0), ServiceName: "web", Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template,
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "www"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}}}
	if _, err := cs.AppsV1().StatefulSets("default").Create(ctx, set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template}}
	if _, err := cs.AppsV1().DaemonSets("default").Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	owned := func(kind, name string) *appsv1.ControllerRevision {
		var found *appsv1.ControllerRevision
		waitFor(t, kind+" "+name+"'s revision", func() (bool, string) {
			l, err := cs.AppsV1().ControllerRevisions("default").List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			for i := range l.Items {
				if ref := metav1.GetControllerOf(&l.Items[i]); ref != nil && ref.Kind == kind && ref.Name == name {
					found = &l.Items[i]
					return true, ""
				}
			}
			return false, fmt.Sprintf("%d revisions", len(l.Items))
		})
		return found
	}

	// StatefulSet: upstream's newRevision vs skiff's NewRevision.
	upstreamRev := owned("StatefulSet", "web")
	liveSet, err := cs.AppsV1().StatefulSets("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ours, err := statefulset.NewRevision(liveSet, 1, ptr.To[int32](0))
	if err != nil {
		t.Fatal(err)
	}
	if ours.Name != upstreamRev.Name || !bytes.Equal(ours.Data.Raw, upstreamRev.Data.Raw) {
		t.Errorf("StatefulSet revision: skiff %s %s\nupstream %s %s", ours.Name, ours.Data.Raw, upstreamRev.Name, upstreamRev.Data.Raw)
	}
	if ours.Annotations["kubernetes.io/change-cause"] != upstreamRev.Annotations["kubernetes.io/change-cause"] {
		t.Errorf("annotations: skiff %v, upstream %v", ours.Annotations, upstreamRev.Annotations)
	}

	// DaemonSet: upstream's snapshot vs skiff's Hash and Patch.
	upstreamDSRev := owned("DaemonSet", "agent")
	liveDS, err := cs.AppsV1().DaemonSets("default").Get(ctx, "agent", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	patch, err := daemon.Patch(liveDS)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(patch, upstreamDSRev.Data.Raw) {
		t.Errorf("DaemonSet revision data: skiff %s\nupstream %s", patch, upstreamDSRev.Data.Raw)
	}
	if upstreamDSRev.Name != "agent-"+upstreamDSRev.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] || upstreamDSRev.Revision != 1 {
		t.Errorf("upstream's DaemonSet revision %s labels %v revision %d", upstreamDSRev.Name, upstreamDSRev.Labels, upstreamDSRev.Revision)
	}
	if h := daemon.Hash(liveDS); h == "" || h == upstreamDSRev.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] {
		t.Logf("pod-template-hash equal to upstream 1.34's (%s): k8s.io/api versions now agree on PodTemplateSpec's fields?", h)
	}
	// The pods: upstream's as stored, ours created dry-run in another
	// namespace (the same defaulting and admission), compared without what
	// the server makes unique (names from generateName, the service account
	// token volume, uid, times).
	for _, ns := range []string{"default", "ours"} {
		if ns != "default" {
			if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
	if node, err = cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	node.Spec.Taints = nil // Ready, as its node lifecycle would make it
	if _, err := cs.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	set, err = cs.AppsV1().StatefulSets("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	set.Spec.Replicas = ptr.To[int32](1)
	if _, err := cs.AppsV1().StatefulSets("default").Update(ctx, set, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	podOf := func(what string, list func() ([]corev1.Pod, error)) *corev1.Pod {
		var p *corev1.Pod
		waitFor(t, what, func() (bool, string) {
			l, err := list()
			if err != nil || len(l) != 1 {
				return false, fmt.Sprint(len(l), err)
			}
			p = &l[0]
			return true, ""
		})
		return p
	}
	byLabel := func(sel string) func() ([]corev1.Pod, error) {
		return func() ([]corev1.Pod, error) {
			l, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: sel})
			if err != nil {
				return nil, err
			}
			return l.Items, nil
		}
	}
	upstreamSetPod := podOf("upstream's web-0", byLabel("statefulset.kubernetes.io/pod-name=web-0"))
	upstreamDSPod := podOf("upstream's daemon pod", byLabel("app=web,!statefulset.kubernetes.io/pod-name"))
	liveSet, _ = cs.AppsV1().StatefulSets("default").Get(ctx, "web", metav1.GetOptions{})
	liveDS, _ = cs.AppsV1().DaemonSets("default").Get(ctx, "agent", metav1.GetOptions{})
	for _, tc := range []struct {
		what     string
		upstream *corev1.Pod
		ours     *corev1.Pod
	}{
		{"StatefulSet pod", upstreamSetPod, statefulset.NewPod(liveSet, 0, upstreamRev.Name)},
		// The template hash as upstream's (see above): the rest is compared.
		{"DaemonSet pod", upstreamDSPod, daemon.NewPod(liveDS, "node-a", upstreamDSRev.Labels[appsv1.DefaultDaemonSetUniqueLabelKey])},
	} {
		tc.ours.Namespace = "ours"
		created, err := cs.CoreV1().Pods("ours").Create(ctx, tc.ours, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		a, b := comparablePod(tc.upstream), comparablePod(created)
		if !reflect.DeepEqual(a, b) {
			ja, _ := json.MarshalIndent(a, "", " ")
			jb, _ := json.MarshalIndent(b, "", " ")
			t.Errorf("%s differs:\nupstream %s\nskiff %s", tc.what, ja, jb)
		}
	}
}

// comparablePod keeps what a controller decides of a pod.
func comparablePod(p *corev1.Pod) *corev1.Pod {
	p = p.DeepCopy()
	name := p.Name // a StatefulSet's pod names are the controller's
	if p.Labels["statefulset.kubernetes.io/pod-name"] == "" {
		name = "" // from generateName
	}
	meta := metav1.ObjectMeta{Name: name, GenerateName: p.GenerateName, Labels: p.Labels, Annotations: p.Annotations,
		Finalizers: p.Finalizers, OwnerReferences: p.OwnerReferences}
	var vols []corev1.Volume
	for _, v := range p.Spec.Volumes {
		if !strings.HasPrefix(v.Name, "kube-api-access-") {
			vols = append(vols, v)
		}
	}
	p.Spec.Volumes = vols
	for i := range p.Spec.Containers {
		var mounts []corev1.VolumeMount
		for _, m := range p.Spec.Containers[i].VolumeMounts {
			if !strings.HasPrefix(m.Name, "kube-api-access-") {
				mounts = append(mounts, m)
			}
		}
		p.Spec.Containers[i].VolumeMounts = mounts
	}
	return &corev1.Pod{ObjectMeta: meta, Spec: p.Spec}
}
