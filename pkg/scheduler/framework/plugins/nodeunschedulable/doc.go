// Package nodeunschedulable is the NodeUnschedulable plugin, as upstream
// kube-scheduler's: a node with spec.unschedulable (cordoned) is rejected
// ("node(s) were unschedulable", UnschedulableAndUnresolvable) unless the
// pod tolerates the node.kubernetes.io/unschedulable:NoSchedule taint.
//
// Invariants: Filter reads only the pod's tolerations and the node's
// spec; the pod is requeued by a schedulable node being added, a node
// becoming schedulable, or the pod itself gaining the toleration.
package nodeunschedulable
