package scheduling

import (
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// HighestUserDefinablePriority is the largest value a PriorityClass not
	// created by the system may have. Higher values are reserved so that
	// system-critical pods always win preemption.
	HighestUserDefinablePriority int32 = 1000000000
	// SystemCriticalPriority is the value of system-cluster-critical; the
	// node-critical class is 1000 above it.
	SystemCriticalPriority int32 = 2 * HighestUserDefinablePriority
	// SystemPriorityClassPrefix is reserved for the built-in classes.
	SystemPriorityClassPrefix = "system-"
	// SystemClusterCritical and SystemNodeCritical name the built-in classes.
	SystemClusterCritical = SystemPriorityClassPrefix + "cluster-critical"
	SystemNodeCritical    = SystemPriorityClassPrefix + "node-critical"
)

// DefaultPriorityClass fills preemptionPolicy: by default, pods of a class
// may preempt pods of lower priority.
func DefaultPriorityClass(pc *schedulingv1.PriorityClass) {
	if pc.PreemptionPolicy == nil {
		pc.PreemptionPolicy = new(corev1.PreemptLowerPriority)
	}
}

// SystemPriorityClasses returns fresh copies of the two classes the API server
// creates at start-up (and recreates if deleted). Upstream's literals leave
// preemptionPolicy unset and get PreemptLowerPriority from defaulting on
// create; we set it here so the objects are already what gets stored.
func SystemPriorityClasses() []*schedulingv1.PriorityClass {
	return []*schedulingv1.PriorityClass{
		{
			ObjectMeta:       metav1.ObjectMeta{Name: SystemNodeCritical},
			Value:            SystemCriticalPriority + 1000,
			Description:      "Used for system critical pods that must not be moved from their current node.",
			PreemptionPolicy: new(corev1.PreemptLowerPriority),
		},
		{
			ObjectMeta:       metav1.ObjectMeta{Name: SystemClusterCritical},
			Value:            SystemCriticalPriority,
			Description:      "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
			PreemptionPolicy: new(corev1.PreemptLowerPriority),
		},
	}
}
