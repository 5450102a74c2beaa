package cache

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// Snapshot is the cluster as one scheduling cycle sees it: NodeInfo
// copies in the node tree's order, taken from the Cache at the start of
// the cycle (Cache.UpdateSnapshot) and never changed during it.
type Snapshot struct {
	// nodeInfoMap: node name → NodeInfo (also node-less NodeInfos holding
	// pods of a node not known yet; Get hides those).
	nodeInfoMap map[string]*framework.NodeInfo
	// nodeInfoList: the NodeInfos with a node, in the node tree's order.
	nodeInfoList []*framework.NodeInfo
	// The nodes with at least one pod with (anti-)affinity, and with at
	// least one pod with required anti-affinity, in the same order.
	havePodsWithAffinityNodeInfoList             []*framework.NodeInfo
	havePodsWithRequiredAntiAffinityNodeInfoList []*framework.NodeInfo
	// usedPVCSet: "namespace/claim" used by at least one pod on a node.
	usedPVCSet sets.Set[string]
	// generation: the cache generation the snapshot is up to date with;
	// treeVersion: the cache's node tree version its lists follow; cache:
	// the cache it was last updated from.
	generation  int64
	treeVersion int64
	cache       *Cache
}

var _ framework.SharedLister = (*Snapshot)(nil)

// NewEmptySnapshot returns a snapshot without nodes, to be filled by
// Cache.UpdateSnapshot.
func NewEmptySnapshot() *Snapshot {
	return &Snapshot{
		nodeInfoMap: map[string]*framework.NodeInfo{},
		usedPVCSet:  sets.New[string](),
	}
}

// NewSnapshot builds a snapshot directly from objects, for tests: each
// pod is placed on the node named by its spec.nodeName (pods without one
// are ignored; pods naming a node not in nodes are kept in a node-less
// NodeInfo that the lists and Get do not show, as the cache does), image
// states count the nodes holding each image, and the lists are in the
// node tree's order of nodes (zones round-robin, otherwise the order
// given). Upstream's NewSnapshot lists in map order; ours is
// deterministic.
func NewSnapshot(pods []*corev1.Pod, nodes []*corev1.Node) *Snapshot {
	s := NewEmptySnapshot()
	for _, pod := range pods {
		if pod.Spec.NodeName == "" {
			continue
		}
		ni, ok := s.nodeInfoMap[pod.Spec.NodeName]
		if !ok {
			ni = framework.NewNodeInfo()
			s.nodeInfoMap[pod.Spec.NodeName] = ni
		}
		ni.AddPod(pod)
	}
	images := map[string]sets.Set[string]{}
	for _, node := range nodes {
		for _, img := range node.Status.Images {
			for _, name := range img.Names {
				if images[name] == nil {
					images[name] = sets.New[string]()
				}
				images[name].Insert(node.Name)
			}
		}
	}
	for _, node := range nodes {
		ni, ok := s.nodeInfoMap[node.Name]
		if !ok {
			ni = framework.NewNodeInfo()
			s.nodeInfoMap[node.Name] = ni
		}
		ni.SetNode(node)
		ni.ImageStates = map[string]*framework.ImageStateSummary{}
		for _, img := range node.Status.Images {
			for _, name := range img.Names {
				ni.ImageStates[name] = &framework.ImageStateSummary{Size: img.SizeBytes, NumNodes: images[name].Len()}
			}
		}
	}
	names, _ := newNodeTree(nodes).list()
	s.rebuildLists(names)
	s.rebuildUsedPVCSet()
	return s
}

// rebuildLists recomputes the three ordered lists from the map and the
// node tree's names.
func (s *Snapshot) rebuildLists(names []string) {
	s.nodeInfoList = make([]*framework.NodeInfo, 0, len(names))
	s.havePodsWithAffinityNodeInfoList = s.havePodsWithAffinityNodeInfoList[:0]
	s.havePodsWithRequiredAntiAffinityNodeInfoList = s.havePodsWithRequiredAntiAffinityNodeInfoList[:0]
	for _, name := range names {
		ni, ok := s.nodeInfoMap[name]
		if !ok || ni.Node() == nil {
			continue
		}
		s.nodeInfoList = append(s.nodeInfoList, ni)
	}
	s.rebuildAffinityLists()
}

// rebuildAffinityLists recomputes the affinity lists from nodeInfoList.
func (s *Snapshot) rebuildAffinityLists() {
	var aff, anti []*framework.NodeInfo
	for _, ni := range s.nodeInfoList {
		if len(ni.PodsWithAffinity) > 0 {
			aff = append(aff, ni)
		}
		if len(ni.PodsWithRequiredAntiAffinity) > 0 {
			anti = append(anti, ni)
		}
	}
	s.havePodsWithAffinityNodeInfoList = aff
	s.havePodsWithRequiredAntiAffinityNodeInfoList = anti
}

// rebuildUsedPVCSet recomputes the used claims from every NodeInfo's
// PVCRefCounts (node-less ones included: their pods are bound).
func (s *Snapshot) rebuildUsedPVCSet() {
	s.usedPVCSet = sets.New[string]()
	for _, ni := range s.nodeInfoMap {
		for key := range ni.PVCRefCounts {
			s.usedPVCSet.Insert(key)
		}
	}
}

// NodeInfos returns the snapshot as a NodeInfoLister.
func (s *Snapshot) NodeInfos() framework.NodeInfoLister { return s }

// StorageInfos returns the snapshot as a StorageInfoLister.
func (s *Snapshot) StorageInfos() framework.StorageInfoLister { return s }

// NumNodes is the number of nodes in the snapshot.
func (s *Snapshot) NumNodes() int { return len(s.nodeInfoList) }

// List returns the nodes in the node tree's order. Callers must not
// modify the slice.
func (s *Snapshot) List() ([]*framework.NodeInfo, error) { return s.nodeInfoList, nil }

// HavePodsWithAffinityList returns the nodes with at least one pod with
// pod affinity or anti-affinity.
func (s *Snapshot) HavePodsWithAffinityList() ([]*framework.NodeInfo, error) {
	return s.havePodsWithAffinityNodeInfoList, nil
}

// HavePodsWithRequiredAntiAffinityList returns the nodes with at least
// one pod with required anti-affinity.
func (s *Snapshot) HavePodsWithRequiredAntiAffinityList() ([]*framework.NodeInfo, error) {
	return s.havePodsWithRequiredAntiAffinityNodeInfoList, nil
}

// Get returns the NodeInfo of the node (upstream's error when there is
// no such node).
func (s *Snapshot) Get(nodeName string) (*framework.NodeInfo, error) {
	if ni, ok := s.nodeInfoMap[nodeName]; ok && ni.Node() != nil {
		return ni, nil
	}
	return nil, fmt.Errorf("nodeinfo not found for node name %q", nodeName)
}

// IsPVCUsedByPods reports whether a pod on some node uses the claim
// "namespace/name".
func (s *Snapshot) IsPVCUsedByPods(key string) bool { return s.usedPVCSet.Has(key) }
