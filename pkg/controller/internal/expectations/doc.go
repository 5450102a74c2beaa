// Package expectations tracks, per controller key, the pod creations and
// deletions a controller issued and its informer has not observed yet
// (upstream's UIDTrackingControllerExpectations), shared by the
// ReplicaSet, DaemonSet and other pod-creating controllers.
//
// Invariants: a key with unobserved expectations is not Satisfied until
// every creation and deletion is observed or Timeout (5 minutes) passed
// on the injected clock; deletions are tracked by pod key, so observing
// the same deletion twice never lowers the count twice.
package expectations
