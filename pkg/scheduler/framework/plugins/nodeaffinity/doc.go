// Package nodeaffinity is the NodeAffinity plugin, as upstream
// kube-scheduler 1.34's: PreFilter parses the pod's nodeSelector and
// required node affinity once (Skip when there is neither, nor a
// scheduler-enforced addedAffinity) and narrows the nodes to those named
// when every required term has a metadata.name In field requirement;
// Filter rejects a node not matching (UnschedulableAndUnresolvable, "node(s)
// didn't match Pod's node affinity/selector", or "node(s) didn't match
// scheduler-enforced node affinity" for the args' addedAffinity); Score is
// the sum of the weights of the preferred terms (the pod's and addedAffinity's)
// the node matches, normalized to 0..100 proportionally to the best node.
//
// Invariants: the matchers come from pkg/componenthelpers/scheduling/nodeaffinity
// (shared with the DaemonSet controller and PodTopologySpread); Filter and
// Score do not allocate; the PreFilter/PreScore state is immutable (Clone
// returns itself); a pod is requeued only by a node added or relabelled
// into matching its required affinity.
package nodeaffinity
