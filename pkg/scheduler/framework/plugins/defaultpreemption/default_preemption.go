package defaultpreemption

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/componenthelpers/scheduling/corev1helpers"
	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
)

// Name is the plugin's name in configurations.
const Name = names.DefaultPreemption

// IsEligiblePodFunc filters victims beyond "lower priority than the
// preemptor" (upstream's hook; the default allows every victim).
type IsEligiblePodFunc func(nodeInfo *framework.NodeInfo, victim *framework.PodInfo, preemptor *corev1.Pod) bool

// MoreImportantPodFunc orders victims: true when pod1 is more important
// than pod2 (reprieved first).
type MoreImportantPodFunc func(pod1, pod2 *corev1.Pod) bool

// PreemptPodFunc makes the API calls preempting one victim on node for
// preemptor.
type PreemptPodFunc func(ctx context.Context, node string, preemptor, victim *corev1.Pod) error

// DefaultPreemption is the PostFilter plugin that preempts lower-priority
// pods.
type DefaultPreemption struct {
	fh        framework.Handle
	pct, abs  int32
	podLister cache.Lister[*corev1.Pod]
	pdbLister cache.Lister[*policyv1.PodDisruptionBudget]

	// Async runs the preparation (victims' deletion) in a goroutine and
	// holds the preemptor in PreEnqueue meanwhile, as upstream 1.34's
	// default (SchedulerAsyncPreemption). True by default.
	Async bool
	// IsEligiblePod and MoreImportantPod are upstream's customization
	// hooks (defaults: every lower-priority pod; priority, then start
	// time).
	IsEligiblePod    IsEligiblePodFunc
	MoreImportantPod MoreImportantPodFunc
	// OffsetRand returns a number in [0, n): the index of the first
	// candidate node to dry-run (default: random). Tests fix it.
	OffsetRand func(n int32) int32
	// PreemptPod preempts one victim (default: DisruptionTarget condition,
	// delete, or reject a waiting pod; then a Preempted event). Tests may
	// replace it.
	PreemptPod PreemptPodFunc

	mu sync.RWMutex
	// preempting: preemptors whose asynchronous preparation runs.
	preempting sets.Set[types.UID]
	// lastVictim: the victim a preemptor's goroutine deletes last; once it
	// is gone or terminating the preemptor may be scheduled again.
	lastVictim map[types.UID]types.NamespacedName
	running    sync.WaitGroup
}

var (
	_ framework.PostFilterPlugin  = &DefaultPreemption{}
	_ framework.PreEnqueuePlugin  = &DefaultPreemption{}
	_ framework.EnqueueExtensions = &DefaultPreemption{}
)

// New builds the plugin from *config.DefaultPreemptionArgs (nil: the
// defaults).
func New(_ context.Context, obj runtime.Object, h framework.Handle) (framework.Plugin, error) {
	return NewDefaultPreemption(obj, h)
}

// NewDefaultPreemption is New with the concrete type (to set the hooks).
func NewDefaultPreemption(obj runtime.Object, h framework.Handle) (*DefaultPreemption, error) {
	if obj == nil {
		obj = config.DefaultArgs(Name)
	}
	args, ok := obj.(*config.DefaultPreemptionArgs)
	if !ok {
		return nil, fmt.Errorf("got args of type %T, want *DefaultPreemptionArgs", obj)
	}
	if errs := config.ValidateDefaultPreemptionArgs(nil, args); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	pl := &DefaultPreemption{
		fh:         h,
		Async:      true,
		preempting: sets.New[types.UID](),
		lastVictim: map[types.UID]types.NamespacedName{},
		OffsetRand: func(n int32) int32 { return rand.Int32N(n) },
	}
	if args.MinCandidateNodesPercentage != nil {
		pl.pct = *args.MinCandidateNodesPercentage
	}
	if args.MinCandidateNodesAbsolute != nil {
		pl.abs = *args.MinCandidateNodesAbsolute
	}
	if f := h.SharedInformerFactory(); f != nil {
		pl.podLister = f.Pods().Lister()
		pl.pdbLister = f.PodDisruptionBudgets().Lister()
	}
	pl.IsEligiblePod = func(*framework.NodeInfo, *framework.PodInfo, *corev1.Pod) bool { return true }
	pl.MoreImportantPod = pl.moreImportantPod
	pl.PreemptPod = pl.preemptPod
	return pl, nil
}

// Name returns the plugin's name.
func (*DefaultPreemption) Name() string { return Name }

// PostFilter preempts for pod; the status message is prefixed with
// "preemption: " as upstream's.
func (pl *DefaultPreemption) PostFilter(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, m framework.NodeToStatusReader) (*framework.PostFilterResult, *framework.Status) {
	defer preemptionAttempts.Inc()
	result, status := pl.preempt(ctx, state, pod, m)
	if msg := status.Message(); msg != "" {
		return result, framework.NewStatus(status.Code(), "preemption: "+msg)
	}
	return result, status
}

// PreEnqueue holds a pod back while its asynchronous preemption runs.
func (pl *DefaultPreemption) PreEnqueue(_ context.Context, p *corev1.Pod) *framework.Status {
	if !pl.Async {
		return nil
	}
	if pl.IsPodRunningPreemption(p.UID) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, "waiting for the preemption for this pod to be finished")
	}
	return nil
}

// EventsToRegister: with asynchronous preemption the plugin can reject
// pods (PreEnqueue), so it registers pod deletion, with a hint that
// always skips: the plugins that rejected the pod in its cycle decide
// when to retry it, as upstream's.
func (pl *DefaultPreemption) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	if !pl.Async {
		return nil, nil
	}
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Delete}, QueueingHintFn: func(*slog.Logger, *corev1.Pod, any, any) (framework.QueueingHint, error) {
			return framework.QueueSkip, nil
		}},
	}, nil
}

// IsPodRunningPreemption reports whether uid's asynchronous preemption
// has not yet reached the deletion of its last victim.
func (pl *DefaultPreemption) IsPodRunningPreemption(uid types.UID) bool {
	pl.mu.RLock()
	defer pl.mu.RUnlock()
	if !pl.preempting.Has(uid) {
		return false
	}
	victim, ok := pl.lastVictim[uid]
	if !ok || pl.podLister == nil {
		return true
	}
	p, err := pl.podLister.Namespace(victim.Namespace).Get(victim.Name)
	if err != nil {
		return false // gone already
	}
	return p.DeletionTimestamp == nil
}

// calculateNumCandidates: minCandidateNodesPercentage of numNodes, at
// least minCandidateNodesAbsolute, at most numNodes.
func (pl *DefaultPreemption) calculateNumCandidates(numNodes int32) int32 {
	n := numNodes * pl.pct / 100
	if n < pl.abs {
		n = pl.abs
	}
	if n > numNodes {
		n = numNodes
	}
	return n
}

// GetOffsetAndNumCandidates returns the random first node and the number
// of candidates to find.
func (pl *DefaultPreemption) GetOffsetAndNumCandidates(numNodes int32) (int32, int32) {
	return pl.OffsetRand(numNodes), pl.calculateNumCandidates(numNodes)
}

// PodEligibleToPreemptOthers says whether pod may preempt, and why not.
func (pl *DefaultPreemption) PodEligibleToPreemptOthers(pod *corev1.Pod, nominatedNodeStatus *framework.Status) (bool, string) {
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == corev1.PreemptNever {
		return false, "not eligible due to preemptionPolicy=Never."
	}
	nom := pod.Status.NominatedNodeName
	if nom == "" {
		return true, ""
	}
	// A nominated node the filters now reject for good: preempt again.
	if nominatedNodeStatus.Code() == framework.UnschedulableAndUnresolvable {
		return true, ""
	}
	if ni, _ := pl.fh.SnapshotSharedLister().NodeInfos().Get(nom); ni != nil {
		for _, p := range ni.Pods {
			if pl.isPreemptionAllowed(ni, p, pod) && podTerminatingByPreemption(p.Pod) {
				return false, "not eligible due to a terminating pod on the nominated node."
			}
		}
	}
	return true, ""
}

func (pl *DefaultPreemption) isPreemptionAllowed(ni *framework.NodeInfo, victim *framework.PodInfo, preemptor *corev1.Pod) bool {
	return corev1helpers.PodPriority(victim.Pod) < corev1helpers.PodPriority(preemptor) && pl.IsEligiblePod(ni, victim, preemptor)
}

// podTerminatingByPreemption: the pod is being deleted and carries the
// scheduler's DisruptionTarget condition.
func podTerminatingByPreemption(p *corev1.Pod) bool {
	if p.DeletionTimestamp == nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			return c.Status == corev1.ConditionTrue && c.Reason == corev1.PodReasonPreemptionByScheduler
		}
	}
	return false
}

// moreImportantPod: higher priority, then the earlier start time.
func (pl *DefaultPreemption) moreImportantPod(p1, p2 *corev1.Pod) bool {
	a, b := corev1helpers.PodPriority(p1), corev1helpers.PodPriority(p2)
	if a != b {
		return a > b
	}
	return pl.podStartTime(p1).Before(pl.podStartTime(p2))
}

// podStartTime is status.startTime, or now for pods not started yet.
func (pl *DefaultPreemption) podStartTime(p *corev1.Pod) *metav1.Time {
	if p.Status.StartTime != nil {
		return p.Status.StartTime
	}
	return &metav1.Time{Time: pl.now()}
}

// SelectVictimsOnNode finds the fewest pods to remove from nodeInfo (a
// copy the caller owns, as state) so that pod fits: the victims, most
// important first, and how many of them violate a PDB.
func (pl *DefaultPreemption) SelectVictimsOnNode(ctx context.Context, state *framework.CycleState, pod *corev1.Pod,
	nodeInfo *framework.NodeInfo, pdbs []*policyv1.PodDisruptionBudget) ([]*corev1.Pod, int, *framework.Status) {
	removePod := func(pi *framework.PodInfo) error {
		if err := nodeInfo.RemovePod(pi.Pod); err != nil {
			return err
		}
		return pl.fh.RunPreFilterExtensionRemovePod(ctx, state, pod, pi, nodeInfo).AsError()
	}
	addPod := func(pi *framework.PodInfo) error {
		nodeInfo.AddPodInfo(pi)
		return pl.fh.RunPreFilterExtensionAddPod(ctx, state, pod, pi, nodeInfo).AsError()
	}
	var potential []*framework.PodInfo
	for _, pi := range nodeInfo.Pods {
		if pl.isPreemptionAllowed(nodeInfo, pi, pod) {
			potential = append(potential, pi)
		}
	}
	for _, pi := range potential {
		if err := removePod(pi); err != nil {
			return nil, 0, framework.AsStatus(err)
		}
	}
	if len(potential) == 0 {
		return nil, 0, framework.NewStatus(framework.UnschedulableAndUnresolvable, "No preemption victims found for incoming pod")
	}
	// Without every lower-priority pod the pod must fit; affinity to a
	// victim is not considered (as upstream, for performance).
	if s := pl.fh.RunFilterPluginsWithNominatedPods(ctx, state, pod, nodeInfo); !s.IsSuccess() {
		return nil, 0, s
	}
	sort.SliceStable(potential, func(i, j int) bool { return pl.MoreImportantPod(potential[i].Pod, potential[j].Pod) })
	violating, nonViolating := filterPodsWithPDBViolation(potential, pdbs)
	var victims []*framework.PodInfo
	reprieve := func(pi *framework.PodInfo) (bool, error) {
		if err := addPod(pi); err != nil {
			return false, err
		}
		fits := pl.fh.RunFilterPluginsWithNominatedPods(ctx, state, pod, nodeInfo).IsSuccess()
		if !fits {
			if err := removePod(pi); err != nil {
				return false, err
			}
			victims = append(victims, pi)
		}
		return fits, nil
	}
	numViolating := 0
	for _, pi := range violating {
		fits, err := reprieve(pi)
		if err != nil {
			return nil, 0, framework.AsStatus(err)
		}
		if !fits {
			numViolating++
		}
	}
	for _, pi := range nonViolating {
		if _, err := reprieve(pi); err != nil {
			return nil, 0, framework.AsStatus(err)
		}
	}
	if len(violating) != 0 && len(nonViolating) != 0 {
		sort.SliceStable(victims, func(i, j int) bool { return pl.MoreImportantPod(victims[i].Pod, victims[j].Pod) })
	}
	out := make([]*corev1.Pod, len(victims))
	for i, pi := range victims {
		out[i] = pi.Pod
	}
	return out, numViolating, nil
}

// filterPodsWithPDBViolation splits pods (order kept) into those whose
// eviction would exceed a matching PDB's disruptionsAllowed, counting
// the pods in order, and the others. Pods already in a PDB's
// disruptedPods do not count against it.
func filterPodsWithPDBViolation(pods []*framework.PodInfo, pdbs []*policyv1.PodDisruptionBudget) (violating, nonViolating []*framework.PodInfo) {
	allowed := make([]int32, len(pdbs))
	selectors := make([]labels.Selector, len(pdbs))
	for i, pdb := range pdbs {
		allowed[i] = pdb.Status.DisruptionsAllowed
		if s, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err == nil {
			selectors[i] = s
		}
	}
	for _, pi := range pods {
		p := pi.Pod
		violated := false
		if len(p.Labels) != 0 {
			for i, pdb := range pdbs {
				// An invalid, nil or empty selector matches nothing.
				if pdb.Namespace != p.Namespace || selectors[i] == nil || selectors[i].Empty() || !selectors[i].Matches(labels.Set(p.Labels)) {
					continue
				}
				if _, ok := pdb.Status.DisruptedPods[p.Name]; ok {
					continue
				}
				allowed[i]--
				if allowed[i] < 0 {
					violated = true
				}
			}
		}
		if violated {
			violating = append(violating, pi)
		} else {
			nonViolating = append(nonViolating, pi)
		}
	}
	return violating, nonViolating
}
