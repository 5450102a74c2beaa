// Package helper holds what several in-tree scheduler plugins share, as
// upstream's plugins/helper: typed access to the objects of a queueing
// hint (As) and the broken-linear scoring function (shape scores).
//
// Invariants: pure functions of their arguments; depends on the
// framework's types and k8s.io/api only, never on a plugin.
package helper
