// Package v1 holds the apiregistration.k8s.io/v1 API types (APIService),
// written to match the wire format of k8s.io/kube-aggregator's: importing
// that module would add k8s.io/apiserver, k8s.io/client-go and
// k8s.io/component-base to go.mod's requirements (checked with go get and
// go mod graph), which the product must not depend on.
//
// Invariants: JSON field names, omitempty, protobuf field numbers and
// OpenAPI definition names are
// upstream's, so kubectl and client-go read these objects as they read
// upstream's; the package depends on k8s.io/apimachinery and protowire only.
package v1
