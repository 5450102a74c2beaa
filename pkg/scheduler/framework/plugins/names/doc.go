// Package names holds the names of the in-tree scheduler plugins,
// upstream's, as used in KubeSchedulerConfiguration profiles, events and
// metrics labels.
//
// Invariants: constants only, no imports (the configuration API
// pkg/scheduler/apis/config, the framework runtime, the plugins and the
// in-tree registry all use it); the names are upstream kube-scheduler's,
// spelled as upstream spells them.
package names
