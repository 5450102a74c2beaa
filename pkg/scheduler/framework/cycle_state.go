package framework

import (
	"sync"

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
	storage sync.Map
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

// Read returns the data at key or ErrNotFound.
func (c *CycleState) Read(key StateKey) (StateData, error) {
	if v, ok := c.storage.Load(key); ok {
		return v.(StateData), nil
	}
	return nil, ErrNotFound
}

// Write stores val at key.
func (c *CycleState) Write(key StateKey, val StateData) { c.storage.Store(key, val) }

// Delete removes key.
func (c *CycleState) Delete(key StateKey) { c.storage.Delete(key) }

// Clone copies the state, cloning every value (preemption simulates
// removing pods on a clone).
func (c *CycleState) Clone() *CycleState {
	if c == nil {
		return nil
	}
	out := NewCycleState()
	c.storage.Range(func(k, v any) bool {
		out.storage.Store(k, v.(StateData).Clone())
		return true
	})
	out.SkipFilterPlugins = c.SkipFilterPlugins.Clone()
	out.SkipScorePlugins = c.SkipScorePlugins.Clone()
	out.FilterPlugins = c.FilterPlugins
	return out
}
