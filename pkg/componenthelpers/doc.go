// Package componenthelpers is the home of helpers several components share
// (the scheduler's plugins, the DaemonSet and taint-eviction controllers),
// as upstream's k8s.io/component-helpers module: ./scheduling/corev1helpers
// (taints and tolerations, pod priority) and ./scheduling/nodeaffinity (a
// pod's nodeSelector and node affinity against a node).
//
// Invariants: the packages below depend on k8s.io/api and
// k8s.io/apimachinery only (test/arch checks it), hold no state, and keep
// upstream's semantics exactly, since the scheduler and the controllers
// must agree on which pod may run where.
package componenthelpers
