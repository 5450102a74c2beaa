package storage

import (
	"context"
	"errors"
)

// KV is a revisioned, ordered key-value store with etcd v3 semantics: every
// write increments one global revision; each key remembers the revision that
// created it and the revision that last modified it; reads may be served at
// an older revision until it is compacted; watches deliver every change in
// revision order.
type KV interface {
	// Get returns the key's current value (nil if absent) and the store revision.
	Get(ctx context.Context, key string) (*KeyValue, int64, error)

	// List returns up to limit (0 = all) keys in [start, end) in key order, as
	// of revision rev (0 = now). A rev older than the compacted revision
	// fails with ErrCompacted, a rev newer than the store with ErrFutureRev
	// (and the current revision in Rev).
	List(ctx context.Context, start, end string, limit int64, rev int64) (ListResult, error)

	// Count returns the number of keys in [start, end).
	Count(ctx context.Context, start, end string) (int64, error)

	// Create writes key only if absent (ErrKeyExists otherwise).
	Create(ctx context.Context, key string, value []byte) (rev int64, err error)

	// Update writes key only if its modification revision is modRev. On a
	// mismatch it fails with ErrConflict and returns the current value (nil if
	// the key is gone).
	Update(ctx context.Context, key string, value []byte, modRev int64) (rev int64, current *KeyValue, err error)

	// Delete removes key only if its modification revision is modRev (with the
	// same mismatch behaviour as Update). rev is the deletion's revision.
	Delete(ctx context.Context, key string, modRev int64) (rev int64, current *KeyValue, err error)

	// Watch streams changes to keys with the given prefix made after revision
	// rev. The channel closes when ctx ends or the watch fails; a watch from a
	// compacted revision delivers one event with Err = ErrCompacted. With
	// progressNotify the stream also carries Progress events telling that every
	// change up to Revision has been delivered.
	Watch(ctx context.Context, prefix string, rev int64, progressNotify bool) <-chan WatchResponse

	// RequestProgress asks every progress-notifying watch of this client to
	// report its revision soon.
	RequestProgress(ctx context.Context) error

	// Compact discards history older than rev.
	Compact(ctx context.Context, rev int64) error

	// Close releases the backend's resources.
	Close() error
}

// KeyValue is one stored key.
type KeyValue struct {
	Key       string
	Value     []byte
	CreateRev int64
	ModRev    int64
}

// ListResult is one page of a List.
type ListResult struct {
	KVs []*KeyValue
	// More reports that keys beyond the page exist in the range.
	More bool
	// Count is the number of keys in the whole range (not just the page).
	Count int64
	// Rev is the revision the read was served at.
	Rev int64
}

// EventType says what happened to a key.
type EventType int

const (
	EventPut EventType = iota
	EventDelete
)

// Event is one change to one key. For EventDelete, Value is empty and PrevValue
// holds the deleted value. Rev is the revision of the change.
type Event struct {
	Type      EventType
	Key       string
	Value     []byte
	PrevValue []byte
	Rev       int64
	// Created is true for a put that created the key.
	Created bool
}

// WatchResponse carries a batch of events, a progress notification (no
// events, Revision set) or a terminal error.
type WatchResponse struct {
	Events   []Event
	Revision int64
	Progress bool
	Err      error
}

// Errors a KV returns.
var (
	ErrKeyExists   = errors.New("key exists")
	ErrConflict    = errors.New("modification revision mismatch")
	ErrNotFound    = errors.New("key not found")
	ErrCompacted   = errors.New("required revision has been compacted")
	ErrFutureRev   = errors.New("required revision is a future revision")
	ErrUnavailable = errors.New("storage unavailable")
)

// PrefixEnd returns the smallest key greater than every key with the prefix.
func PrefixEnd(prefix string) string {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return "\x00"
}
