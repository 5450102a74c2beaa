// Package endpoints is the endpoints controller (upstream's
// endpoints-controller): it writes the v1 Endpoints of every Service that
// has a selector from the pods the selector matches.
//
// For each Service (key "namespace/name") Sync:
//   - deletes the Endpoints when the Service is gone; leaves Services of
//     type ExternalName and Services without a selector alone (their
//     Endpoints are written by users, and mirrored by the
//     endpointslice-mirroring controller);
//   - puts every matching pod that has an IP of the Service's (first) IP
//     family, is not terminal and not terminating into the subsets: under
//     addresses when it is Ready or the Service publishes not-ready
//     addresses (spec.publishNotReadyAddresses), else under
//     notReadyAddresses; one address per pod with nodeName (when the pod
//     has one), a Pod targetRef and the pod's hostname when
//     spec.hostname is set and spec.subdomain names the Service; ports
//     resolved per pod (named targetPorts through the pod's container
//     ports; a pod lacking a named port is left out of that port), a
//     headless Service without ports gets port-less subsets;
//   - repacks the subsets into upstream's canonical form, and writes the
//     Endpoints (create or update) only when subsets, labels (the
//     Service's, plus service.kubernetes.io/headless for a Service
//     without cluster IP) or the over-capacity annotation differ;
//   - annotates endpoints.kubernetes.io/last-change-trigger-time (the
//     Service's creation for a new Service, then the earliest pod Ready
//     transition since the previous sync) and, past 1000 addresses,
//     truncates (ready addresses kept first, each subset in proportion)
//     and annotates endpoints.kubernetes.io/over-capacity: truncated.
//
// Invariants, as upstream's:
//   - A sync with nothing changed writes nothing (differences in the
//     target references' resourceVersion are ignored).
//   - Creation refused because the namespace is terminating is dropped,
//     not retried; other write failures record FailedToCreateEndpoint /
//     FailedToUpdateEndpoint events and are retried.
//   - At start every existing Endpoints object is queued once, so that
//     Endpoints left behind by a Service deleted while the controller was
//     down are removed (leader-election Endpoints excepted).
//
// Upstream no longer honours the service.alpha.kubernetes.io/tolerate-unready-endpoints
// annotation (publishNotReadyAddresses replaced it), and neither does
// this controller.
package endpoints
