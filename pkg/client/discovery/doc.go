// Package discovery is skiff's discovery client (client-go's discovery and
// its memory cache, written from scratch): which groups, versions and
// resources the API server serves, with their scope, kind and verbs.
//
// It asks for the aggregated discovery document first
// (application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,
// then v2beta1) on /api and /apis — two requests for everything — and falls
// back to legacy discovery (/api, /apis, then one request per group
// version) when the server does not offer it.
//
// Invariants:
//   - Answers are cached until Invalidate; concurrent callers share one
//     fetch. A fetch that failed is not cached.
//   - A group version that could not be discovered (legacy request failed,
//     or marked Stale in the aggregated document) is reported in a
//     *GroupDiscoveryFailedError next to the resources that were found, as
//     client-go's ErrGroupDiscoveryFailed, so callers can act on partial
//     results.
//   - Subresources appear as "resource/subresource" entries, as in legacy
//     discovery.
package discovery
