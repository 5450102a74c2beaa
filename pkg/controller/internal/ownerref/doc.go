// Package ownerref holds the controllerRef claiming the workload controllers
// share (upstream's ControllerRefManager): a controller owns the objects
// whose controller reference names its UID, adopts orphans its selector
// matches and releases owned objects its selector no longer matches.
//
// Invariants: an object controlled by another owner is never touched; an
// owner being deleted neither adopts nor releases; adoption happens only
// after a live (uncached) read proves the owner still exists with the same
// UID and is not being deleted (checked at most once per claim pass); every
// patch carries the object's UID as a precondition.
package ownerref
