// Package storagemigration defines storagemigration.k8s.io/v1
// storageversionmigrations (+status), stable and served by default since
// Kubernetes 1.37: upstream's validation as pure functions over the
// k8s.io/api types and the registry Definition the API server serves them
// from. The migration itself (rewriting every object of the resource) is
// kube-controller-manager's work; skiff stores and validates the requests.
//
// Invariants: the spec is immutable; status.resourceVersion, once set,
// never changes; Succeeded and Failed, once true, stay true and exclude
// each other and Running. Validation never mutates; error paths and
// messages follow upstream's.
package storagemigration
