package podtopologyspread

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	schedcache "github.com/skiff-sh/skiff/pkg/scheduler/internal/cache"
)

// The bench's affinity-and-spread shape: 5000 nodes in 3 zones, 2 pods per
// node, one zone constraint (maxSkew 1) on a color label; one node
// changes per cycle, as when the previous replica was bound.
func BenchmarkPreFilterFilterZone5000(b *testing.B) {
	var nodes []*corev1.Node
	var pods []*corev1.Pod
	for i := 0; i < 5000; i++ {
		name := fmt.Sprintf("node-%05d", i)
		nodes = append(nodes, makeNode(name, corev1.LabelHostname, name, corev1.LabelTopologyZone, fmt.Sprintf("zone-%d", i%3)))
		for j := 0; j < 2; j++ {
			pods = append(pods, makePod(fmt.Sprintf("p-%d-%d", i, j)).node(name).label("color", "blue").obj())
		}
	}
	snap := schedcache.NewSnapshot(pods, nodes)
	pl, err := New(context.Background(), listArgs, &fakeHandle{lister: snap})
	if err != nil {
		b.Fatal(err)
	}
	p := pl.(*PodTopologySpread)
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"color": "blue"}}
	pod := makePod("p").label("color", "blue").spread(1, corev1.LabelTopologyZone, corev1.DoNotSchedule, sel).obj()
	all, _ := snap.NodeInfos().List()
	gen := int64(0)
	for _, ni := range all {
		gen++
		ni.Generation = gen // as the scheduler cache sets it
	}
	k := 0
	b.ReportAllocs()
	for b.Loop() {
		// The previous pod was bound to one node: its generation moves.
		k = (k + 7) % len(all)
		gen++
		all[k].Generation = gen
		state := framework.NewCycleState()
		if _, st := p.PreFilter(context.Background(), state, pod, all); !st.IsSuccess() {
			b.Fatal(st)
		}
		for _, ni := range all {
			p.Filter(context.Background(), state, pod, ni)
		}
	}
}
