// Package runtime runs one scheduling profile's plugins: it builds them
// from a framework.Registry (one instance per plugin, whatever number of
// extension points it serves), orders them per extension point as the
// profile says (explicit per-point lists first, then the multi-point
// plugins that implement the point, minus the disabled ones, as
// upstream's expansion), and implements framework.Handle and the
// Run*Plugins calls the scheduler makes in a scheduling and a binding
// cycle.
//
// Invariants:
//   - Filter and Score run over nodes in parallel (the profile's
//     Parallelizer); everything else runs in the calling goroutine.
//   - Plugins run in the profile's order; the first rejecting filter ends
//     a node's filtering; Unreserve runs in reverse order.
//   - A Score plugin's weighted total is checked against MaxTotalScore
//     when the framework is built, as upstream.
//   - The package never imports a plugin.
package runtime
