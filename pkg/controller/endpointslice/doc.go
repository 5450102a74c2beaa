// Package endpointslice is the EndpointSlice controller (upstream's
// endpointslice-controller): it keeps the discovery.k8s.io/v1
// EndpointSlices of every Service that has a selector.
//
// A Service's slices carry the labels kubernetes.io/service-name=<name>
// and endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io
// (plus the Service's own labels, and service.kubernetes.io/headless for a
// Service without cluster IP), are named by generateName "<service>-" and
// are controlled by the Service (owner reference: the garbage collector
// removes them with it). There are slices per address family the Service
// has (spec.ipFamilies: IPv4, IPv6) and per distinct set of ports (named
// targetPorts resolve per pod, so pods may differ), each holding at most
// MaxEndpointsPerSlice (--max-endpoints-per-slice, 100) endpoints.
//
// An endpoint is a pod the Service selects that has an IP of the slice's
// family and is not terminal (terminating pods included): its addresses,
// conditions ready (Ready and not terminating, or the Service publishes
// not-ready addresses), serving (Ready) and terminating, nodeName, the
// zone of its node (topology.kubernetes.io/zone), the pod's hostname when
// spec.subdomain names the Service, a Pod targetRef, and zone hints when
// the Service's trafficDistribution is PreferClose or PreferSameZone. A
// pod on a node that does not exist is left out (and the Service retried)
// unless the Service publishes not-ready addresses; a pod without a node
// (no scheduler ran) is kept, without zone.
//
// Sync reconciles as upstream's reconciler, minimising churn: endpoints
// stay in the slice that holds them (updated in place when they change);
// slices left empty are deleted; new endpoints first fill slices already
// being updated (fullest first), then an unchanged slice they fit in
// whole, then new slices; a slice to create takes over the name of one to
// delete (an update instead of a create and a delete); slices of address
// families or port sets the Service no longer has are deleted, as are
// slices of the Service's name owned by something else. A Service with no
// endpoints keeps one empty placeholder slice. Written slices carry
// endpoints.kubernetes.io/last-change-trigger-time. No slice is created for
// a Service being deleted.
//
// Invariants, as upstream's:
//   - A sync writes nothing when the slices are current.
//   - The controller remembers the generation of every slice it wrote
//     (SliceTracker): a sync whose informer has not caught up with its own
//     writes fails (and is retried) rather than duplicating slices.
//   - Services of type ExternalName and without selector are left alone;
//     their slices, if any, come from users or from the
//     endpointslice-mirroring controller.
package endpointslice
