package podtopologyspread

import (
	"context"
	"fmt"
	"maps"
	"math/rand"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// The memoized PreFilter gives the same counts as a fresh computation
// through a deterministic sequence of changes: pods added to nodes (new
// generation), a node relabelled into another zone and (un)tainted, a NodeInfo replaced,
// nodes dropped from and added to the list, and a node with Generation 0;
// so do PreScore and Score (hostname counts remembered in PreScore).
func TestMemoMatchesFreshComputation(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var infos []*framework.NodeInfo
	gen := int64(0)
	bump := func(ni *framework.NodeInfo) { gen++; ni.Generation = gen }
	newInfo := func(i int, zone string) *framework.NodeInfo {
		ni := framework.NewNodeInfo()
		name := fmt.Sprintf("node-%d", i)
		ni.SetNode(makeNode(name, corev1.LabelHostname, name, "zone", zone))
		bump(ni)
		return ni
	}
	for i := 0; i < 30; i++ {
		infos = append(infos, newInfo(i, fmt.Sprintf("z%d", i%4)))
	}
	pods := []*corev1.Pod{
		makePod("p").label("foo", "").spread(1, "zone", corev1.DoNotSchedule, fooSelector).spread(2, corev1.LabelHostname, corev1.DoNotSchedule, fooSelector).obj(),
		makePod("q").label("foo", "").nodeSelector(map[string]string{"zone": "z1"}).spread(1, "zone", corev1.DoNotSchedule, fooSelector).obj(),
	}
	p, _ := newPlugin(t, listArgs, nil, nil)
	fresh, _ := newPlugin(t, listArgs, nil, nil)
	lister := &listLister{}
	p.sharedLister, fresh.sharedLister = lister, lister
	pods = append(pods,
		makePod("s").label("foo", "").spread(1, "zone", corev1.ScheduleAnyway, fooSelector).spread(1, corev1.LabelHostname, corev1.ScheduleAnyway, fooSelector).obj(),
		makePod("t").label("foo", "").spread(2, "zone", corev1.ScheduleAnyway, fooSelector, spreadOpts{nodeTaintsPolicy: &honor}).obj())
	podN := 0
	for step := 0; step < 200; step++ {
		switch r := rng.Intn(10); {
		case r < 5: // a pod lands on a node
			ni := infos[rng.Intn(len(infos))]
			podN++
			b := makePod(fmt.Sprintf("e%d", podN)).node(ni.NodeName())
			if rng.Intn(3) > 0 {
				b.label("foo", "")
			}
			ni.AddPod(b.obj())
			bump(ni)
		case r == 5: // relabel a node into another zone
			ni := infos[rng.Intn(len(infos))]
			n := ni.Node().DeepCopy()
			n.Labels["zone"] = fmt.Sprintf("z%d", rng.Intn(5))
			if rng.Intn(2) == 0 {
				n.Spec.Taints = []corev1.Taint{{Key: "t", Effect: corev1.TaintEffectNoSchedule}}
			} else {
				n.Spec.Taints = nil
			}
			ni.SetNode(n)
			bump(ni)
		case r == 6: // a NodeInfo replaced by a copy with the same generation
			k := rng.Intn(len(infos))
			infos[k] = infos[k].Snapshot()
		case r == 7 && len(infos) > 5: // a node leaves the list
			k := rng.Intn(len(infos))
			infos = append(infos[:k], infos[k+1:]...)
		case r == 8: // a node joins
			infos = append(infos, newInfo(100+step, fmt.Sprintf("z%d", rng.Intn(4))))
		case r == 9: // a NodeInfo without generation
			infos[rng.Intn(len(infos))].Generation = 0
		}
		lister.infos = infos
		for _, pod := range pods[2:] {
			// PreScore over every node, candidates the first half.
			st1, st2 := framework.NewCycleState(), framework.NewCycleState()
			cand := infos[:len(infos)/2]
			if s := p.PreScore(context.Background(), st1, pod, cand); !s.IsSuccess() {
				t.Fatal(s)
			}
			fresh.memos, fresh.hosts = memoTable{}, hostMemo{}
			if s := fresh.PreScore(context.Background(), st2, pod, cand); !s.IsSuccess() {
				t.Fatal(s)
			}
			a, _ := getPreScoreState(st1)
			b, _ := getPreScoreState(st2)
			// Score (hostname constraints from the memoized counts) too.
			for _, ni := range cand {
				s1, st := p.Score(context.Background(), st1, pod, ni)
				if !st.IsSuccess() {
					t.Fatal(st)
				}
				s2, _ := fresh.Score(context.Background(), st2, pod, ni)
				if s1 != s2 {
					t.Fatalf("step %d pod %s node %s: memoized score %d, fresh %d", step, pod.Name, ni.NodeName(), s1, s2)
				}
			}
			for i := range a.TopologyValueToPodCounts {
				if len(a.TopologyValueToPodCounts[i]) != len(b.TopologyValueToPodCounts[i]) {
					t.Fatalf("step %d: domains differ", step)
				}
				for v, c := range a.TopologyValueToPodCounts[i] {
					if *c != *b.TopologyValueToPodCounts[i][v] {
						t.Fatalf("step %d pod %s constraint %d domain %q: memoized %d, fresh %d", step, pod.Name, i, v, *c, *b.TopologyValueToPodCounts[i][v])
					}
				}
			}
		}
		for _, pod := range pods[:2] {
			st1, st2 := framework.NewCycleState(), framework.NewCycleState()
			if _, s := p.PreFilter(context.Background(), st1, pod, infos); !s.IsSuccess() {
				t.Fatal(s)
			}
			// A fresh plugin has an empty memo: counts from scratch.
			fresh.memos = memoTable{}
			if _, s := fresh.PreFilter(context.Background(), st2, pod, infos); !s.IsSuccess() {
				t.Fatal(s)
			}
			a, _ := getPreFilterState(st1)
			b, _ := getPreFilterState(st2)
			for i := range a.TpValueToMatchNum {
				if !maps.Equal(a.TpValueToMatchNum[i], b.TpValueToMatchNum[i]) {
					t.Fatalf("step %d pod %s constraint %d: memoized %v, fresh %v", step, pod.Name, i, a.TpValueToMatchNum[i], b.TpValueToMatchNum[i])
				}
				if a.CriticalPaths[i][0].MatchNum != b.CriticalPaths[i][0].MatchNum {
					t.Fatalf("step %d: critical paths %v vs %v", step, a.CriticalPaths[i], b.CriticalPaths[i])
				}
			}
		}
	}
}

func TestMemoKey(t *testing.T) {
	c := func(pod *corev1.Pod) string {
		cs, err := filterTopologySpreadConstraints(pod.Spec.TopologySpreadConstraints, pod.Labels, corev1.DoNotSchedule)
		if err != nil {
			t.Fatal(err)
		}
		return memoKey(pod, cs)
	}
	base := makePod("a").spread(1, "zone", corev1.DoNotSchedule, fooSelector).obj()
	same := makePod("b").spread(1, "zone", corev1.DoNotSchedule, fooSelector).obj()
	if c(base) != c(same) {
		t.Error("replicas must share a key")
	}
	for name, other := range map[string]*corev1.Pod{
		"namespace":    makePod("c").namespace("x").spread(1, "zone", corev1.DoNotSchedule, fooSelector).obj(),
		"selector":     makePod("c").spread(1, "zone", corev1.DoNotSchedule, barSelector).obj(),
		"key":          makePod("c").spread(1, "rack", corev1.DoNotSchedule, fooSelector).obj(),
		"affinity":     makePod("c").nodeSelector(map[string]string{"a": "b"}).spread(1, "zone", corev1.DoNotSchedule, fooSelector).obj(),
		"policy":       makePod("c").spread(1, "zone", corev1.DoNotSchedule, fooSelector, spreadOpts{nodeTaintsPolicy: &honor}).obj(),
		"nil selector": makePod("c").spread(1, "zone", corev1.DoNotSchedule, nil).obj(),
	} {
		if c(other) == c(base) {
			t.Errorf("%s: same key as the base pod", name)
		}
	}
	// Tolerations only matter when a constraint honors taints.
	if c(makePod("d").toleration("t").spread(1, "zone", corev1.DoNotSchedule, fooSelector).obj()) != c(base) {
		t.Error("tolerations changed the key without nodeTaintsPolicy Honor")
	}
}

// listLister is a SharedLister over a node list.
type listLister struct {
	framework.SharedLister
	framework.NodeInfoLister
	infos []*framework.NodeInfo
}

func (l *listLister) NodeInfos() framework.NodeInfoLister  { return l }
func (l *listLister) List() ([]*framework.NodeInfo, error) { return l.infos, nil }
