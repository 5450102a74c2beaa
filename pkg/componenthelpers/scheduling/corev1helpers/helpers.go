package corev1helpers

import (
	corev1 "k8s.io/api/core/v1"
)

// PodPriority is the pod's spec.priority, 0 when unset.
func PodPriority(pod *corev1.Pod) int32 {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority
	}
	return 0
}

// ToleratesTaint reports whether t tolerates taint: an empty effect
// matches every effect, an empty key every key (with Exists), Exists any
// value, Equal (or no operator) the same value. Gt/Lt (alpha after 1.34)
// never match.
func ToleratesTaint(t *corev1.Toleration, taint *corev1.Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case "", corev1.TolerationOpEqual:
		return t.Value == taint.Value
	case corev1.TolerationOpExists:
		return true
	}
	return false
}

// TolerationsTolerateTaint reports whether any toleration tolerates taint.
func TolerationsTolerateTaint(tolerations []corev1.Toleration, taint *corev1.Taint) bool {
	for i := range tolerations {
		if ToleratesTaint(&tolerations[i], taint) {
			return true
		}
	}
	return false
}

// TaintsFilterFunc selects the taints a check looks at.
type TaintsFilterFunc func(*corev1.Taint) bool

// FindMatchingUntoleratedTaint returns the first taint of taints accepted
// by inclusionFilter (nil: every taint) that no toleration tolerates.
func FindMatchingUntoleratedTaint(taints []corev1.Taint, tolerations []corev1.Toleration, inclusionFilter TaintsFilterFunc) (corev1.Taint, bool) {
	for i := range taints {
		if inclusionFilter != nil && !inclusionFilter(&taints[i]) {
			continue
		}
		if !TolerationsTolerateTaint(tolerations, &taints[i]) {
			return taints[i], true
		}
	}
	return corev1.Taint{}, false
}

// DoNotScheduleTaint selects the taints that keep pods off a node:
// NoSchedule and NoExecute (upstream's DoNotScheduleTaintsFilterFunc).
func DoNotScheduleTaint(t *corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}
