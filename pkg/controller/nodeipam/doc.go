// Package nodeipam is the node IPAM controller (upstream's
// node-ipam-controller, alias nodeipam) with upstream's range allocator:
// it gives every Node without spec.podCIDRs one node-sized subnet of each
// cluster CIDR (--cluster-cidr, one per IP family) and writes it to
// spec.podCIDR and spec.podCIDRs with a strategic merge patch.
//
// Shape, as upstream's RangeAllocator:
//   - a CIDRSet per cluster CIDR splits it into /NodeCIDRMaskSize subnets
//     (--node-cidr-mask-size, 24 for IPv4 and 64 for IPv6 by default) and
//     hands them out round robin (the next free one after the last
//     allocated); an IPv6 cluster CIDR may hold at most 2^16 of them;
//   - service ranges (--service-cluster-ip-range) that overlap a cluster
//     CIDR are marked taken at start, never handed out;
//   - Run waits for the node cache, then marks every node's existing
//     CIDRs taken (a CIDR that does not parse or lies outside the cluster
//     CIDRs is an error that ends Run: upstream's manager crashes on it),
//     then runs Workers (upstream's 30) workers over the
//     cidrallocator_node queue fed by node adds and updates;
//   - the sync of a node (syncNode) occupies the CIDRs a node already
//     has, or allocates one per cluster CIDR and patches the node (three
//     tries; a node that got CIDRs meanwhile keeps them and the new ones
//     go back);
//   - a deleted node's CIDRs are released by the informer's delete
//     handler (nodes have no finalizer).
//
// Events, upstream's (source component cidrAllocator, on the Node):
// CIDRNotAvailable when a cluster CIDR has no free subnet left,
// CIDRAssignmentFailed when the patch failed three times, both "Node <name>
// status is now: <reason>". Metrics (Config.Registry), upstream's:
// node_ipam_controller_cidrset_cidrs_allocations_total,
// ..._cidrset_cidrs_releases_total, ..._cidrset_usage_cidrs and
// ..._cirdset_max_cidrs (sic), by clusterCIDR.
//
// Invariants: a subnet is given to at most one node; a node's podCIDRs
// are written once and never changed by this controller (the API server
// forbids changing them); the allocator's state lives only in memory and
// is rebuilt from the nodes at every start.
package nodeipam
