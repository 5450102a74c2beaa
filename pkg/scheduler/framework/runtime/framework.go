package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// Options are the shared pieces a framework hands its plugins.
type Options struct {
	Client        *client.Client
	Informers     *informers.SharedInformerFactory
	EventRecorder record.EventRecorder
	Clock         clock.Clock
	Logger        *slog.Logger
	// Parallelism bounds Filter/Score goroutines (default 16).
	Parallelism int
	// Snapshot is the cycle's snapshot (the scheduler updates it in place
	// before each cycle).
	Snapshot framework.SharedLister
	// PodNominator and PodActivator are the scheduling queue.
	PodNominator framework.PodNominator
	PodActivator framework.PodActivator
	// WaitingPods is shared by the scheduler's profiles (nil: own).
	WaitingPods *WaitingPods
	// Metrics observes extension point durations (nil: none).
	Metrics MetricsRecorder
}

// MetricsRecorder is told how long an extension point took, with
// upstream's label values (extension point name, status code string,
// profile).
type MetricsRecorder interface {
	ObserveExtensionPoint(point, status, profile string, d time.Duration)
}

// Framework runs one profile's plugins. It implements framework.Handle.
type Framework struct {
	profileName              string
	percentageOfNodesToScore *int32
	opts                     Options
	parallelizer             framework.Parallelizer

	plugins           map[string]framework.Plugin
	preEnqueuePlugins []framework.PreEnqueuePlugin
	queueSortPlugins  []framework.QueueSortPlugin
	preFilterPlugins  []framework.PreFilterPlugin
	filterPlugins     []framework.FilterPlugin
	postFilterPlugins []framework.PostFilterPlugin
	preScorePlugins   []framework.PreScorePlugin
	scorePlugins      []framework.ScorePlugin
	scoreWeights      map[string]int32
	reservePlugins    []framework.ReservePlugin
	permitPlugins     []framework.PermitPlugin
	preBindPlugins    []framework.PreBindPlugin
	bindPlugins       []framework.BindPlugin
	postBindPlugins   []framework.PostBindPlugin
	enqueueExtensions []framework.EnqueueExtensions
	pluginsThatReject []string  // plugins that can reject a pod, in order
	scoreBufs         sync.Pool // of *scoreBuf
}

var _ framework.Handle = (*Framework)(nil)

type point struct {
	ep    config.ExtensionPoint
	iface reflect.Type
	slot  any // pointer to the typed slice
}

// NewFramework builds the profile's plugins from r and orders them per
// extension point with the profile's expansion (config's Expand: what the
// specific points and MultiPoint enable and disable, Score weights).
func NewFramework(ctx context.Context, r framework.Registry, prof *config.KubeSchedulerProfile, opts Options) (*Framework, error) {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Parallelism <= 0 {
		opts.Parallelism = framework.DefaultParallelism
	}
	if opts.WaitingPods == nil {
		opts.WaitingPods = NewWaitingPods()
	}
	f := &Framework{
		profileName: prof.Name(), percentageOfNodesToScore: prof.PercentageOfNodesToScore, opts: opts,
		parallelizer: framework.NewParallelizer(opts.Parallelism),
		plugins:      map[string]framework.Plugin{}, scoreWeights: map[string]int32{},
	}
	f.scoreBufs.New = func() any { return &scoreBuf{} }
	points := []point{
		{config.ExtensionPreEnqueue, typeOf[framework.PreEnqueuePlugin](), &f.preEnqueuePlugins},
		{config.ExtensionQueueSort, typeOf[framework.QueueSortPlugin](), &f.queueSortPlugins},
		{config.ExtensionPreFilter, typeOf[framework.PreFilterPlugin](), &f.preFilterPlugins},
		{config.ExtensionFilter, typeOf[framework.FilterPlugin](), &f.filterPlugins},
		{config.ExtensionPostFilter, typeOf[framework.PostFilterPlugin](), &f.postFilterPlugins},
		{config.ExtensionPreScore, typeOf[framework.PreScorePlugin](), &f.preScorePlugins},
		{config.ExtensionScore, typeOf[framework.ScorePlugin](), &f.scorePlugins},
		{config.ExtensionReserve, typeOf[framework.ReservePlugin](), &f.reservePlugins},
		{config.ExtensionPermit, typeOf[framework.PermitPlugin](), &f.permitPlugins},
		{config.ExtensionPreBind, typeOf[framework.PreBindPlugin](), &f.preBindPlugins},
		{config.ExtensionBind, typeOf[framework.BindPlugin](), &f.bindPlugins},
		{config.ExtensionPostBind, typeOf[framework.PostBindPlugin](), &f.postBindPlugins},
	}
	// Every plugin the profile names is built once (upstream builds them
	// before expanding too); unknown names are reported by Expand.
	var names []string
	if prof.Plugins != nil {
		names = prof.Plugins.Names()
	}
	for _, name := range names {
		factory, ok := r[name]
		if !ok {
			continue
		}
		plugin, err := factory(ctx, prof.Args(name), f)
		if err != nil {
			return nil, fmt.Errorf("initializing plugin %q: %w", name, err)
		}
		f.plugins[name] = plugin
	}
	x, err := prof.Expand(func(name string) (config.ExtensionPointSet, bool) {
		plugin, ok := f.plugins[name]
		if !ok {
			return 0, false
		}
		var set config.ExtensionPointSet
		t := reflect.TypeOf(plugin)
		for _, pt := range points {
			if t.Implements(pt.iface) {
				set |= config.NewExtensionPointSet(pt.ep)
			}
		}
		return set, true
	})
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if ext, ok := f.plugins[name].(framework.EnqueueExtensions); ok {
			f.enqueueExtensions = append(f.enqueueExtensions, ext)
		}
	}
	for _, pt := range points {
		slot := reflect.ValueOf(pt.slot).Elem()
		for _, wp := range x.Points(pt.ep) {
			slot.Set(reflect.Append(slot, reflect.ValueOf(f.plugins[wp.Name]).Convert(pt.iface)))
			if pt.ep == config.ExtensionScore {
				f.scoreWeights[wp.Name] = wp.Weight
			}
		}
	}
	rejecting := sets.New[string]()
	for _, list := range [][]string{pluginNames(f.preEnqueuePlugins), pluginNames(f.preFilterPlugins), pluginNames(f.filterPlugins),
		pluginNames(f.reservePlugins), pluginNames(f.permitPlugins), pluginNames(f.preBindPlugins)} {
		for _, n := range list {
			if !rejecting.Has(n) {
				rejecting.Insert(n)
				f.pluginsThatReject = append(f.pluginsThatReject, n)
			}
		}
	}
	return f, nil
}

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

func pluginNames[T framework.Plugin](ps []T) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name()
	}
	return out
}

// ProfileName is the profile's schedulerName.
func (f *Framework) ProfileName() string { return f.profileName }

// PercentageOfNodesToScore is the profile's override (nil: none).
func (f *Framework) PercentageOfNodesToScore() *int32 { return f.percentageOfNodesToScore }

// QueueSortFunc is the QueueSort plugin's Less.
func (f *Framework) QueueSortFunc() framework.LessFunc { return f.queueSortPlugins[0].Less }

// PreEnqueuePlugins are the profile's PreEnqueue plugins.
func (f *Framework) PreEnqueuePlugins() []framework.PreEnqueuePlugin { return f.preEnqueuePlugins }

// PluginEvents is the events one plugin registered.
type PluginEvents struct {
	Plugin string
	Events []framework.ClusterEventWithHint
}

// EventsToRegister lists, for every plugin that can reject a pod, the
// events that may make such a pod schedulable: what the plugin
// registers, or every event (WildCard/All) when it does not implement
// EnqueueExtensions, as upstream.
func (f *Framework) EventsToRegister(ctx context.Context) ([]PluginEvents, error) {
	var out []PluginEvents
	for _, name := range f.pluginsThatReject {
		ext, ok := f.plugins[name].(framework.EnqueueExtensions)
		if !ok {
			out = append(out, PluginEvents{Plugin: name, Events: []framework.ClusterEventWithHint{{Event: framework.ClusterEvent{Resource: framework.WildCard, ActionType: framework.All}}}})
			continue
		}
		evs, err := ext.EventsToRegister(ctx)
		if err != nil {
			return nil, fmt.Errorf("plugin %q: EventsToRegister: %w", name, err)
		}
		out = append(out, PluginEvents{Plugin: name, Events: evs})
	}
	return out, nil
}

// ListPlugins names the plugins per extension point, in order, with
// the Score weights (for logs and tests).
func (f *Framework) ListPlugins() map[string][]config.WeightedPlugin {
	out := map[string][]config.WeightedPlugin{}
	add := func(point string, ns []string) {
		for _, n := range ns {
			w := int32(0)
			if point == "Score" {
				w = f.scoreWeights[n]
			}
			out[point] = append(out[point], config.WeightedPlugin{Name: n, Weight: w})
		}
	}
	add("PreEnqueue", pluginNames(f.preEnqueuePlugins))
	add("QueueSort", pluginNames(f.queueSortPlugins))
	add("PreFilter", pluginNames(f.preFilterPlugins))
	add("Filter", pluginNames(f.filterPlugins))
	add("PostFilter", pluginNames(f.postFilterPlugins))
	add("PreScore", pluginNames(f.preScorePlugins))
	add("Score", pluginNames(f.scorePlugins))
	add("Reserve", pluginNames(f.reservePlugins))
	add("Permit", pluginNames(f.permitPlugins))
	add("PreBind", pluginNames(f.preBindPlugins))
	add("Bind", pluginNames(f.bindPlugins))
	add("PostBind", pluginNames(f.postBindPlugins))
	return out
}

// HasFilterPlugins / HasPostFilterPlugins / HasScorePlugins.
func (f *Framework) HasFilterPlugins() bool     { return len(f.filterPlugins) > 0 }
func (f *Framework) HasPostFilterPlugins() bool { return len(f.postFilterPlugins) > 0 }
func (f *Framework) HasScorePlugins() bool      { return len(f.scorePlugins) > 0 }

// Plugin returns the named plugin instance (nil when not in the profile).
func (f *Framework) Plugin(name string) framework.Plugin { return f.plugins[name] }

// ---- Handle ----

func (f *Framework) SnapshotSharedLister() framework.SharedLister { return f.opts.Snapshot }

// SetSnapshot replaces the snapshot plugins read.
func (f *Framework) SetSnapshot(s framework.SharedLister) { f.opts.Snapshot = s }

func (f *Framework) Client() *client.Client { return f.opts.Client }
func (f *Framework) SharedInformerFactory() *informers.SharedInformerFactory {
	return f.opts.Informers
}
func (f *Framework) EventRecorder() record.EventRecorder  { return f.opts.EventRecorder }
func (f *Framework) Parallelizer() framework.Parallelizer { return f.parallelizer }
func (f *Framework) Clock() clock.Clock                   { return f.opts.Clock }
func (f *Framework) Logger() *slog.Logger                 { return f.opts.Logger }
func (f *Framework) IterateOverWaitingPods(cb func(framework.WaitingPod)) {
	f.opts.WaitingPods.iterate(cb)
}
func (f *Framework) GetWaitingPod(uid types.UID) framework.WaitingPod {
	if wp := f.opts.WaitingPods.get(uid); wp != nil {
		return wp
	}
	return nil
}
func (f *Framework) RejectWaitingPod(uid types.UID) bool {
	if wp := f.opts.WaitingPods.get(uid); wp != nil {
		wp.Reject("", "removed")
		return true
	}
	return false
}

func (f *Framework) Activate(logger *slog.Logger, pods map[string]*corev1.Pod) {
	if f.opts.PodActivator != nil {
		f.opts.PodActivator.Activate(logger, pods)
	}
}

func (f *Framework) AddNominatedPod(logger *slog.Logger, pod *framework.PodInfo, info *framework.NominatingInfo) {
	if f.opts.PodNominator != nil {
		f.opts.PodNominator.AddNominatedPod(logger, pod, info)
	}
}

func (f *Framework) DeleteNominatedPodIfExists(pod *corev1.Pod) {
	if f.opts.PodNominator != nil {
		f.opts.PodNominator.DeleteNominatedPodIfExists(pod)
	}
}

func (f *Framework) UpdateNominatedPod(logger *slog.Logger, oldPod *corev1.Pod, newPod *framework.PodInfo) {
	if f.opts.PodNominator != nil {
		f.opts.PodNominator.UpdateNominatedPod(logger, oldPod, newPod)
	}
}

func (f *Framework) NominatedPodsForNode(nodeName string) []*framework.PodInfo {
	if f.opts.PodNominator == nil {
		return nil
	}
	return f.opts.PodNominator.NominatedPodsForNode(nodeName)
}

// SetPodNominator / SetPodActivator wire the queue in after it is built
// (the queue needs the profiles' QueueSort and PreEnqueue plugins first).
func (f *Framework) SetPodNominator(n framework.PodNominator) { f.opts.PodNominator = n }
func (f *Framework) SetPodActivator(a framework.PodActivator) { f.opts.PodActivator = a }
