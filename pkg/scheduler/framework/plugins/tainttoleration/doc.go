// Package tainttoleration is the TaintToleration plugin, as upstream
// kube-scheduler 1.34's: Filter rejects a node with a NoSchedule or
// NoExecute taint the pod does not tolerate (UnschedulableAndUnresolvable,
// "node(s) had untolerated taint(s)": 1.34 patch releases no longer name
// the taint, upstream PR 135023); Score counts the node's PreferNoSchedule
// taints the pod does not tolerate, normalized reversed (fewest intolerable
// taints = 100); default weight 3.
//
// Invariants: the toleration rules come from
// pkg/componenthelpers/scheduling/corev1helpers (shared with the
// taint-eviction and DaemonSet controllers); Filter and Score do not
// allocate; the pod is requeued by a node added or re-tainted so that it
// becomes tolerable, or by the pod itself gaining a toleration.
package tainttoleration
