// Package storage defines how the API server keeps objects: the
// storage.Interface that registries call (Create, Get, GetList,
// GuaranteedUpdate, Delete, Watch) and Store, its one implementation over a
// revisioned key-value backend (KV). The backends, etcd3 and memory, only
// implement KV; every Kubernetes storage semantic lives here, once.
//
// Invariants:
//   - An object's resourceVersion is the KV modification revision of its key;
//     a list's resourceVersion is the KV revision it was read at.
//   - Objects are stored with an empty resourceVersion and get it on the way out.
//   - Writes are compare-and-swap on the modification revision: an update
//     built from a stale read fails with a Conflict and is retried by
//     GuaranteedUpdate when the caller asked for no precondition.
//   - A watch from revision R delivers every change after R exactly once, in
//     revision order; a watch from a compacted revision fails with Expired.
//   - Storage knows nothing about HTTP: it speaks runtime.Object and
//     returns *StorageError or apimachinery API errors that the API server
//     translates for clients.
package storage
