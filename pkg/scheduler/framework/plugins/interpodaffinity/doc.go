// Package interpodaffinity is the InterPodAffinity scheduler plugin with
// upstream kube-scheduler 1.34's semantics: required pod affinity and
// anti-affinity of the incoming pod, required anti-affinity of the pods
// already running (symmetry), and the preferred terms of both sides (plus
// the existing pods' required affinity weighted by hardPodAffinityWeight)
// as a score over topology domains.
//
// PreFilter counts, per topology pair (key, value), the existing pods
// whose required anti-affinity matches the incoming pod, the existing
// pods matching all of the incoming pod's required affinity terms, and
// those matching each of its anti-affinity terms; Filter then only looks
// the node's topology values up in those counts. PreScore sums the
// weights per topology pair; Score adds the pairs of the node;
// NormalizeScore maps onto 0..100 over the min/max of the nodes.
//
// Invariants:
//   - Filter and Score never walk pods: everything per pod happens once
//     per cycle in PreFilter/PreScore, in parallel over blocks of nodes
//     (one map per block, not per node).
//   - Per-node results of PreFilter and PreScore are memoized across
//     cycles (memo.go) under a key holding everything they depend on
//     besides the node, and reused only for the same NodeInfo object with
//     the same Generation (the cache bumps it on every change of the node
//     or its pods; Generation 0 is never memoized). Replicas of one
//     workload then cost O(nodes) per cycle, not O(pods).
//   - The incoming pod's namespaceSelector is resolved once per cycle into
//     a namespace set (upstream's mergeAffinityTermNamespacesIfNotEmpty);
//     existing pods' terms match the incoming pod with its namespace's
//     labels.
//   - The PreFilter state is deep-copied by Clone (preemption changes the
//     counts with AddPod/RemovePod on a clone); the PreScore state is
//     never changed after PreScore.
//   - Reasons and codes are upstream's: affinity → UnschedulableAndUnresolvable,
//     anti-affinity of either side → Unschedulable.
package interpodaffinity
