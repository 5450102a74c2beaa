package cache

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// TestUpdateSnapshot applies one change after a first snapshot and checks
// which NodeInfos the second update copied (a new value behind the same
// pointer vs. the untouched one), the lists and the used claims.
func TestUpdateSnapshot(t *testing.T) {
	anti := withAntiAffinity(mkPod("anti", "n2", ""), true)
	pref := withAntiAffinity(mkPod("pref", "n3", ""), false)
	pvc := withPVC(mkPod("pvc", "n1", ""), "data")
	tests := []struct {
		name        string
		change      func(t *testing.T, c *Cache)
		wantCopied  []string // nodes whose NodeInfo was re-copied
		wantList    []string
		wantAff     []string
		wantAnti    []string
		wantPVC     bool // ns/data used
		wantRebuilt bool // List() is a new slice
	}{
		{
			name:       "no change copies nothing",
			change:     func(t *testing.T, c *Cache) {},
			wantList:   []string{"n1", "n3", "n2"},
			wantAff:    []string{"n3", "n2"},
			wantAnti:   []string{"n2"},
			wantPVC:    true,
			wantCopied: []string{},
		},
		{
			name: "pod added to one node copies only that node",
			change: func(t *testing.T, c *Cache) {
				must(t, c.AddPod(nil, mkPod("new", "n1", "1")))
			},
			wantCopied: []string{"n1"},
			wantList:   []string{"n1", "n3", "n2"}, wantAff: []string{"n3", "n2"}, wantAnti: []string{"n2"}, wantPVC: true,
		},
		{
			name: "assume and forget on two nodes",
			change: func(t *testing.T, c *Cache) {
				p := mkPod("a", "n3", "1")
				must(t, c.AssumePod(nil, p))
				must(t, c.AssumePod(nil, mkPod("b", "n2", "1")))
				must(t, c.ForgetPod(nil, p))
			},
			wantCopied: []string{"n3", "n2"},
			wantList:   []string{"n1", "n3", "n2"}, wantAff: []string{"n3", "n2"}, wantAnti: []string{"n2"}, wantPVC: true,
		},
		{
			name: "last anti-affinity pod leaves: lists rebuilt",
			change: func(t *testing.T, c *Cache) {
				must(t, c.RemovePod(nil, anti))
			},
			wantCopied: []string{"n2"},
			wantList:   []string{"n1", "n3", "n2"}, wantAff: []string{"n3"}, wantAnti: []string{}, wantPVC: true,
		},
		{
			name: "first affinity pod on a node: lists rebuilt",
			change: func(t *testing.T, c *Cache) {
				must(t, c.AddPod(nil, withAntiAffinity(mkPod("anti2", "n1", ""), true)))
			},
			wantCopied: []string{"n1"},
			wantList:   []string{"n1", "n3", "n2"}, wantAff: []string{"n1", "n3", "n2"}, wantAnti: []string{"n1", "n2"}, wantPVC: true,
		},
		{
			name: "claim no longer used",
			change: func(t *testing.T, c *Cache) {
				must(t, c.RemovePod(nil, pvc))
			},
			wantCopied: []string{"n1"},
			wantList:   []string{"n1", "n3", "n2"}, wantAff: []string{"n3", "n2"}, wantAnti: []string{"n2"}, wantPVC: false,
		},
		{
			name: "node added: lists rebuilt in tree order",
			change: func(t *testing.T, c *Cache) {
				c.AddNode(nil, mkNode("n4", "b"))
			},
			wantCopied: []string{"n4"}, wantRebuilt: true,
			wantList: []string{"n1", "n3", "n2", "n4"}, wantAff: []string{"n3", "n2"}, wantAnti: []string{"n2"}, wantPVC: true,
		},
		{
			name: "node with pods removed",
			change: func(t *testing.T, c *Cache) {
				must(t, c.RemoveNode(nil, mkNode("n2", "a")))
			},
			wantCopied: []string{}, wantRebuilt: true,
			wantList: []string{"n1", "n3"}, wantAff: []string{"n3"}, wantAnti: []string{}, wantPVC: true,
		},
		{
			name: "node without pods removed",
			change: func(t *testing.T, c *Cache) {
				must(t, c.RemovePod(nil, pvc))
				must(t, c.RemoveNode(nil, mkNode("n1", "a")))
			},
			wantCopied: []string{}, wantRebuilt: true,
			wantList: []string{"n2", "n3"}, wantAff: []string{"n2", "n3"}, wantAnti: []string{"n2"}, wantPVC: false,
		},
		{
			name: "node moves zone: order follows the tree",
			change: func(t *testing.T, c *Cache) {
				c.UpdateNode(nil, mkNode("n1", "a"), mkNode("n1", "b"))
			},
			wantCopied: []string{"n1"}, wantRebuilt: true,
			wantList: []string{"n2", "n3", "n1"}, wantAff: []string{"n2", "n3"}, wantAnti: []string{"n2"}, wantPVC: true,
		},
		{
			name: "node removed and re-added between snapshots",
			change: func(t *testing.T, c *Cache) {
				must(t, c.RemoveNode(nil, mkNode("n3", "b")))
				c.AddNode(nil, mkNode("n3", "b"))
			},
			wantCopied: []string{"n3"}, wantRebuilt: true,
			wantList: []string{"n1", "n3", "n2"}, wantAff: []string{"n3", "n2"}, wantAnti: []string{"n2"}, wantPVC: true,
		},
		{
			name: "pod of an unknown node is not in the snapshot",
			change: func(t *testing.T, c *Cache) {
				must(t, c.AddPod(nil, withPVC(withAntiAffinity(mkPod("ghost", "n9", ""), true), "other")))
			},
			wantCopied: []string{},
			wantList:   []string{"n1", "n3", "n2"}, wantAff: []string{"n3", "n2"}, wantAnti: []string{"n2"}, wantPVC: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newTestCache(0)
			// zones: a = n1, n2; b = n3 → tree order n1, n3, n2.
			c.AddNode(nil, mkNode("n1", "a"))
			c.AddNode(nil, mkNode("n2", "a"))
			c.AddNode(nil, mkNode("n3", "b"))
			must(t, c.AddPod(nil, anti))
			must(t, c.AddPod(nil, pref))
			must(t, c.AddPod(nil, pvc))
			s := NewEmptySnapshot()
			must(t, c.UpdateSnapshot(nil, s))

			ptrs := map[string]*framework.NodeInfo{}
			vals := map[string]framework.NodeInfo{}
			for name, ni := range s.nodeInfoMap {
				ptrs[name], vals[name] = ni, *ni
			}
			list0, _ := s.NodeInfos().List()

			tc.change(t, c)
			must(t, c.UpdateSnapshot(nil, s))

			copied := []string{}
			for _, name := range []string{"n1", "n2", "n3", "n4"} {
				ni, ok := s.nodeInfoMap[name]
				if !ok {
					continue
				}
				old, had := ptrs[name]
				switch {
				case !had:
					copied = append(copied, name)
				case ni != old:
					t.Errorf("%s: NodeInfo pointer replaced (lists must keep the pointer)", name)
				case ni.Generation != vals[name].Generation:
					copied = append(copied, name)
				case len(ni.Pods) > 0 && &ni.Pods[0] != &vals[name].Pods[0]:
					t.Errorf("%s: pods slice re-copied though the generation did not move", name)
				}
			}
			if !sameSet(copied, tc.wantCopied) {
				t.Errorf("copied %v, want %v", copied, tc.wantCopied)
			}
			l, _ := s.NodeInfos().List()
			aff, _ := s.NodeInfos().HavePodsWithAffinityList()
			an, _ := s.NodeInfos().HavePodsWithRequiredAntiAffinityList()
			if got := names(t, l); !equal(got, tc.wantList) {
				t.Errorf("List = %v, want %v", got, tc.wantList)
			}
			if got := names(t, aff); !equal(got, tc.wantAff) {
				t.Errorf("HavePodsWithAffinityList = %v, want %v", got, tc.wantAff)
			}
			if got := names(t, an); !equal(got, tc.wantAnti) {
				t.Errorf("HavePodsWithRequiredAntiAffinityList = %v, want %v", got, tc.wantAnti)
			}
			if got := s.StorageInfos().IsPVCUsedByPods("ns/data"); got != tc.wantPVC {
				t.Errorf("IsPVCUsedByPods(ns/data) = %v, want %v", got, tc.wantPVC)
			}
			if s.StorageInfos().IsPVCUsedByPods("ns/other") {
				t.Error("a claim of a pod on an unknown node is used in the snapshot")
			}
			if rebuilt := len(l) > 0 && len(list0) > 0 && &l[0] != &list0[0]; rebuilt != tc.wantRebuilt {
				t.Errorf("List rebuilt = %v, want %v", rebuilt, tc.wantRebuilt)
			}
			// The snapshot agrees with the cache.
			for _, ni := range l {
				want := c.Dump().Nodes[ni.NodeName()]
				if len(ni.Pods) != len(want.Pods) || ni.Requested.MilliCPU != want.Requested.MilliCPU || ni.Generation != want.Generation {
					t.Errorf("%s: snapshot (%d pods, %+v) differs from cache (%d pods, %+v)", ni.NodeName(), len(ni.Pods), *ni.Requested, len(want.Pods), *want.Requested)
				}
			}
			if s.NumNodes() != len(tc.wantList) {
				t.Errorf("NumNodes = %d", s.NumNodes())
			}
		})
	}
}

// TestSnapshotIsolated: changes after UpdateSnapshot never show through
// the snapshot a cycle is reading.
func TestSnapshotIsolated(t *testing.T) {
	c, _ := newTestCache(0)
	c.AddNode(nil, mkNode("n1", ""))
	must(t, c.AddPod(nil, mkPod("p", "n1", "1")))
	s := NewEmptySnapshot()
	must(t, c.UpdateSnapshot(nil, s))
	ni, _ := s.Get("n1")
	must(t, c.AddPod(nil, withPVC(mkPod("q", "n1", "2"), "data")))
	c.UpdateNode(nil, mkNode("n1", ""), mkNode("n1", "z"))
	if len(ni.Pods) != 1 || ni.Requested.MilliCPU != 1000 || len(ni.PVCRefCounts) != 0 || ni.Node().Labels != nil {
		t.Errorf("snapshot NodeInfo changed by the cache: %v", ni)
	}
}

// TestTwoSnapshots: a snapshot updated less often still catches up.
func TestTwoSnapshots(t *testing.T) {
	c, _ := newTestCache(0)
	c.AddNode(nil, mkNode("n1", ""))
	a, b := NewEmptySnapshot(), NewEmptySnapshot()
	must(t, c.UpdateSnapshot(nil, a))
	must(t, c.AddPod(nil, mkPod("p", "n1", "1")))
	c.AddNode(nil, mkNode("n2", "", corev1.ContainerImage{Names: []string{"i"}}))
	must(t, c.UpdateSnapshot(nil, a))
	c.AddNode(nil, mkNode("n3", "", corev1.ContainerImage{Names: []string{"i"}}))
	must(t, c.UpdateSnapshot(nil, a))
	must(t, c.UpdateSnapshot(nil, b))
	for _, s := range []*Snapshot{a, b} {
		n1, _ := s.Get("n1")
		n2, _ := s.Get("n2")
		if s.NumNodes() != 3 || len(n1.Pods) != 1 || n2.ImageStates["i"].NumNodes != 2 {
			t.Errorf("snapshot: %d nodes, n1 %v, n2 image %+v", s.NumNodes(), n1, n2.ImageStates["i"])
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, v := range m {
		if v != 0 {
			return false
		}
	}
	return true
}
