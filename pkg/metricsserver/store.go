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

// nodeState is what is kept of one node: its last two scrapes.
type nodeState struct {
	prev, cur *nodeScrape
}

// nodeUsage is the node's usage from its last two scrapes.
func (n *nodeState) nodeUsage() (usage, bool) {
	if n.prev == nil || n.cur == nil {
		return usage{}, false
	}
	return rate(n.prev.node, n.cur.node)
}

// podUsage is one pod's containers' usage, sorted by name; ok is false
// when a container of the latest scrape has no figure yet (as
// metrics-server, a pod is reported only when all its containers are).
func (n *nodeState) podUsage(k podKey) ([]ContainerMetrics, time.Time, time.Duration, bool) {
	if n.prev == nil || n.cur == nil {
		return nil, time.Time{}, 0, false
	}
	cur := n.cur.containers[k]
	if len(cur) == 0 {
		return nil, time.Time{}, 0, false
	}
	prev := n.prev.containers[k]
	var out []ContainerMetrics
	var ts time.Time
	var window time.Duration
	for name, s := range cur {
		u, ok := rate(prev[name], s)
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
