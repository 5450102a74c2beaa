// Package nodelifecycle is the node lifecycle controller (upstream's
// node-lifecycle-controller, alias nodelifecycle): it keeps the taints of
// every Node in step with what its status and spec say.
//
// NoSchedule tainting (upstream's doNoScheduleTaintingPass), on every add
// and update of a Node, by Workers workers (upstream's 8):
//
//	Ready False                 node.kubernetes.io/not-ready
//	Ready Unknown               node.kubernetes.io/unreachable
//	MemoryPressure True         node.kubernetes.io/memory-pressure
//	DiskPressure True           node.kubernetes.io/disk-pressure
//	PIDPressure True            node.kubernetes.io/pid-pressure
//	NetworkUnavailable True     node.kubernetes.io/network-unavailable
//	spec.unschedulable          node.kubernetes.io/unschedulable
//
// A node created through the API carries not-ready:NoSchedule from the
// TaintNodesByCondition admission plugin; this pass takes it off once the
// node's Ready condition is True (or absent, as upstream).
//
// Invariants:
//   - Only the NoSchedule taints of the table are added or removed; every
//     other taint (other keys, other effects) is kept as it is.
//   - Taints are written with a merge patch of spec.taints carrying the
//     resourceVersion they were computed from; a conflict re-reads the node
//     from the server and computes again (bounded retries, then the queue's
//     rate-limited retry).
//   - An added taint's timeAdded is the Config's Clock's time, as upstream's.
package nodelifecycle
