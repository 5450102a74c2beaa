package expectations

import (
	"sync"
	"time"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// Timeout is how long unobserved expectations hold back a sync
// (upstream's Timeout).
const Timeout = 5 * time.Minute

type expectation struct {
	add       int64
	del       map[string]struct{} // pod keys expected to be deleted
	delCount  int64               // deletions expected without keys
	timestamp time.Time
}

func (e *expectation) fulfilled() bool { return e.add <= 0 && len(e.del) == 0 && e.delCount <= 0 }

// Expectations tracks, per controller key, the pod creations and deletions
// the controller issued and the informer has not observed yet (upstream's
// UIDTrackingControllerExpectations, keyed by pod key).
type Expectations struct {
	clock clock.Clock
	mu    sync.Mutex
	m     map[string]*expectation
}

// New returns empty expectations on clock c.
func New(c clock.Clock) *Expectations {
	if c == nil {
		c = clock.Real{}
	}
	return &Expectations{clock: c, m: map[string]*expectation{}}
}

// Satisfied reports whether the controller may manage key's replicas: no
// expectations, all observed, or expired.
func (e *Expectations) Satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.m[key]
	if !ok {
		return true
	}
	return x.fulfilled() || e.clock.Since(x.timestamp) > Timeout
}

// ExpectCreations records that n creations were issued for key.
func (e *Expectations) ExpectCreations(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.m[key] = &expectation{add: int64(n), del: map[string]struct{}{}, timestamp: e.clock.Now()}
}

// ExpectDeletions records that the pods podKeys are being deleted for key.
func (e *Expectations) ExpectDeletions(key string, podKeys []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x := &expectation{del: map[string]struct{}{}, timestamp: e.clock.Now()}
	for _, k := range podKeys {
		x.del[k] = struct{}{}
	}
	e.m[key] = x
}

// SetExpectations records that adds creations and the deletions of the
// pods podKeys were issued for key (upstream's SetExpectations, used by
// controllers issuing both in one sync).
func (e *Expectations) SetExpectations(key string, adds int, podKeys []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x := &expectation{add: int64(adds), del: map[string]struct{}{}, timestamp: e.clock.Now()}
	for _, k := range podKeys {
		x.del[k] = struct{}{}
	}
	e.m[key] = x
}

// LowerCreations lowers key's expected creations by n (creations skipped
// after a failing batch).
func (e *Expectations) LowerCreations(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.m[key]; ok {
		x.add -= int64(n)
	}
}

// CreationObserved lowers key's expected creations by one.
func (e *Expectations) CreationObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.m[key]; ok {
		x.add--
	}
}

// DeletionObserved records that podKey, expected to be deleted for key, is
// gone (or will not be deleted).
func (e *Expectations) DeletionObserved(key, podKey string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.m[key]; ok {
		delete(x.del, podKey)
	}
}

// Delete forgets key.
func (e *Expectations) Delete(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, key)
}

// Pending reports the creations and deletions key still expects.
func (e *Expectations) Pending(key string) (adds, dels int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.m[key]; ok {
		return int(x.add), len(x.del)
	}
	return 0, 0
}
