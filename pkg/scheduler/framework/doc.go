// Package framework is skiff's scheduling framework API, the same
// extension points as upstream kube-scheduler's: a pod goes through
// PreEnqueue (may it enter the queue at all), QueueSort (its place in
// activeQ), then in its scheduling cycle PreFilter → Filter (per node,
// in parallel) → PostFilter (preemption, only when no node fits) →
// PreScore → Score (per node, in parallel) → NormalizeScore → Reserve →
// Permit, and in its binding cycle (asynchronous) PreBind → Bind →
// PostBind; Unreserve undoes Reserve when anything after it fails.
//
// What is here: the plugin interfaces (one per extension point),
// Status/Code, CycleState (per-cycle scratch space plugins share),
// NodeInfo/PodInfo/QueuedPodInfo/Resource (the scheduler's view of
// nodes and pods, with PodRequests computing a pod's requests as
// upstream's resource helper), ClusterEvent/ActionType/QueueingHint
// (which events may make a rejected pod schedulable), Handle (what a
// plugin gets: the cycle's snapshot, the client, the informer factory,
// the event recorder, the runners preemption needs), Registry, and
// FitError (upstream's "0/N nodes are available: ..." message). The
// runtime that runs a profile's plugins is in ./runtime, the in-tree
// plugins in ./plugins/<name>.
//
// Invariants:
//   - The framework never imports the scheduler, its queue or cache, or
//     any plugin: plugins depend on it, never the reverse.
//   - A nil *Status is Success.
//   - A snapshot NodeInfo is never mutated by Filter or Score plugins;
//     simulations (nominated pods, preemption) work on NodeInfo.Snapshot()
//     copies and CycleState.Clone().
//   - NodeInfo methods never set Generation; its owner (the cache) does.
//   - No package-level mutable state.
package framework
