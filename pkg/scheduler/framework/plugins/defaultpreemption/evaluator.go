package defaultpreemption

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/componenthelpers/scheduling/corev1helpers"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// Victims are the pods to preempt on a node (most important first) and
// how many of them violate a PodDisruptionBudget.
type Victims struct {
	Pods             []*corev1.Pod
	NumPDBViolations int64
}

// Candidate is a node where preempting Victims makes the pod fit.
type Candidate struct {
	Name    string
	Victims *Victims
	// index is the node's place in the dry-run order (ties go to the
	// first).
	index int
}

// candidateList collects candidates from parallel dry runs, up to its
// capacity.
type candidateList struct {
	n     atomic.Int32
	items []*Candidate
}

func newCandidateList(size int32) *candidateList {
	return &candidateList{items: make([]*Candidate, size)}
}

func (l *candidateList) add(c *Candidate) {
	if i := l.n.Add(1) - 1; int(i) < len(l.items) {
		l.items[i] = c
	}
}

func (l *candidateList) size() int32 { return min(l.n.Load(), int32(len(l.items))) }

// get returns the candidates in dry-run order (call after all adds).
func (l *candidateList) get() []*Candidate {
	out := l.items[:l.size()]
	sort.Slice(out, func(i, j int) bool { return out[i].index < out[j].index })
	return out
}

func (pl *DefaultPreemption) now() time.Time {
	if c := pl.fh.Clock(); c != nil {
		return c.Now()
	}
	return time.Now()
}

func (pl *DefaultPreemption) logger() interface {
	Debug(string, ...any)
	Error(string, ...any)
} {
	if l := pl.fh.Logger(); l != nil {
		return l
	}
	return discard{}
}

type discard struct{}

func (discard) Debug(string, ...any) {}
func (discard) Error(string, ...any) {}

// preempt is upstream's Evaluator.Preempt: (nil, Error) for transient
// errors, (nil, Unschedulable) when the pod may not preempt now,
// (nominate "", Unschedulable) when preemption cannot help, (nominate
// node, Success) when victims were chosen and are being preempted.
func (pl *DefaultPreemption) preempt(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, m framework.NodeToStatusReader) (*framework.PostFilterResult, *framework.Status) {
	// 0) The latest version of the pod (its nominatedNodeName).
	if pl.podLister != nil {
		latest, err := pl.podLister.Namespace(pod.Namespace).Get(pod.Name)
		if err != nil {
			pl.logger().Error("Could not get the updated preemptor pod object", "pod", pod.Namespace+"/"+pod.Name, "err", err)
			return nil, framework.AsStatus(err)
		}
		pod = latest
	}

	// 1) Eligibility.
	if ok, msg := pl.PodEligibleToPreemptOthers(pod, m.Get(pod.Status.NominatedNodeName)); !ok {
		pl.logger().Debug("Pod is not eligible for preemption", "pod", pod.Namespace+"/"+pod.Name, "reason", msg)
		return nil, framework.NewStatus(framework.Unschedulable, msg)
	}

	// 2) Candidates.
	allNodes, err := pl.fh.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	candidates, nodeToStatus, err := pl.findCandidates(ctx, state, allNodes, pod, m)
	if err != nil && len(candidates) == 0 {
		return nil, framework.AsStatus(err)
	}
	if len(candidates) == 0 {
		fitErr := &framework.FitError{Pod: pod, NumAllNodes: len(allNodes), Diagnosis: framework.Diagnosis{NodeToStatus: nodeToStatus}}
		fitErr.Diagnosis.NodeToStatus.SetAbsentNodesStatus(framework.NewStatus(framework.UnschedulableAndUnresolvable, "Preemption is not helpful for scheduling"))
		// Nominating "" clears a nomination the pod may have.
		return framework.NewPostFilterResultWithNominatedNode(""), framework.NewStatus(framework.Unschedulable, fitErr.Error())
	}

	// 3) (upstream asks extenders here; skiff has none.)
	// 4) The best candidate.
	best := pl.SelectCandidate(candidates)
	if best == nil || best.Name == "" {
		return nil, framework.NewStatus(framework.Unschedulable, "no candidate node for preemption")
	}
	pl.logger().Debug("the target node for the preemption is determined", "node", best.Name, "pod", pod.Namespace+"/"+pod.Name)

	// 5) Preempt.
	if pl.Async {
		pl.prepareCandidateAsync(best, pod)
	} else if s := pl.prepareCandidate(ctx, best, pod); !s.IsSuccess() {
		return nil, s
	}
	return framework.NewPostFilterResultWithNominatedNode(best.Name), framework.NewStatus(framework.Success)
}

// findCandidates dry-runs preemption on the nodes the filters found
// Unschedulable.
func (pl *DefaultPreemption) findCandidates(ctx context.Context, state *framework.CycleState, allNodes []*framework.NodeInfo, pod *corev1.Pod, m framework.NodeToStatusReader) ([]*Candidate, *framework.NodeToStatus, error) {
	if len(allNodes) == 0 {
		return nil, nil, errors.New("no nodes available")
	}
	potential, err := m.NodesForStatusCode(pl.fh.SnapshotSharedLister().NodeInfos(), framework.Unschedulable)
	if err != nil {
		return nil, nil, err
	}
	if len(potential) == 0 {
		pl.logger().Debug("Preemption will not help schedule pod on any node", "pod", pod.Namespace+"/"+pod.Name)
		return nil, framework.NewDefaultNodeToStatus(), nil
	}
	var pdbs []*policyv1.PodDisruptionBudget
	if pl.pdbLister != nil {
		if pdbs, err = pl.pdbLister.List(labels.Everything()); err != nil {
			return nil, nil, err
		}
	}
	offset, num := pl.GetOffsetAndNumCandidates(int32(len(potential)))
	return pl.DryRunPreemption(ctx, state, pod, potential, pdbs, offset, num)
}

// DryRunPreemption selects victims on the potential nodes in parallel,
// starting at offset, until numCandidates candidates are found (one of
// them not violating a PDB). It returns the candidates (non-violating
// first, each group in dry-run order) and the statuses of the nodes that
// are not candidates.
func (pl *DefaultPreemption) DryRunPreemption(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, potential []*framework.NodeInfo,
	pdbs []*policyv1.PodDisruptionBudget, offset, numCandidates int32) ([]*Candidate, *framework.NodeToStatus, error) {
	nonViolating, violating := newCandidateList(numCandidates), newCandidateList(numCandidates)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	statuses := framework.NewDefaultNodeToStatus()
	var mu sync.Mutex
	var errs []error
	check := func(i int) {
		ni := potential[(int(offset)+i)%len(potential)].Snapshot()
		name := ni.NodeName()
		pods, numViolations, status := pl.SelectVictimsOnNode(ctx, state.Clone(), pod, ni, pdbs)
		if status.IsSuccess() && len(pods) != 0 {
			c := &Candidate{Name: name, Victims: &Victims{Pods: pods, NumPDBViolations: int64(numViolations)}, index: i}
			if numViolations == 0 {
				nonViolating.add(c)
			} else {
				violating.add(c)
			}
			if nv, v := nonViolating.size(), violating.size(); nv > 0 && nv+v >= numCandidates {
				cancel()
			}
			return
		}
		if status.IsSuccess() && len(pods) == 0 {
			status = framework.AsStatus(fmt.Errorf("expected at least one victim pod on node %q", name))
		}
		mu.Lock()
		if status.Code() == framework.Error {
			errs = append(errs, status.AsError())
		}
		statuses.Set(name, status)
		mu.Unlock()
	}
	pl.fh.Parallelizer().Until(ctx, len(potential), check, Name)
	return append(nonViolating.get(), violating.get()...), statuses, aggregate(errs)
}

// SelectCandidate picks the best candidate (see pickOneNodeForPreemption).
func (pl *DefaultPreemption) SelectCandidate(candidates []*Candidate) *Candidate {
	switch len(candidates) {
	case 0:
		return nil
	case 1:
		return candidates[0]
	}
	return candidates[pl.pickOne(candidates)]
}

// pickOne returns the index of the best candidate by upstream's criteria,
// each applied to the ties of the previous one: fewest PDB violations,
// lowest highest-victim priority, smallest sum of victim priorities,
// fewest victims, latest start time of the highest-priority victims,
// then the first.
func (pl *DefaultPreemption) pickOne(cs []*Candidate) int {
	scores := []func(c *Candidate) int64{
		func(c *Candidate) int64 { return -c.Victims.NumPDBViolations },
		func(c *Candidate) int64 { return -int64(corev1helpers.PodPriority(c.Victims.Pods[0])) },
		func(c *Candidate) int64 {
			var sum int64
			for _, p := range c.Victims.Pods {
				// Shifted to be >= 0 so that more pods never sum lower.
				sum += int64(corev1helpers.PodPriority(p)) + int64(math.MaxInt32+1)
			}
			return -sum
		},
		func(c *Candidate) int64 { return -int64(len(c.Victims.Pods)) },
		func(c *Candidate) int64 {
			t := pl.earliestStartTime(c.Victims)
			if t == nil {
				return math.MinInt64
			}
			return t.UnixNano()
		},
	}
	idx := make([]int, len(cs))
	for i := range idx {
		idx[i] = i
	}
	for _, f := range scores {
		best := int64(math.MinInt64)
		var sel []int
		for _, i := range idx {
			s := f(cs[i])
			if s > best {
				best, sel = s, sel[:0]
			}
			if s == best {
				sel = append(sel, i)
			}
		}
		if len(sel) == 1 {
			return sel[0]
		}
		idx = sel
	}
	return idx[0]
}

// earliestStartTime is the earliest start time among the victims of the
// highest priority.
func (pl *DefaultPreemption) earliestStartTime(v *Victims) *metav1.Time {
	if len(v.Pods) == 0 {
		return nil
	}
	earliest := pl.podStartTime(v.Pods[0])
	maxPrio := corev1helpers.PodPriority(v.Pods[0])
	for _, p := range v.Pods {
		switch prio := corev1helpers.PodPriority(p); {
		case prio == maxPrio:
			if t := pl.podStartTime(p); t.Before(earliest) {
				earliest = t
			}
		case prio > maxPrio:
			maxPrio, earliest = prio, pl.podStartTime(p)
		}
	}
	return earliest
}

// prepareCandidate preempts the victims in parallel (skipping those
// already terminating) and clears the nomination of lower-priority pods
// nominated to the node.
func (pl *DefaultPreemption) prepareCandidate(ctx context.Context, c *Candidate, pod *corev1.Pod) *framework.Status {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var once sync.Once
	var firstErr error
	pl.fh.Parallelizer().Until(ctx, len(c.Victims.Pods), func(i int) {
		victim := c.Victims.Pods[i]
		if victim.DeletionTimestamp != nil {
			return // graceful deletion already started
		}
		if err := pl.PreemptPod(ctx, c.Name, pod, victim); err != nil {
			once.Do(func() { firstErr = err; cancel() })
		}
	}, Name)
	if firstErr != nil {
		return framework.AsStatus(firstErr)
	}
	preemptionVictims.Observe(float64(len(c.Victims.Pods)))
	if err := pl.clearNominatedNodeName(ctx, pl.lowerPriorityNominatedPods(pod, c.Name)); err != nil {
		pl.logger().Error("Cannot clear 'NominatedNodeName' field", "err", err)
	}
	return nil
}

// prepareCandidateAsync does prepareCandidate's work in a goroutine (on a
// context of its own: it outlives the cycle). The preemptor is held in
// PreEnqueue until the last victim's deletion has started; all victims
// but the last are preempted in parallel first.
func (pl *DefaultPreemption) prepareCandidateAsync(c *Candidate, pod *corev1.Pod) {
	preemptionVictims.Observe(float64(len(c.Victims.Pods)))
	victims := make([]*corev1.Pod, 0, len(c.Victims.Pods))
	for _, v := range c.Victims.Pods {
		if v.DeletionTimestamp == nil {
			victims = append(victims, v)
		}
	}
	if len(victims) == 0 {
		return
	}
	pl.mu.Lock()
	pl.preempting.Insert(pod.UID)
	pl.mu.Unlock()
	pl.running.Add(1)
	go func() {
		defer pl.running.Done()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		failed := false
		defer func() {
			if failed {
				// The pod may be parked with no event to wake it: retry it.
				pl.fh.Activate(pl.fh.Logger(), map[string]*corev1.Pod{pod.Name: pod})
			}
		}()
		if err := pl.clearNominatedNodeName(ctx, pl.lowerPriorityNominatedPods(pod, c.Name)); err != nil {
			pl.logger().Error("Cannot clear 'NominatedNodeName' field from lower priority pods on the same target node", "node", c.Name, "err", err)
			failed = true
		}
		preemptLast := true
		if len(victims) > 1 {
			var once sync.Once
			var firstErr error
			pl.fh.Parallelizer().Until(ctx, len(victims)-1, func(i int) {
				if err := pl.PreemptPod(ctx, c.Name, pod, victims[i]); err != nil {
					once.Do(func() { firstErr = err; cancel() })
				}
			}, Name)
			if firstErr != nil {
				pl.logger().Error("Error occurred during async preemption", "err", firstErr)
				failed, preemptLast = true, false
			}
		}
		if preemptLast {
			last := victims[len(victims)-1]
			pl.mu.Lock()
			pl.lastVictim[pod.UID] = types.NamespacedName{Namespace: last.Namespace, Name: last.Name}
			pl.mu.Unlock()
			if err := pl.PreemptPod(ctx, c.Name, pod, last); err != nil {
				pl.logger().Error("Error occurred during async preemption of the last victim", "err", err)
				failed = true
			}
		}
		pl.mu.Lock()
		pl.preempting.Delete(pod.UID)
		delete(pl.lastVictim, pod.UID)
		pl.mu.Unlock()
	}()
}

// Wait blocks until every asynchronous preemption started so far ended
// (for tests and shutdown).
func (pl *DefaultPreemption) Wait() { pl.running.Wait() }

// lowerPriorityNominatedPods are the pods nominated to node with a lower
// priority than pod: they may no longer fit there.
func (pl *DefaultPreemption) lowerPriorityNominatedPods(pod *corev1.Pod, node string) []*corev1.Pod {
	var out []*corev1.Pod
	prio := corev1helpers.PodPriority(pod)
	for _, pi := range pl.fh.NominatedPodsForNode(node) {
		if corev1helpers.PodPriority(pi.Pod) < prio {
			out = append(out, pi.Pod)
		}
	}
	return out
}

// clearNominatedNodeName patches status.nominatedNodeName away.
func (pl *DefaultPreemption) clearNominatedNodeName(ctx context.Context, pods []*corev1.Pod) error {
	var errs []error
	for _, p := range pods {
		if p.Status.NominatedNodeName == "" {
			continue
		}
		st := p.Status.DeepCopy()
		st.NominatedNodeName = ""
		if err := pl.patchPodStatus(ctx, p, &p.Status, st); err != nil {
			errs = append(errs, err)
		}
	}
	return aggregate(errs)
}

// aggregateError renders several errors as apimachinery's aggregate does
// (upstream's messages): one error as itself, more as "[a, b]" without
// repeated messages.
type aggregateError []error

func (a aggregateError) Error() string {
	if len(a) == 1 {
		return a[0].Error()
	}
	seen := map[string]bool{}
	var msgs []string
	for _, e := range a {
		if m := e.Error(); !seen[m] {
			seen[m] = true
			msgs = append(msgs, m)
		}
	}
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

func (a aggregateError) Unwrap() []error { return a }

func aggregate(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return aggregateError(errs)
}

// preemptPod is the default PreemptPod: a waiting victim is rejected;
// another one gets the DisruptionTarget condition and is deleted; then a
// Preempted event is recorded on it.
func (pl *DefaultPreemption) preemptPod(ctx context.Context, node string, preemptor, victim *corev1.Pod) error {
	log := pl.logger()
	if wp := pl.fh.GetWaitingPod(victim.UID); wp != nil {
		wp.Reject(Name, "preempted")
		log.Debug("Preemptor pod preempted a waiting pod", "preemptor", preemptor.Namespace+"/"+preemptor.Name, "waitingPod", victim.Namespace+"/"+victim.Name, "node", node)
	} else {
		cond := corev1.PodCondition{
			Type:               corev1.DisruptionTarget,
			ObservedGeneration: victim.Generation,
			Status:             corev1.ConditionTrue,
			Reason:             corev1.PodReasonPreemptionByScheduler,
			Message:            fmt.Sprintf("%s: preempting to accommodate a higher priority pod", preemptor.Spec.SchedulerName),
		}
		st := victim.Status.DeepCopy()
		if updatePodCondition(st, &cond, pl.now()) {
			if err := pl.patchPodStatus(ctx, victim, &victim.Status, st); err != nil {
				if !apierrors.IsNotFound(err) {
					log.Error("Could not add DisruptionTarget condition due to preemption", "victim", victim.Namespace+"/"+victim.Name, "err", err)
					return err
				}
				return nil // already gone
			}
		}
		c := pl.fh.Client()
		if c == nil {
			return errors.New("DefaultPreemption: the framework has no API client")
		}
		if err := client.For[*corev1.Pod, *corev1.PodList](c).Namespace(victim.Namespace).Delete(ctx, victim.Name, metav1.DeleteOptions{}); err != nil {
			if !apierrors.IsNotFound(err) {
				log.Error("Tried to preempt pod", "pod", victim.Namespace+"/"+victim.Name, "err", err)
				return err
			}
			return nil
		}
		log.Debug("Preemptor Pod preempted victim Pod", "preemptor", preemptor.Namespace+"/"+preemptor.Name, "victim", victim.Namespace+"/"+victim.Name, "node", node)
	}
	if r := pl.fh.EventRecorder(); r != nil {
		r.Eventf(victim, corev1.EventTypeNormal, "Preempted", "Preempted by pod %v on node %v", preemptor.UID, node)
	}
	return nil
}

// updatePodCondition sets cond in st (keeping the transition time when
// the status does not change) and reports whether st changed.
func updatePodCondition(st *corev1.PodStatus, cond *corev1.PodCondition, now time.Time) bool {
	cond.LastTransitionTime = metav1.NewTime(now)
	for i := range st.Conditions {
		old := &st.Conditions[i]
		if old.Type != cond.Type {
			continue
		}
		if cond.Status == old.Status {
			cond.LastTransitionTime = old.LastTransitionTime
		}
		equal := cond.Status == old.Status && cond.Reason == old.Reason && cond.Message == old.Message &&
			cond.LastProbeTime.Equal(&old.LastProbeTime) && cond.LastTransitionTime.Equal(&old.LastTransitionTime) &&
			cond.ObservedGeneration == old.ObservedGeneration
		*old = *cond
		return !equal
	}
	st.Conditions = append(st.Conditions, *cond)
	return true
}

// patchPodStatus sends the strategic merge patch from oldStatus to
// newStatus to the pod's status, retrying server errors a few times, as
// upstream's util.PatchPodStatus.
func (pl *DefaultPreemption) patchPodStatus(ctx context.Context, p *corev1.Pod, oldStatus, newStatus *corev1.PodStatus) error {
	oldData, err := json.Marshal(corev1.Pod{Status: *oldStatus})
	if err != nil {
		return err
	}
	newData, err := json.Marshal(corev1.Pod{Status: *newStatus})
	if err != nil {
		return err
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, &corev1.Pod{})
	if err != nil {
		return err
	}
	if string(patch) == "{}" {
		return nil
	}
	c := pl.fh.Client()
	if c == nil {
		return errors.New("DefaultPreemption: the framework has no API client")
	}
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace(p.Namespace)
	wait := 10 * time.Millisecond
	for attempt := 0; ; attempt++ {
		_, err = pods.Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		if err == nil || attempt == 3 || !(apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err)) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait *= 5
	}
}
