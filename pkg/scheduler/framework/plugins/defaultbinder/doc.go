// Package defaultbinder is the DefaultBinder plugin, as upstream
// kube-scheduler's: it binds a pod to its node by POSTing a Binding
// (target Node/<name>, the pod's UID as precondition) to the pod's
// binding subresource through the Handle's API client.
//
// Invariants: Bind is the only call this plugin makes to the API server;
// any failure (conflict: already bound, not found, UID mismatch) is an
// Error status carrying the API error, so the scheduler forgets the
// assumed pod and retries it.
package defaultbinder
