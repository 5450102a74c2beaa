package apps

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDaemonSetTemplateGeneration(t *testing.T) {
	const key = appsv1.DeprecatedTemplateGeneration
	ds := func(ann map[string]string, image string) *appsv1.DaemonSet {
		return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Annotations: ann},
			Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: image}}}}}}
	}
	for _, tc := range []struct {
		name     string
		obj, old *appsv1.DaemonSet
		want     string
	}{
		{"create", ds(nil, "a"), nil, "1"},
		{"create keeps a higher value", ds(map[string]string{key: "5"}, "a"), nil, "5"},
		{"create raises 0", ds(map[string]string{key: "0"}, "a"), nil, "1"},
		{"update without template change keeps it", ds(nil, "a"), ds(map[string]string{key: "3"}, "a"), "3"},
		{"update cannot set it", ds(map[string]string{key: "9"}, "a"), ds(map[string]string{key: "3"}, "a"), "3"},
		{"template change bumps it", ds(map[string]string{key: "3"}, "b"), ds(map[string]string{key: "3"}, "a"), "4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.old == nil {
				PrepareDaemonSetForCreate(tc.obj)
			} else {
				PrepareDaemonSetForUpdate(tc.obj, tc.old)
			}
			if got := tc.obj.Annotations[key]; got != tc.want {
				t.Fatalf("%s=%q, want %q", key, got, tc.want)
			}
		})
	}
}
