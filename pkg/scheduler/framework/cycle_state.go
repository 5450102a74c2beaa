package framework

import (
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/util/sets"
)

// StateKey names a piece of CycleState; plugins use their own prefix
// ("PreFilter" + Name()).
type StateKey string

// StateData is what plugins store in CycleState. Clone must return a
// copy that preemption can change without touching the original (data
// that is never changed after PreFilter may return itself).
type StateData interface {
	Clone() StateData
}

// CycleState is the per-scheduling-cycle scratch space plugins share: a
// plugin's PreFilter computes once what its Filter then reads for every
// node. It is safe for concurrent use (filters run in parallel).
type CycleState struct {
	// slots holds the data by key, published copy-on-append: a reader
	// loads the slice and scans it without locking (filters and scores
	// read per node, in parallel); writers serialize on mu. A cycle has
	// a dozen keys or so, so a scan beats hashing the key.
	slots atomic.Pointer[[]*stateSlot]
	mu    sync.Mutex
	// SkipFilterPlugins are the plugins whose PreFilter returned Skip:
	// their Filter is not called this cycle.
	SkipFilterPlugins sets.Set[string]
	// SkipScorePlugins are the plugins whose PreScore returned Skip.
	SkipScorePlugins sets.Set[string]
	// FilterPlugins, when not nil, are the Filter plugins this cycle
	// runs: the profile's minus SkipFilterPlugins, computed once by the
	// framework runtime after PreFilter so that filtering a node looks
	// no plugin name up. Whoever changes SkipFilterPlugins afterwards
	// sets it to nil.
	FilterPlugins []FilterPlugin
}

// NewCycleState returns an empty CycleState.
func NewCycleState() *CycleState { return &CycleState{} }

type stateSlot struct {
	key StateKey
	val atomic.Pointer[stateBox] // nil: deleted
}

type stateBox struct{ data StateData }

func (c *CycleState) slot(key StateKey) *stateSlot {
	if p := c.slots.Load(); p != nil {
		for _, s := range *p {
			if s.key == key {
				return s
			}
		}
	}
	return nil
}

// Read returns the data at key or ErrNotFound.
func (c *CycleState) Read(key StateKey) (StateData, error) {
	if s := c.slot(key); s != nil {
		if b := s.val.Load(); b != nil {
			return b.data, nil
		}
	}
	return nil, ErrNotFound
}

// Write stores val at key.
func (c *CycleState) Write(key StateKey, val StateData) {
	b := &stateBox{data: val}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.slot(key); s != nil {
		s.val.Store(b)
		return
	}
	var cur []*stateSlot
	if p := c.slots.Load(); p != nil {
		cur = *p
	}
	s := &stateSlot{key: key}
	s.val.Store(b)
	// Appending writes past the length readers of cur see, or copies.
	next := append(cur, s)
	c.slots.Store(&next)
}

// Delete removes key.
func (c *CycleState) Delete(key StateKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.slot(key); s != nil {
		s.val.Store(nil)
	}
}

// Clone copies the state, cloning every value (preemption simulates
// removing pods on a clone).
func (c *CycleState) Clone() *CycleState {
	if c == nil {
		return nil
	}
	out := NewCycleState()
	if p := c.slots.Load(); p != nil {
		for _, s := range *p {
			if b := s.val.Load(); b != nil {
				out.Write(s.key, b.data.Clone())
			}
		}
	}
	out.SkipFilterPlugins = c.SkipFilterPlugins.Clone()
	out.SkipScorePlugins = c.SkipScorePlugins.Clone()
	out.FilterPlugins = c.FilterPlugins
	return out
}
