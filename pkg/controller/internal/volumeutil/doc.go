// Package volumeutil holds what the volume controllers share (the
// persistent volume binder, the local-path provisioner, the PVC and PV
// protection controllers): upstream's annotation and finalizer names, the
// storage class of a claim or volume as upstream reads it, the default
// StorageClass lookup, and a pod index by the claims the pods use.
//
// Invariants: every function is pure over its arguments (listers and
// indexers are read, never written); names and precedence rules are
// upstream's (component-helpers/storage/volume).
package volumeutil
