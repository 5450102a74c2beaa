// Package corev1helpers is upstream's
// k8s.io/component-helpers/scheduling/corev1: whether tolerations tolerate
// taints (Toleration.ToleratesTaint as in Kubernetes 1.34: the alpha
// comparison operators Gt/Lt never match), the first untolerated taint of a
// node, and a pod's priority.
//
// Invariants: pure functions over k8s.io/api types; no allocation on the
// per-node paths (the scheduler calls them for every node).
package corev1helpers
