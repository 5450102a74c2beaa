// Package cache is skiff's client-side object cache, a from-scratch
// counterpart of client-go's tools/cache with the same names and semantics.
// Objects are stored as `any` holding API object pointers (anything
// meta.Accessor understands); they are shared by all readers and must be
// treated as read-only.
//
// # Storage
//
//   - Keys: KeyFunc, MetaNamespaceKeyFunc ("ns/name", or "name" for
//     cluster-scoped objects), DeletionHandlingMetaNamespaceKeyFunc (also
//     accepts DeletedFinalStateUnknown), SplitMetaNamespaceKey, ExplicitKey.
//   - Store (NewStore) and Indexer (NewIndexer): a keyed, thread-safe cache
//     with secondary indices, built on ThreadSafeStore. Indexers maps an
//     index name to an IndexFunc; Indices maps an index name to an Index,
//     which maps an indexed value to the KeySet of keys producing it.
//   - DeltaFIFO: the queue between a Reflector (producer) and an informer
//     (consumer, via Pop), accumulating per-object Deltas.
//   - UndeltaStore: a Store pushing its full content after every change.
//   - Lister / NamespaceLister: typed, read-only views of an Indexer.
//
// # Informers
//
//   - ListerWatcher / ListWatch: the list and watch of one collection
//     (NewListWatchFromTyped over a client.Typed, with a tweak hook for
//     selectors; NewListWatchFromClient / NewFilteredListWatchFromClient).
//   - Reflector: list (paged; or a watch-list stream) → Store.Replace →
//     watch from the list's resourceVersion; re-watch from the last
//     resourceVersion when a watch ends, relist on 410, exponential backoff
//     with jitter on failures, periodic Resync; clock and randomness are
//     injected (ReflectorOptions).
//   - Controller (New, Config): a Reflector feeding a Queue and a loop
//     popping it into a process function; NewIndexerInformer is the
//     single-handler informer built on it.
//   - SharedIndexInformer: one ListerWatcher, one Indexer, a DeltaFIFO
//     (KnownObjects = the Indexer, Replaced deltas) and any number of
//     ResourceEventHandlers, each with its own unbounded buffer and
//     goroutine (processor.go), its own resync period and its own HasSynced.
//   - TypedInformer[T]: a SharedIndexInformer with a Lister[T] and typed
//     handlers (TypedResourceEventHandlerFuncs, DeletedObject).
//
// SharedIndexInformer: the Indexer is updated before handlers are told.
// For each handler, notifications arrive in the order of the Indexer's
// changes; Added/Updated/Replaced/Sync deltas become OnUpdate if the key is
// cached, else OnAdd; Deleted becomes OnDelete (possibly with a
// DeletedFinalStateUnknown). A handler added to a running informer gets an
// add (isInInitialList) for every cached object before any later change.
// Updates that keep the resourceVersion (resyncs, unchanged objects of a
// relist) reach only the handlers whose resync is due (all of them before
// the first resync check, as in client-go).
//
// # Invariants
//
// Indexer: after every operation, for each index and each stored key, the key
// appears in exactly the KeySets of the values its object produces (the values
// it was stored with: they are remembered per item, so removal never re-runs
// index functions), and every KeySet is non-empty. An update that changes an
// object's indexed values moves its key; AddIndexers indexes existing items.
// An IndexFunc error makes Add/Update/Replace/AddIndexers fail and leaves the
// store unchanged (client-go panics instead). Each stored item (key, object
// and where it is filed) is one allocation shared by the key map and its
// KeySets, which hold packed item pointers; an item records its position in
// each KeySet, so removal is O(1) without per-value key maps, and an update
// that keeps the indexed values only swaps the object. ByIndex copies the
// objects out of one KeySet: one allocation, no per-key lookups.
//
// DeltaFIFO: every Deltas in items is non-empty; queue holds each key at
// most once and exactly the keys of items. Two consecutive Deleted deltas
// collapse into one, keeping the real final state over a
// DeletedFinalStateUnknown. Replace emits Replaced (or Sync) for listed
// objects and DeletedFinalStateUnknown tombstones for keys that are queued or
// in KnownObjects but not listed. Pop hands one key's whole Deltas to the
// process function with the queue locked; ErrRequeue puts it back. HasSynced
// turns true once the first Replace's items have all been popped (or at once
// if Add/Update/Delete came first). Resync adds Sync deltas for KnownObjects
// keys not already queued. Once a batch of more than 1024 keys (a relist)
// has been popped, the DeltaFIFO releases its queue and item map (Go maps do
// not shrink).
//
// The package has no package-level mutable state.
package cache
