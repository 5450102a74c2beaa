package podtopologyspread

import (
	"context"
	"fmt"
	"maps"
	"math"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/skiff-sh/skiff/pkg/componenthelpers/scheduling/nodeaffinity"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// preFilterState is what PreFilter computes for Filter: per constraint,
// the matching pods per topology value and the two smallest domains.
type preFilterState struct {
	// lock guards the counts: AddPod/RemovePod may change them.
	lock sync.RWMutex

	Constraints []topologySpreadConstraint
	// CriticalPaths[i][0].MatchNum is constraint i's minimum matching
	// number; [1] is greater or equal (not necessarily the 2nd minimum).
	CriticalPaths []criticalPaths
	// TpValueToMatchNum[i] maps topology values of constraint i to the
	// number of matching pods.
	TpValueToMatchNum []map[string]int

	// selfMatch[i]: constraint i selects the pod itself (read-only).
	selfMatch []bool
	// required is the pod's required node placement (read-only).
	required nodeaffinity.RequiredNodeAffinity
}

// minMatchNum is the global minimum for constraint i: 0 when fewer
// eligible domains than minDomains exist.
func (s *preFilterState) minMatchNum(i int, minDomains int32) int {
	if len(s.TpValueToMatchNum[i]) < int(minDomains) {
		return 0
	}
	return s.CriticalPaths[i][0].MatchNum
}

// Clone copies the counts and paths (constraints are shared: they never
// change).
func (s *preFilterState) Clone() framework.StateData {
	if s == nil {
		return nil
	}
	s.lock.RLock()
	defer s.lock.RUnlock()
	c := &preFilterState{
		Constraints:       s.Constraints,
		CriticalPaths:     append([]criticalPaths(nil), s.CriticalPaths...),
		TpValueToMatchNum: make([]map[string]int, len(s.TpValueToMatchNum)),
		selfMatch:         s.selfMatch,
		required:          s.required,
	}
	for i, m := range s.TpValueToMatchNum {
		c.TpValueToMatchNum[i] = maps.Clone(m)
	}
	return c
}

// criticalPaths are the two domains with the fewest matching pods (enough
// because preemption removes pods from one node at a time, each node on
// its own copy of the state).
type criticalPaths [2]struct {
	TopologyValue string
	MatchNum      int
}

func newCriticalPaths() criticalPaths {
	var p criticalPaths
	p[0].MatchNum, p[1].MatchNum = math.MaxInt32, math.MaxInt32
	return p
}

func (p *criticalPaths) update(tpVal string, num int) {
	i := -1
	if tpVal == p[0].TopologyValue {
		i = 0
	} else if tpVal == p[1].TopologyValue {
		i = 1
	}
	if i >= 0 {
		p[i].MatchNum = num
		if p[0].MatchNum > p[1].MatchNum {
			p[0], p[1] = p[1], p[0]
		}
		return
	}
	if num < p[0].MatchNum {
		p[1] = p[0]
		p[0].TopologyValue, p[0].MatchNum = tpVal, num
	} else if num < p[1].MatchNum {
		p[1].TopologyValue, p[1].MatchNum = tpVal, num
	}
}

// PreFilter computes the counts; Skip when the pod has no DoNotSchedule
// constraint (own or default).
func (pl *PodTopologySpread) PreFilter(ctx context.Context, cs *framework.CycleState, pod *corev1.Pod, nodes []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	s, err := pl.calPreFilterState(ctx, pod, nodes)
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	if len(s.Constraints) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	cs.Write(preFilterStateKey, s)
	return nil, nil
}

// PreFilterExtensions returns the plugin (AddPod/RemovePod).
func (pl *PodTopologySpread) PreFilterExtensions() framework.PreFilterExtensions { return pl }

// AddPod counts podInfoToAdd on nodeInfo.
func (pl *PodTopologySpread) AddPod(_ context.Context, cs *framework.CycleState, podToSchedule *corev1.Pod, podInfoToAdd *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(cs)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.lock.Lock()
	defer s.lock.Unlock()
	updateWithPod(s, podInfoToAdd.Pod, podToSchedule, nodeInfo.Node(), 1)
	return nil
}

// RemovePod uncounts podInfoToRemove on nodeInfo.
func (pl *PodTopologySpread) RemovePod(_ context.Context, cs *framework.CycleState, podToSchedule *corev1.Pod, podInfoToRemove *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(cs)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.lock.Lock()
	defer s.lock.Unlock()
	updateWithPod(s, podInfoToRemove.Pod, podToSchedule, nodeInfo.Node(), -1)
	return nil
}

func updateWithPod(s *preFilterState, updatedPod, preemptorPod *corev1.Pod, node *corev1.Node, delta int) {
	if s == nil || updatedPod.Namespace != preemptorPod.Namespace || node == nil {
		return
	}
	if !nodeLabelsMatchSpreadConstraints(node.Labels, s.Constraints) {
		return
	}
	podLabels := labels.Set(updatedPod.Labels)
	for i := range s.Constraints {
		c := &s.Constraints[i]
		if !c.Selector.Matches(podLabels) {
			continue
		}
		if !c.matchNodeInclusionPolicies(preemptorPod, node, s.required) {
			continue
		}
		v := node.Labels[c.TopologyKey]
		s.TpValueToMatchNum[i][v] += delta
		s.CriticalPaths[i].update(v, s.TpValueToMatchNum[i][v])
	}
}

func getPreFilterState(cs *framework.CycleState) (*preFilterState, error) {
	c, err := cs.Read(preFilterStateKey)
	if err != nil {
		return nil, fmt.Errorf("reading %q from cycleState: %w", preFilterStateKey, err)
	}
	s, ok := c.(*preFilterState)
	if !ok {
		return nil, fmt.Errorf("%+v convert to podtopologyspread.preFilterState error", c)
	}
	return s, nil
}

// calPreFilterState counts the matching pods per domain over the nodes.
func (pl *PodTopologySpread) calPreFilterState(ctx context.Context, pod *corev1.Pod, allNodes []*framework.NodeInfo) (*preFilterState, error) {
	constraints, err := pl.getConstraints(pod)
	if err != nil {
		return nil, fmt.Errorf("get constraints from pod: %w", err)
	}
	if len(constraints) == 0 {
		return &preFilterState{}, nil
	}
	nc := len(constraints)
	s := &preFilterState{
		Constraints:       constraints,
		CriticalPaths:     make([]criticalPaths, nc),
		TpValueToMatchNum: make([]map[string]int, nc),
		selfMatch:         make([]bool, nc),
		required:          nodeaffinity.GetRequiredNodeAffinity(pod),
	}
	podLabels := labels.Set(pod.Labels)
	for i := range constraints {
		s.TpValueToMatchNum[i] = make(map[string]int, sizeHeuristic(len(allNodes), &constraints[i]))
		s.selfMatch[i] = constraints[i].Selector.Matches(podLabels)
	}

	m := pl.countPerDomain(ctx, pod, constraints, allNodes, s.required, true, false)
	defer m.release()
	for i := range constraints {
		tp := s.TpValueToMatchNum[i]
		for v, d := range m.totals[i] {
			tp[v] = d.pods
		}
	}
	for i := range constraints {
		s.CriticalPaths[i] = newCriticalPaths()
		for v, num := range s.TpValueToMatchNum[i] {
			s.CriticalPaths[i].update(v, num)
		}
	}
	return s, nil
}

// Filter checks every DoNotSchedule constraint on the node.
func (pl *PodTopologySpread) Filter(_ context.Context, cs *framework.CycleState, _ *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	node := nodeInfo.Node()
	s, err := getPreFilterState(cs)
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(s.Constraints) == 0 {
		return nil
	}
	s.lock.RLock()
	defer s.lock.RUnlock()
	for i := range s.Constraints {
		c := &s.Constraints[i]
		tpVal, ok := node.Labels[c.TopologyKey]
		if !ok {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNodeLabelNotMatch)
		}
		selfMatchNum := 0
		if s.selfMatch[i] {
			selfMatchNum = 1
		}
		skew := s.TpValueToMatchNum[i][tpVal] + selfMatchNum - s.minMatchNum(i, c.MinDomains)
		if skew > int(c.MaxSkew) {
			return framework.NewStatus(framework.Unschedulable, ErrReasonConstraintsNotMatch)
		}
	}
	return nil
}

func sizeHeuristic(nodes int, c *topologySpreadConstraint) int {
	if c.TopologyKey == corev1.LabelHostname {
		return nodes
	}
	return 0
}
