// Package history is the ControllerRevision history shared by the
// DaemonSet and StatefulSet controllers (upstream's pkg/controller/history
// plus the DaemonSet's revision helpers).
//
// A revision snapshots an owner's pod template as upstream's patch
// ({"spec":{"template":{...,"$patch":"replace"}}}, JSON keys sorted), which
// `kubectl rollout undo` applies as a strategic merge patch and `kubectl
// rollout history` reads. Names are "<owner>-<hash>":
//   - HashControllerRevision is upstream's StatefulSet hash: FNV-32 (not
//     32a) of the patch bytes, then the collision count in decimal, encoded
//     with rand.SafeEncodeString. The bytes equal upstream's for the same
//     object, so revision names equal upstream's (checked against upstream
//     1.34's kube-controller-manager in test/compat).
//   - ComputeHash is upstream's pod-template-hash (DaemonSet revisions and
//     pod labels, Deployment ReplicaSets): FNV-32a of the template's spew
//     dump (dump.ForHash), then the collision count as 8 little-endian
//     bytes. The dump lists every field of the Go struct, so the value
//     equals upstream's built on the same k8s.io/api version (v0.37 here;
//     upstream 1.34's differs for the same template, as upstream releases
//     differ from one another; test/compat/revisions_test.go).
//
// Invariants:
//   - History lists only revisions owned by the parent or orphans its
//     selector matches; adoption goes through controllerref with a live
//     re-check of the parent.
//   - Create never overwrites: a name taken by a revision with other data
//     bumps the collision count and retries (upstream's behaviour).
//   - Truncation never deletes a revision still named by a live pod, the
//     current or the update revision.
package history
