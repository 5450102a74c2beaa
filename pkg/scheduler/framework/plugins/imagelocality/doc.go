// Package imagelocality is the ImageLocality plugin, as upstream
// kube-scheduler's: a Score plugin favouring nodes that already hold the
// pod's container images (init containers included), by the images'
// sizes scaled by how widely they are spread over the cluster's nodes
// (to avoid piling pods onto the few nodes that have an image).
//
// Invariants: Score reads only the pod, the node's ImageStates and the
// number of nodes in the snapshot; scores are in [0, 100] (the raw sum
// is clamped to [23 MiB, 1000 MiB × containers] and scaled linearly), so
// there is no NormalizeScore. Image names are matched as upstream 1.34
// does: a name without a tag or digest gets ":latest"; nothing else is
// rewritten (the node reports every name an image has).
package imagelocality
