package metricsserver

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// usage is one series' computed usage.
type usage struct {
	cpu    resource.Quantity
	mem    resource.Quantity
	ts     time.Time
	window time.Duration
}

// rate computes usage from the previous and the latest sample of a
// series; ok is false without two CPU samples in order (a first sample,
// or a counter that went backwards: a restarted container).
func rate(prev, cur sample) (usage, bool) {
	if !prev.hasCPU || !cur.hasCPU || !cur.ts.After(prev.ts) || cur.cpu < prev.cpu {
		return usage{}, false
	}
	window := cur.ts.Sub(prev.ts)
	nanoCores := (cur.cpu - prev.cpu) / window.Seconds() * 1e9
	return usage{
		cpu:    *resource.NewScaledQuantity(int64(nanoCores), resource.Nano),
		mem:    *resource.NewQuantity(int64(cur.mem), resource.BinarySI),
		ts:     cur.ts,
		window: window,
	}, true
}

// pair is the last two samples of a series with different timestamps
// (metrics-server keeps the same: a scrape that brings a sample no newer
// than the last one, as a runtime's cached stats do, changes nothing).
type pair struct{ prev, cur sample }

// next folds a newly scraped sample into the pair.
func (p pair) next(s sample) pair {
	switch {
	case !s.ts.After(p.cur.ts):
		return p // not newer
	case s.hasCPU && p.cur.hasCPU && s.cpu < p.cur.cpu:
		return pair{cur: s} // the counter went backwards: a new container
	}
	return pair{prev: p.cur, cur: s}
}

func (p pair) usage() (usage, bool) { return rate(p.prev, p.cur) }

// nodeState is what is kept of one node: the node's series and those of
// the containers its last scrape reported.
type nodeState struct {
	node       pair
	containers map[podKey]map[string]pair
}

// update is the state after scrape sc, given the previous state (nil for
// a node not seen before); containers sc does not report are dropped.
func update(old *nodeState, sc *nodeScrape) *nodeState {
	st := &nodeState{containers: map[podKey]map[string]pair{}}
	if old != nil {
		st.node = old.node
	}
	st.node = st.node.next(sc.node)
	for k, cs := range sc.containers {
		m := map[string]pair{}
		for name, s := range cs {
			var p pair
			if old != nil {
				p = old.containers[k][name]
			}
			m[name] = p.next(s)
		}
		st.containers[k] = m
	}
	return st
}

// nodeUsage is the node's usage from its last two samples.
func (n *nodeState) nodeUsage() (usage, bool) { return n.node.usage() }

// podUsage is one pod's containers' usage, sorted by name; ok is false
// when a container of the latest scrape has no figure yet (as
// metrics-server, a pod is reported only when all its containers are).
func (n *nodeState) podUsage(k podKey) ([]ContainerMetrics, time.Time, time.Duration, bool) {
	cs := n.containers[k]
	if len(cs) == 0 {
		return nil, time.Time{}, 0, false
	}
	var out []ContainerMetrics
	var ts time.Time
	var window time.Duration
	for name, p := range cs {
		u, ok := p.usage()
		if !ok {
			return nil, time.Time{}, 0, false
		}
		out = append(out, ContainerMetrics{Name: name, Usage: corev1.ResourceList{corev1.ResourceCPU: u.cpu, corev1.ResourceMemory: u.mem}})
		if u.ts.After(ts) {
			ts = u.ts
		}
		if u.window > window {
			window = u.window
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, ts, window, true
}
