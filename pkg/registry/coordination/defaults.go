package coordination

import coordinationv1 "k8s.io/api/coordination/v1"

// DefaultLease applies coordination.k8s.io/v1 defaults to a Lease: none
// upstream. Every spec field is optional; holders fill them as they acquire
// and renew the lease.
func DefaultLease(lease *coordinationv1.Lease) {}
