package corev1helpers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestToleratesTaint(t *testing.T) {
	taint := corev1.Taint{Key: "k", Value: "v", Effect: corev1.TaintEffectNoSchedule}
	cases := []struct {
		name string
		tol  corev1.Toleration
		want bool
	}{
		{"equal", corev1.Toleration{Key: "k", Operator: corev1.TolerationOpEqual, Value: "v", Effect: corev1.TaintEffectNoSchedule}, true},
		{"empty operator is Equal", corev1.Toleration{Key: "k", Value: "v"}, true},
		{"other value", corev1.Toleration{Key: "k", Value: "w"}, false},
		{"exists any value", corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists}, true},
		{"empty key Exists matches all", corev1.Toleration{Operator: corev1.TolerationOpExists}, true},
		{"other effect", corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}, false},
		{"other key", corev1.Toleration{Key: "j", Operator: corev1.TolerationOpExists}, false},
		{"Gt is not supported in 1.34", corev1.Toleration{Key: "k", Operator: corev1.TolerationOpGt, Value: "1"}, false},
	}
	for _, tc := range cases {
		if got := ToleratesTaint(&tc.tol, &taint); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestFindMatchingUntoleratedTaint(t *testing.T) {
	taints := []corev1.Taint{
		{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule},
		{Key: "a", Value: "1", Effect: corev1.TaintEffectNoSchedule},
		{Key: "b", Value: "2", Effect: corev1.TaintEffectNoExecute},
	}
	tol := []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpExists}}
	got, ok := FindMatchingUntoleratedTaint(taints, tol, DoNotScheduleTaint)
	if !ok || got.Key != "b" {
		t.Errorf("got %v %v, want taint b", got, ok)
	}
	got, ok = FindMatchingUntoleratedTaint(taints, tol, nil)
	if !ok || got.Key != "soft" {
		t.Errorf("no filter: got %v %v, want taint soft", got, ok)
	}
	tol = append(tol, corev1.Toleration{Key: "b", Value: "2", Effect: corev1.TaintEffectNoExecute})
	if got, ok := FindMatchingUntoleratedTaint(taints, tol, DoNotScheduleTaint); ok {
		t.Errorf("all tolerated: got %v", got)
	}
}
