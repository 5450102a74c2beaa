package interpodaffinity

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

const (
	// preFilterStateKey is where PreFilter leaves its counts.
	preFilterStateKey framework.StateKey = "PreFilter" + Name

	// ErrReasonExistingAntiAffinityRulesNotMatch: an existing pod's
	// required anti-affinity rejects the incoming pod.
	ErrReasonExistingAntiAffinityRulesNotMatch = "node(s) didn't satisfy existing pods anti-affinity rules"
	// ErrReasonAffinityRulesNotMatch: the incoming pod's required affinity.
	ErrReasonAffinityRulesNotMatch = "node(s) didn't match pod affinity rules"
	// ErrReasonAntiAffinityRulesNotMatch: the incoming pod's required
	// anti-affinity.
	ErrReasonAntiAffinityRulesNotMatch = "node(s) didn't match pod anti-affinity rules"
)

// topologyPair is one topology domain: a node label key and value.
type topologyPair struct {
	key   string
	value string
}

// topologyCounts counts matching pods per topology domain; entries are
// never zero (removed when they drop to zero).
type topologyCounts map[topologyPair]int64

func (m topologyCounts) clone() topologyCounts {
	out := make(topologyCounts, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// add adds value to the domain of node for key tk (nothing when the node
// lacks the key).
func (m topologyCounts) add(node *corev1.Node, tk string, value int64) {
	tv, ok := node.Labels[tk]
	if !ok {
		return
	}
	p := topologyPair{tk, tv}
	if n := m[p] + value; n != 0 {
		m[p] = n
	} else {
		delete(m, p)
	}
}

// preFilterState is what Filter reads.
type preFilterState struct {
	// existingAntiAffinityCounts: existing pods whose required
	// anti-affinity terms match the incoming pod, per domain of the term.
	existingAntiAffinityCounts topologyCounts
	// affinityCounts: existing pods matching all of the incoming pod's
	// required affinity terms, per domain of each term.
	affinityCounts topologyCounts
	// antiAffinityCounts: existing pods matching each of the incoming
	// pod's required anti-affinity terms, per domain of that term.
	antiAffinityCounts topologyCounts
	// terms of the incoming pod (shared by clones: never changed).
	terms *podTerms
	// matchesOwnAffinity: the incoming pod matches all its own affinity
	// terms (the first pod of a self-affine group may go anywhere).
	matchesOwnAffinity bool
	pod                *corev1.Pod
	namespaceLabels    labels.Set
}

// Clone copies the counts (preemption changes them on the clone).
func (s *preFilterState) Clone() framework.StateData {
	if s == nil {
		return nil
	}
	c := *s
	c.existingAntiAffinityCounts = s.existingAntiAffinityCounts.clone()
	c.affinityCounts = s.affinityCounts.clone()
	c.antiAffinityCounts = s.antiAffinityCounts.clone()
	return &c
}

// updateWithPod adds (multiplier 1) or removes (-1) an existing pod on
// node to the counts.
func (s *preFilterState) updateWithPod(pi *framework.PodInfo, node *corev1.Node, multiplier int64) {
	if s == nil || node == nil {
		return
	}
	for i := range pi.RequiredAntiAffinityTerms {
		t := &pi.RequiredAntiAffinityTerms[i]
		if t.Matches(s.pod, s.namespaceLabels) {
			s.existingAntiAffinityCounts.add(node, t.TopologyKey, multiplier)
		}
	}
	if matchesAll(s.terms.affinity, pi.Pod) {
		for i := range s.terms.affinity {
			s.affinityCounts.add(node, s.terms.affinity[i].topologyKey, multiplier)
		}
	}
	for i := range s.terms.antiAffinity {
		if s.terms.antiAffinity[i].matches(pi.Pod) {
			s.antiAffinityCounts.add(node, s.terms.antiAffinity[i].topologyKey, multiplier)
		}
	}
}

// blocks is how many pieces PreFilter and PreScore split the nodes into
// (each with its own result map, merged afterwards).
const blocks = 32

// forBlocks calls fn for contiguous ranges of [0, n) in parallel; fn
// gets its block index in [0, blocks).
func (pl *InterPodAffinity) forBlocks(ctx context.Context, n int, fn func(b, lo, hi int)) {
	nb := min(blocks, n)
	pl.parallelizer.Until(ctx, nb, func(b int) {
		fn(b, b*n/nb, (b+1)*n/nb)
	}, Name)
}

// existingAntiAffinityCounts counts, per domain, the existing pods whose
// required anti-affinity terms match pod (nodes without pods with
// required anti-affinity are skipped).
func (pl *InterPodAffinity) existingAntiAffinityCounts(ctx context.Context, pod *corev1.Pod, nsLabels labels.Set, nodes []*framework.NodeInfo) topologyCounts {
	if len(nodes) == 0 {
		return topologyCounts{}
	}
	// Memo key: what matching the existing pods' terms depends on.
	var key strings.Builder
	key.WriteString(pod.Namespace)
	key.WriteByte(0)
	writeLabels(&key, pod.Labels)
	writeLabels(&key, nsLabels)
	memo := pl.existingMemos.acquire(key.String(), len(nodes))
	defer memo.release()
	results := make([]topologyCounts, min(blocks, len(nodes)))
	pl.forBlocks(ctx, len(nodes), func(b, lo, hi int) {
		var d domainAcc
		var acc nodeAcc
		var tmp scoreResult
		for idx := lo; idx < hi; idx++ {
			ni := nodes[idx]
			node := ni.Node()
			if node == nil || len(ni.PodsWithRequiredAntiAffinity) == 0 {
				continue
			}
			r, ok := memo.at(idx, ni)
			if !ok {
				for _, existing := range ni.PodsWithRequiredAntiAffinity {
					for i := range existing.RequiredAntiAffinityTerms {
						if t := &existing.RequiredAntiAffinityTerms[i]; t.Matches(pod, nsLabels) {
							acc.add(t.TopologyKey, 1)
						}
					}
				}
				if r != nil {
					r.keys = append(r.keys[:0], acc.keys...)
					r.ws = append(r.ws[:0], acc.ws...)
					memo.stored(idx, ni)
				} else {
					tmp.keys, tmp.ws = acc.keys, acc.ws
					r = &tmp
				}
			}
			for i, tk := range r.keys {
				d.add(node, tk, r.ws[i])
			}
			acc.keys, acc.ws = acc.keys[:0], acc.ws[:0]
		}
		results[b] = d.counts()
	})
	return merge(results)
}

func merge(results []topologyCounts) topologyCounts {
	out := topologyCounts{}
	for _, m := range results {
		for k, v := range m {
			out[k] += v
		}
	}
	return out
}

// incomingCounts counts, per domain, the existing pods matching all of
// the incoming pod's affinity terms and those matching each of its
// anti-affinity terms. Pods are counted per node first and the node's
// counts added to the domains once.
func (pl *InterPodAffinity) incomingCounts(ctx context.Context, pt *podTerms, nodes []*framework.NodeInfo) (topologyCounts, topologyCounts) {
	if len(pt.affinity) == 0 && len(pt.antiAffinity) == 0 {
		return topologyCounts{}, topologyCounts{}
	}
	var key strings.Builder
	writeTerms(&key, pt.affinity)
	writeTerms(&key, pt.antiAffinity)
	m := pl.incomingMemos.acquire(key.String(), len(nodes))
	defer m.release()
	nb := min(blocks, len(nodes))
	aff := make([]topologyCounts, nb)
	anti := make([]topologyCounts, nb)
	pl.forBlocks(ctx, len(nodes), func(b, lo, hi int) {
		var ad, nd domainAcc
		var scratch incomingResult
		scratch.anti = make([]int64, len(pt.antiAffinity))
		for idx := lo; idx < hi; idx++ {
			ni := nodes[idx]
			node := ni.Node()
			if node == nil || len(ni.Pods) == 0 || !hasAnyKey(node, pt) {
				continue
			}
			r, ok := m.at(idx, ni)
			if !ok {
				if r == nil {
					r = &scratch
				}
				countIncoming(pt, ni, r)
				m.stored(idx, ni)
			}
			if r.aff > 0 {
				for i := range pt.affinity {
					ad.add(node, pt.affinity[i].topologyKey, r.aff)
				}
			}
			for i, n := range r.anti {
				if n > 0 {
					nd.add(node, pt.antiAffinity[i].topologyKey, n)
				}
			}
		}
		aff[b], anti[b] = ad.counts(), nd.counts()
	})
	return merge(aff), merge(anti)
}

// countIncoming counts the node's pods matching all affinity terms and
// each anti-affinity term into r.
func countIncoming(pt *podTerms, ni *framework.NodeInfo, r *incomingResult) {
	r.aff = 0
	if len(r.anti) != len(pt.antiAffinity) {
		r.anti = make([]int64, len(pt.antiAffinity))
	}
	clear(r.anti)
	for _, existing := range ni.Pods {
		p := existing.Pod
		if matchesAll(pt.affinity, p) {
			r.aff++
		}
		for i := range pt.antiAffinity {
			if pt.antiAffinity[i].matches(p) {
				r.anti[i]++
			}
		}
	}
}

// hasAnyKey: the node has the topology key of at least one required term
// (otherwise none of its pods can count anywhere).
func hasAnyKey(node *corev1.Node, pt *podTerms) bool {
	for i := range pt.affinity {
		if _, ok := node.Labels[pt.affinity[i].topologyKey]; ok {
			return true
		}
	}
	for i := range pt.antiAffinity {
		if _, ok := node.Labels[pt.antiAffinity[i].topologyKey]; ok {
			return true
		}
	}
	return false
}

// PreFilter counts the matching pods per topology domain; Skip when the
// pod has no required (anti-)affinity and no existing pod's required
// anti-affinity matches it.
func (pl *InterPodAffinity) PreFilter(ctx context.Context, cycleState *framework.CycleState, pod *corev1.Pod, allNodes []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	lister, err := pl.snapshot()
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	withAnti, err := lister.HavePodsWithRequiredAntiAffinityList()
	if err != nil {
		return nil, framework.AsStatus(fmt.Errorf("failed to list NodeInfos with pods with affinity: %w", err))
	}
	pt, err := pl.parseTerms(pod, true, false)
	if err != nil {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("parsing pod: %+v", err))
	}
	hasTerms := len(pt.affinity) > 0 || len(pt.antiAffinity) > 0
	if !hasTerms && len(withAnti) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	s := &preFilterState{terms: pt, pod: pod, namespaceLabels: pl.namespaceLabels(pod.Namespace)}
	s.existingAntiAffinityCounts = topologyCounts{}
	if len(withAnti) > 0 {
		// Over all nodes (those without such pods skipped), so that memo
		// slots stay at the node's place in the full list.
		s.existingAntiAffinityCounts = pl.existingAntiAffinityCounts(ctx, pod, s.namespaceLabels, allNodes)
	}
	s.affinityCounts, s.antiAffinityCounts = pl.incomingCounts(ctx, pt, allNodes)
	if len(s.existingAntiAffinityCounts) == 0 && !hasTerms {
		return nil, framework.NewStatus(framework.Skip)
	}
	s.matchesOwnAffinity = matchesAll(pt.affinity, pod)
	cycleState.Write(preFilterStateKey, s)
	return nil, nil
}

// PreFilterExtensions: the counts follow pods added and removed in
// simulations.
func (pl *InterPodAffinity) PreFilterExtensions() framework.PreFilterExtensions { return pl }

// AddPod counts podInfoToAdd on nodeInfo's node.
func (pl *InterPodAffinity) AddPod(_ context.Context, cycleState *framework.CycleState, _ *corev1.Pod, podInfoToAdd *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(cycleState)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.updateWithPod(podInfoToAdd, nodeInfo.Node(), 1)
	return nil
}

// RemovePod uncounts podInfoToRemove on nodeInfo's node.
func (pl *InterPodAffinity) RemovePod(_ context.Context, cycleState *framework.CycleState, _ *corev1.Pod, podInfoToRemove *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(cycleState)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.updateWithPod(podInfoToRemove, nodeInfo.Node(), -1)
	return nil
}

func getPreFilterState(cycleState *framework.CycleState) (*preFilterState, error) {
	c, err := cycleState.Read(preFilterStateKey)
	if err != nil {
		return nil, fmt.Errorf("error reading %q from cycleState: %w", preFilterStateKey, err)
	}
	s, ok := c.(*preFilterState)
	if !ok {
		return nil, fmt.Errorf("%+v  convert to interpodaffinity.state error", c)
	}
	return s, nil
}

// satisfyExistingPodsAntiAffinity: no existing pod's anti-affinity term
// matching the incoming pod covers a domain of the node. It walks the
// smaller of the node's labels and the counts.
func satisfyExistingPodsAntiAffinity(s *preFilterState, node *corev1.Node) bool {
	if len(s.existingAntiAffinityCounts) == 0 {
		return true
	}
	if len(s.existingAntiAffinityCounts) < len(node.Labels) {
		for p, n := range s.existingAntiAffinityCounts {
			if n > 0 {
				if v, ok := node.Labels[p.key]; ok && v == p.value {
					return false
				}
			}
		}
		return true
	}
	for k, v := range node.Labels {
		if s.existingAntiAffinityCounts[topologyPair{k, v}] > 0 {
			return false
		}
	}
	return true
}

// satisfyPodAntiAffinity: no pod matching one of the incoming pod's
// anti-affinity terms is in the node's domain of that term.
func satisfyPodAntiAffinity(s *preFilterState, node *corev1.Node) bool {
	if len(s.antiAffinityCounts) == 0 {
		return true
	}
	for i := range s.terms.antiAffinity {
		tk := s.terms.antiAffinity[i].topologyKey
		if v, ok := node.Labels[tk]; ok && s.antiAffinityCounts[topologyPair{tk, v}] > 0 {
			return false
		}
	}
	return true
}

// satisfyPodAffinity: the node has every term's topology key and a pod
// matching all terms in each of its domains — or no pod matches anywhere
// and the incoming pod matches its own terms (first of its group).
func satisfyPodAffinity(s *preFilterState, node *corev1.Node) bool {
	podsExist := true
	for i := range s.terms.affinity {
		tk := s.terms.affinity[i].topologyKey
		v, ok := node.Labels[tk]
		if !ok {
			return false
		}
		if s.affinityCounts[topologyPair{tk, v}] <= 0 {
			podsExist = false
		}
	}
	if podsExist {
		return true
	}
	return len(s.affinityCounts) == 0 && s.matchesOwnAffinity
}

// Filter checks the node against the counts of PreFilter.
func (pl *InterPodAffinity) Filter(_ context.Context, cycleState *framework.CycleState, _ *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(cycleState)
	if err != nil {
		return framework.AsStatus(err)
	}
	node := nodeInfo.Node()
	if node == nil {
		return framework.NewStatus(framework.Error, "node not found")
	}
	if !satisfyPodAffinity(s, node) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch)
	}
	if !satisfyPodAntiAffinity(s, node) {
		return framework.NewStatus(framework.Unschedulable, ErrReasonAntiAffinityRulesNotMatch)
	}
	if !satisfyExistingPodsAntiAffinity(s, node) {
		return framework.NewStatus(framework.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch)
	}
	return nil
}
