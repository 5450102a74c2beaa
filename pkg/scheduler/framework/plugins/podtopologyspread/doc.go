// Package podtopologyspread is the PodTopologySpread plugin, as upstream
// kube-scheduler 1.34's.
//
// Constraints are the pod's topologySpreadConstraints (matchLabelKeys
// merged into the selector from the pod's labels, as the API server also
// does), or, for a pod without any, the args' defaultConstraints
// (defaultingType List) or the system defaults (hostname maxSkew 3, zone
// maxSkew 5, ScheduleAnyway) whose selector is built from the Services
// selecting the pod and its controlling ReplicationController, ReplicaSet
// or StatefulSet (no such owner nor Service: no default constraints).
//
//   - PreFilter (DoNotSchedule constraints; Skip without): over all nodes
//     having every topology key and passing nodeAffinityPolicy (Honor by
//     default: the pod's nodeSelector/required affinity) and
//     nodeTaintsPolicy (Ignore by default), counts the non-terminating pods
//     of the pod's namespace matching each selector per topology value, and
//     keeps the two smallest domains per constraint (critical paths).
//   - Filter: a node missing a topology key is UnschedulableAndUnresolvable
//     ("... (missing required label)"); a node where matching + self-match −
//     global minimum > maxSkew is Unschedulable ("node(s) didn't match pod
//     topology spread constraints"); the global minimum is 0 when fewer
//     eligible domains than minDomains exist.
//   - AddPod/RemovePod update the counts for preemption and nominated pods.
//   - PreScore/Score (ScheduleAnyway constraints): a node's raw score is the
//     sum over constraints of count·log(domains+2) + maxSkew−1 (hostname
//     counts per node), rounded; NormalizeScore maps to 100·(max+min−s)/max,
//     nodes missing topology keys getting 0; default weight 2.
//
// PreFilter's and PreScore's per-node counts are memoized across cycles
// (memo.go) under a
// key holding everything they depend on besides the node, valid for the
// same *NodeInfo with the same Generation (Generation 0 never matches):
// replicas of one workload recount only the nodes that changed.
//
// Invariants: Filter and Score do not allocate (except the status of a
// rejected node); memoized counts equal fresh ones; the PreFilter state is
// cloned deeply (counts and critical paths) for simulations and guarded by
// a lock for AddPod/RemovePod; the PreScore state is read-only after
// PreScore except for its atomic counters filled inside PreScore.
package podtopologyspread
