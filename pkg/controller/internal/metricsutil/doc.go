// Package metricsutil registers a controller's own Prometheus metrics on
// the controller manager's registry.
//
// Invariant: registering a collector that is already registered there
// (a second controller instance, a restarted one in the same process)
// returns the existing one, so every instance adds to the same series.
package metricsutil
