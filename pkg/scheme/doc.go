// Package scheme is the runtime.Scheme of every API type skiff speaks (the
// versioned k8s.io/api groups it serves, apiextensions, and the
// meta.k8s.io types). The API server and the client library both use it,
// for protobuf and for mapping Go types to kinds.
//
// Invariant: New returns a fresh scheme each call; nothing is global.
package scheme
