// Package storageapi defines the storage.k8s.io/v1 resources: storage
// classes, CSI drivers and nodes, CSI storage capacities, volume
// attachments (with their status subresource) and volume attributes
// classes. It holds upstream's defaulting and validation as pure functions
// over the k8s.io/api types, and the registry Definitions (names, strategy,
// subresources) the API server serves them from.
//
// Invariants: defaulting is idempotent and only fills unset fields;
// validation never mutates; error paths and messages follow upstream's so
// that kubectl prints the same errors (including upstream's misspelt
// "spec.attachedRequired").
package storageapi
