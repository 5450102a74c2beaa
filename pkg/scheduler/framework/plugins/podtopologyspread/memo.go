package podtopologyspread

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/skiff-sh/skiff/pkg/componenthelpers/scheduling/nodeaffinity"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/helper"
)

// Memoization of PreFilter's counting across cycles. The replicas of one
// workload have the same constraints, so consecutive cycles count the same
// pods on the same nodes, while only the nodes that got or lost a pod (or
// were relabelled) change between cycles. A countMemo keeps, for one key
// (everything the counts depend on besides the node: namespace,
// constraints, and the pod's required placement and tolerations when a
// policy honors them), each node's per-constraint count and topology
// value, and the totals per domain. A node's entry is valid while the
// list holds the same *NodeInfo with the same Generation (the scheduler
// cache bumps it on every change of the node or its pods; Generation 0,
// NodeInfos not owned by a cache as in tests, never matches). Entries
// are by position in the node list; a reordered list only costs misses.

// maxMemos bounds the memos kept (least recently used evicted).
const maxMemos = 8

// domainTotal is a domain's matching pods and eligible nodes (the domain
// exists while it has an eligible node).
type domainTotal struct {
	pods, nodes int
}

type countMemo struct {
	mu      sync.Mutex // held by the cycle using the memo
	lastUse uint64
	nc      int // constraints per node

	nis    []*framework.NodeInfo
	gens   []int64
	counts []int    // [slot*nc+i]: matching pods, -1 when the node does not count
	values []string // [slot*nc+i]: the node's topology value

	totals []map[string]*domainTotal // per constraint

	// scratch for one cycle
	changed   []bool
	newCounts []int
	newValues []string
}

type memoTable struct {
	mu    sync.Mutex
	tick  uint64
	byKey map[string]*countMemo
}

// acquire returns the memo of key locked for the caller, or a fresh
// unshared one when another cycle holds it.
func (t *memoTable) acquire(key string, nc int) *countMemo {
	t.mu.Lock()
	if t.byKey == nil {
		t.byKey = map[string]*countMemo{}
	}
	m := t.byKey[key]
	if m == nil {
		if len(t.byKey) >= maxMemos {
			helper.DeleteLeastRecentlyUsed(t.byKey, func(m *countMemo) uint64 { return m.lastUse })
		}
		m = newCountMemo(nc)
		t.byKey[key] = m
	}
	t.tick++
	m.lastUse = t.tick
	t.mu.Unlock()
	if !m.mu.TryLock() {
		m = newCountMemo(nc)
		m.mu.Lock()
	}
	return m
}

func newCountMemo(nc int) *countMemo {
	m := &countMemo{nc: nc, totals: make([]map[string]*domainTotal, nc)}
	for i := range m.totals {
		m.totals[i] = map[string]*domainTotal{}
	}
	return m
}

func (m *countMemo) release() { m.mu.Unlock() }

// resize makes n slots, removing the contribution of dropped ones.
func (m *countMemo) resize(n int) {
	for s := n; s < len(m.nis); s++ {
		m.sub(s)
	}
	if len(m.nis) > n {
		clear(m.nis[n:])
		m.nis, m.gens = m.nis[:n], m.gens[:n]
		m.counts, m.values = m.counts[:n*m.nc], m.values[:n*m.nc]
	}
	for len(m.nis) < n {
		m.nis = append(m.nis, nil)
		m.gens = append(m.gens, 0)
		for i := 0; i < m.nc; i++ {
			m.counts = append(m.counts, -1)
			m.values = append(m.values, "")
		}
	}
	m.changed = slices.Grow(m.changed[:0], n)[:n]
	m.newCounts = slices.Grow(m.newCounts[:0], n*m.nc)[:n*m.nc]
	m.newValues = slices.Grow(m.newValues[:0], n*m.nc)[:n*m.nc]
}

// valid reports whether slot s holds ni's current counts.
func (m *countMemo) valid(s int, ni *framework.NodeInfo) bool {
	return ni.Generation != 0 && m.nis[s] == ni && m.gens[s] == ni.Generation
}

// sub removes slot s's contribution from the totals.
func (m *countMemo) sub(s int) {
	if m.nis[s] == nil {
		return
	}
	for i := 0; i < m.nc; i++ {
		c := m.counts[s*m.nc+i]
		if c < 0 {
			continue
		}
		v := m.values[s*m.nc+i]
		d := m.totals[i][v]
		d.pods -= c
		d.nodes--
		if d.nodes == 0 {
			delete(m.totals[i], v)
		}
	}
	m.nis[s] = nil
}

// set stores the new counts of slot s (from the scratch arrays) and adds
// them to the totals.
func (m *countMemo) set(s int, ni *framework.NodeInfo) {
	m.sub(s)
	m.nis[s], m.gens[s] = ni, ni.Generation
	for i := 0; i < m.nc; i++ {
		c, v := m.newCounts[s*m.nc+i], m.newValues[s*m.nc+i]
		m.counts[s*m.nc+i], m.values[s*m.nc+i] = c, v
		if c < 0 {
			continue
		}
		d := m.totals[i][v]
		if d == nil {
			d = &domainTotal{}
			m.totals[i][v] = d
		}
		d.pods += c
		d.nodes++
	}
}

// countPerDomain counts, over nodes, the non-terminating pods of the pod's
// namespace matching each constraint, per topology value, into the
// returned memo's totals (locked: the caller releases it), recounting
// only the nodes that changed since the memo last saw them. A node counts
// for a constraint when it passes the constraint's inclusion policies
// and, with requireAll, has every topology key (without requireAll a
// missing key is the value ""); with skipHostname, hostname constraints
// are not counted (PreScore counts them per node in Score).
func (pl *PodTopologySpread) countPerDomain(ctx context.Context, pod *corev1.Pod, constraints []topologySpreadConstraint, nodes []*framework.NodeInfo,
	required nodeaffinity.RequiredNodeAffinity, requireAll, skipHostname bool) *countMemo {
	nc := len(constraints)
	key := memoKey(pod, constraints)
	if requireAll {
		key += "\x00all"
	}
	if skipHostname {
		key += "\x00nohost"
	}
	m := pl.memos.acquire(key, nc)
	m.resize(len(nodes))
	processNode := func(n int) {
		ni := nodes[n]
		if m.valid(n, ni) {
			m.changed[n] = false
			return
		}
		m.changed[n] = true
		counts, values := m.newCounts[n*nc:(n+1)*nc], m.newValues[n*nc:(n+1)*nc]
		for i := range counts {
			counts[i], values[i] = -1, ""
		}
		node := ni.Node()
		if node == nil || (requireAll && !nodeLabelsMatchSpreadConstraints(node.Labels, constraints)) {
			return
		}
		for i := range constraints {
			c := &constraints[i]
			if skipHostname && c.TopologyKey == corev1.LabelHostname {
				continue
			}
			if !c.matchNodeInclusionPolicies(pod, node, required) {
				continue
			}
			values[i] = node.Labels[c.TopologyKey]
			counts[i] = countPodsMatchSelector(ni.Pods, c.Selector, pod.Namespace)
		}
	}
	pl.parallelizer.Until(ctx, len(nodes), processNode, Name)
	for n, ni := range nodes {
		if m.changed[n] {
			m.set(n, ni)
		}
	}
	return m
}

// memoKey describes everything the per-node counts depend on besides the
// node.
func memoKey(pod *corev1.Pod, constraints []topologySpreadConstraint) string {
	var b strings.Builder
	b.WriteString(pod.Namespace)
	b.WriteByte(0)
	affinity, taints := false, false
	for i := range constraints {
		c := &constraints[i]
		b.WriteString(c.TopologyKey)
		b.WriteByte(0)
		if _, ok := c.Selector.Requirements(); !ok {
			b.WriteString("<nothing>") // String() is "" for Nothing and Everything alike
		} else {
			b.WriteString(c.Selector.String())
		}
		b.WriteByte(0)
		b.WriteString(string(c.NodeAffinityPolicy))
		b.WriteByte(0)
		b.WriteString(string(c.NodeTaintsPolicy))
		b.WriteByte(1)
		affinity = affinity || c.NodeAffinityPolicy == corev1.NodeInclusionPolicyHonor
		taints = taints || c.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor
	}
	if affinity {
		// fmt prints maps sorted: a canonical form.
		fmt.Fprintf(&b, "%v", pod.Spec.NodeSelector)
		if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			fmt.Fprintf(&b, "%v", a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms)
		}
		b.WriteByte(2)
	}
	if taints {
		fmt.Fprintf(&b, "%v", pod.Spec.Tolerations)
	}
	return b.String()
}

// hostMemo keeps Score's per-node counts for the (first) hostname
// constraint across cycles, for the same reason as the memos above:
// between two cycles of one workload's replicas only the nodes that got or
// lost a pod changed, even when other workloads' pods are scheduled in
// between (replicas of many Deployments created at once come interleaved,
// so the memo holds up to maxHostMemos keys, least recently used evicted).
// Entries are by *NodeInfo (the snapshot keeps a node's pointer) and valid
// while its Generation is the one counted (never for Generation 0); a
// key's entries are dropped when they outgrow the node list.
type hostMemo struct {
	mu    sync.Mutex
	tick  uint64
	byKey map[string]*hostKeyMemo
}

// maxHostMemos bounds the workloads whose hostname counts are kept
// (~24 bytes per node each).
const maxHostMemos = 128

type hostKeyMemo struct {
	lastUse uint64
	entries map[*framework.NodeInfo]hostEntry
}

type hostEntry struct {
	gen   int64
	count int
}

// forKey returns key's memo (the caller holds h.mu).
func (h *hostMemo) forKey(key string, nodes int) *hostKeyMemo {
	if h.byKey == nil {
		h.byKey = map[string]*hostKeyMemo{}
	}
	m := h.byKey[key]
	if m == nil {
		if len(h.byKey) >= maxHostMemos {
			helper.DeleteLeastRecentlyUsed(h.byKey, func(m *hostKeyMemo) uint64 { return m.lastUse })
		}
		m = &hostKeyMemo{}
		h.byKey[key] = m
	}
	if m.entries == nil || len(m.entries) > 2*nodes+1024 {
		m.entries = make(map[*framework.NodeInfo]hostEntry, nodes)
	}
	h.tick++
	m.lastUse = h.tick
	return m
}

// hostnameCounts returns, for each of nodes, the non-terminating pods of
// the pod's namespace matching constraints[ci] (a hostname constraint),
// counting only the nodes that changed since the memo last saw them for
// this workload. The map is the caller's.
func (pl *PodTopologySpread) hostnameCounts(ctx context.Context, pod *corev1.Pod, constraints []topologySpreadConstraint, ci int, nodes []*framework.NodeInfo) map[*framework.NodeInfo]int {
	h := &pl.hosts
	h.mu.Lock()
	defer h.mu.Unlock()
	key := memoKey(pod, constraints) + "\x00host" + strconv.Itoa(ci)
	m := h.forKey(key, len(nodes))
	out := make(map[*framework.NodeInfo]int, len(nodes))
	var miss []int
	for i, ni := range nodes {
		if e, ok := m.entries[ni]; ok && ni.Generation != 0 && e.gen == ni.Generation {
			out[ni] = e.count
			continue
		}
		miss = append(miss, i)
	}
	counted := make([]int, len(miss))
	c := &constraints[ci]
	pl.parallelizer.Until(ctx, len(miss), func(j int) {
		counted[j] = countPodsMatchSelector(nodes[miss[j]].Pods, c.Selector, pod.Namespace)
	}, Name)
	for j, i := range miss {
		ni := nodes[i]
		out[ni] = counted[j]
		m.entries[ni] = hostEntry{gen: ni.Generation, count: counted[j]}
	}
	return out
}
