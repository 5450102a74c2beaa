package controllerref

import (
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestResolve(t *testing.T) {
	owners := map[string]*appsv1.ReplicaSet{"rs": {ObjectMeta: metav1.ObjectMeta{Name: "rs", UID: "u1"}}}
	get := func(name string) (*appsv1.ReplicaSet, error) {
		if o, ok := owners[name]; ok {
			return o, nil
		}
		return nil, errors.New("not found")
	}
	for _, tc := range []struct {
		name string
		ref  *metav1.OwnerReference
		want bool
	}{
		{"match", &metav1.OwnerReference{Kind: "ReplicaSet", Name: "rs", UID: "u1"}, true},
		{"no reference", nil, false},
		{"other kind", &metav1.OwnerReference{Kind: "StatefulSet", Name: "rs", UID: "u1"}, false},
		{"re-created owner (other UID)", &metav1.OwnerReference{Kind: "ReplicaSet", Name: "rs", UID: types.UID("u0")}, false},
		{"missing owner", &metav1.OwnerReference{Kind: "ReplicaSet", Name: "gone", UID: "u2"}, false},
	} {
		got, ok := Resolve(tc.ref, "ReplicaSet", get)
		if ok != tc.want || (ok && got != owners["rs"]) || (!ok && got != nil) {
			t.Errorf("%s: got %v %v, want %v", tc.name, got, ok, tc.want)
		}
	}
}

func TestSelecting(t *testing.T) {
	sel := func(s *metav1.LabelSelector) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Selector: s}}
	}
	byApp := sel(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}})
	byTier := sel(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"front"}}}})
	empty := sel(&metav1.LabelSelector{})
	invalid := sel(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Bogus"}}})
	all := []*appsv1.ReplicaSet{byApp, byTier, empty, invalid, sel(nil)}
	of := func(rs *appsv1.ReplicaSet) *metav1.LabelSelector { return rs.Spec.Selector }
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   []*appsv1.ReplicaSet
	}{
		{"both", map[string]string{"app": "web", "tier": "front"}, []*appsv1.ReplicaSet{byApp, byTier}},
		{"one", map[string]string{"app": "web"}, []*appsv1.ReplicaSet{byApp}},
		{"none", map[string]string{"app": "db"}, nil},
		{"no labels", nil, nil},
	} {
		got := Selecting(all, of, tc.labels)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %d owners, want %d", tc.name, len(got), len(tc.want))
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: owner %d differs", tc.name, i)
			}
		}
	}
}
