// Package storagetest is the conformance suite every storage backend passes:
// it drives storage.Store over the backend's KV and checks the Kubernetes
// storage semantics (resourceVersion preconditions, paging, predicates,
// ordered exactly-once watches, compaction, bookmarks).
package storagetest
