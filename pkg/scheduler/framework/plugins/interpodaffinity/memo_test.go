package interpodaffinity

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// listLister serves a fixed list of NodeInfos (whose pods the test
// changes), computing the affinity lists on every call.
type listLister struct{ nodes []*framework.NodeInfo }

func (l *listLister) NodeInfos() framework.NodeInfoLister       { return l }
func (l *listLister) StorageInfos() framework.StorageInfoLister { return nil }
func (l *listLister) List() ([]*framework.NodeInfo, error)      { return l.nodes, nil }
func (l *listLister) HavePodsWithAffinityList() ([]*framework.NodeInfo, error) {
	var out []*framework.NodeInfo
	for _, ni := range l.nodes {
		if len(ni.PodsWithAffinity) > 0 {
			out = append(out, ni)
		}
	}
	return out, nil
}
func (l *listLister) HavePodsWithRequiredAntiAffinityList() ([]*framework.NodeInfo, error) {
	var out []*framework.NodeInfo
	for _, ni := range l.nodes {
		if len(ni.PodsWithRequiredAntiAffinity) > 0 {
			out = append(out, ni)
		}
	}
	return out, nil
}
func (l *listLister) Get(name string) (*framework.NodeInfo, error) {
	for _, ni := range l.nodes {
		if ni.NodeName() == name {
			return ni, nil
		}
	}
	return nil, fmt.Errorf("nodeinfo not found for node name %q", name)
}

// The memoized PreFilter and PreScore give the same state as a plugin
// computing everything afresh, over rounds in which pods come and go and
// node labels change (each change with a new generation, as the cache
// does).
func TestMemoMatchesFreshComputation(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var gen int64
	var nodes []*framework.NodeInfo
	for i := 0; i < 60; i++ {
		ni := framework.NewNodeInfo()
		name := fmt.Sprintf("n%02d", i)
		ni.SetNode(mkNode(name, map[string]string{"zone": fmt.Sprintf("z%d", i%3), "hostname": name}))
		gen++
		ni.Generation = gen
		nodes = append(nodes, ni)
	}
	apps := []string{"web", "db", "cache"}
	podN := 0
	newPod := func() *corev1.Pod {
		podN++
		b := mkPod().Name(fmt.Sprintf("p%d", podN)).UID(fmt.Sprintf("u%d", podN)).Namespace([]string{"a", "b"}[podN%2]).Label("app", apps[rng.Intn(3)])
		switch rng.Intn(5) {
		case 0:
			b.PodAntiAffinityIn("app", "hostname", []string{apps[rng.Intn(3)]}, required)
		case 1:
			b.PodAffinityIn("app", "zone", []string{apps[rng.Intn(3)]}, preferred)
		case 2:
			b.PodAffinityIn("app", "zone", []string{"web"}, required)
		}
		return b.Obj()
	}
	for i := 0; i < 150; i++ {
		nodes[rng.Intn(len(nodes))].AddPod(newPod())
	}
	incoming := []*corev1.Pod{
		mkPod().Namespace("a").Label("app", "web").PodAffinityIn("app", "zone", []string{"web"}, required).Obj(),
		mkPod().Namespace("a").Label("app", "db").PodAntiAffinityIn("app", "hostname", []string{"db", "web"}, required).Obj(),
		mkPod().Namespace("b").Label("app", "cache").PodAffinityIn("app", "zone", []string{"web"}, preferred).
			PodAntiAffinityIn("app", "hostname", []string{"cache"}, preferred).Obj(),
		mkPod().Namespace("a").Label("app", "web").Obj(),
		createPodWithAffinityTerms("a", "", map[string]string{"app": "db"},
			[]corev1.PodAffinityTerm{{LabelSelector: expr("app", metav1.LabelSelectorOpIn, "web"), NamespaceSelector: &metav1.LabelSelector{}, TopologyKey: "zone"}}, nil),
	}
	lister := &listLister{nodes: nodes}
	newPl := func() *InterPodAffinity {
		p, err := New(context.Background(), nil, &fakeHandle{lister: lister})
		if err != nil {
			t.Fatal(err)
		}
		return p.(*InterPodAffinity)
	}
	memoized := newPl()
	for round := 0; round < 60; round++ {
		pod := incoming[round%len(incoming)]
		fresh := newPl()
		sm, sf := framework.NewCycleState(), framework.NewCycleState()
		_, stm := memoized.PreFilter(context.Background(), sm, pod, nodes)
		_, stf := fresh.PreFilter(context.Background(), sf, pod, nodes)
		if !stm.Equal(stf) {
			t.Fatalf("round %d: PreFilter %v vs %v", round, stm, stf)
		}
		if stm.IsSuccess() {
			a, _ := getPreFilterState(sm)
			b, _ := getPreFilterState(sf)
			if !reflect.DeepEqual(a.affinityCounts, b.affinityCounts) || !reflect.DeepEqual(a.antiAffinityCounts, b.antiAffinityCounts) || !reflect.DeepEqual(a.existingAntiAffinityCounts, b.existingAntiAffinityCounts) {
				t.Fatalf("round %d: PreFilter counts differ:\n%+v\n%+v", round, a, b)
			}
		}
		stm = memoized.PreScore(context.Background(), sm, pod, nodes)
		stf = fresh.PreScore(context.Background(), sf, pod, nodes)
		if !stm.Equal(stf) {
			t.Fatalf("round %d: PreScore %v vs %v", round, stm, stf)
		}
		if stm.IsSuccess() {
			a, _ := getPreScoreState(sm)
			b, _ := getPreScoreState(sf)
			if !reflect.DeepEqual(a.topologyScore, b.topologyScore) {
				t.Fatalf("round %d: PreScore sums differ:\n%v\n%v", round, a.topologyScore, b.topologyScore)
			}
		}
		// Change a few nodes, each with a new generation.
		for k := 0; k < 3; k++ {
			ni := nodes[rng.Intn(len(nodes))]
			switch rng.Intn(3) {
			case 0:
				ni.AddPod(newPod())
			case 1:
				if len(ni.Pods) > 0 {
					if err := ni.RemovePod(ni.Pods[rng.Intn(len(ni.Pods))].Pod); err != nil {
						t.Fatal(err)
					}
				}
			case 2:
				n := ni.Node().DeepCopy()
				n.Labels["zone"] = fmt.Sprintf("z%d", rng.Intn(3))
				ni.SetNode(n)
			}
			gen++
			ni.Generation = gen
		}
	}
	// The memo was used: a node unchanged since the last cycle of the same
	// shape is served from it.
	m := memoized.incomingMemos.acquire(keyOf(incoming[0]), len(nodes))
	if m == nil {
		t.Fatal("no memo for the first shape")
	}
	defer m.release()
	served := 0
	for i, ni := range nodes {
		if _, ok := m.at(i, ni); ok {
			served++
		}
	}
	if served == 0 {
		t.Error("no node served from the memo")
	}
}

func keyOf(pod *corev1.Pod) string {
	pl := &InterPodAffinity{}
	pt, _ := pl.parseTerms(pod, true, false)
	var b strings.Builder
	writeTerms(&b, pt.affinity)
	writeTerms(&b, pt.antiAffinity)
	return b.String()
}

// A node whose pods changed without a new generation would be served
// stale from the memo: the generation is what invalidates (this is the
// contract with the cache).
func TestMemoKeyedByGeneration(t *testing.T) {
	ni := framework.NewNodeInfo()
	ni.SetNode(mkNode("n1", map[string]string{"zone": "z1"}))
	ni.Generation = 5
	ni.AddPod(mkPod().Name("w").UID("w").Label("app", "web").Node("n1").Obj())
	lister := &listLister{nodes: []*framework.NodeInfo{ni}}
	p, _ := New(context.Background(), nil, &fakeHandle{lister: lister})
	pl := p.(*InterPodAffinity)
	pod := mkPod().Label("app", "x").PodAntiAffinityIn("app", "zone", []string{"web"}, required).Obj()
	count := func() int64 {
		st := framework.NewCycleState()
		pl.PreFilter(context.Background(), st, pod, lister.nodes)
		s, _ := getPreFilterState(st)
		return s.antiAffinityCounts[topologyPair{"zone", "z1"}]
	}
	if got := count(); got != 1 {
		t.Fatalf("count %d, want 1", got)
	}
	if got := count(); got != 1 { // the second cycle builds the memo
		t.Fatalf("count %d, want 1", got)
	}
	ni.AddPod(mkPod().Name("w2").UID("w2").Label("app", "web").Node("n1").Obj())
	if got := count(); got != 1 {
		t.Fatalf("same generation: count %d, want the memoized 1", got)
	}
	ni.Generation = 6
	if got := count(); got != 2 {
		t.Fatalf("new generation: count %d, want 2", got)
	}
}

// A key asked for once builds no memo; asked for again, it does.
func TestMemoBuiltOnSecondUse(t *testing.T) {
	var tbl memoTable[incomingResult]
	if m := tbl.acquire("k", 3); m != nil {
		t.Fatal("memo built on first use")
	}
	m := tbl.acquire("k", 3)
	if m == nil || len(m.entries) != 3 {
		t.Fatalf("second use: %v", m)
	}
	if m2 := tbl.acquire("k", 3); m2 != nil {
		t.Fatal("a memo in use was handed out twice")
	}
	m.release()
	for i := 0; i < maxMemos+2; i++ {
		k := fmt.Sprintf("other%d", i)
		tbl.acquire(k, 1)
		tbl.acquire(k, 1).release()
	}
	if len(tbl.byKey) > maxMemos {
		t.Errorf("%d memos kept, at most %d", len(tbl.byKey), maxMemos)
	}
}
