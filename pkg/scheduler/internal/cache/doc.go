// Package cache is the scheduler's cache of nodes and pods and the
// per-cycle Snapshot plugins read, with upstream kube-scheduler's
// semantics (pkg/scheduler/backend/cache): NodeInfos with requested
// resources, host ports, affinity pods, PVC references and image states;
// assumed pods; and a node tree that orders nodes round-robin over zones.
//
// Snapshot implements framework.SharedLister. NewSnapshot builds one from
// pods and nodes for tests (plugin tests use it); the scheduler keeps one
// Snapshot and refreshes it from the Cache at the start of every cycle.
//
// Invariants:
//   - Snapshot.List() holds only NodeInfos with a node, in the node tree's
//     order: the zones in the order first seen, taking one node of each in
//     turn; HavePodsWithAffinityList and HavePodsWithRequiredAntiAffinityList
//     are sub-sequences of it.
//   - Snapshot.Get answers only nodes that exist ("nodeinfo not found for
//     node name %q" otherwise, upstream's message).
//   - A snapshot is never modified while a cycle reads it.
//   - No package-level mutable state.
package cache
