package cache

import (
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
)

// zoneKey is the node's zone identity as upstream's utilnode.GetZoneKey:
// region and zone from the GA topology labels (falling back to the beta
// failure-domain ones), joined with a separator that a label value cannot
// contain; "" when the node has neither.
func zoneKey(node *corev1.Node) string {
	l := node.Labels
	if l == nil {
		return ""
	}
	zone, ok := l[corev1.LabelTopologyZone]
	if !ok {
		zone = l[corev1.LabelFailureDomainBetaZone]
	}
	region, ok := l[corev1.LabelTopologyRegion]
	if !ok {
		region = l[corev1.LabelFailureDomainBetaRegion]
	}
	if region == "" && zone == "" {
		return ""
	}
	return region + ":\x00:" + zone
}

// nodeTree keeps node names grouped by zone, zones in the order they were
// first seen and nodes of a zone in the order they were added; list()
// walks the zones round-robin (upstream's nodeTree), so that a prefix of
// the list (percentageOfNodesToScore) spreads over zones.
type nodeTree struct {
	tree     map[string][]string
	zones    []string
	numNodes int
}

func newNodeTree(nodes []*corev1.Node) *nodeTree {
	nt := &nodeTree{tree: map[string][]string{}}
	for _, n := range nodes {
		nt.addNode(nil, n)
	}
	return nt
}

func (nt *nodeTree) addNode(logger *slog.Logger, n *corev1.Node) {
	zone := zoneKey(n)
	names, ok := nt.tree[zone]
	if ok {
		for _, name := range names {
			if name == n.Name {
				if logger != nil {
					logger.Info("Did not add to the NodeTree because it already exists", "node", n.Name)
				}
				return
			}
		}
		nt.tree[zone] = append(names, n.Name)
	} else {
		nt.zones = append(nt.zones, zone)
		nt.tree[zone] = []string{n.Name}
	}
	nt.numNodes++
}

func (nt *nodeTree) removeNode(n *corev1.Node) error {
	zone := zoneKey(n)
	if names, ok := nt.tree[zone]; ok {
		for i, name := range names {
			if name != n.Name {
				continue
			}
			names = append(names[:i:i], names[i+1:]...)
			nt.tree[zone] = names
			if len(names) == 0 {
				nt.removeZone(zone)
			}
			nt.numNodes--
			return nil
		}
	}
	return fmt.Errorf("node %q in group %q was not found", n.Name, zone)
}

func (nt *nodeTree) removeZone(zone string) {
	delete(nt.tree, zone)
	for i, z := range nt.zones {
		if z == zone {
			nt.zones = append(nt.zones[:i:i], nt.zones[i+1:]...)
			return
		}
	}
}

// updateNode moves the node when its zone changed.
func (nt *nodeTree) updateNode(logger *slog.Logger, old, n *corev1.Node) {
	if old != nil && zoneKey(old) == zoneKey(n) {
		return
	}
	if old != nil {
		_ = nt.removeNode(old) // a node not yet in the tree is fine
	}
	nt.addNode(logger, n)
}

// list returns the node names, one from each zone in turn.
func (nt *nodeTree) list() ([]string, error) {
	if len(nt.zones) == 0 {
		return nil, nil
	}
	out := make([]string, 0, nt.numNodes)
	exhausted := 0
	for idx := 0; len(out) < nt.numNodes; idx++ {
		if exhausted >= len(nt.zones) {
			return out, fmt.Errorf("all zones exhausted before reaching count of nodes %d", nt.numNodes)
		}
		for _, zone := range nt.zones {
			names := nt.tree[zone]
			if idx >= len(names) {
				if idx == len(names) {
					exhausted++
				}
				continue
			}
			out = append(out, names[idx])
		}
	}
	return out, nil
}
