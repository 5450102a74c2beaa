// Package node defines the node.k8s.io/v1 runtimeclasses: upstream's
// validation as pure functions over the k8s.io/api types, and the registry
// Definition the API server serves them from. A RuntimeClass names the
// container runtime handler (runc, gVisor, kata) pods select with
// spec.runtimeClassName, with the pod overhead and scheduling constraints
// that come with it.
//
// Invariants: validation never mutates; error paths and messages follow
// upstream's so that kubectl prints the same errors. Applying a class to
// pods (upstream's RuntimeClass admission: overhead and node selector
// copied into the pod) is not done here.
package node
