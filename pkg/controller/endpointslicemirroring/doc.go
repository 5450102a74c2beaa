// Package endpointslicemirroring is the EndpointSlice mirroring
// controller (upstream's endpointslice-mirroring-controller): it mirrors
// the v1 Endpoints that users write for Services without a selector into
// EndpointSlices, so that consumers of slices see them too.
//
// An Endpoints object is mirrored when a Service of its name exists and
// has no selector, it is not labelled endpointslice.kubernetes.io/skip-mirror=true
// and it is not a leader-election record
// (control-plane.alpha.kubernetes.io/leader annotation). Endpoints of
// Services with a selector are the endpoints controller's and are never
// mirrored (their slices come from the endpointslice controller). When an
// Endpoints object stops qualifying (deleted, labelled, its Service gone
// or given a selector) its mirrored slices are deleted.
//
// Mirrored slices are labelled kubernetes.io/service-name=<name> and
// endpointslice.kubernetes.io/managed-by=endpointslicemirroring-controller.k8s.io
// on top of the Endpoints' own labels, carry its annotations (except
// last-change-trigger-time and kubectl's last-applied-configuration), are
// named by generateName "<name>-" and controlled by the Endpoints object.
// The Endpoints' subsets are repacked as upstream, then mirrored subset by
// subset into one slice group per port set and address family (IPv4, IPv6,
// by each address); at most MaxEndpointsPerSubset (1000,
// --mirroring-max-endpoints-per-subset) addresses of a subset are
// mirrored, ready ones first; invalid IPs are skipped. Ready addresses
// become endpoints with ready=true, not-ready ones ready=false, with the
// address' hostname, nodeName and targetRef.
//
// Invariants, as upstream's:
//   - Existing slices are updated in place (endpoints still desired stay,
//     changed ones are refreshed, labels and annotations follow the
//     Endpoints); slices left empty are deleted, or renamed into a slice
//     to create; a sync with nothing changed writes nothing.
//   - Skipped addresses are reported by Warning events on the Endpoints:
//     InvalidIPAddress and TooManyAddressesToMirror.
//   - The generation tracker keeps a sync from acting on an informer that
//     has not seen this controller's own writes yet (it fails and retries).
package endpointslicemirroring
