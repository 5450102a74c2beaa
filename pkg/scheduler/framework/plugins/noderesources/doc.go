// Package noderesources holds the NodeResourcesFit and
// NodeResourcesBalancedAllocation plugins, as upstream kube-scheduler
// 1.34's.
//
// NodeResourcesFit: PreFilter computes the pod's requests
// (framework.PodRequests: containers, init and sidecar containers,
// overhead, pod-level resources) into CycleState ("PreFilterNodeResourcesFit");
// Filter rejects a node without room: "Too many pods", "Insufficient cpu",
// "Insufficient memory", "Insufficient ephemeral-storage", "Insufficient
// <resource>" (Unschedulable, or UnschedulableAndUnresolvable when the
// request exceeds the node's allocatable outright, so that preemption
// cannot help). Extended resources named in ignoredResources or whose
// domain is in ignoredResourceGroups are not checked. Score ranks nodes
// by the scoring strategy (LeastAllocated by default over cpu and memory,
// MostAllocated, or RequestedToCapacityRatio's broken-linear shape) over
// the nodes' non-zero requests (a container without a cpu/memory request
// counts 100m / 200Mi) plus the pod's.
//
// NodeResourcesBalancedAllocation scores 1 − the standard deviation of
// the requested fractions of the configured resources (cpu and memory by
// default), over real (not non-zero) requests; PreScore Skips
// best-effort pods (no request on any of the resources), as upstream.
//
// Invariants: Filter and Score never change the NodeInfo and allocate
// nothing on the success path (per-resource decisions — which resource,
// ignored or not, its reason string — are made once in PreFilter or at
// construction); scores are in [0, 100] without NormalizeScore.
package noderesources
