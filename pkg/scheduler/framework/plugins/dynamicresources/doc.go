// Package dynamicresources is the DynamicResources plugin (dynamic
// resource allocation, resource.k8s.io/v1 ResourceClaims), as far as
// skiff goes: skiff does not allocate DRA devices yet — it has no DRA
// drivers, no ResourceSlice-based allocator and no resourceclaim
// controller creating claims from templates.
//
// What it does, with upstream kube-scheduler 1.34's semantics and
// messages:
//
//   - PreEnqueue: a pod whose spec.resourceClaims name a claim that does
//     not exist (`resourceclaim.resource.k8s.io "x" not found`), a
//     template claim not generated yet (`pod "ns/name": ResourceClaim not
//     created yet`), a claim being deleted or a generated
//     claim the pod does not own waits, UnschedulableAndUnresolvable, until
//     a ResourceClaim or the pod's status changes.
//   - PreFilter: Skip for pods without resourceClaims. A claim allocated
//     elsewhere whose reservedFor is full and does not hold the pod:
//     "resourceclaim in use". An allocated claim restricts the nodes by
//     its status.allocation.nodeSelector: Filter answers "resourceclaim
//     not available on the node" (UnschedulableAndUnresolvable) for the
//     others.
//   - A claim that is not allocated: upstream would allocate devices from
//     ResourceSlices here; skiff cannot, so PreFilter answers
//     UnschedulableAndUnresolvable `resourceclaim "x" is not allocated and
//     skiff cannot allocate devices yet` (after upstream's check that the
//     requests' DeviceClasses exist). Upstream, finding no device, rejects
//     each node in Filter instead ("2 cannot allocate all claims"; see
//     test/compat's volume scheduling test). The pod is retried when a claim,
//     DeviceClass or ResourceSlice changes — e.g. when something else
//     allocates the claim.
//   - PreBind: the pod is added to each claim's status.reservedFor (with
//     retries on conflicts) before it is bound; Unreserve takes it out
//     again if binding fails after that.
//
// Differences from upstream beyond allocation: PostFilter never
// deallocates (upstream deallocates an allocated, unreserved claim of an
// unschedulable pod so that it can be allocated elsewhere — skiff could
// not allocate it again), though it answers with upstream's messages; no
// Score (prioritized device lists), no extended resources
// backed by DRA, no device taints; FilterTimeout (DynamicResourcesArgs)
// is accepted and has nothing to bound.
//
// Invariants: PreEnqueue, PreFilter and Filter read the claims through
// the shared informer's lister, never the API; only PreBind and
// Unreserve write, and only status.reservedFor of the pod's own claims.
package dynamicresources
