package interpodaffinity

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/helper"
)

// Memoization across cycles. Pods with the same terms (the replicas of
// one workload) make PreFilter and PreScore compute the same per-node
// results over and over, while from one cycle to the next only the nodes
// that got or lost a pod change. A memo keeps, for one computation (a
// key describing everything the result depends on besides the node), the
// result per node, valid while the node's NodeInfo is the same object
// with the same Generation: the scheduler cache gives a NodeInfo a new
// generation on every change of its node or pods, and the snapshot keeps
// a node's NodeInfo pointer while it is unchanged. NodeInfos with
// Generation 0 (not owned by a cache, as in tests) are never memoized.
// Results are indexed by the node's position in the list the plugin got;
// a reordered list only costs misses.

// maxMemos bounds the memos kept per kind (least recently used evicted).
const maxMemos = 8

type memoEntry[T any] struct {
	ni  *framework.NodeInfo
	gen int64
	val T
}

type memo[T any] struct {
	mu      sync.Mutex // held by the cycle using the memo
	lastUse uint64
	entries []memoEntry[T]
}

// memoTable holds the memos of one kind by key.
type memoTable[T any] struct {
	mu    sync.Mutex
	tick  uint64
	byKey map[string]*memo[T]
	// seen holds keys asked for once: a memo is only built for a key
	// asked for again, so that pods with unique keys (a StatefulSet's
	// pod-name label) do not build and evict memos every cycle.
	seen map[string]struct{}
}

// maxSeen bounds seen (cleared when full).
const maxSeen = 256

// acquire returns the memo of key with n entries, locked for the caller
// (release it), or nil when another cycle is using it or the key is new.
func (t *memoTable[T]) acquire(key string, n int) *memo[T] {
	t.mu.Lock()
	if t.byKey == nil {
		t.byKey = map[string]*memo[T]{}
		t.seen = map[string]struct{}{}
	}
	m := t.byKey[key]
	if m == nil {
		if _, ok := t.seen[key]; !ok {
			if len(t.seen) >= maxSeen {
				clear(t.seen)
			}
			t.seen[key] = struct{}{}
			t.mu.Unlock()
			return nil
		}
		delete(t.seen, key)
		if len(t.byKey) >= maxMemos {
			helper.DeleteLeastRecentlyUsed(t.byKey, func(m *memo[T]) uint64 { return m.lastUse })
		}
		m = &memo[T]{}
		t.byKey[key] = m
	}
	t.tick++
	m.lastUse = t.tick
	t.mu.Unlock()
	if !m.mu.TryLock() {
		return nil
	}
	if len(m.entries) > n {
		clear(m.entries[n:])
		m.entries = m.entries[:n]
	} else if len(m.entries) < n {
		m.entries = append(m.entries, make([]memoEntry[T], n-len(m.entries))...)
	}
	return m
}

func (m *memo[T]) release() {
	if m != nil {
		m.mu.Unlock()
	}
}

// at returns the slot of node i (ni) and whether it holds ni's current
// result. A nil memo has no slots.
func (m *memo[T]) at(i int, ni *framework.NodeInfo) (*T, bool) {
	if m == nil || ni.Generation == 0 {
		return nil, false
	}
	e := &m.entries[i]
	return &e.val, e.ni == ni && e.gen == ni.Generation
}

// stored records that slot i now holds ni's current result.
func (m *memo[T]) stored(i int, ni *framework.NodeInfo) {
	if m == nil || ni.Generation == 0 {
		return
	}
	e := &m.entries[i]
	e.ni, e.gen = ni, ni.Generation
}

// writeTerms appends a canonical description of terms to b: everything
// their matching depends on.
func writeTerms(b *strings.Builder, terms []term) {
	for i := range terms {
		t := &terms[i]
		b.WriteString(t.topologyKey)
		b.WriteByte(0)
		if _, ok := t.selector.Requirements(); !ok {
			b.WriteString("<nothing>") // String() is "" for Nothing and Everything alike
		} else {
			b.WriteString(t.selector.String())
		}
		b.WriteByte(0)
		b.WriteString(strconv.Itoa(int(t.weight)))
		b.WriteByte(0)
		if t.allNamespaces {
			b.WriteString("*")
		} else {
			var nss []string
			if t.hasSingle {
				nss = append(nss, t.single)
			}
			nss = append(nss, t.few...)
			nss = append(nss, t.ns.UnsortedList()...)
			slices.Sort(nss)
			for _, ns := range nss {
				b.WriteString(ns)
				b.WriteByte(1)
			}
		}
		b.WriteByte(2)
	}
	b.WriteByte(3)
}

// writeLabels appends the sorted labels to b.
func writeLabels(b *strings.Builder, ls labels.Set) {
	keys := make([]string, 0, len(ls))
	for k := range ls {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(ls[k])
		b.WriteByte(1)
	}
	b.WriteByte(3)
}

// incomingResult is one node's PreFilter result: pods matching all
// affinity terms, and pods matching each anti-affinity term.
type incomingResult struct {
	aff  int64
	anti []int64
}

// scoreResult is one node's sums per topology key: PreScore's weights,
// or the count of existing pods' anti-affinity terms matching the
// incoming pod.
type scoreResult struct {
	keys []string
	ws   []int64
}
