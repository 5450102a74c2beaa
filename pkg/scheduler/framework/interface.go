package framework

import (
	"context"
	"log/slog"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/clock"
)

// Score bounds: every Score plugin's NormalizeScore maps into
// [MinNodeScore, MaxNodeScore]; the framework multiplies by the plugin's
// weight and sums.
const (
	MaxNodeScore  int64 = 100
	MinNodeScore  int64 = 0
	MaxTotalScore int64 = math.MaxInt64
)

// NodeScore is one node's score.
type NodeScore struct {
	Name  string
	Score int64
}

// NodeScoreList is the scores of the nodes, in the order of the nodes
// given to Score.
type NodeScoreList []NodeScore

// NodePluginScores is one node's total and per-plugin scores.
type NodePluginScores struct {
	Name       string
	Scores     []PluginScore
	TotalScore int64
}

// PluginScore is one plugin's weighted score for a node.
type PluginScore struct {
	Name  string
	Score int64
}

// Plugin is the parent of every plugin interface.
type Plugin interface {
	Name() string
}

// PreEnqueuePlugin decides whether a pod may enter activeQ at all
// (scheduling gates). Not Success keeps the pod parked until an event
// the plugin registered.
type PreEnqueuePlugin interface {
	Plugin
	PreEnqueue(ctx context.Context, p *corev1.Pod) *Status
}

// LessFunc orders activeQ.
type LessFunc func(a, b *QueuedPodInfo) bool

// QueueSortPlugin orders activeQ; exactly one per scheduler, the same in
// every profile.
type QueueSortPlugin interface {
	Plugin
	Less(a, b *QueuedPodInfo) bool
}

// EnqueueExtensions is implemented by plugins that can reject pods: the
// events that may make a pod they rejected schedulable. A rejecting
// plugin without it is assumed to care about every event.
type EnqueueExtensions interface {
	Plugin
	EventsToRegister(ctx context.Context) ([]ClusterEventWithHint, error)
}

// PreFilterResult narrows the nodes worth filtering (nil Nodes: all).
type PreFilterResult struct {
	NodeNames sets.Set[string]
}

// AllNodes reports whether r does not narrow the nodes.
func (r *PreFilterResult) AllNodes() bool { return r == nil || r.NodeNames == nil }

// Merge intersects two results.
func (r *PreFilterResult) Merge(o *PreFilterResult) *PreFilterResult {
	if r.AllNodes() && o.AllNodes() {
		return nil
	}
	if r.AllNodes() {
		return &PreFilterResult{NodeNames: o.NodeNames.Clone()}
	}
	if o.AllNodes() {
		return &PreFilterResult{NodeNames: r.NodeNames.Clone()}
	}
	return &PreFilterResult{NodeNames: r.NodeNames.Intersection(o.NodeNames)}
}

// PreFilterPlugin runs once per cycle before Filter: it checks the pod
// and precomputes into CycleState. Skip means its Filter has nothing to
// do for this pod.
type PreFilterPlugin interface {
	Plugin
	PreFilter(ctx context.Context, state *CycleState, p *corev1.Pod, nodes []*NodeInfo) (*PreFilterResult, *Status)
	// PreFilterExtensions returns nil when the plugin's state does not
	// depend on other pods.
	PreFilterExtensions() PreFilterExtensions
}

// PreFilterExtensions update a plugin's PreFilter state when pods are
// added to or removed from a node in a simulation (nominated pods,
// preemption victims).
type PreFilterExtensions interface {
	AddPod(ctx context.Context, state *CycleState, podToSchedule *corev1.Pod, podInfoToAdd *PodInfo, nodeInfo *NodeInfo) *Status
	RemovePod(ctx context.Context, state *CycleState, podToSchedule *corev1.Pod, podInfoToRemove *PodInfo, nodeInfo *NodeInfo) *Status
}

// FilterPlugin says whether the pod can run on one node. It is called
// concurrently for many nodes and must not change nodeInfo.
type FilterPlugin interface {
	Plugin
	Filter(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeInfo *NodeInfo) *Status
}

// PostFilterResult is what a PostFilter plugin (preemption) achieved.
type PostFilterResult struct {
	*NominatingInfo
}

// NominatingMode says whether a PostFilter result changes the pod's
// nominated node.
type NominatingMode int

const (
	ModeNoop NominatingMode = iota
	ModeOverride
)

// NominatingInfo is the node a pod is nominated to after preemption.
type NominatingInfo struct {
	NominatedNodeName string
	NominatingMode    NominatingMode
}

// Mode is the nominating mode (Noop for nil).
func (n *NominatingInfo) Mode() NominatingMode {
	if n == nil {
		return ModeNoop
	}
	return n.NominatingMode
}

// NewPostFilterResultWithNominatedNode nominates node.
func NewPostFilterResultWithNominatedNode(node string) *PostFilterResult {
	return &PostFilterResult{&NominatingInfo{NominatedNodeName: node, NominatingMode: ModeOverride}}
}

// PostFilterPlugin runs when no node fits (preemption). It returns
// Success with a nominated node when it made room.
type PostFilterPlugin interface {
	Plugin
	PostFilter(ctx context.Context, state *CycleState, pod *corev1.Pod, filteredNodeStatusMap NodeToStatusReader) (*PostFilterResult, *Status)
}

// PreScorePlugin runs once before Score with the feasible nodes.
type PreScorePlugin interface {
	Plugin
	PreScore(ctx context.Context, state *CycleState, pod *corev1.Pod, nodes []*NodeInfo) *Status
}

// ScorePlugin ranks feasible nodes.
type ScorePlugin interface {
	Plugin
	Score(ctx context.Context, state *CycleState, p *corev1.Pod, nodeInfo *NodeInfo) (int64, *Status)
	// ScoreExtensions returns nil when scores are already in
	// [MinNodeScore, MaxNodeScore].
	ScoreExtensions() ScoreExtensions
}

// ScoreExtensions normalizes a plugin's scores over all nodes.
type ScoreExtensions interface {
	NormalizeScore(ctx context.Context, state *CycleState, p *corev1.Pod, scores NodeScoreList) *Status
}

// ReservePlugin reserves (and on failure releases) what the pod will use
// on the chosen node, before binding. Unreserve must be idempotent.
type ReservePlugin interface {
	Plugin
	Reserve(ctx context.Context, state *CycleState, p *corev1.Pod, nodeName string) *Status
	Unreserve(ctx context.Context, state *CycleState, p *corev1.Pod, nodeName string)
}

// PermitPlugin approves, denies or holds (Wait, up to the returned
// timeout) a pod before binding.
type PermitPlugin interface {
	Plugin
	Permit(ctx context.Context, state *CycleState, p *corev1.Pod, nodeName string) (*Status, time.Duration)
}

// PreBindPlugin does what must happen before the binding (volumes).
type PreBindPlugin interface {
	Plugin
	PreBind(ctx context.Context, state *CycleState, p *corev1.Pod, nodeName string) *Status
}

// BindPlugin binds the pod; Skip passes to the next binder.
type BindPlugin interface {
	Plugin
	Bind(ctx context.Context, state *CycleState, p *corev1.Pod, nodeName string) *Status
}

// PostBindPlugin is told about a successful binding.
type PostBindPlugin interface {
	Plugin
	PostBind(ctx context.Context, state *CycleState, p *corev1.Pod, nodeName string)
}

// WaitingPod is a pod held by Permit plugins.
type WaitingPod interface {
	GetPod() *corev1.Pod
	GetPendingPlugins() []string
	// Allow lets the pod go on for plugin; once every plugin allowed it,
	// it proceeds to binding.
	Allow(pluginName string)
	// Reject fails the pod's permit with msg.
	Reject(pluginName, msg string)
}

// NodeInfoLister reads the snapshot's nodes.
type NodeInfoLister interface {
	List() ([]*NodeInfo, error)
	HavePodsWithAffinityList() ([]*NodeInfo, error)
	HavePodsWithRequiredAntiAffinityList() ([]*NodeInfo, error)
	Get(nodeName string) (*NodeInfo, error)
}

// StorageInfoLister answers volume questions from the snapshot.
type StorageInfoLister interface {
	// IsPVCUsedByPods reports whether a pod of the snapshot uses the
	// claim "namespace/name".
	IsPVCUsedByPods(key string) bool
}

// SharedLister is the snapshot plugins read during a cycle.
type SharedLister interface {
	NodeInfos() NodeInfoLister
	StorageInfos() StorageInfoLister
}

// PodNominator keeps the pods nominated to nodes by preemption, so that
// lower-priority pods do not take the room made for them.
type PodNominator interface {
	AddNominatedPod(logger *slog.Logger, pod *PodInfo, info *NominatingInfo)
	DeleteNominatedPodIfExists(pod *corev1.Pod)
	UpdateNominatedPod(logger *slog.Logger, oldPod *corev1.Pod, newPod *PodInfo)
	NominatedPodsForNode(nodeName string) []*PodInfo
}

// PodActivator moves pods to activeQ (plugins that know a pod became
// schedulable).
type PodActivator interface {
	Activate(logger *slog.Logger, pods map[string]*corev1.Pod)
}

// PluginsRunner runs the profile's plugins; preemption simulates with it.
type PluginsRunner interface {
	RunPreScorePlugins(ctx context.Context, state *CycleState, pod *corev1.Pod, nodes []*NodeInfo) *Status
	RunScorePlugins(ctx context.Context, state *CycleState, pod *corev1.Pod, nodes []*NodeInfo) ([]NodePluginScores, *Status)
	RunFilterPlugins(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeInfo *NodeInfo) *Status
	RunPreFilterExtensionAddPod(ctx context.Context, state *CycleState, podToSchedule *corev1.Pod, podInfoToAdd *PodInfo, nodeInfo *NodeInfo) *Status
	RunPreFilterExtensionRemovePod(ctx context.Context, state *CycleState, podToSchedule *corev1.Pod, podInfoToRemove *PodInfo, nodeInfo *NodeInfo) *Status
	// RunFilterPluginsWithNominatedPods filters with the higher-or-equal
	// priority pods nominated to the node counted in, as upstream's.
	RunFilterPluginsWithNominatedPods(ctx context.Context, state *CycleState, pod *corev1.Pod, info *NodeInfo) *Status
}

// Handle is what a plugin gets from the framework: the snapshot, the
// API client and informers, events, waiting pods, and the runners.
type Handle interface {
	PluginsRunner
	PodNominator
	SnapshotSharedLister() SharedLister
	IterateOverWaitingPods(callback func(WaitingPod))
	GetWaitingPod(uid types.UID) WaitingPod
	RejectWaitingPod(uid types.UID) bool
	// Client reaches the API server (binding, preemption's deletes).
	Client() *client.Client
	// SharedInformerFactory is the scheduler's one factory: plugins ask
	// it for listers in their factory (it starts after every plugin is
	// built).
	SharedInformerFactory() *informers.SharedInformerFactory
	EventRecorder() record.EventRecorder
	Parallelizer() Parallelizer
	Clock() clock.Clock
	Logger() *slog.Logger
	// Activate moves pods to activeQ.
	Activate(logger *slog.Logger, pods map[string]*corev1.Pod)
}

// PluginFactory builds a plugin from its args (the typed args of
// pkg/scheduler/apis/config for in-tree plugins, a *runtime.Unknown
// holding the raw JSON for out-of-tree plugins, nil when the profile
// gives none).
type PluginFactory func(ctx context.Context, args runtime.Object, h Handle) (Plugin, error)

// Registry maps plugin names to factories.
type Registry map[string]PluginFactory

// Register adds a factory; an error when the name is taken.
func (r Registry) Register(name string, f PluginFactory) error {
	if _, ok := r[name]; ok {
		return &DuplicatePluginError{Name: name}
	}
	r[name] = f
	return nil
}

// Merge adds every factory of o; an error on a name both have.
func (r Registry) Merge(o Registry) error {
	for n, f := range o {
		if err := r.Register(n, f); err != nil {
			return err
		}
	}
	return nil
}

// DuplicatePluginError names a plugin registered twice.
type DuplicatePluginError struct{ Name string }

func (e *DuplicatePluginError) Error() string {
	return "a plugin named " + e.Name + " already exists"
}
