// Package cache is the scheduler's cache of nodes and pods and the
// per-cycle Snapshot plugins read, with upstream kube-scheduler's
// semantics (pkg/scheduler/backend/cache): NodeInfos with requested
// resources, host ports, affinity pods, PVC references and image states;
// assumed pods; and a node tree that orders nodes round-robin over zones.
//
// Cache is fed by the scheduler's informer handlers (AddPod/UpdatePod/
// RemovePod for bound pods, AddNode/UpdateNode/RemoveNode) and by the
// scheduling cycle (AssumePod when a node is chosen, FinishBinding when
// the binding was sent, ForgetPod when it failed). Run expires assumed
// pods whose binding never showed up (Config.AssumedPodTTL after
// FinishBinding, 15 minutes by default). scheduler_cache_size{type=
// "assumed_pods"|"pods"|"nodes"} is read from the cache at scrape time.
//
// Snapshot implements framework.SharedLister. NewSnapshot builds one from
// pods and nodes for tests (plugin tests use it); the scheduler keeps one
// Snapshot and refreshes it with Cache.UpdateSnapshot at the start of
// every cycle.
//
// Invariants:
//   - A pod (by UID) is counted on at most one node's NodeInfo: the one its
//     cached version's spec.nodeName names. AddPod of an assumed pod on
//     another node moves it; UpdatePod follows the new version's node.
//   - An assumed pod is counted until the informer confirms it (AddPod),
//     ForgetPod removes it, or it expires: only after FinishBinding, and
//     only once the TTL has passed. A confirmed pod never expires.
//   - Pods of a node the cache does not know (not yet added, or removed
//     while its pods' deletions are pending) stay on a node-less NodeInfo,
//     which snapshots never show; it is dropped with its last pod.
//   - Every change to a NodeInfo gives it the cache's next generation and
//     moves it to the head of a list ordered by most recent change;
//     UpdateSnapshot walks that list only down to the snapshot's
//     generation, so it copies (NodeInfo.Snapshot) only changed nodes,
//     into the snapshot's existing NodeInfo pointers. The ordered lists are
//     rebuilt only when the node tree changed (node added, removed, moved
//     zone) or a node's affinity membership changed; the used-claims set
//     only when a node's set of claims changed.
//   - Snapshot.List() holds only NodeInfos with a node, in the node tree's
//     order: the zones in the order first seen, taking one node of each in
//     turn; HavePodsWithAffinityList and HavePodsWithRequiredAntiAffinityList
//     are sub-sequences of it.
//   - A NodeInfo's ImageStates holds, for each image name of the node,
//     the size and the number of nodes that have it. Maps and summaries are
//     never modified once set (snapshots share them): when an image's node
//     count changes, the nodes holding it get new maps and a new generation
//     at the next UpdateSnapshot.
//   - Snapshot.Get answers only nodes that exist ("nodeinfo not found for
//     node name %q" otherwise, upstream's message).
//   - A snapshot is never modified except by UpdateSnapshot, which must
//     not run while a cycle reads it; the cache is safe for concurrent use.
//   - No package-level mutable state: the generation counter belongs to
//     the Cache.
package cache
