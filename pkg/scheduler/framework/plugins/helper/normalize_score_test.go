package helper

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// Cases from upstream's TestDefaultNormalizeScore.
func TestDefaultNormalizeScore(t *testing.T) {
	cases := []struct {
		reverse bool
		in      []int64
		want    []int64
	}{
		{in: []int64{1, 2, 3, 4, 5}, want: []int64{20, 40, 60, 80, 100}},
		{reverse: true, in: []int64{1, 2, 3, 4, 5}, want: []int64{80, 60, 40, 20, 0}},
		{in: []int64{1000, 10, 20, 30}, want: []int64{100, 1, 2, 3}},
		{reverse: true, in: []int64{1000, 10, 20, 30}, want: []int64{0, 99, 98, 97}},
		{in: []int64{1, 1, 1, 1}, want: []int64{100, 100, 100, 100}},
		{reverse: true, in: []int64{1, 1, 1, 1}, want: []int64{0, 0, 0, 0}},
		{in: []int64{0, 0, 0, 0}, want: []int64{0, 0, 0, 0}},
		{reverse: true, in: []int64{0, 0, 0, 0}, want: []int64{100, 100, 100, 100}},
	}
	for _, tc := range cases {
		scores := make(framework.NodeScoreList, len(tc.in))
		for i, s := range tc.in {
			scores[i].Score = s
		}
		DefaultNormalizeScore(framework.MaxNodeScore, tc.reverse, scores)
		for i := range scores {
			if scores[i].Score != tc.want[i] {
				t.Errorf("reverse=%v %v: got %v, want %v", tc.reverse, tc.in, scores, tc.want)
				break
			}
		}
	}
}

func lister[T interface {
	*corev1.Service | *corev1.ReplicationController | *appsv1.ReplicaSet | *appsv1.StatefulSet
	runtime.Object
}](t *testing.T, objs ...T) cache.Lister[T] {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range objs {
		if err := idx.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return cache.NewLister[T](idx, schema.GroupResource{})
}

func TestDefaultSelector(t *testing.T) {
	ctrl := func(apiVersion, kind, name string) []metav1.OwnerReference {
		yes := true
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, Controller: &yes}}
	}
	pod := func(owners []metav1.OwnerReference) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{"app": "web", "tier": "fe"}, OwnerReferences: owners}}
	}
	services := lister(t,
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "noselector"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "web"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"x": "y"}}},
	)
	rcs := lister(t, &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rc"}, Spec: corev1.ReplicationControllerSpec{Selector: map[string]string{"tier": "fe"}}})
	rss := lister(t, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rs"}, Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"fe", "be"}}}}}})
	sss := lister(t, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ss"}, Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "fe"}}}})
	cases := []struct {
		name   string
		owners []metav1.OwnerReference
		svc    bool
		want   string
	}{
		{name: "services only", svc: true, want: "app=web"},
		{name: "nothing", want: ""},
		{name: "rc", owners: ctrl("v1", "ReplicationController", "rc"), svc: true, want: "app=web,tier=fe"},
		{name: "rs", owners: ctrl("apps/v1", "ReplicaSet", "rs"), svc: true, want: "app=web,tier in (be,fe)"},
		{name: "ss", owners: ctrl("apps/v1", "StatefulSet", "ss"), want: "tier=fe"},
		{name: "missing rs", owners: ctrl("apps/v1", "ReplicaSet", "gone"), svc: true, want: "app=web"},
		{name: "unsupported owner", owners: ctrl("batch/v1", "Job", "j"), want: ""},
	}
	for _, tc := range cases {
		svcs := services
		if !tc.svc {
			svcs = lister[*corev1.Service](t)
		}
		got := DefaultSelector(pod(tc.owners), svcs, rcs, rss, sss)
		if got.String() != tc.want {
			t.Errorf("%s: selector %q, want %q", tc.name, got.String(), tc.want)
		}
		if tc.want == "" && !got.Empty() {
			t.Errorf("%s: want an empty selector", tc.name)
		}
	}
}
