package cache

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

func mkNode(name, zone string, images ...corev1.ContainerImage) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("node-" + name)}}
	if zone != "" {
		n.Labels = map[string]string{corev1.LabelTopologyZone: zone}
	}
	n.Status.Allocatable = corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110"),
	}
	n.Status.Images = images
	return n
}

func mkPod(name, node, cpu string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}}
	p.Spec.NodeName = node
	c := corev1.Container{Name: "c", Image: "img"}
	if cpu != "" {
		c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	}
	p.Spec.Containers = []corev1.Container{c}
	return p
}

func withAntiAffinity(p *corev1.Pod, required bool) *corev1.Pod {
	term := corev1.PodAffinityTerm{TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}}
	anti := &corev1.PodAntiAffinity{}
	if required {
		anti.RequiredDuringSchedulingIgnoredDuringExecution = []corev1.PodAffinityTerm{term}
	} else {
		anti.PreferredDuringSchedulingIgnoredDuringExecution = []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: term}}
	}
	p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: anti}
	return p
}

func withPVC(p *corev1.Pod, claim string) *corev1.Pod {
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: claim, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
	return p
}

func names(t *testing.T, l []*framework.NodeInfo) []string {
	t.Helper()
	out := []string{}
	for _, ni := range l {
		out = append(out, ni.NodeName())
	}
	return out
}

func TestNewSnapshot(t *testing.T) {
	nodes := []*corev1.Node{
		mkNode("a1", "a", corev1.ContainerImage{Names: []string{"img:1", "img@sha"}, SizeBytes: 100}),
		mkNode("a2", "a", corev1.ContainerImage{Names: []string{"img:1"}, SizeBytes: 100}),
		mkNode("b1", "b"),
		mkNode("c1", "c", corev1.ContainerImage{Names: []string{"other"}, SizeBytes: 5}),
		mkNode("b2", "b"),
	}
	pods := []*corev1.Pod{
		mkPod("p1", "a1", "1"),
		mkPod("p2", "a1", "500m"),
		withAntiAffinity(mkPod("p3", "b2", ""), true),
		withAntiAffinity(mkPod("p4", "c1", ""), false),
		withPVC(mkPod("p5", "gone", ""), "claim-on-unknown-node"),
		withPVC(mkPod("p6", "b1", ""), "claim"),
		withPVC(mkPod("pending", "", ""), "pending-claim"),
	}
	s := NewSnapshot(pods, nodes)

	if s.NumNodes() != 5 {
		t.Fatalf("NumNodes = %d, want 5", s.NumNodes())
	}
	l, _ := s.NodeInfos().List()
	if got, want := names(t, l), []string{"a1", "b1", "c1", "a2", "b2"}; !equal(got, want) {
		t.Errorf("List order = %v, want %v (zones round-robin)", got, want)
	}
	aff, _ := s.NodeInfos().HavePodsWithAffinityList()
	if got, want := names(t, aff), []string{"c1", "b2"}; !equal(got, want) {
		t.Errorf("HavePodsWithAffinityList = %v, want %v", got, want)
	}
	anti, _ := s.NodeInfos().HavePodsWithRequiredAntiAffinityList()
	if got, want := names(t, anti), []string{"b2"}; !equal(got, want) {
		t.Errorf("HavePodsWithRequiredAntiAffinityList = %v, want %v", got, want)
	}
	a1, err := s.NodeInfos().Get("a1")
	if err != nil {
		t.Fatal(err)
	}
	if len(a1.Pods) != 2 || a1.Requested.MilliCPU != 1500 || a1.Allocatable.MilliCPU != 4000 {
		t.Errorf("a1: pods %d requested %d allocatable %d", len(a1.Pods), a1.Requested.MilliCPU, a1.Allocatable.MilliCPU)
	}
	if got := a1.ImageStates["img:1"]; got == nil || got.NumNodes != 2 || got.Size != 100 {
		t.Errorf("a1 image img:1 = %+v, want size 100 on 2 nodes", got)
	}
	if got := a1.ImageStates["img@sha"]; got == nil || got.NumNodes != 1 {
		t.Errorf("a1 image img@sha = %+v, want on 1 node", got)
	}
	for _, name := range []string{"gone", "", "missing"} {
		_, err := s.NodeInfos().Get(name)
		if want := `nodeinfo not found for node name "` + name + `"`; err == nil || err.Error() != want {
			t.Errorf("Get(%q) error = %v, want %s", name, err, want)
		}
	}
	for key, want := range map[string]bool{"ns/claim": true, "ns/claim-on-unknown-node": true, "ns/pending-claim": false, "other/claim": false} {
		if got := s.StorageInfos().IsPVCUsedByPods(key); got != want {
			t.Errorf("IsPVCUsedByPods(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestEmptySnapshot(t *testing.T) {
	s := NewEmptySnapshot()
	l, err := s.NodeInfos().List()
	if err != nil || len(l) != 0 || s.NumNodes() != 0 {
		t.Errorf("empty snapshot lists %v, %v", l, err)
	}
	if _, err := s.NodeInfos().Get("x"); err == nil {
		t.Error("Get on an empty snapshot succeeded")
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
