package core

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// preparePodCreate does what upstream's pod strategy does to a new pod
// besides resetting its status: a pod with scheduling gates gets the
// PodScheduled=False/SchedulingGated condition, and the matchLabelKeys /
// mismatchLabelKeys of its pod (anti-)affinity terms and the
// matchLabelKeys of its topology spread constraints are merged into
// their label selectors (key In / NotIn the pod's value for that key;
// features MatchLabelKeysInPodAffinity, GA, and
// MatchLabelKeysInPodTopologySpreadSelectorMerge, beta and on, in 1.34).
func preparePodCreate(p *corev1.Pod) {
	applySchedulingGatedCondition(p)
	if a := p.Spec.Affinity; a != nil {
		if pa := a.PodAffinity; pa != nil {
			mergeAffinityLabelKeys(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, p.Labels)
		}
		if pa := a.PodAntiAffinity; pa != nil {
			mergeAffinityLabelKeys(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, p.Labels)
		}
	}
	for i := range p.Spec.TopologySpreadConstraints {
		c := &p.Spec.TopologySpreadConstraints[i]
		if c.LabelSelector != nil {
			appendLabelKeys(c.LabelSelector, c.MatchLabelKeys, metav1.LabelSelectorOpIn, p.Labels)
		}
	}
}

// applySchedulingGatedCondition adds the SchedulingGated condition to a
// gated pod that has no PodScheduled condition yet, as of the pod's
// creation (the store stamps creationTimestamp from its clock first).
func applySchedulingGatedCondition(p *corev1.Pod) {
	if len(p.Spec.SchedulingGates) == 0 {
		return
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return
		}
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated,
		Message: "Scheduling is blocked due to non-empty scheduling gates", LastTransitionTime: p.CreationTimestamp,
	})
}

func mergeAffinityLabelKeys(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm, labels map[string]string) {
	for i := range preferred {
		mergeTermLabelKeys(&preferred[i].PodAffinityTerm, labels)
	}
	for i := range required {
		mergeTermLabelKeys(&required[i], labels)
	}
}

// mergeTermLabelKeys: a nil label selector matches nothing and stays so.
func mergeTermLabelKeys(t *corev1.PodAffinityTerm, labels map[string]string) {
	if t.LabelSelector == nil || len(t.MatchLabelKeys) == 0 && len(t.MismatchLabelKeys) == 0 {
		return
	}
	appendLabelKeys(t.LabelSelector, t.MatchLabelKeys, metav1.LabelSelectorOpIn, labels)
	appendLabelKeys(t.LabelSelector, t.MismatchLabelKeys, metav1.LabelSelectorOpNotIn, labels)
}

// appendLabelKeys adds "key op (the pod's value)" for each key the pod
// has a label for.
func appendLabelKeys(sel *metav1.LabelSelector, keys []string, op metav1.LabelSelectorOperator, labels map[string]string) {
	for _, k := range keys {
		if v, ok := labels[k]; ok {
			sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: op, Values: []string{v}})
		}
	}
}
