// Package memory is an in-memory storage.KV with etcd's MVCC semantics: one
// global revision, per-key create/modify revisions, reads at past revisions
// until they are compacted, and ordered prefix watches that replay history.
// Nothing is persisted; it backs throwaway clusters (skiff up
// --storage=memory) and the in-process test control plane.
//
// Invariants: every write advances the revision by exactly one and appends
// exactly one event to the log; a watcher reads the log in order from its
// own position, so writers never wait for watchers, and a watcher that falls
// behind the compaction point gets ErrCompacted instead of a gap.
package memory
