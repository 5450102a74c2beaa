package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	fwkruntime "github.com/skiff-sh/skiff/pkg/scheduler/framework/runtime"
)

// ErrNoNodesAvailable: the cluster has no node at all.
var ErrNoNodesAvailable = errors.New("no nodes available to schedule pods")

var errEmptyPriorityList = errors.New("empty priorityList")

const (
	// Below this many nodes every node is evaluated.
	minFeasibleNodesToFind = 100
	// The adaptive percentage never goes below this.
	minFeasibleNodesPercentageToFind = 5
	// Upstream truncates event and condition messages to this size.
	maxMessageLength = 1024
)

// ScheduleResult is the outcome of the scheduling algorithm for a pod.
type ScheduleResult struct {
	// SuggestedHost is the chosen node.
	SuggestedHost string
	// EvaluatedNodes counts the nodes filtered (feasible or not).
	EvaluatedNodes int
	// FeasibleNodes counts the nodes that passed the filters.
	FeasibleNodes int
	// nominatingInfo is what PostFilter asked for.
	nominatingInfo *framework.NominatingInfo
}

// scheduleOne takes the next pod from the queue and runs its scheduling
// cycle; the binding cycle runs in its own goroutine.
func (s *Scheduler) scheduleOne(ctx context.Context) {
	podInfo, err := s.queue.Pop(s.logger)
	if err != nil || podInfo == nil {
		return
	}
	pod := podInfo.Pod
	fwk, ok := s.profiles[pod.Spec.SchedulerName]
	if !ok {
		// The queue only takes pods of our profiles; a pod whose
		// schedulerName changed is dropped.
		s.logger.Error("Unable to find profile for pod", "pod", klogKey(pod), "schedulerName", pod.Spec.SchedulerName)
		s.queue.Done(pod.UID)
		return
	}
	if s.skipPodSchedule(fwk, pod) {
		s.queue.Done(pod.UID)
		return
	}
	start := s.clock.Now()
	state := framework.NewCycleState()
	result, assumed, status := s.schedulingCycle(ctx, state, fwk, podInfo, start)
	if !status.IsSuccess() {
		s.handleSchedulingFailure(ctx, fwk, assumed, status, result.nominatingInfo, start)
		return
	}
	go func() {
		bctx, cancel := context.WithCancel(ctx)
		defer cancel()
		status := s.bindingCycle(bctx, state, fwk, result, assumed, start)
		if !status.IsSuccess() {
			s.handleBindingCycleError(bctx, state, fwk, assumed, start, result, status)
			return
		}
		s.queue.Done(assumed.Pod.UID)
	}()
}

// skipPodSchedule: a pod being deleted, or one already assumed (an
// update of it was queued), is not scheduled.
func (s *Scheduler) skipPodSchedule(fwk *fwkruntime.Framework, pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil {
		fwk.EventRecorder().Eventf(pod, corev1.EventTypeWarning, "FailedScheduling", "skip schedule deleting pod: %v/%v", pod.Namespace, pod.Name)
		return true
	}
	if assumed, _ := s.cache.IsAssumedPod(pod); assumed {
		return true
	}
	return false
}

// schedulingCycle runs the algorithm, PostFilter on failure, and on
// success assumes the pod on the chosen node and runs Reserve and Permit.
// It returns the QueuedPodInfo whose Pod is the assumed copy on success.
func (s *Scheduler) schedulingCycle(ctx context.Context, state *framework.CycleState, fwk *fwkruntime.Framework, podInfo *framework.QueuedPodInfo, start time.Time) (ScheduleResult, *framework.QueuedPodInfo, *framework.Status) {
	pod := podInfo.Pod
	result, err := s.schedulePod(ctx, fwk, state, pod)
	if err != nil {
		if errors.Is(err, ErrNoNodesAvailable) {
			return ScheduleResult{nominatingInfo: &framework.NominatingInfo{NominatingMode: framework.ModeOverride}}, podInfo,
				framework.NewStatus(framework.UnschedulableAndUnresolvable).WithError(err)
		}
		var fitErr *framework.FitError
		if !errors.As(err, &fitErr) {
			return ScheduleResult{nominatingInfo: &framework.NominatingInfo{NominatingMode: framework.ModeOverride}}, podInfo, framework.AsStatus(err)
		}
		if !fwk.HasPostFilterPlugins() {
			return ScheduleResult{}, podInfo, framework.NewStatus(framework.Unschedulable).WithError(err)
		}
		pfResult, status := fwk.RunPostFilterPlugins(ctx, state, pod, fitErr.Diagnosis.NodeToStatus)
		fitErr.Diagnosis.PostFilterMsg = status.Message()
		if status.Code() == framework.Error {
			s.logger.Error("Status after running PostFilter plugins for pod", "pod", klogKey(pod), "status", status.Message())
		}
		var ni *framework.NominatingInfo
		if pfResult != nil {
			ni = pfResult.NominatingInfo
		}
		return ScheduleResult{nominatingInfo: ni}, podInfo, framework.NewStatus(framework.Unschedulable).WithError(err)
	}

	// Assume: the cache counts the pod on the node now, so the next
	// cycle does not wait for the binding.
	assumedInfo := podInfo.DeepCopy()
	assumedPod := pod.DeepCopy()
	assumedPod.Spec.NodeName = result.SuggestedHost
	assumedInfo.PodInfo = &framework.PodInfo{}
	*assumedInfo.PodInfo = *podInfo.PodInfo
	assumedInfo.Pod = assumedPod
	if err := s.cache.AssumePod(s.logger, assumedPod); err != nil {
		return ScheduleResult{nominatingInfo: &framework.NominatingInfo{NominatingMode: framework.ModeOverride}}, assumedInfo, framework.AsStatus(err)
	}
	s.queue.DeleteNominatedPodIfExists(assumedPod)

	if st := fwk.RunReservePluginsReserve(ctx, state, assumedPod, result.SuggestedHost); !st.IsSuccess() {
		fwk.RunReservePluginsUnreserve(ctx, state, assumedPod, result.SuggestedHost)
		if err := s.cache.ForgetPod(s.logger, assumedPod); err != nil {
			s.logger.Error("Scheduler cache ForgetPod failed", "pod", klogKey(assumedPod), "err", err)
		}
		if st.IsRejected() {
			fitErr := &framework.FitError{NumAllNodes: 1, Pod: pod, Diagnosis: framework.Diagnosis{
				NodeToStatus: framework.NewDefaultNodeToStatus()}}
			fitErr.Diagnosis.NodeToStatus.Set(result.SuggestedHost, st)
			fitErr.Diagnosis.AddPluginStatus(st)
			return ScheduleResult{nominatingInfo: &framework.NominatingInfo{NominatingMode: framework.ModeOverride}}, assumedInfo,
				framework.NewStatus(st.Code()).WithError(fitErr)
		}
		return ScheduleResult{nominatingInfo: &framework.NominatingInfo{NominatingMode: framework.ModeOverride}}, assumedInfo, st
	}
	if st := fwk.RunPermitPlugins(ctx, state, assumedPod, result.SuggestedHost); !st.IsWait() && !st.IsSuccess() {
		fwk.RunReservePluginsUnreserve(ctx, state, assumedPod, result.SuggestedHost)
		if err := s.cache.ForgetPod(s.logger, assumedPod); err != nil {
			s.logger.Error("Scheduler cache ForgetPod failed", "pod", klogKey(assumedPod), "err", err)
		}
		if st.IsRejected() {
			fitErr := &framework.FitError{NumAllNodes: 1, Pod: pod, Diagnosis: framework.Diagnosis{
				NodeToStatus: framework.NewDefaultNodeToStatus()}}
			fitErr.Diagnosis.NodeToStatus.Set(result.SuggestedHost, st)
			fitErr.Diagnosis.AddPluginStatus(st)
			return ScheduleResult{nominatingInfo: &framework.NominatingInfo{NominatingMode: framework.ModeOverride}}, assumedInfo,
				framework.NewStatus(st.Code()).WithError(fitErr)
		}
		return ScheduleResult{nominatingInfo: &framework.NominatingInfo{NominatingMode: framework.ModeOverride}}, assumedInfo, st
	}
	return result, assumedInfo, nil
}

// bindingCycle waits on Permit, then PreBind, Bind and PostBind.
func (s *Scheduler) bindingCycle(ctx context.Context, state *framework.CycleState, fwk *fwkruntime.Framework, result ScheduleResult, assumedInfo *framework.QueuedPodInfo, start time.Time) *framework.Status {
	assumed := assumedInfo.Pod
	if st := fwk.WaitOnPermit(ctx, assumed); !st.IsSuccess() {
		if st.IsRejected() {
			fitErr := &framework.FitError{NumAllNodes: 1, Pod: assumed, Diagnosis: framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}}
			fitErr.Diagnosis.NodeToStatus.Set(result.SuggestedHost, st)
			fitErr.Diagnosis.AddPluginStatus(st)
			return framework.NewStatus(st.Code()).WithError(fitErr)
		}
		return st
	}
	if st := fwk.RunPreBindPlugins(ctx, state, assumed, result.SuggestedHost); !st.IsSuccess() {
		return st
	}
	if st := s.bind(ctx, fwk, assumed, result.SuggestedHost, state); !st.IsSuccess() {
		return st
	}
	s.metrics.observeAttempt(resultScheduled, fwk.ProfileName(), s.clock.Since(start))
	s.metrics.podAttempts.Observe(float64(assumedInfo.Attempts))
	if assumedInfo.InitialAttemptTimestamp != nil {
		s.metrics.sliDuration.WithLabelValues(attemptsLabel(assumedInfo.Attempts)).Observe(s.clock.Since(*assumedInfo.InitialAttemptTimestamp).Seconds())
	}
	fwk.RunPostBindPlugins(ctx, state, assumed, result.SuggestedHost)
	return nil
}

func attemptsLabel(n int) string {
	if n >= 15 {
		return "15+"
	}
	return strconv.Itoa(n)
}

// bind runs the Bind plugins, then tells the cache the binding finished
// (its expiry starts) and records the Scheduled event on success.
func (s *Scheduler) bind(ctx context.Context, fwk *fwkruntime.Framework, assumed *corev1.Pod, node string, state *framework.CycleState) *framework.Status {
	st := fwk.RunBindPlugins(ctx, state, assumed, node)
	if err := s.cache.FinishBinding(s.logger, assumed); err != nil {
		s.logger.Error("Scheduler cache FinishBinding failed", "pod", klogKey(assumed), "err", err)
	}
	if st.IsSuccess() {
		fwk.EventRecorder().Eventf(assumed, corev1.EventTypeNormal, "Scheduled", "Successfully assigned %v/%v to %v", assumed.Namespace, assumed.Name, node)
	}
	return st
}

// handleBindingCycleError undoes an assumed pod whose binding failed and
// requeues it.
func (s *Scheduler) handleBindingCycleError(ctx context.Context, state *framework.CycleState, fwk *fwkruntime.Framework, podInfo *framework.QueuedPodInfo, start time.Time, result ScheduleResult, status *framework.Status) {
	assumed := podInfo.Pod
	fwk.RunReservePluginsUnreserve(ctx, state, assumed, result.SuggestedHost)
	if err := s.cache.ForgetPod(s.logger, assumed); err != nil {
		s.logger.Error("scheduler cache ForgetPod failed", "pod", klogKey(assumed), "err", err)
	} else {
		// The room the assumed pod held is free again: pods it kept out
		// may fit now (as if an assigned pod had been deleted).
		s.queue.MoveAllToActiveOrBackoffQueue(s.logger, framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Delete}, assumed, nil,
			func(p *corev1.Pod) bool { return p.UID != assumed.UID })
	}
	s.handleSchedulingFailure(ctx, fwk, podInfo, status, &framework.NominatingInfo{NominatingMode: framework.ModeOverride}, start)
}

// schedulePod is the scheduling algorithm: snapshot, filter, score,
// select. It has no side effects besides the snapshot and the rotating
// start index.
func (s *Scheduler) schedulePod(ctx context.Context, fwk *fwkruntime.Framework, state *framework.CycleState, pod *corev1.Pod) (ScheduleResult, error) {
	if err := s.cache.UpdateSnapshot(s.logger, s.snapshot); err != nil {
		return ScheduleResult{}, err
	}
	if s.snapshot.NumNodes() == 0 {
		return ScheduleResult{}, ErrNoNodesAvailable
	}
	feasible, diagnosis, err := s.findNodesThatFitPod(ctx, fwk, state, pod)
	if err != nil {
		return ScheduleResult{}, err
	}
	if len(feasible) == 0 {
		return ScheduleResult{}, &framework.FitError{Pod: pod, NumAllNodes: s.snapshot.NumNodes(), Diagnosis: diagnosis}
	}
	if len(feasible) == 1 {
		return ScheduleResult{SuggestedHost: feasible[0].Node().Name, EvaluatedNodes: 1 + diagnosis.NodeToStatus.Len(), FeasibleNodes: 1}, nil
	}
	scores, err := prioritizeNodes(ctx, s.logger, fwk, state, pod, feasible, &s.scoreBuf)
	if err != nil {
		return ScheduleResult{}, err
	}
	host, err := s.selectHost(scores)
	return ScheduleResult{SuggestedHost: host, EvaluatedNodes: len(feasible) + diagnosis.NodeToStatus.Len(), FeasibleNodes: len(feasible)}, err
}

// findNodesThatFitPod runs PreFilter, tries the pod's nominated node
// first, then filters nodes (from the rotating start index, stopping at
// numFeasibleNodesToFind).
func (s *Scheduler) findNodesThatFitPod(ctx context.Context, fwk *fwkruntime.Framework, state *framework.CycleState, pod *corev1.Pod) ([]*framework.NodeInfo, framework.Diagnosis, error) {
	diagnosis := framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}
	allNodes, err := s.snapshot.NodeInfos().List()
	if err != nil {
		return nil, diagnosis, err
	}
	preRes, st, rejectors := fwk.RunPreFilterPlugins(ctx, state, pod)
	diagnosis.UnschedulablePlugins = rejectors
	if !st.IsSuccess() {
		if !st.IsRejected() {
			return nil, diagnosis, st.AsError()
		}
		diagnosis.NodeToStatus.SetAbsentNodesStatus(st)
		diagnosis.PreFilterMsg = st.Message()
		diagnosis.AddPluginStatus(st)
		return nil, diagnosis, nil
	}
	if pod.Status.NominatedNodeName != "" {
		feasible, err := s.evaluateNominatedNode(ctx, pod, fwk, state, &diagnosis)
		if err != nil {
			s.logger.Error("Evaluation failed on nominated node", "pod", klogKey(pod), "node", pod.Status.NominatedNodeName, "err", err)
		}
		if len(feasible) != 0 {
			return feasible, diagnosis, nil
		}
	}
	nodes := allNodes
	if !preRes.AllNodes() {
		nodes = make([]*framework.NodeInfo, 0, len(preRes.NodeNames))
		for _, name := range sortedKeys(preRes.NodeNames) {
			if ni, err := s.snapshot.Get(name); err == nil {
				nodes = append(nodes, ni)
			}
		}
		diagnosis.NodeToStatus.SetAbsentNodesStatus(framework.NewStatus(framework.UnschedulableAndUnresolvable,
			fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sortedKeys(rejectors))))
	}
	feasible, err := s.findNodesThatPassFilters(ctx, fwk, state, pod, &diagnosis, nodes)
	processed := len(feasible) + diagnosis.NodeToStatus.Len()
	s.nextStartNodeIndex = (s.nextStartNodeIndex + processed) % len(allNodes)
	if err != nil {
		return nil, diagnosis, err
	}
	return feasible, diagnosis, nil
}

func sortedKeys(m sets.Set[string]) []string { return sets.List(m) }

func (s *Scheduler) evaluateNominatedNode(ctx context.Context, pod *corev1.Pod, fwk *fwkruntime.Framework, state *framework.CycleState, diagnosis *framework.Diagnosis) ([]*framework.NodeInfo, error) {
	ni, err := s.snapshot.Get(pod.Status.NominatedNodeName)
	if err != nil {
		return nil, err
	}
	return s.findNodesThatPassFilters(ctx, fwk, state, pod, diagnosis, []*framework.NodeInfo{ni})
}

// findNodesThatPassFilters filters nodes in parallel, from the rotating
// start index, until numFeasibleNodesToFind fit.
func (s *Scheduler) findNodesThatPassFilters(ctx context.Context, fwk *fwkruntime.Framework, state *framework.CycleState, pod *corev1.Pod, diagnosis *framework.Diagnosis, nodes []*framework.NodeInfo) ([]*framework.NodeInfo, error) {
	numAll := len(nodes)
	toFind := s.numFeasibleNodesToFind(fwk.PercentageOfNodesToScore(), int32(numAll))
	feasible := make([]*framework.NodeInfo, toFind)
	if !fwk.HasFilterPlugins() {
		for i := range feasible {
			feasible[i] = nodes[(s.nextStartNodeIndex+i)%numAll]
		}
		return feasible, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var found atomic.Int32
	var firstErr atomic.Pointer[error]
	// statuses is the scheduler's buffer (cycles run one at a time),
	// nil again after each use: failures by piece index.
	if cap(s.filterStatuses) < numAll {
		s.filterStatuses = make([]*framework.Status, numAll)
	}
	statuses := s.filterStatuses[:numAll]
	start := s.nextStartNodeIndex
	fwk.Parallelizer().UntilCPU(ctx, numAll, func(i int) {
		// Pieces of a chunk taken before enough nodes were found are
		// not filtered (nor counted as processed).
		if found.Load() >= toFind {
			return
		}
		ni := nodes[(start+i)%numAll]
		st := fwk.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
		if st.Code() == framework.Error {
			err := st.AsError()
			firstErr.CompareAndSwap(nil, &err)
			cancel()
			return
		}
		if st.IsSuccess() {
			n := found.Add(1)
			if n > toFind {
				cancel()
				found.Add(-1)
			} else {
				feasible[n-1] = ni
			}
			return
		}
		statuses[i] = st
	}, "Filter")
	feasible = feasible[:found.Load()]
	for i, st := range statuses {
		if st != nil {
			diagnosis.NodeToStatus.Set(nodes[(start+i)%numAll].Node().Name, st)
			diagnosis.AddPluginStatus(st)
			statuses[i] = nil
		}
	}
	if e := firstErr.Load(); e != nil {
		return feasible, *e
	}
	return feasible, nil
}

// numFeasibleNodesToFind is upstream's adaptive count: every node below
// 100 nodes, else percentageOfNodesToScore of them (adaptive default:
// 50% minus 1% per 125 nodes, at least 5%), at least 100.
func (s *Scheduler) numFeasibleNodesToFind(profilePercentage *int32, numAll int32) int32 {
	if numAll < minFeasibleNodesToFind {
		return numAll
	}
	percentage := s.percentageOfNodesToScore
	if profilePercentage != nil {
		percentage = *profilePercentage
	}
	if percentage == 0 {
		percentage = int32(50) - numAll/125
		if percentage < minFeasibleNodesPercentageToFind {
			percentage = minFeasibleNodesPercentageToFind
		}
	}
	n := numAll * percentage / 100
	if n < minFeasibleNodesToFind {
		return minFeasibleNodesToFind
	}
	return n
}

// prioritizeNodes runs PreScore and Score; without Score plugins every
// node scores 1. At debug level it logs each plugin's weighted score and
// each node's total, with upstream's messages (its -v=10 lines "Plugin
// scored node for pod" and "Calculated node's final score for pod").
// The scores live in buf's memory (valid until its next use).
func prioritizeNodes(ctx context.Context, logger *slog.Logger, fwk *fwkruntime.Framework, state *framework.CycleState, pod *corev1.Pod, nodes []*framework.NodeInfo, buf *fwkruntime.ScoreBuffer) ([]framework.NodePluginScores, error) {
	if !fwk.HasScorePlugins() {
		out := make([]framework.NodePluginScores, len(nodes))
		for i, n := range nodes {
			out[i] = framework.NodePluginScores{Name: n.Node().Name, TotalScore: 1}
		}
		return out, nil
	}
	if st := fwk.RunPreScorePlugins(ctx, state, pod, nodes); !st.IsSuccess() {
		return nil, st.AsError()
	}
	scores, st := fwk.ScoreNodes(ctx, state, pod, nodes, buf)
	if !st.IsSuccess() {
		return nil, st.AsError()
	}
	if logger.Enabled(ctx, slog.LevelDebug) {
		logScores(ctx, logger, pod, scores)
	}
	return scores, nil
}

func logScores(ctx context.Context, logger *slog.Logger, pod *corev1.Pod, scores []framework.NodePluginScores) {
	key := klogKey(pod)
	for _, ns := range scores {
		for _, ps := range ns.Scores {
			logger.DebugContext(ctx, "Plugin scored node for pod", "pod", key, "plugin", ps.Name, "node", ns.Name, "score", ps.Score)
		}
	}
	for _, ns := range scores {
		logger.DebugContext(ctx, "Calculated node's final score for pod", "pod", key, "node", ns.Name, "score", ns.TotalScore)
	}
}

// selectHost picks a node with the highest total score, uniformly at
// random among ties (reservoir sampling, as upstream).
func (s *Scheduler) selectHost(scores []framework.NodePluginScores) (string, error) {
	if len(scores) == 0 {
		return "", errEmptyPriorityList
	}
	best, ties := 0, 1
	for i := 1; i < len(scores); i++ {
		switch {
		case scores[i].TotalScore > scores[best].TotalScore:
			best, ties = i, 1
		case scores[i].TotalScore == scores[best].TotalScore:
			ties++
			if s.rand(ties) == 0 {
				best = i
			}
		}
	}
	return scores[best].Name, nil
}

// handleSchedulingFailure records a failed attempt: metrics, the pod back
// to the queue (with the plugins that rejected it), its nomination, the
// FailedScheduling event and the PodScheduled=False condition.
func (s *Scheduler) handleSchedulingFailure(ctx context.Context, fwk *fwkruntime.Framework, podInfo *framework.QueuedPodInfo, status *framework.Status, ni *framework.NominatingInfo, start time.Time) {
	requeued := false
	defer func() {
		if !requeued {
			s.queue.Done(podInfo.Pod.UID)
		}
	}()
	reason := corev1.PodReasonSchedulerError
	if status.IsRejected() {
		reason = corev1.PodReasonUnschedulable
		s.metrics.observeAttempt(resultUnschedulable, fwk.ProfileName(), s.clock.Since(start))
	} else {
		s.metrics.observeAttempt(resultError, fwk.ProfileName(), s.clock.Since(start))
	}
	pod := podInfo.Pod
	err := status.AsError()
	errMsg := status.Message()
	var fitErr *framework.FitError
	switch {
	case errors.Is(err, ErrNoNodesAvailable):
		s.logger.Info("Unable to schedule pod; no nodes are registered to the cluster; waiting", "pod", klogKey(pod))
	case errors.As(err, &fitErr):
		podInfo.UnschedulablePlugins = fitErr.Diagnosis.UnschedulablePlugins
		podInfo.PendingPlugins = fitErr.Diagnosis.PendingPlugins
		s.logger.Debug("Unable to schedule pod; no fit; waiting", "pod", klogKey(pod), "err", errMsg)
	default:
		s.logger.Error("Error scheduling pod; retrying", "pod", klogKey(pod), "err", err)
	}
	cached, e := s.podLister.Namespace(pod.Namespace).Get(pod.Name)
	switch {
	case e != nil:
		s.logger.Info("Pod doesn't exist in informer cache", "pod", klogKey(pod), "err", e)
	case cached.UID != pod.UID:
		s.logger.Info("Pod was recreated; abort adding it back to queue", "pod", klogKey(pod))
	case cached.Spec.NodeName != "":
		s.logger.Info("Pod has been assigned to node. Abort adding it back to queue.", "pod", klogKey(pod), "node", cached.Spec.NodeName)
	default:
		podInfo.PodInfo = framework.NewPodInfo(cached.DeepCopy())
		if err := s.queue.AddUnschedulableIfNotPresent(s.logger, podInfo, s.queue.SchedulingCycle()); err != nil {
			s.logger.Error("Error occurred", "err", err)
		}
		requeued = true
	}
	s.queue.AddNominatedPod(s.logger, podInfo.PodInfo, ni)
	if err == nil {
		return
	}
	msg := truncate(errMsg, maxMessageLength)
	fwk.EventRecorder().Eventf(pod, corev1.EventTypeWarning, "FailedScheduling", "%s", msg)
	cond := &corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: reason, Message: errMsg, ObservedGeneration: pod.Generation}
	if err := s.updatePod(ctx, pod, cond, ni); err != nil {
		s.logger.Error("Error updating pod", "pod", klogKey(pod), "err", err)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const suffix = " ..."
	return s[:n-len(suffix)] + suffix
}

// updatePod patches the pod's status with the condition and the
// nominated node when either changes (a strategic merge patch of the
// status, as upstream).
func (s *Scheduler) updatePod(ctx context.Context, pod *corev1.Pod, cond *corev1.PodCondition, ni *framework.NominatingInfo) error {
	newStatus := pod.Status.DeepCopy()
	nnnChanged := ni.Mode() == framework.ModeOverride && pod.Status.NominatedNodeName != ni.NominatedNodeName
	condChanged := cond != nil && updatePodCondition(newStatus, cond, s.clock.Now())
	if !condChanged && !nnnChanged {
		return nil
	}
	if nnnChanged {
		newStatus.NominatedNodeName = ni.NominatedNodeName
	}
	return patchPodStatus(ctx, s.client, pod.Namespace, pod.Name, pod.UID, &pod.Status, newStatus)
}

// updatePodCondition sets cond in status; false when nothing but the
// probe time would change. The transition time moves only with the
// condition's status.
func updatePodCondition(status *corev1.PodStatus, cond *corev1.PodCondition, now time.Time) bool {
	cond.LastProbeTime = metav1.Time{}
	for i := range status.Conditions {
		old := &status.Conditions[i]
		if old.Type != cond.Type {
			continue
		}
		if old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message && old.ObservedGeneration == cond.ObservedGeneration {
			return false
		}
		if old.Status == cond.Status {
			cond.LastTransitionTime = old.LastTransitionTime
		} else {
			cond.LastTransitionTime = metav1.NewTime(now)
		}
		*old = *cond
		return true
	}
	cond.LastTransitionTime = metav1.NewTime(now)
	status.Conditions = append(status.Conditions, *cond)
	return true
}

func patchPodStatus(ctx context.Context, c *client.Client, ns, name string, uid types.UID, oldStatus, newStatus *corev1.PodStatus) error {
	oldData, err := json.Marshal(corev1.Pod{Status: *oldStatus})
	if err != nil {
		return err
	}
	newData, err := json.Marshal(corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: *newStatus})
	if err != nil {
		return err
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, &corev1.Pod{})
	if err != nil {
		return err
	}
	_, err = client.For[*corev1.Pod, *corev1.PodList](c).Namespace(ns).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func klogKey(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }
