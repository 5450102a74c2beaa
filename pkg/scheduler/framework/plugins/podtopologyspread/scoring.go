package podtopologyspread

import (
	"context"
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/skiff-sh/skiff/pkg/componenthelpers/scheduling/nodeaffinity"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

const (
	preScoreStateKey framework.StateKey = "PreScore" + Name
	invalidScore                        = -1
)

// preScoreState is what PreScore computes for Score and NormalizeScore.
type preScoreState struct {
	Constraints []topologySpreadConstraint
	// IgnoredNodes miss a topology key (when every key is required).
	IgnoredNodes sets.Set[string]
	// TopologyValueToPodCounts[i] maps constraint i's topology values of
	// the filtered nodes to their matching pods (hostname constraints are
	// counted per node in Score).
	TopologyValueToPodCounts []map[string]*int64
	// TopologyNormalizingWeight[i] is log(domains+2), so that small
	// topologies are not watered down by big ones.
	TopologyNormalizingWeight []float64
	// HostnameCounts: each scored node's matching pods for the first
	// hostname constraint (HostnameConstraint; -1 when none), counted or
	// remembered in PreScore.
	HostnameConstraint int
	HostnameCounts     map[*framework.NodeInfo]int
}

// Clone returns the state itself: it does not change after PreScore.
func (s *preScoreState) Clone() framework.StateData { return s }

// initPreScoreState parses the pod's ScheduleAnyway constraints (or the
// defaults) and creates a counter per topology value of filteredNodes.
func (pl *PodTopologySpread) initPreScoreState(s *preScoreState, pod *corev1.Pod, filteredNodes []*framework.NodeInfo, requireAllTopologies bool) error {
	var err error
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		s.Constraints, err = filterTopologySpreadConstraints(pod.Spec.TopologySpreadConstraints, pod.Labels, corev1.ScheduleAnyway)
		if err != nil {
			return fmt.Errorf("obtaining pod's soft topology spread constraints: %w", err)
		}
	} else {
		s.Constraints, err = pl.buildDefaultConstraints(pod, corev1.ScheduleAnyway)
		if err != nil {
			return fmt.Errorf("setting default soft topology spread constraints: %w", err)
		}
	}
	if len(s.Constraints) == 0 {
		return nil
	}
	s.TopologyValueToPodCounts = make([]map[string]*int64, len(s.Constraints))
	for i := range s.Constraints {
		s.TopologyValueToPodCounts[i] = make(map[string]*int64)
	}
	topoSize := make([]int, len(s.Constraints))
	for _, ni := range filteredNodes {
		node := ni.Node()
		if requireAllTopologies && !nodeLabelsMatchSpreadConstraints(node.Labels, s.Constraints) {
			// Nodes missing a topology key score 0.
			s.IgnoredNodes.Insert(node.Name)
			continue
		}
		for i := range s.Constraints {
			c := &s.Constraints[i]
			if c.TopologyKey == corev1.LabelHostname {
				continue // counted per node in Score
			}
			v := node.Labels[c.TopologyKey]
			if s.TopologyValueToPodCounts[i][v] == nil {
				s.TopologyValueToPodCounts[i][v] = new(int64)
				topoSize[i]++
			}
		}
	}
	s.TopologyNormalizingWeight = make([]float64, len(s.Constraints))
	for i := range s.Constraints {
		sz := topoSize[i]
		if s.Constraints[i].TopologyKey == corev1.LabelHostname {
			sz = len(filteredNodes) - len(s.IgnoredNodes)
		}
		s.TopologyNormalizingWeight[i] = topologyNormalizingWeight(sz)
	}
	return nil
}

// PreScore counts the matching pods per topology value over all nodes;
// Skip when there are no nodes or no ScheduleAnyway constraints.
func (pl *PodTopologySpread) PreScore(ctx context.Context, cs *framework.CycleState, pod *corev1.Pod, filteredNodes []*framework.NodeInfo) *framework.Status {
	allNodes, err := pl.sharedLister.NodeInfos().List()
	if err != nil {
		return framework.AsStatus(fmt.Errorf("getting all nodes: %w", err))
	}
	if len(allNodes) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	state := &preScoreState{IgnoredNodes: sets.New[string]()}
	// Only non-system-default constraints require every topology key, so
	// that nodes without a zone label still get hostname spreading.
	requireAllTopologies := len(pod.Spec.TopologySpreadConstraints) > 0 || !pl.systemDefaulted
	if err := pl.initPreScoreState(state, pod, filteredNodes, requireAllTopologies); err != nil {
		return framework.AsStatus(fmt.Errorf("calculating preScoreState: %w", err))
	}
	if len(state.Constraints) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	// Per-domain counts over all nodes, memoized (memo.go); only the
	// domains of candidate nodes have counters (hostname constraints none:
	// counted per node in Score).
	m := pl.countPerDomain(ctx, pod, state.Constraints, allNodes, nodeaffinity.GetRequiredNodeAffinity(pod), requireAllTopologies, true)
	for i := range state.Constraints {
		for v, tpCount := range state.TopologyValueToPodCounts[i] {
			if d := m.totals[i][v]; d != nil {
				*tpCount = int64(d.pods)
			}
		}
	}
	m.release()
	state.HostnameConstraint = -1
	for i := range state.Constraints {
		if state.Constraints[i].TopologyKey == corev1.LabelHostname {
			state.HostnameConstraint = i
			state.HostnameCounts = pl.hostnameCounts(ctx, pod, state.Constraints, i, filteredNodes)
			break
		}
	}
	cs.Write(preScoreStateKey, state)
	return nil
}

// Score is the node's weighted matching count, normalized later.
func (pl *PodTopologySpread) Score(_ context.Context, cs *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	node := nodeInfo.Node()
	s, err := getPreScoreState(cs)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	if s.IgnoredNodes.Has(node.Name) {
		return 0, nil
	}
	var score float64
	for i := range s.Constraints {
		c := &s.Constraints[i]
		tpVal, ok := node.Labels[c.TopologyKey]
		if !ok {
			continue
		}
		var cnt int64
		if c.TopologyKey == corev1.LabelHostname {
			if n, ok := s.HostnameCounts[nodeInfo]; ok && i == s.HostnameConstraint {
				cnt = int64(n)
			} else {
				cnt = int64(countPodsMatchSelector(nodeInfo.Pods, c.Selector, pod.Namespace))
			}
		} else if p := s.TopologyValueToPodCounts[i][tpVal]; p != nil {
			cnt = *p
		}
		score += scoreForCount(cnt, c.MaxSkew, s.TopologyNormalizingWeight[i])
	}
	return int64(math.Round(score)), nil
}

// NormalizeScore maps scores to 100·(max+min−s)/max (fewest matching
// pods best); ignored nodes get 0.
func (pl *PodTopologySpread) NormalizeScore(_ context.Context, cs *framework.CycleState, _ *corev1.Pod, scores framework.NodeScoreList) *framework.Status {
	s, err := getPreScoreState(cs)
	if err != nil {
		return framework.AsStatus(err)
	}
	if s == nil {
		return nil
	}
	var minScore int64 = math.MaxInt64
	var maxScore int64
	for i := range scores {
		if s.IgnoredNodes.Has(scores[i].Name) {
			scores[i].Score = invalidScore
			continue
		}
		minScore = min(minScore, scores[i].Score)
		maxScore = max(maxScore, scores[i].Score)
	}
	for i := range scores {
		if scores[i].Score == invalidScore {
			scores[i].Score = 0
			continue
		}
		if maxScore == 0 {
			scores[i].Score = framework.MaxNodeScore
			continue
		}
		scores[i].Score = framework.MaxNodeScore * (maxScore + minScore - scores[i].Score) / maxScore
	}
	return nil
}

// ScoreExtensions returns the plugin (it normalizes).
func (pl *PodTopologySpread) ScoreExtensions() framework.ScoreExtensions { return pl }

func getPreScoreState(cs *framework.CycleState) (*preScoreState, error) {
	c, err := cs.Read(preScoreStateKey)
	if err != nil {
		return nil, fmt.Errorf("error reading %q from cycleState: %w", preScoreStateKey, err)
	}
	s, ok := c.(*preScoreState)
	if !ok {
		return nil, fmt.Errorf("%+v  convert to podtopologyspread.preScoreState error", c)
	}
	return s, nil
}

// topologyNormalizingWeight is log(size+2): in [1.09, 8.52] for 1..5000
// domains.
func topologyNormalizingWeight(size int) float64 {
	return math.Log(float64(size + 2))
}

// scoreForCount: count·weight + maxSkew−1 (maxSkew−1 waters down small
// differences between domains).
func scoreForCount(cnt int64, maxSkew int32, tpWeight float64) float64 {
	return float64(cnt)*tpWeight + float64(maxSkew-1)
}
