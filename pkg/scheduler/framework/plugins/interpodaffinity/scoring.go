package interpodaffinity

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// preScoreStateKey is where PreScore leaves the topology scores.
const preScoreStateKey framework.StateKey = "PreScore" + Name

// scoreMap: topology key → value → summed weight.
type scoreMap map[string]map[string]int64

func (m scoreMap) merge(o scoreMap) {
	for tk, ovs := range o {
		vs := m[tk]
		if vs == nil {
			m[tk] = ovs
			continue
		}
		for v, w := range ovs {
			vs[v] += w
		}
	}
}

// preScoreState is what Score reads; never changed after PreScore.
type preScoreState struct {
	topologyScore scoreMap
}

// Clone returns the state itself (it is never changed).
func (s *preScoreState) Clone() framework.StateData { return s }

// nodeAcc sums the weights of one node's pods per topology key (a few
// keys: a slice beats a map), added to the block's domains once per
// node.
type nodeAcc struct {
	keys []string
	ws   []int64
}

func (a *nodeAcc) add(tk string, w int64) {
	for i, k := range a.keys {
		if k == tk {
			a.ws[i] += w
			return
		}
	}
	a.keys = append(a.keys, tk)
	a.ws = append(a.ws, w)
}

// processExistingPod adds what one existing pod on node contributes: the
// incoming pod's preferred terms it matches (+/- weight), and its own
// required affinity (hardPodAffinityWeight) and preferred terms matching
// the incoming pod.
func (pl *InterPodAffinity) processExistingPod(pt *podTerms, existing *framework.PodInfo, pod *corev1.Pod, nsLabels labels.Set, m *nodeAcc) {
	p := existing.Pod
	for i := range pt.preferredAffinity {
		t := &pt.preferredAffinity[i]
		if t.matches(p) {
			m.add(t.topologyKey, int64(t.weight))
		}
	}
	for i := range pt.preferredAntiAffinity {
		t := &pt.preferredAntiAffinity[i]
		if t.matches(p) {
			m.add(t.topologyKey, int64(-t.weight))
		}
	}
	if pl.hardPodAffinityWeight > 0 {
		for i := range existing.RequiredAffinityTerms {
			t := &existing.RequiredAffinityTerms[i]
			if t.Matches(pod, nsLabels) {
				m.add(t.TopologyKey, int64(pl.hardPodAffinityWeight))
			}
		}
	}
	for i := range existing.PreferredAffinityTerms {
		t := &existing.PreferredAffinityTerms[i]
		if t.Matches(pod, nsLabels) {
			m.add(t.TopologyKey, int64(t.Weight))
		}
	}
	for i := range existing.PreferredAntiAffinityTerms {
		t := &existing.PreferredAntiAffinityTerms[i]
		if t.Matches(pod, nsLabels) {
			m.add(t.TopologyKey, int64(-t.Weight))
		}
	}
}

// PreScore sums, per topology domain, the weights of the preferred terms
// of both sides (and of existing pods' required affinity). Skip when the
// pod has no preferred terms and ignorePreferredTermsOfExistingPods is
// set, or when nothing matched anywhere.
func (pl *InterPodAffinity) PreScore(ctx context.Context, cycleState *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) *framework.Status {
	lister, err := pl.snapshot()
	if err != nil {
		return framework.AsStatus(err)
	}
	a := pod.Spec.Affinity
	hasPreferredAffinity := a != nil && a.PodAffinity != nil && len(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0
	hasPreferredAntiAffinity := a != nil && a.PodAntiAffinity != nil && len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0
	hasConstraints := hasPreferredAffinity || hasPreferredAntiAffinity
	if pl.ignorePreferredTermsOfExistingPods && !hasConstraints {
		return framework.NewStatus(framework.Skip)
	}
	// Without preferred terms of its own, only nodes with pods with
	// affinity can contribute.
	// (Walked over the full list, skipping nodes without such pods, so
	// that memo slots stay at the node's place in the full list.)
	nodes, err := lister.List()
	if err != nil {
		return framework.AsStatus(fmt.Errorf("failed to get all nodes from shared lister: %w", err))
	}
	if !hasConstraints {
		withAffinity, err := lister.HavePodsWithAffinityList()
		if err != nil {
			return framework.AsStatus(fmt.Errorf("failed to get pods with affinity list: %w", err))
		}
		if len(withAffinity) == 0 {
			return framework.NewStatus(framework.Skip)
		}
	}
	if len(nodes) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	pt, err := pl.parseTerms(pod, false, true)
	if err != nil {
		return framework.AsStatus(fmt.Errorf("failed to parse pod: %w", err))
	}
	nsLabels := pl.namespaceLabels(pod.Namespace)

	// The memo key: everything a node's sums depend on besides the node.
	var key strings.Builder
	key.WriteString(strconv.FormatBool(hasConstraints))
	key.WriteByte(0)
	key.WriteString(pod.Namespace)
	key.WriteByte(0)
	writeLabels(&key, pod.Labels)
	writeLabels(&key, nsLabels)
	writeTerms(&key, pt.preferredAffinity)
	writeTerms(&key, pt.preferredAntiAffinity)
	memo := pl.scoreMemos.acquire(key.String(), len(nodes))
	defer memo.release()

	results := make([]scoreMap, min(blocks, len(nodes)))
	pl.forBlocks(ctx, len(nodes), func(b, lo, hi int) {
		var d domainAcc
		var acc nodeAcc
		for idx := lo; idx < hi; idx++ {
			ni := nodes[idx]
			node := ni.Node()
			if node == nil || len(node.Labels) == 0 || (!hasConstraints && len(ni.PodsWithAffinity) == 0) {
				continue
			}
			r, ok := memo.at(idx, ni)
			if ok {
				for i, tk := range r.keys {
					d.add(node, tk, r.ws[i])
				}
				continue
			}
			pods := ni.PodsWithAffinity
			if hasConstraints {
				pods = ni.Pods
			}
			for _, existing := range pods {
				pl.processExistingPod(pt, existing, pod, nsLabels, &acc)
			}
			if r != nil {
				r.keys = append(r.keys[:0], acc.keys...)
				r.ws = append(r.ws[:0], acc.ws...)
				memo.stored(idx, ni)
			}
			for i, tk := range acc.keys {
				d.add(node, tk, acc.ws[i])
			}
			acc.keys, acc.ws = acc.keys[:0], acc.ws[:0]
		}
		results[b] = d.scores()
	})
	s := &preScoreState{}
	for _, m := range results {
		if m == nil {
			continue
		}
		if s.topologyScore == nil {
			s.topologyScore = m
			continue
		}
		s.topologyScore.merge(m)
	}
	if s.topologyScore == nil {
		return framework.NewStatus(framework.Skip)
	}
	cycleState.Write(preScoreStateKey, s)
	return nil
}

func getPreScoreState(cycleState *framework.CycleState) (*preScoreState, error) {
	c, err := cycleState.Read(preScoreStateKey)
	if err != nil {
		return nil, fmt.Errorf("failed to read %q from cycleState: %w", preScoreStateKey, err)
	}
	s, ok := c.(*preScoreState)
	if !ok {
		return nil, fmt.Errorf("%+v  convert to interpodaffinity.preScoreState error", c)
	}
	return s, nil
}

// Score sums the weights of the node's topology domains (positive for
// affinity, negative for anti-affinity; normalized later).
func (pl *InterPodAffinity) Score(_ context.Context, cycleState *framework.CycleState, _ *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	s, err := getPreScoreState(cycleState)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	node := nodeInfo.Node()
	if node == nil {
		return 0, framework.NewStatus(framework.Error, "node not found")
	}
	var score int64
	for tk, vs := range s.topologyScore {
		if v, ok := node.Labels[tk]; ok {
			score += vs[v]
		}
	}
	return score, nil
}

// ScoreExtensions: NormalizeScore.
func (pl *InterPodAffinity) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore maps the scores onto [0, MaxNodeScore] over their
// min..max (all 0 when they are equal), as upstream.
func (pl *InterPodAffinity) NormalizeScore(_ context.Context, cycleState *framework.CycleState, _ *corev1.Pod, scores framework.NodeScoreList) *framework.Status {
	s, err := getPreScoreState(cycleState)
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(s.topologyScore) == 0 {
		return nil
	}
	minCount, maxCount := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range scores {
		minCount = min(minCount, scores[i].Score)
		maxCount = max(maxCount, scores[i].Score)
	}
	diff := maxCount - minCount
	for i := range scores {
		f := float64(0)
		if diff > 0 {
			f = float64(framework.MaxNodeScore) * (float64(scores[i].Score-minCount) / float64(diff))
		}
		scores[i].Score = int64(f)
	}
	return nil
}
