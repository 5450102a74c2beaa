// Package helper holds what several in-tree scheduler plugins share, as
// upstream's plugins/helper: typed access to the objects of a queueing
// hint (As), the broken-linear scoring function (shape scores), the
// default score normalization (DefaultNormalizeScore), the selector of a
// pod's Services and controller for default spreading (DefaultSelector),
// least-recently-used eviction of the plugins' memo tables
// (DeleteLeastRecentlyUsed), and, for the volume and DRA plugins, reads of cluster objects from
// informer listers with upstream's NotFound messages (GetObject,
// ErrorAsStatus, InformerFactory) and claim/volume class names.
//
// Invariants: pure functions of their arguments; depends on the
// framework's types, the client cache's listers and k8s.io/api only,
// never on a plugin.
package helper
