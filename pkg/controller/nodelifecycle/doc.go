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
// The same workers keep beta.kubernetes.io/os and beta.kubernetes.io/arch
// equal to kubernetes.io/os and arch (added when missing), as upstream's
// reconcileNodeLabels. A pod newly bound to a node whose Ready condition
// is not True gets its own Ready condition set False (upstream's
// processPod, 4 workers on the node_lifecycle_controller_pods queue).
//
// Health monitoring (upstream's monitorNodeHealth), every
// NodeMonitorPeriod (5s) of the injected clock, one goroutine:
//   - A node is alive while its Ready condition's lastHeartbeatTime changes
//     or its Lease in kube-node-lease is renewed (renewTime newer than last
//     seen); the controller notes when it last saw either (its own clock).
//   - Silent for longer than NodeMonitorGracePeriod (50s, upstream's since
//     1.32), or NodeStartupGracePeriod (60s, from creation) for a node that
//     never posted a Ready condition, its Ready, MemoryPressure,
//     DiskPressure and PIDPressure conditions become Unknown
//     (NodeStatusUnknown "Kubelet stopped posting node status.", or
//     NodeStatusNeverUpdated "Kubelet never posted node status." for a
//     condition it never posted), written with an update of the status.
//   - When this pass takes Ready away from True, the node's pods that have
//     a Ready condition get it set to False (MarkPodsNotReady; retried on
//     the next pass on failure), with a NodeNotReady event on the node and
//     on each pod.
//   - Taint-based eviction marking: a node whose Ready condition was seen
//     False (Unknown) is queued for not-ready:NoExecute
//     (unreachable:NoExecute), the two being exclusive (the opposite one is
//     swapped at once); a Ready node loses both. The queue is per zone
//     (topology.kubernetes.io/region and zone labels) and drained right
//     after each health pass at --node-eviction-rate (0.1 node/s, burst 1);
//     upstream drains it every 100ms.
//   - Zone states as upstream's: a zone with no Ready node is fully
//     disrupted, one with more than 2 not Ready making at least
//     --unhealthy-zone-threshold (0.55) of it partially (tainting rate 0 up
//     to --large-cluster-size-threshold nodes, else
//     --secondary-node-eviction-rate). When every zone is fully disrupted
//     (a single-node cluster whose node is down, a control plane cut off
//     from all its nodes), every NoExecute taint of the controller is taken
//     off and tainting stops until a node is Ready again. Nodes labelled
//     node.kubernetes.io/exclude-disruption do not count.
//   - RegisteredNode and RemovingNode events when a node is first seen and
//     when it is gone; a newly seen node loses the NoExecute taints.
//
// Metrics (Config.Registry), upstream's: node_collector_zone_health,
// node_collector_zone_size, node_collector_unhealthy_nodes_in_zone (by
// zone), node_collector_evictions_total (NoExecute taintings by zone),
// node_collector_update_all_nodes_health_duration_seconds.
//
// Deleting the pods that do not tolerate a NoExecute taint is the
// taint-eviction controller's (package tainteviction), not this one's.
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
