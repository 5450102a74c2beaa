package cache

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestNodeTree(t *testing.T) {
	regional := func(name, region, zone string) *corev1.Node {
		n := mkNode(name, "")
		n.Labels = map[string]string{corev1.LabelTopologyRegion: region, corev1.LabelFailureDomainBetaZone: zone}
		return n
	}
	tests := []struct {
		name   string
		add    []*corev1.Node
		remove []*corev1.Node
		update [][2]*corev1.Node // old, new
		want   []string
	}{
		{name: "empty", want: []string{}},
		{name: "no zones keeps insertion order", add: []*corev1.Node{mkNode("n1", ""), mkNode("n2", ""), mkNode("n3", "")}, want: []string{"n1", "n2", "n3"}},
		{name: "zones round-robin, uneven", add: []*corev1.Node{mkNode("a1", "a"), mkNode("a2", "a"), mkNode("a3", "a"), mkNode("b1", "b"), mkNode("c1", "c"), mkNode("c2", "c")}, want: []string{"a1", "b1", "c1", "a2", "c2", "a3"}},
		{name: "duplicate add ignored", add: []*corev1.Node{mkNode("a1", "a"), mkNode("a1", "a")}, want: []string{"a1"}},
		{name: "region and beta zone label", add: []*corev1.Node{regional("r1", "r", "z"), regional("r2", "r", "y"), regional("r3", "r", "z"), regional("s1", "s", "z")}, want: []string{"r1", "r2", "s1", "r3"}},
		{name: "remove last node of a zone drops the zone", add: []*corev1.Node{mkNode("a1", "a"), mkNode("b1", "b"), mkNode("c1", "c"), mkNode("c2", "c")}, remove: []*corev1.Node{mkNode("b1", "b")}, want: []string{"a1", "c1", "c2"}},
		{name: "remove keeps order within zone", add: []*corev1.Node{mkNode("a1", "a"), mkNode("a2", "a"), mkNode("a3", "a")}, remove: []*corev1.Node{mkNode("a2", "a")}, want: []string{"a1", "a3"}},
		{name: "zone change moves the node", add: []*corev1.Node{mkNode("a1", "a"), mkNode("a2", "a"), mkNode("b1", "b")}, update: [][2]*corev1.Node{{mkNode("a1", "a"), mkNode("a1", "b")}}, want: []string{"a2", "b1", "a1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nt := newNodeTree(tc.add)
			for _, n := range tc.remove {
				if err := nt.removeNode(n); err != nil {
					t.Fatal(err)
				}
			}
			for _, u := range tc.update {
				nt.updateNode(nil, u[0], u[1])
			}
			got, err := nt.list()
			if err != nil {
				t.Fatal(err)
			}
			if got == nil {
				got = []string{}
			}
			if !equal(got, tc.want) {
				t.Errorf("list = %v, want %v", got, tc.want)
			}
			if nt.numNodes != len(tc.want) {
				t.Errorf("numNodes = %d, want %d", nt.numNodes, len(tc.want))
			}
		})
	}
	if err := newNodeTree(nil).removeNode(mkNode("x", "a")); err == nil {
		t.Error("removing an unknown node succeeded")
	}
}
