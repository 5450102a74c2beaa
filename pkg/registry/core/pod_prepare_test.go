package core

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPreparePodCreate(t *testing.T) {
	sel := func() *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	}
	req := func(k string, op metav1.LabelSelectorOperator, v string) metav1.LabelSelectorRequirement {
		return metav1.LabelSelectorRequirement{Key: k, Operator: op, Values: []string{v}}
	}
	labels := map[string]string{"app": "web", "rev": "2", "track": "canary"}
	tests := []struct {
		name string
		spec corev1.PodSpec
		// check inspects the prepared pod.
		check func(t *testing.T, p *corev1.Pod)
	}{
		{
			name: "gated pod: SchedulingGated condition",
			spec: corev1.PodSpec{SchedulingGates: []corev1.PodSchedulingGate{{Name: "example.com/wait"}}},
			check: func(t *testing.T, p *corev1.Pod) {
				if len(p.Status.Conditions) != 1 {
					t.Fatalf("conditions %+v", p.Status.Conditions)
				}
				c := p.Status.Conditions[0]
				if c.Type != corev1.PodScheduled || c.Status != corev1.ConditionFalse || c.Reason != corev1.PodReasonSchedulingGated ||
					c.Message != "Scheduling is blocked due to non-empty scheduling gates" || c.LastTransitionTime.IsZero() {
					t.Errorf("condition %+v", c)
				}
			},
		},
		{
			name: "no gates: no condition",
			spec: corev1.PodSpec{},
			check: func(t *testing.T, p *corev1.Pod) {
				if len(p.Status.Conditions) != 0 {
					t.Errorf("conditions %+v", p.Status.Conditions)
				}
			},
		},
		{
			name: "pod affinity: matchLabelKeys In, mismatchLabelKeys NotIn, keys the pod lacks skipped",
			spec: corev1.PodSpec{Affinity: &corev1.Affinity{
				PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					TopologyKey: "zone", LabelSelector: sel(), MatchLabelKeys: []string{"rev", "missing"}, MismatchLabelKeys: []string{"track"}}}},
				PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1,
					PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "zone", LabelSelector: sel(), MismatchLabelKeys: []string{"rev"}}}}},
			}},
			check: func(t *testing.T, p *corev1.Pod) {
				got := p.Spec.Affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchExpressions
				want := []metav1.LabelSelectorRequirement{req("rev", metav1.LabelSelectorOpIn, "2"), req("track", metav1.LabelSelectorOpNotIn, "canary")}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("affinity expressions %+v, want %+v", got, want)
				}
				got = p.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.LabelSelector.MatchExpressions
				want = []metav1.LabelSelectorRequirement{req("rev", metav1.LabelSelectorOpNotIn, "2")}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("anti-affinity expressions %+v, want %+v", got, want)
				}
			},
		},
		{
			name: "nil label selector stays nil (matches nothing)",
			spec: corev1.PodSpec{Affinity: &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey: "zone", MatchLabelKeys: []string{"rev"}}}}}},
			check: func(t *testing.T, p *corev1.Pod) {
				if s := p.Spec.Affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector; s != nil {
					t.Errorf("selector %+v, want nil", s)
				}
			},
		},
		{
			name: "topology spread matchLabelKeys",
			spec: corev1.PodSpec{TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone",
				WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: sel(), MatchLabelKeys: []string{"rev"}}}},
			check: func(t *testing.T, p *corev1.Pod) {
				got := p.Spec.TopologySpreadConstraints[0].LabelSelector.MatchExpressions
				if want := []metav1.LabelSelectorRequirement{req("rev", metav1.LabelSelectorOpIn, "2")}; !reflect.DeepEqual(got, want) {
					t.Errorf("expressions %+v, want %+v", got, want)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The store sets creationTimestamp (from its clock) before
			// PrepareForCreate runs.
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: labels, CreationTimestamp: metav1.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, Spec: tt.spec}
			preparePodCreate(p)
			tt.check(t, p)
		})
	}
}
