// Package schedulinggates is the SchedulingGates plugin, as upstream
// kube-scheduler's: a PreEnqueue plugin that keeps a pod with
// spec.schedulingGates out of activeQ ("waiting for scheduling gates:
// [a b]", UnschedulableAndUnresolvable) until the last gate is removed.
//
// Invariants: PreEnqueue reads only the pod; the pod is requeued only by
// the removal of its own last gate (UpdatePodSchedulingGatesEliminated).
package schedulinggates
