// Package cacher is the watch cache: for one resource, a single storage
// watch keeps an in-memory copy of every object plus a window of recent
// events, and every client watch and every resourceVersion="0" or consistent
// list of that resource is served from it instead of from storage.
//
// Invariants:
//   - The cache is complete up to rv; reads wait (up to WaitTimeout) for it
//     to reach the revision they need. A consistent read first learns the
//     storage's current revision and asks storage for a progress
//     notification, so it observes every write acknowledged before it.
//   - Events reach each watcher exactly once and in revision order; a
//     watcher registered at revision R gets exactly the events after R.
//   - A slow watcher never blocks the others: when its queue stays full past
//     a short budget it is closed, and its client re-watches from the last
//     revision it saw (which the event window still holds, or 410 Gone).
//   - Cached objects are shared and never mutated; each remembers its
//     encodings so an event is serialized once however many watchers get it.
//   - Writes go straight to storage; the cached copy only saves the first
//     read of a GuaranteedUpdate (storage detects a stale one).
package cacher
