package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// PluginRef names a plugin with its score weight (0: 1).
type PluginRef struct {
	Name   string
	Weight int32
}

// PluginSet is what a profile enables and disables at one extension
// point ("*" disables every multi-point plugin there).
type PluginSet struct {
	Enabled  []PluginRef
	Disabled []PluginRef
}

// Plugins is a profile's plugin configuration per extension point, in
// KubeSchedulerConfiguration's shape after defaulting: the defaults are
// in MultiPoint, a user's changes in the per-point sets.
type Plugins struct {
	PreEnqueue, QueueSort, PreFilter, Filter, PostFilter, PreScore, Score, Reserve, Permit, PreBind, Bind, PostBind PluginSet
	MultiPoint                                                                                                      PluginSet
}

// Profile is one scheduling profile.
type Profile struct {
	SchedulerName string
	// PercentageOfNodesToScore overrides the scheduler-wide setting.
	PercentageOfNodesToScore *int32
	Plugins                  Plugins
	// PluginArgs: plugin name → its args (see framework.PluginFactory).
	PluginArgs map[string]runtime.Object
}

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
	pluginsThatReject []string // plugins that can reject a pod, in order
}

var _ framework.Handle = (*Framework)(nil)

type point struct {
	name  string
	set   *PluginSet
	iface reflect.Type
	slot  any // pointer to the typed slice
}

// NewFramework builds the profile's plugins from r and orders them per
// extension point.
func NewFramework(ctx context.Context, r framework.Registry, p *Profile, opts Options) (*Framework, error) {
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
		profileName: p.SchedulerName, percentageOfNodesToScore: p.PercentageOfNodesToScore, opts: opts,
		parallelizer: framework.NewParallelizer(opts.Parallelism),
		plugins:      map[string]framework.Plugin{}, scoreWeights: map[string]int32{},
	}
	pl := &p.Plugins
	points := []point{
		{"PreEnqueue", &pl.PreEnqueue, typeOf[framework.PreEnqueuePlugin](), &f.preEnqueuePlugins},
		{"QueueSort", &pl.QueueSort, typeOf[framework.QueueSortPlugin](), &f.queueSortPlugins},
		{"PreFilter", &pl.PreFilter, typeOf[framework.PreFilterPlugin](), &f.preFilterPlugins},
		{"Filter", &pl.Filter, typeOf[framework.FilterPlugin](), &f.filterPlugins},
		{"PostFilter", &pl.PostFilter, typeOf[framework.PostFilterPlugin](), &f.postFilterPlugins},
		{"PreScore", &pl.PreScore, typeOf[framework.PreScorePlugin](), &f.preScorePlugins},
		{"Score", &pl.Score, typeOf[framework.ScorePlugin](), &f.scorePlugins},
		{"Reserve", &pl.Reserve, typeOf[framework.ReservePlugin](), &f.reservePlugins},
		{"Permit", &pl.Permit, typeOf[framework.PermitPlugin](), &f.permitPlugins},
		{"PreBind", &pl.PreBind, typeOf[framework.PreBindPlugin](), &f.preBindPlugins},
		{"Bind", &pl.Bind, typeOf[framework.BindPlugin](), &f.bindPlugins},
		{"PostBind", &pl.PostBind, typeOf[framework.PostBindPlugin](), &f.postBindPlugins},
	}
	// Every plugin named anywhere is built once.
	needed := []string{}
	seen := sets.New[string]()
	multi := sets.New[string]()
	for _, ref := range pl.MultiPoint.Enabled {
		if multi.Has(ref.Name) {
			return nil, fmt.Errorf("plugin %q already registered as %q", ref.Name, "MultiPoint")
		}
		multi.Insert(ref.Name)
	}
	for _, set := range append([]*PluginSet{&pl.MultiPoint}, pointSets(points)...) {
		for _, ref := range set.Enabled {
			if !seen.Has(ref.Name) {
				seen.Insert(ref.Name)
				needed = append(needed, ref.Name)
			}
		}
	}
	for name := range p.PluginArgs {
		if !seen.Has(name) {
			// Upstream accepts args for plugins the profile does not
			// use (the defaults add args for every default plugin).
			continue
		}
	}
	for _, name := range needed {
		factory, ok := r[name]
		if !ok {
			return nil, fmt.Errorf("plugin %q does not exist", name)
		}
		plugin, err := factory(ctx, p.PluginArgs[name], f)
		if err != nil {
			return nil, fmt.Errorf("initializing plugin %q: %w", name, err)
		}
		f.plugins[name] = plugin
		if ext, ok := plugin.(framework.EnqueueExtensions); ok {
			f.enqueueExtensions = append(f.enqueueExtensions, ext)
		}
	}
	// Expand per extension point.
	for _, pt := range points {
		refs, err := f.expand(pt, &pl.MultiPoint)
		if err != nil {
			return nil, err
		}
		slot := reflect.ValueOf(pt.slot).Elem()
		for _, ref := range refs {
			plugin := f.plugins[ref.Name]
			v := reflect.ValueOf(plugin)
			if !v.Type().Implements(pt.iface) {
				return nil, fmt.Errorf("plugin %q does not extend %s plugin", ref.Name, pt.name)
			}
			slot.Set(reflect.Append(slot, v.Convert(pt.iface)))
			if pt.name == "Score" {
				w := ref.Weight
				if w == 0 {
					w = 1
				}
				f.scoreWeights[ref.Name] = w
			}
		}
	}
	if len(f.queueSortPlugins) > 1 {
		return nil, fmt.Errorf("only one queue sort plugin can be enabled")
	}
	if len(f.queueSortPlugins) == 0 {
		return nil, errors.New("queue sort plugin needs to be configured")
	}
	if len(f.bindPlugins) == 0 {
		return nil, errors.New("at least one bind plugin is needed")
	}
	var total int64
	for _, w := range f.scoreWeights {
		if int64(w)*framework.MaxNodeScore > framework.MaxTotalScore-total {
			return nil, errors.New("total score of Score plugins could overflow")
		}
		total += int64(w) * framework.MaxNodeScore
	}
	rejecting := sets.New[string]()
	for _, list := range [][]string{names(f.preEnqueuePlugins), names(f.preFilterPlugins), names(f.filterPlugins),
		names(f.reservePlugins), names(f.permitPlugins), names(f.preBindPlugins)} {
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

func pointSets(points []point) []*PluginSet {
	out := make([]*PluginSet, len(points))
	for i, p := range points {
		out[i] = p.set
	}
	return out
}

func names[T framework.Plugin](ps []T) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name()
	}
	return out
}

// expand orders one extension point as upstream: the plugins enabled both
// explicitly here and in MultiPoint (in the explicit order), then the
// MultiPoint plugins implementing the point and not disabled here, then
// the plugins enabled only explicitly here.
func (f *Framework) expand(pt point, multi *PluginSet) ([]PluginRef, error) {
	disabled := sets.New[string]()
	for _, d := range pt.set.Disabled {
		disabled.Insert(d.Name)
	}
	explicit := sets.New[string]()
	for _, e := range pt.set.Enabled {
		if explicit.Has(e.Name) {
			return nil, fmt.Errorf("plugin %q already registered as %q", e.Name, pt.name)
		}
		explicit.Insert(e.Name)
	}
	inMulti := map[string]PluginRef{}
	var multiOnly []PluginRef
	if !disabled.Has("*") {
		for _, ref := range multi.Enabled {
			if disabled.Has(ref.Name) || !reflect.TypeOf(f.plugins[ref.Name]).Implements(pt.iface) {
				continue
			}
			inMulti[ref.Name] = ref
			if !explicit.Has(ref.Name) {
				multiOnly = append(multiOnly, ref)
			}
		}
	}
	var override, explicitOnly []PluginRef
	for _, e := range pt.set.Enabled {
		if m, ok := inMulti[e.Name]; ok {
			if e.Weight == 0 {
				e.Weight = m.Weight
			}
			override = append(override, e)
		} else {
			explicitOnly = append(explicitOnly, e)
		}
	}
	out := append(override, multiOnly...)
	return append(out, explicitOnly...), nil
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

// ListPlugins names the plugins per extension point, in order (for logs
// and tests).
func (f *Framework) ListPlugins() map[string][]PluginRef {
	out := map[string][]PluginRef{}
	add := func(point string, ns []string) {
		for _, n := range ns {
			out[point] = append(out[point], PluginRef{Name: n, Weight: f.scoreWeights[n]})
		}
	}
	add("PreEnqueue", names(f.preEnqueuePlugins))
	add("QueueSort", names(f.queueSortPlugins))
	add("PreFilter", names(f.preFilterPlugins))
	add("Filter", names(f.filterPlugins))
	add("PostFilter", names(f.postFilterPlugins))
	add("PreScore", names(f.preScorePlugins))
	add("Score", names(f.scorePlugins))
	add("Reserve", names(f.reservePlugins))
	add("Permit", names(f.permitPlugins))
	add("PreBind", names(f.preBindPlugins))
	add("Bind", names(f.bindPlugins))
	add("PostBind", names(f.postBindPlugins))
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
