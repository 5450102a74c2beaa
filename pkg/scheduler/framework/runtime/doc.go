// Package runtime runs one scheduling profile's plugins: it builds them
// from a framework.Registry (one instance per plugin, whatever number of
// extension points it serves), orders them per extension point with the
// profile's expansion (config.KubeSchedulerProfile.Expand, told by the
// runtime which points each built plugin implements), and implements framework.Handle and the
// Run*Plugins calls the scheduler makes in a scheduling and a binding
// cycle.
//
// Invariants:
//   - Filter and Score run over nodes in parallel (the profile's
//     Parallelizer, UntilCPU: at most GOMAXPROCS goroutines, the caller's
//     among them); everything else runs in the calling goroutine.
//   - The Filter plugins a cycle runs are computed once, after PreFilter
//     (CycleState.FilterPlugins), not looked up by name per node.
//   - RunScorePlugins returns fresh memory; ScoreNodes fills a caller's
//     ScoreBuffer, whose contents the next call replaces.
//   - Plugins run in the profile's order; the first rejecting filter ends
//     a node's filtering; Unreserve runs in reverse order.
//   - The package never imports a plugin.
package runtime
