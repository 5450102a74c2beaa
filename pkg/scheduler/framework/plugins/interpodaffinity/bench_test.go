package interpodaffinity

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// benchPod is the bench's affinity shape: color=blue with a required
// affinity to color=blue pods of two namespaces in the same zone.
func benchPod(i int, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), UID: types.UID(fmt.Sprintf("u%d", i)), Namespace: "sched-0", Labels: map[string]string{"color": "blue"}},
		Spec: corev1.PodSpec{NodeName: node, Affinity: &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"color": "blue"}},
				TopologyKey:   "topology.kubernetes.io/zone",
				Namespaces:    []string{"sched-0", "sched-1"},
			}},
		}}},
	}
}

// BenchmarkCycle: one scheduling cycle, after which the pod is added to
// a node as the cache would of the plugin (PreFilter, Filter
// on every node, PreScore, Score on every node, NormalizeScore) with 5000
// nodes in 3 zones and 11000 bound pods of the bench's affinity shape.
func BenchmarkCycle(b *testing.B) { benchCycle(b, 11000) }

// BenchmarkCycleSparse: 1000 bound pods, so that most cycles bind to a
// node without pods (which then joins the nodes with affinity pods).
func BenchmarkCycleSparse(b *testing.B) { benchCycle(b, 1000) }

func benchCycle(b *testing.B, nPods int) {
	const nNodes = 5000
	var nodes []*corev1.Node
	for i := 0; i < nNodes; i++ {
		name := fmt.Sprintf("node-%d", i)
		nodes = append(nodes, mkNode(name, map[string]string{"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", i%3)}))
	}
	var pods []*corev1.Pod
	for i := 0; i < nPods; i++ {
		pods = append(pods, benchPod(i, nodes[i%nNodes].Name))
	}
	pl, snap := newPlugin(&testing.T{}, nil, pods, nodes, nil)
	nis, _ := snap.NodeInfos().List()
	// Generations as the cache gives them (memoization is keyed on them).
	gen := int64(0)
	for _, ni := range nis {
		gen++
		ni.Generation = gen
	}
	incoming := benchPod(-1, "")
	ctx := context.Background()
	scores := make(framework.NodeScoreList, len(nis))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		state := framework.NewCycleState()
		if _, st := pl.PreFilter(ctx, state, incoming, nis); !st.IsSuccess() {
			b.Fatal(st)
		}
		for _, ni := range nis {
			if st := pl.Filter(ctx, state, incoming, ni); !st.IsSuccess() {
				b.Fatal(st)
			}
		}
		if st := pl.PreScore(ctx, state, incoming, nis); !st.IsSuccess() {
			b.Fatal(st)
		}
		for j, ni := range nis {
			s, _ := pl.Score(ctx, state, incoming, ni)
			scores[j] = framework.NodeScore{Name: ni.NodeName(), Score: s}
		}
		pl.NormalizeScore(ctx, state, incoming, scores)
		// The pod lands on a node: that node changes (new generation).
		ni := nis[(i*7919)%len(nis)]
		ni.AddPod(benchPod(nPods+i, ni.NodeName()))
		gen++
		ni.Generation = gen
	}
}

// BenchmarkPreFilter: PreFilter alone, everything memoized (no node
// changes between cycles).
func BenchmarkPreFilter(b *testing.B) {
	const nNodes, nPods = 5000, 11000
	var nodes []*corev1.Node
	for i := 0; i < nNodes; i++ {
		name := fmt.Sprintf("node-%d", i)
		nodes = append(nodes, mkNode(name, map[string]string{"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", i%3)}))
	}
	var pods []*corev1.Pod
	for i := 0; i < nPods; i++ {
		pods = append(pods, benchPod(i, nodes[i%nNodes].Name))
	}
	pl, snap := newPlugin(&testing.T{}, nil, pods, nodes, nil)
	nis, _ := snap.NodeInfos().List()
	for i, ni := range nis {
		ni.Generation = int64(i + 1)
	}
	incoming := benchPod(-1, "")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, st := pl.PreFilter(context.Background(), framework.NewCycleState(), incoming, nis); !st.IsSuccess() {
			b.Fatal(st)
		}
	}
}
