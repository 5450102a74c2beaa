// Package endpointutil holds what the endpoints, endpointslice and
// endpointslice-mirroring controllers share, as upstream's
// k8s.io/endpointslice/util and pkg/api/v1/endpoints do: which pods belong
// in a Service's endpoints (ShouldPodBeInEndpoints), which Services a pod
// change concerns (ServicesForPod, ServicesToUpdateOnPodChange), named
// target port resolution (FindPort), hostnames (ShouldSetHostname), the
// endpoints.kubernetes.io/last-change-trigger-time tracker, the canonical
// repacking of Endpoints subsets (RepackSubsets), EndpointSlice endpoint
// sets keyed as upstream's (by addresses, hostname and target pod),
// port-map keys, and the generation tracker that tells a controller its
// EndpointSlice informer is behind its own writes (SliceTracker).
//
// Invariants:
//   - Pure functions of their arguments, apart from the two trackers, which
//     are safe for concurrent use.
//   - Orders are deterministic (sorted), so that an unchanged input gives
//     an unchanged object and no write.
package endpointutil
