// Package podutil holds the pod predicates and the slow-start batching
// the workload controllers share (upstream's podutil.IsPodReady,
// IsPodAvailable, controller.IsPodActive and slowStartBatch).
//
// Invariants: availability is judged at a time the caller passes (its
// injected clock), never the wall clock; SlowStartBatch stops after the
// first batch with a failure.
package podutil
