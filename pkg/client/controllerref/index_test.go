package controllerref

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client/cache"
)

func indexPod(ns, name string, owners ...metav1.OwnerReference) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: owners}}
}

func TestControllerUIDIndex(t *testing.T) {
	yes := true
	ctrl := func(uid types.UID) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: string(uid), UID: uid, Controller: &yes}
	}
	owner := func(uid types.UID) metav1.OwnerReference { // not a controller
		return metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: string(uid), UID: uid}
	}
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &corev1.Pod{}, 0, cache.Indexers{})
	for range 2 { // a second add (another controller on the same informer) is a no-op
		if err := AddControllerUIDIndex(inf); err != nil {
			t.Fatal(err)
		}
	}
	idx := inf.GetIndexer()
	for _, p := range []*corev1.Pod{
		indexPod("a", "a1", ctrl("rs1")),
		indexPod("a", "a2", ctrl("rs1")),
		indexPod("a", "a3", ctrl("rs2")),
		indexPod("a", "orphan1"),
		indexPod("a", "orphan2", owner("cm")), // owned, but no controller: an orphan
		indexPod("b", "orphan3"),
	} {
		if err := idx.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		ns      string
		uid     types.UID
		orphans bool
		want    []string
	}{
		{"a", "rs1", false, []string{"a1", "a2"}},
		{"a", "rs1", true, []string{"a1", "a2", "orphan1", "orphan2"}},
		{"a", "rs2", true, []string{"a3", "orphan1", "orphan2"}},
		{"b", "rs1", true, []string{"a1", "a2", "orphan3"}}, // by UID: unique cluster-wide
		{"c", "none", true, nil},
	} {
		got, err := Controlled[*corev1.Pod](idx, tc.ns, tc.uid, tc.orphans)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range got {
			names = append(names, p.Name)
		}
		slices.Sort(names)
		if !slices.Equal(names, tc.want) {
			t.Errorf("Controlled(%s, %s, %v) = %v, want %v", tc.ns, tc.uid, tc.orphans, names, tc.want)
		}
	}
	// Adoption moves a pod from the orphans to its new controller.
	adopted := indexPod("a", "orphan1", ctrl("rs2"))
	if err := idx.Update(adopted); err != nil {
		t.Fatal(err)
	}
	got, _ := Controlled[*corev1.Pod](idx, "a", "rs2", false)
	if len(got) != 2 {
		t.Errorf("after adoption rs2 controls %d pods, want 2", len(got))
	}
}
