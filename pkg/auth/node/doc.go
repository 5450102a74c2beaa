// Package node is upstream's Node authorizer: a kubelet, authenticated as
// system:node:<nodeName> in group system:nodes, may read only the secrets,
// configmaps, persistent volume claims, persistent volumes, service
// accounts (and create their tokens), resource claims and volume
// attachments reachable from a pod bound to its node, its own Lease and
// CSINode, its own Node object, and pods through a spec.nodeName field
// selector; everything else it may do is decided by upstream's static
// system:node rules (bootstrappolicy), and what those do not cover is left
// to the next authorizer (no opinion), so RBAC can still allow it.
//
// The relationships live in a Graph kept in step with the API server's
// watch caches (pods, persistent volumes, volume attachments, resource
// slices) by the server, as the RBAC index is. Invariants: a request is
// answered from the graph under a read lock without allocation beyond the
// reason string; a pod contributes edges only while it has spec.nodeName,
// and replacing or deleting it removes exactly the edges it added
// (reference counts per node). Identity helpers (NodeIdentity) are shared
// with the NodeRestriction admission plugin.
package node
