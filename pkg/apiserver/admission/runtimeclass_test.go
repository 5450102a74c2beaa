package admission

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Upstream's MergeTolerations cases.
func TestMergeTolerations(t *testing.T) {
	secs := func(n int64) *int64 { return &n }
	eq := func(k, v string) corev1.Toleration {
		return corev1.Toleration{Key: k, Operator: corev1.TolerationOpEqual, Value: v, Effect: corev1.TaintEffectNoSchedule}
	}
	exists := func(k string, e corev1.TaintEffect) corev1.Toleration {
		return corev1.Toleration{Key: k, Operator: corev1.TolerationOpExists, Effect: e}
	}
	noExec := func(k string, s *int64) corev1.Toleration {
		return corev1.Toleration{Key: k, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: s}
	}
	tests := []struct {
		name          string
		first, second []corev1.Toleration
		want          []corev1.Toleration
	}{
		{"disjoint", []corev1.Toleration{eq("a", "1")}, []corev1.Toleration{eq("b", "2")}, []corev1.Toleration{eq("a", "1"), eq("b", "2")}},
		{"duplicate kept once", []corev1.Toleration{eq("a", "1")}, []corev1.Toleration{eq("a", "1")}, []corev1.Toleration{eq("a", "1")}},
		{"exists covers equal", []corev1.Toleration{eq("a", "1")}, []corev1.Toleration{exists("a", "")}, []corev1.Toleration{exists("a", "")}},
		{"empty key exists covers all", []corev1.Toleration{eq("a", "1"), eq("b", "2")}, []corev1.Toleration{exists("", "")}, []corev1.Toleration{exists("", "")}},
		{"other effect not covered", []corev1.Toleration{eq("a", "1")}, []corev1.Toleration{exists("a", corev1.TaintEffectNoExecute)},
			[]corev1.Toleration{eq("a", "1"), exists("a", corev1.TaintEffectNoExecute)}},
		{"longer tolerationSeconds covers shorter", []corev1.Toleration{noExec("a", secs(300))}, []corev1.Toleration{noExec("a", secs(60))},
			[]corev1.Toleration{noExec("a", secs(300))}},
		{"shorter tolerationSeconds covered", []corev1.Toleration{noExec("a", secs(60))}, []corev1.Toleration{noExec("a", secs(300))},
			[]corev1.Toleration{noExec("a", secs(300))}},
		{"forever covers any", []corev1.Toleration{noExec("a", secs(60))}, []corev1.Toleration{noExec("a", nil)}, []corev1.Toleration{noExec("a", nil)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mergeTolerations(tt.first, tt.second); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
