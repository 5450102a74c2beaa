// Package plugins assembles the in-tree scheduler plugins, upstream's
// default set, into a framework.Registry (NewInTreeRegistry). Each plugin
// lives in its own package under this one, named after it.
//
// Invariants: plugins depend on pkg/scheduler/framework (and
// pkg/scheduler/apis/config for their args), never on the scheduler, its
// queue or its cache; a plugin never calls the API server from Filter or
// Score (it reads the cycle's snapshot and informer listers).
package plugins
