// Package apiserver is the Kubernetes API server: it serves the REST API
// (get, list, watch, create, update, patch, delete, deletecollection and the
// status, scale, binding, eviction and finalize subresources) for every
// registered resource over HTTPS, with discovery (legacy and aggregated),
// OpenAPI v2/v3, server-side Table printing, admission, authentication
// (client certificates, static tokens, bootstrap tokens, service account tokens, anonymous),
// impersonation, authorization (pkg/auth: RBAC, the access reviews),
// health checks and Prometheus metrics.
//
// Request path: filters (panic recovery, request info, metrics,
// authentication, impersonation, in-flight limit, timeout, authorization)
// → routing by URL → decoding
// (JSON, YAML, protobuf; fieldValidation Strict/Warn/Ignore) → defaulting →
// mutating admission → registry (strategy, lifecycle, validation) →
// validating admission → storage (through the watch cache) → encoding in
// the negotiated format.
//
// Invariants:
//   - Every error a client sees is a metav1.Status with upstream's reason,
//     code and wording.
//   - With an authorizer configured, no request reaches a handler before
//     the authorizers allowed it as the (impersonated) user; the RBAC
//     index they read is filled before the first request is authorized
//     and follows the watch caches of the RBAC resources (authz.go).
//     Without one (Config.Authorizer nil, no AuthorizationModes: tests)
//     everything is allowed.
//   - Objects are the k8s.io/api types, encoded as upstream encodes them;
//     a resource served in several versions is stored in one and converted.
//   - Watches and resourceVersion="0"/consistent lists are served from the
//     watch cache; a cached object is serialized once for all clients.
//   - Shutdown stops accepting, ends watches, and lets in-flight requests
//     finish before closing.
//   - As upstream's, the API server only marks deletions (the orphan and
//     foregroundDeletion finalizers, a Terminating namespace with the
//     kubernetes finalizer); the garbage collector and the namespace
//     controller (pkg/controller, run by the controller manager) finish
//     them.
package apiserver
