// Package controllerref is the owner-reference toolkit controllers share
// (client-go's metav1 controller-ref helpers plus kube-controller-manager's
// ControllerRefManager, written from scratch):
//
//   - GetControllerOf / GetControllerOfNoCopy / IsControlledBy read the
//     controller reference (the owner reference with controller=true);
//   - NewControllerRef builds the reference a controller puts on what it
//     creates (controller and blockOwnerDeletion true);
//   - AdoptPatch and ReleasePatch build upstream's strategic merge patches
//     that add a controller reference to an orphan or remove ours from an
//     object, each carrying the object's UID as a precondition;
//   - Manager claims objects for one controller: objects controlled by it
//     stay claimed while its selector matches and are released when it no
//     longer does; orphans that match are adopted; Claim (generic) does this
//     for a list and returns the claimed ones.
//
// Invariants:
//   - An object controlled by another owner is never touched.
//   - An owner being deleted neither adopts nor releases; an object being
//     deleted, or in another namespace than a namespaced owner, is never
//     adopted.
//   - Before the first adoption of a claim pass, CanAdopt runs once (usually
//     RecheckDeletionTimestamp: a live read proving the owner still exists
//     with the same UID and is not being deleted); if it fails nothing is
//     adopted.
//   - Every patch names the object's UID: a patch that reaches a recreated
//     object of the same name fails instead of changing it. A release that
//     finds the object gone (404) or no longer ours (422) succeeds.
package controllerref
