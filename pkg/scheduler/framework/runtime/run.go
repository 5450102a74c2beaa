package runtime

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// maxPermitTimeout caps a Permit plugin's wait, as upstream's.
const maxPermitTimeout = 15 * time.Minute

func (f *Framework) observe(point string, start time.Time, s *framework.Status) {
	if f.opts.Metrics != nil {
		f.opts.Metrics.ObserveExtensionPoint(point, s.Code().String(), f.profileName, f.opts.Clock.Since(start))
	}
}

func (f *Framework) now() time.Time {
	if f.opts.Metrics == nil {
		return time.Time{}
	}
	return f.opts.Clock.Now()
}

// RunPreFilterPlugins runs every PreFilter plugin. It returns the merged
// node restriction, the first rejection (with the plugin set) or an
// Error, and the plugins that restricted the nodes (they count as
// rejecting when the restriction leaves no node). Plugins that return
// Skip have their Filter skipped this cycle.
func (f *Framework) RunPreFilterPlugins(ctx context.Context, state *framework.CycleState, pod *corev1.Pod) (_ *framework.PreFilterResult, status *framework.Status, _ sets.Set[string]) {
	start := f.now()
	defer func() { f.observe("PreFilter", start, status) }()
	nodes, err := f.opts.Snapshot.NodeInfos().List()
	if err != nil {
		return nil, framework.AsStatus(err), nil
	}
	var result *framework.PreFilterResult
	var withNodes []string
	skip := sets.New[string]()
	for _, pl := range f.preFilterPlugins {
		r, s := pl.PreFilter(ctx, state, pod, nodes)
		if s.IsSkip() {
			skip.Insert(pl.Name())
			continue
		}
		if !s.IsSuccess() {
			if s.IsRejected() {
				return nil, s.WithPlugin(pl.Name()), sets.New(pl.Name())
			}
			return nil, framework.AsStatus(fmt.Errorf("running PreFilter plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name()), nil
		}
		if !r.AllNodes() {
			withNodes = append(withNodes, pl.Name())
		}
		result = result.Merge(r)
		if !result.AllNodes() && len(result.NodeNames) == 0 {
			msg := fmt.Sprintf("node(s) didn't satisfy plugin(s) %v simultaneously", withNodes)
			if len(withNodes) == 1 {
				msg = fmt.Sprintf("node(s) didn't satisfy plugin %v", withNodes[0])
			}
			return result, framework.NewStatus(framework.UnschedulableAndUnresolvable, msg), sets.New(withNodes...)
		}
	}
	state.SkipFilterPlugins = skip
	state.FilterPlugins = f.filterPluginsWithout(skip)
	return result, nil, sets.New(withNodes...)
}

// filterPluginsWithout is the profile's Filter plugins minus skip (the
// profile's own slice when nothing is skipped).
func (f *Framework) filterPluginsWithout(skip sets.Set[string]) []framework.FilterPlugin {
	if len(skip) == 0 {
		return f.filterPlugins
	}
	run := make([]framework.FilterPlugin, 0, len(f.filterPlugins))
	for _, pl := range f.filterPlugins {
		if !skip.Has(pl.Name()) {
			run = append(run, pl)
		}
	}
	return run
}

// RunPreFilterExtensionAddPod runs the AddPod extensions (simulating
// podInfoToAdd on nodeInfo).
func (f *Framework) RunPreFilterExtensionAddPod(ctx context.Context, state *framework.CycleState, podToSchedule *corev1.Pod, podInfoToAdd *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	for _, pl := range f.preFilterPlugins {
		if pl.PreFilterExtensions() == nil || state.SkipFilterPlugins.Has(pl.Name()) {
			continue
		}
		if s := pl.PreFilterExtensions().AddPod(ctx, state, podToSchedule, podInfoToAdd, nodeInfo); !s.IsSuccess() {
			return framework.AsStatus(fmt.Errorf("running AddPod on PreFilter plugin %q: %w", pl.Name(), s.AsError()))
		}
	}
	return nil
}

// RunPreFilterExtensionRemovePod runs the RemovePod extensions.
func (f *Framework) RunPreFilterExtensionRemovePod(ctx context.Context, state *framework.CycleState, podToSchedule *corev1.Pod, podInfoToRemove *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	for _, pl := range f.preFilterPlugins {
		if pl.PreFilterExtensions() == nil || state.SkipFilterPlugins.Has(pl.Name()) {
			continue
		}
		if s := pl.PreFilterExtensions().RemovePod(ctx, state, podToSchedule, podInfoToRemove, nodeInfo); !s.IsSuccess() {
			return framework.AsStatus(fmt.Errorf("running RemovePod on PreFilter plugin %q: %w", pl.Name(), s.AsError()))
		}
	}
	return nil
}

// RunFilterPlugins filters one node: the first rejection (with its
// plugin) or an Error; nil when every plugin accepts.
func (f *Framework) RunFilterPlugins(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	plugins := state.FilterPlugins
	if plugins == nil {
		// PreFilter did not run through this framework (tests, or the
		// skip set was set by hand): look the names up.
		plugins = f.filterPluginsWithout(state.SkipFilterPlugins)
	}
	for _, pl := range plugins {
		if s := pl.Filter(ctx, state, pod, nodeInfo); !s.IsSuccess() {
			if !s.IsRejected() {
				s = framework.AsStatus(fmt.Errorf("running %q filter plugin: %w", pl.Name(), s.AsError()))
			}
			return s.WithPlugin(pl.Name())
		}
	}
	return nil
}

// RunFilterPluginsWithNominatedPods filters one node twice when pods of
// equal or higher priority are nominated to it: once as if they were
// running there (so a lower-priority pod does not take the room
// preemption made for them) and once without them (affinity to them
// must not be assumed); both must pass. As upstream's.
func (f *Framework) RunFilterPluginsWithNominatedPods(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, info *framework.NodeInfo) *framework.Status {
	var status *framework.Status
	added := false
	for i := 0; i < 2; i++ {
		stateToUse, infoToUse := state, info
		if i == 0 {
			var err error
			added, stateToUse, infoToUse, err = f.addNominatedPods(ctx, pod, state, info)
			if err != nil {
				return framework.AsStatus(err)
			}
		} else if !added || !status.IsSuccess() {
			break
		}
		status = f.RunFilterPlugins(ctx, stateToUse, pod, infoToUse)
		if !status.IsSuccess() && !status.IsRejected() {
			return status
		}
	}
	return status
}

func (f *Framework) addNominatedPods(ctx context.Context, pod *corev1.Pod, state *framework.CycleState, info *framework.NodeInfo) (bool, *framework.CycleState, *framework.NodeInfo, error) {
	if f.opts.PodNominator == nil || info.Node() == nil {
		return false, state, info, nil
	}
	nominated := f.opts.PodNominator.NominatedPodsForNode(info.Node().Name)
	if len(nominated) == 0 {
		return false, state, info, nil
	}
	infoOut := info.Snapshot()
	stateOut := state.Clone()
	added := false
	prio := PodPriority(pod)
	for _, pi := range nominated {
		if PodPriority(pi.Pod) >= prio && pi.Pod.UID != pod.UID {
			infoOut.AddPodInfo(pi)
			if s := f.RunPreFilterExtensionAddPod(ctx, stateOut, pod, pi, infoOut); !s.IsSuccess() {
				return false, state, info, s.AsError()
			}
			added = true
		}
	}
	return added, stateOut, infoOut, nil
}

// PodPriority is spec.priority (0 when unset).
func PodPriority(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// RunPostFilterPlugins runs PostFilter plugins until one succeeds (made
// room: the result nominates a node); otherwise an Unschedulable status
// with every plugin's reasons.
func (f *Framework) RunPostFilterPlugins(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, m framework.NodeToStatusReader) (_ *framework.PostFilterResult, status *framework.Status) {
	start := f.now()
	defer func() { f.observe("PostFilter", start, status) }()
	var result *framework.PostFilterResult
	var reasons []string
	rejector := ""
	for _, pl := range f.postFilterPlugins {
		r, s := pl.PostFilter(ctx, state, pod, m)
		switch {
		case s.IsSuccess():
			return r, s
		case s.Code() == framework.UnschedulableAndUnresolvable:
			return r, s.WithPlugin(pl.Name())
		case !s.IsRejected():
			return nil, framework.AsStatus(s.AsError()).WithPlugin(pl.Name())
		}
		if r != nil && r.Mode() != framework.ModeNoop {
			result = r
		}
		reasons = append(reasons, s.Reasons()...)
		if rejector == "" {
			rejector = pl.Name()
		}
	}
	return result, framework.NewStatus(framework.Unschedulable, reasons...).WithPlugin(rejector)
}

// RunPreScorePlugins runs PreScore; plugins that return Skip are not
// scored this cycle.
func (f *Framework) RunPreScorePlugins(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodes []*framework.NodeInfo) (status *framework.Status) {
	start := f.now()
	defer func() { f.observe("PreScore", start, status) }()
	skip := sets.New[string]()
	for _, pl := range f.preScorePlugins {
		s := pl.PreScore(ctx, state, pod, nodes)
		if s.IsSkip() {
			skip.Insert(pl.Name())
			continue
		}
		if !s.IsSuccess() {
			return framework.AsStatus(fmt.Errorf("running PreScore plugin %q: %w", pl.Name(), s.AsError()))
		}
	}
	state.SkipScorePlugins = skip
	return nil
}

// RunScorePlugins scores nodes with every Score plugin not skipped (in
// parallel over nodes), normalizes each plugin's scores, checks they are
// within [MinNodeScore, MaxNodeScore], and weights them.
func (f *Framework) RunScorePlugins(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodes []*framework.NodeInfo) ([]framework.NodePluginScores, *framework.Status) {
	return f.ScoreNodes(ctx, state, pod, nodes, nil)
}

// ScoreBuffer is memory ScoreNodes reuses for its result (the
// scheduler's cycles run one at a time, each consuming its scores before
// the next).
type ScoreBuffer struct {
	all  []framework.NodePluginScores
	flat []framework.PluginScore
}

// ScoreNodes is RunScorePlugins with its result in buf's memory (nil:
// fresh memory), valid until buf is used again.
func (f *Framework) ScoreNodes(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodes []*framework.NodeInfo, buf *ScoreBuffer) (_ []framework.NodePluginScores, status *framework.Status) {
	start := f.now()
	defer func() { f.observe("Score", start, status) }()
	if buf == nil {
		buf = &ScoreBuffer{}
	}
	plugins := make([]framework.ScorePlugin, 0, len(f.scorePlugins))
	for _, pl := range f.scorePlugins {
		if !state.SkipScorePlugins.Has(pl.Name()) {
			plugins = append(plugins, pl)
		}
	}
	if cap(buf.all) < len(nodes) {
		buf.all = make([]framework.NodePluginScores, len(nodes))
	}
	all := buf.all[:len(nodes)]
	if len(plugins) == 0 {
		for i, n := range nodes {
			all[i] = framework.NodePluginScores{Name: n.Node().Name}
		}
		return all, nil
	}
	// The per-plugin score lists are scratch space, reused across
	// cycles; the result gets one array for every node's plugin scores.
	scratch := f.scoreBufs.Get().(*scoreBuf)
	defer f.scoreBufs.Put(scratch)
	scores := scratch.lists(len(plugins), len(nodes))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := newFirstError(cancel)
	f.parallelizer.UntilCPU(ctx, len(nodes), func(i int) {
		ni := nodes[i]
		name := ni.Node().Name
		for j, pl := range plugins {
			s, st := pl.Score(ctx, state, pod, ni)
			if !st.IsSuccess() {
				errs.set(fmt.Errorf("plugin %q failed with: %w", pl.Name(), st.AsError()))
				return
			}
			scores[j][i] = framework.NodeScore{Name: name, Score: s}
		}
	}, "Score")
	if err := errs.get(); err != nil {
		return nil, framework.AsStatus(fmt.Errorf("running Score plugins: %w", err))
	}
	f.parallelizer.UntilCPU(ctx, len(plugins), func(j int) {
		ext := plugins[j].ScoreExtensions()
		if ext == nil {
			return
		}
		if st := ext.NormalizeScore(ctx, state, pod, scores[j]); !st.IsSuccess() {
			errs.set(fmt.Errorf("plugin %q failed with: %w", plugins[j].Name(), st.AsError()))
		}
	}, "ScoreExtension")
	if err := errs.get(); err != nil {
		return nil, framework.AsStatus(fmt.Errorf("running Normalize on Score plugins: %w", err))
	}
	weights := scratch.weights[:0]
	for _, pl := range plugins {
		weights = append(weights, int64(f.scoreWeights[pl.Name()]))
	}
	scratch.weights = weights
	if n := len(nodes) * len(plugins); cap(buf.flat) < n {
		buf.flat = make([]framework.PluginScore, n)
	}
	flat := buf.flat[:len(nodes)*len(plugins)]
	for i, ni := range nodes {
		nps := framework.NodePluginScores{Name: ni.Node().Name, Scores: flat[i*len(plugins) : (i+1)*len(plugins) : (i+1)*len(plugins)]}
		for j, pl := range plugins {
			s := scores[j][i].Score
			if s > framework.MaxNodeScore || s < framework.MinNodeScore {
				return nil, framework.AsStatus(fmt.Errorf("applying score defaultWeights on Score plugins: plugin %q returns an invalid score %v, it should in the range of [%v, %v] after normalizing", pl.Name(), s, framework.MinNodeScore, framework.MaxNodeScore))
			}
			w := s * weights[j]
			nps.Scores[j] = framework.PluginScore{Name: pl.Name(), Score: w}
			nps.TotalScore += w
		}
		all[i] = nps
	}
	return all, nil
}

// scoreBuf is RunScorePlugins' scratch space: one score list per plugin.
type scoreBuf struct {
	scores  []framework.NodeScoreList
	weights []int64
}

// lists returns n lists of nodes entries each (their contents are
// overwritten by the caller).
func (b *scoreBuf) lists(n, nodes int) []framework.NodeScoreList {
	for len(b.scores) < n {
		b.scores = append(b.scores, nil)
	}
	out := b.scores[:n]
	for j := range out {
		if cap(out[j]) < nodes {
			out[j] = make(framework.NodeScoreList, nodes)
		}
		out[j] = out[j][:nodes]
	}
	return out
}

// RunReservePluginsReserve reserves; on failure the caller runs
// Unreserve.
func (f *Framework) RunReservePluginsReserve(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodeName string) (status *framework.Status) {
	start := f.now()
	defer func() { f.observe("Reserve", start, status) }()
	for _, pl := range f.reservePlugins {
		if s := pl.Reserve(ctx, state, pod, nodeName); !s.IsSuccess() {
			if s.IsRejected() {
				return s.WithPlugin(pl.Name())
			}
			return framework.AsStatus(fmt.Errorf("running Reserve plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
	}
	return nil
}

// RunReservePluginsUnreserve undoes Reserve, in reverse order.
func (f *Framework) RunReservePluginsUnreserve(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodeName string) {
	start := f.now()
	defer func() { f.observe("Unreserve", start, nil) }()
	for i := len(f.reservePlugins) - 1; i >= 0; i-- {
		f.reservePlugins[i].Unreserve(ctx, state, pod, nodeName)
	}
}

// RunPermitPlugins asks every Permit plugin; when some ask to wait (and
// none rejects) the pod becomes a waiting pod and Wait is returned.
func (f *Framework) RunPermitPlugins(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodeName string) (status *framework.Status) {
	start := f.now()
	defer func() { f.observe("Permit", start, status) }()
	waits := map[string]time.Duration{}
	for _, pl := range f.permitPlugins {
		s, timeout := pl.Permit(ctx, state, pod, nodeName)
		if s.IsSuccess() {
			continue
		}
		switch {
		case s.IsRejected():
			return s.WithPlugin(pl.Name())
		case s.IsWait():
			waits[pl.Name()] = min(timeout, maxPermitTimeout)
		default:
			return framework.AsStatus(fmt.Errorf("running Permit plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
	}
	if len(waits) > 0 {
		f.opts.WaitingPods.add(newWaitingPod(pod, waits, f.opts.Clock))
		return framework.NewStatus(framework.Wait, fmt.Sprintf("one or more plugins asked to wait and no plugin rejected pod %q", pod.Name))
	}
	return nil
}

// WaitOnPermit blocks a waiting pod until every plugin allowed it, one
// rejected it, its wait timed out, or ctx ended.
func (f *Framework) WaitOnPermit(ctx context.Context, pod *corev1.Pod) *framework.Status {
	wp := f.opts.WaitingPods.get(pod.UID)
	if wp == nil {
		return nil
	}
	defer f.opts.WaitingPods.remove(pod.UID)
	select {
	case s := <-wp.result:
		if s.IsSuccess() || s.IsRejected() {
			return s
		}
		return framework.AsStatus(fmt.Errorf("waiting on permit for pod: %w", s.AsError())).WithPlugin(s.Plugin())
	case <-ctx.Done():
		wp.Reject("", "context ended")
		return framework.AsStatus(ctx.Err())
	}
}

// RunPreBindPlugins runs PreBind.
func (f *Framework) RunPreBindPlugins(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodeName string) (status *framework.Status) {
	start := f.now()
	defer func() { f.observe("PreBind", start, status) }()
	for _, pl := range f.preBindPlugins {
		if s := pl.PreBind(ctx, state, pod, nodeName); !s.IsSuccess() {
			if s.IsRejected() {
				return s.WithPlugin(pl.Name())
			}
			return framework.AsStatus(fmt.Errorf("running PreBind plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
	}
	return nil
}

// RunBindPlugins binds with the first binder that does not Skip.
func (f *Framework) RunBindPlugins(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodeName string) (status *framework.Status) {
	start := f.now()
	defer func() { f.observe("Bind", start, status) }()
	status = framework.NewStatus(framework.Skip)
	for _, pl := range f.bindPlugins {
		status = pl.Bind(ctx, state, pod, nodeName)
		if status.IsSkip() {
			continue
		}
		if !status.IsSuccess() {
			if status.IsRejected() {
				return status.WithPlugin(pl.Name())
			}
			return framework.AsStatus(fmt.Errorf("running Bind plugin %q: %w", pl.Name(), status.AsError())).WithPlugin(pl.Name())
		}
		return status
	}
	return status
}

// RunPostBindPlugins tells PostBind plugins.
func (f *Framework) RunPostBindPlugins(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodeName string) {
	start := f.now()
	defer func() { f.observe("PostBind", start, nil) }()
	for _, pl := range f.postBindPlugins {
		pl.PostBind(ctx, state, pod, nodeName)
	}
}
