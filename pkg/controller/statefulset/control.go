package statefulset

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/controller/internal/history"
	"github.com/skiff-sh/skiff/pkg/controller/internal/podutil"
)

// updateStatefulSet is upstream's UpdateStatefulSet: revisions, the pods'
// reconciliation, status, then history truncation.
func (c *Controller) updateStatefulSet(ctx context.Context, set *appsv1.StatefulSet, pods []*corev1.Pod) (*appsv1.StatefulSetStatus, error) {
	set = set.DeepCopy()
	selector, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil {
		return nil, err
	}
	revs, err := c.history.List(set, selector)
	if err != nil {
		return nil, err
	}
	history.Sort(revs)
	current, update, status, err := c.performUpdate(ctx, set, pods, revs)
	if terr := c.truncateHistory(ctx, set, pods, revs, current, update); terr != nil {
		err = errors.Join(err, terr)
	}
	return status, err
}

func (c *Controller) performUpdate(ctx context.Context, set *appsv1.StatefulSet, pods []*corev1.Pod, revs []*appsv1.ControllerRevision) (current, update *appsv1.ControllerRevision, status *appsv1.StatefulSetStatus, err error) {
	current, update, collisionCount, err := c.revisions(ctx, set, revs)
	if err != nil {
		return current, update, nil, err
	}
	status, err = c.reconcile(ctx, set, current, update, collisionCount, pods)
	if err != nil && status == nil {
		return current, update, nil, err
	}
	statusErr := c.updateStatus(ctx, set, status)
	if err != nil {
		return current, update, status, err
	}
	return current, update, status, statusErr
}

// revisions finds or creates the update revision (the set's template) and
// the current one (status.currentRevision, else the update revision).
func (c *Controller) revisions(ctx context.Context, set *appsv1.StatefulSet, revs []*appsv1.ControllerRevision) (current, update *appsv1.ControllerRevision, collisionCount int32, err error) {
	if set.Status.CollisionCount != nil {
		collisionCount = *set.Status.CollisionCount
	}
	update, err = NewRevision(set, history.NextRevision(revs), &collisionCount)
	if err != nil {
		return nil, nil, collisionCount, err
	}
	equal := history.FindEqualRevisions(revs, update)
	switch {
	case len(equal) > 0 && history.EqualRevision(revs[len(revs)-1], equal[len(equal)-1]):
		update = revs[len(revs)-1] // the latest revision is equivalent: nothing to do
	case len(equal) > 0:
		// A rollback to an earlier revision: it becomes the latest.
		if update, err = c.history.UpdateRevision(ctx, equal[len(equal)-1], update.Revision); err != nil {
			return nil, nil, collisionCount, err
		}
	case len(revs) > 0 && matchesLatestRevision(set, update, revs[len(revs)-1]):
		// The latest revision holds this template in another serialization
		// (written by another version): no new revision, no rollout
		// (upstream's StatefulSetSemanticRevisionComparison, on by default).
		update = revs[len(revs)-1]
	default:
		if update, err = c.history.Create(ctx, set, update, &collisionCount); err != nil {
			return nil, nil, collisionCount, err
		}
	}
	for _, r := range revs {
		if r.Name == set.Status.CurrentRevision {
			current = r
			break
		}
	}
	if current == nil {
		current = update
	}
	return current, update, collisionCount, nil
}

// matchesLatestRevision reports whether the set with latest's template
// re-serializes to the proposed revision's data.
func matchesLatestRevision(set *appsv1.StatefulSet, proposed, latest *appsv1.ControllerRevision) bool {
	latestSet, err := ApplyRevision(set, latest)
	if err != nil {
		return false
	}
	again, err := NewRevision(latestSet, -1, nil)
	if err != nil {
		return false
	}
	return history.EqualRevision(proposed, again)
}

// truncateHistory deletes the oldest revisions beyond revisionHistoryLimit
// that no pod, nor the current or update revision, names.
func (c *Controller) truncateHistory(ctx context.Context, set *appsv1.StatefulSet, pods []*corev1.Pod, revs []*appsv1.ControllerRevision, current, update *appsv1.ControllerRevision) error {
	live := map[string]bool{}
	if current != nil {
		live[current.Name] = true
	}
	if update != nil {
		live[update.Name] = true
	}
	for _, p := range pods {
		live[podRevision(p)] = true
	}
	var old []*appsv1.ControllerRevision
	for _, r := range revs {
		if !live[r.Name] {
			old = append(old, r)
		}
	}
	limit := 10
	if set.Spec.RevisionHistoryLimit != nil {
		limit = int(*set.Spec.RevisionHistoryLimit)
	}
	if limit < 0 || len(old) <= limit {
		return nil
	}
	for _, r := range old[:len(old)-limit] {
		if err := c.history.Delete(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

func (c *Controller) now() time.Time { return c.cfg.Clock.Now() }

func computeStatus(st *appsv1.StatefulSetStatus, minReady int32, now time.Time, current, update *appsv1.ControllerRevision, lists ...[]*corev1.Pod) {
	st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.CurrentReplicas, st.UpdatedReplicas = 0, 0, 0, 0, 0
	for _, l := range lists {
		for _, p := range l {
			if p == nil {
				continue
			}
			if isCreated(p) {
				st.Replicas++
			}
			if isRunningAndReady(p) {
				st.ReadyReplicas++
				if isRunningAndAvailable(p, minReady, now) {
					st.AvailableReplicas++
				}
			}
			if isCreated(p) && !isTerminating(p) {
				if podRevision(p) == current.Name {
					st.CurrentReplicas++
				}
				if podRevision(p) == update.Name {
					st.UpdatedReplicas++
				}
			}
		}
	}
}

type byOrdinalDesc []*corev1.Pod

func (o byOrdinalDesc) Len() int           { return len(o) }
func (o byOrdinalDesc) Swap(i, j int)      { o[i], o[j] = o[j], o[i] }
func (o byOrdinalDesc) Less(i, j int) bool { return getOrdinal(o[i]) > getOrdinal(o[j]) }

// runForAll runs fn over pods: in order, stopping at the first that asks
// to (monotonic), or all at once in slow-start batches (burst).
func runForAll(pods []*corev1.Pod, fn func(i int) (bool, error), monotonic bool) (bool, error) {
	if monotonic {
		for i := range pods {
			if exit, err := fn(i); exit || err != nil {
				return true, err
			}
		}
		return false, nil
	}
	if _, err := podutil.SlowStartBatch(len(pods), 1, func(i int) error { _, err := fn(i); return err }); err != nil {
		return true, err
	}
	return false, nil
}

// reconcile is upstream's updateStatefulSet: it creates missing replicas,
// replaces failed ones, fixes identities and claims, deletes condemned
// pods (beyond the ordinal range) and rolls pods to the update revision,
// OrderedReady one pod at a time in ordinal order, Parallel all at once.
func (c *Controller) reconcile(ctx context.Context, set *appsv1.StatefulSet, current, update *appsv1.ControllerRevision, collisionCount int32, pods []*corev1.Pod) (*appsv1.StatefulSetStatus, error) {
	now := c.now()
	currentSet, err := ApplyRevision(set, current)
	if err != nil {
		return nil, err
	}
	updateSet, err := ApplyRevision(set, update)
	if err != nil {
		return nil, err
	}
	st := &appsv1.StatefulSetStatus{
		ObservedGeneration: set.Generation, CurrentRevision: current.Name, UpdateRevision: update.Name,
		CollisionCount: &collisionCount,
	}
	minReady := set.Spec.MinReadySeconds
	computeStatus(st, minReady, now, current, update, pods)

	n := replicasOf(set)
	replicas := make([]*corev1.Pod, n)
	var condemned []*corev1.Pod
	start, end := startOrdinal(set), endOrdinal(set)
	for _, p := range pods {
		if podInOrdinalRange(p, set) {
			replicas[getOrdinal(p)-start] = p
		} else if getOrdinal(p) >= 0 {
			condemned = append(condemned, p)
		}
	}
	for ord := start; ord <= end; ord++ {
		if replicas[ord-start] == nil {
			replicas[ord-start] = newVersionedPod(currentSet, updateSet, current.Name, update.Name, ord)
		}
	}
	sort.Sort(byOrdinalDesc(condemned))

	var firstUnavailable *corev1.Pod
	for _, p := range replicas {
		if isUnavailable(p, minReady, now) {
			firstUnavailable = p
			break
		}
	}
	if firstUnavailable == nil {
		for i := len(condemned) - 1; i >= 0; i-- {
			if isUnavailable(condemned[i], minReady, now) {
				firstUnavailable = condemned[i]
				break
			}
		}
	}
	if set.DeletionTimestamp != nil {
		return st, nil
	}
	monotonic := !allowsBurst(set)
	finish := func(err error) (*appsv1.StatefulSetStatus, error) {
		computeStatus(st, minReady, now, current, update, replicas, condemned)
		return st, err
	}

	if exit, err := runForAll(replicas, func(i int) (bool, error) {
		return c.processReplica(ctx, set, updateSet, monotonic, replicas, i, now)
	}, monotonic); exit || err != nil {
		return finish(err)
	}
	if exit, err := runForAll(condemned, func(i int) (bool, error) {
		ok, err := c.claimsMatchRetentionPolicy(updateSet, condemned[i])
		if err != nil {
			return true, err
		}
		if !ok {
			if err := c.updateClaimsForRetentionPolicy(ctx, updateSet, condemned[i]); err != nil {
				return true, err
			}
		}
		return false, nil
	}, monotonic); exit || err != nil {
		return finish(err)
	}
	if exit, err := runForAll(condemned, func(i int) (bool, error) {
		p := condemned[i]
		if isTerminating(p) {
			return monotonic, nil // OrderedReady waits for it to go
		}
		if monotonic && p != firstUnavailable && (!isRunningAndReady(p) || !isRunningAndAvailable(p, minReady, now)) {
			return true, nil // wait for the unhealthy pod to recover first
		}
		return true, c.deletePod(ctx, set, p)
	}, monotonic); exit || err != nil {
		return finish(err)
	}
	computeStatus(st, minReady, now, current, update, replicas, condemned)

	if set.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return st, nil
	}
	return c.rollingUpdate(ctx, set, replicas, update, st, now)
}

// rollingUpdate deletes pods not at the update revision, from the highest
// ordinal down to the partition, keeping at most maxUnavailable replicas
// unavailable (MaxUnavailableStatefulSet, on by default).
func (c *Controller) rollingUpdate(ctx context.Context, set *appsv1.StatefulSet, replicas []*corev1.Pod, update *appsv1.ControllerRevision, st *appsv1.StatefulSetStatus, now time.Time) (*appsv1.StatefulSetStatus, error) {
	updateMin := 0
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		updateMin = int(*ru.Partition)
	}
	maxUnavail, err := maxUnavailable(set)
	if err != nil {
		return st, err
	}
	unavailable := 0
	for _, p := range replicas {
		if isUnavailable(p, set.Spec.MinReadySeconds, now) {
			unavailable++
		}
	}
	if unavailable >= maxUnavail {
		return st, nil
	}
	budget := maxUnavail - unavailable
	for target := len(replicas) - 1; target >= updateMin && budget > 0; target-- {
		p := replicas[target]
		if podRevision(p) != update.Name && !isTerminating(p) {
			if err := c.deletePod(ctx, set, p); err != nil && !apierrors.IsNotFound(err) {
				return st, err
			}
			budget--
			if podRevision(p) == st.CurrentRevision {
				st.CurrentReplicas--
			}
		}
	}
	return st, nil
}

// processReplica handles replica i; true means stop here (OrderedReady
// waits, or an error).
func (c *Controller) processReplica(ctx context.Context, set, updateSet *appsv1.StatefulSet, monotonic bool, replicas []*corev1.Pod, i int, now time.Time) (bool, error) {
	p := replicas[i]
	if isTerminal(p) {
		// A failed or succeeded replica is deleted, then recreated.
		if p.DeletionTimestamp == nil {
			if err := c.deletePod(ctx, set, p); err != nil {
				return true, err
			}
		}
		return true, nil
	}
	if !isCreated(p) {
		stale, err := c.podClaimIsStale(set, p)
		if err != nil || stale {
			return true, err // a claim of a deleted pod awaits the GC
		}
		if err := c.createPod(ctx, set, p); err != nil {
			return true, err
		}
		// OrderedReady waits for it; Parallel goes on with the next (the
		// new pod's identity and claims are right by construction).
		return monotonic, nil
	}
	if isPending(p) {
		if err := c.createClaims(ctx, set, p); err != nil {
			return true, err
		}
		if err := c.updateClaimsForRetentionPolicy(ctx, set, p); err != nil {
			return true, err
		}
	}
	if monotonic && (isTerminating(p) || !isRunningAndReady(p) || !isRunningAndAvailable(p, set.Spec.MinReadySeconds, now)) {
		return true, nil
	}
	match, err := c.claimsMatchRetentionPolicy(updateSet, p)
	if err != nil {
		match = true
	}
	if identityMatches(set, p) && storageMatches(set, p) && match {
		return false, nil
	}
	return false, c.updatePod(ctx, updateSet, p.DeepCopy())
}

// recordPodEvent records upstream's Successful<Verb>/Failed<Verb> events.
func (c *Controller) recordPodEvent(verb string, set *appsv1.StatefulSet, p *corev1.Pod, err error) {
	title := strings.ToUpper(verb[:1]) + verb[1:]
	if err == nil {
		c.cfg.Recorder.Event(set, corev1.EventTypeNormal, "Successful"+title,
			fmt.Sprintf("%s Pod %s in StatefulSet %s successful", verb, p.Name, set.Name))
		return
	}
	c.cfg.Recorder.Event(set, corev1.EventTypeWarning, "Failed"+title,
		fmt.Sprintf("%s Pod %s in StatefulSet %s failed error: %s", verb, p.Name, set.Name, err))
}

func (c *Controller) recordClaimEvent(verb string, set *appsv1.StatefulSet, p *corev1.Pod, claim string, err error) {
	title := strings.ToUpper(verb[:1]) + verb[1:]
	if err == nil {
		c.cfg.Recorder.Event(set, corev1.EventTypeNormal, "Successful"+title,
			fmt.Sprintf("%s Claim %s Pod %s in StatefulSet %s success", verb, claim, p.Name, set.Name))
		return
	}
	c.cfg.Recorder.Event(set, corev1.EventTypeWarning, "Failed"+title,
		fmt.Sprintf("%s Claim %s for Pod %s in StatefulSet %s failed error: %s", verb, claim, p.Name, set.Name, err))
}

// createPod creates the pod's claims, then the pod, then points the
// claims' owner references as the retention policy wants.
func (c *Controller) createPod(ctx context.Context, set *appsv1.StatefulSet, p *corev1.Pod) error {
	if err := c.createClaims(ctx, set, p); err != nil {
		c.recordPodEvent("create", set, p, err)
		return err
	}
	created, err := c.pods.Namespace(set.Namespace).Create(ctx, p, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return err
	}
	if err == nil {
		if err := c.updateClaimsForRetentionPolicy(ctx, set, created); err != nil {
			c.recordPodEvent("update", set, p, err)
			return err
		}
	}
	c.recordPodEvent("create", set, p, err)
	return err
}

func (c *Controller) updatePod(ctx context.Context, set *appsv1.StatefulSet, p *corev1.Pod) error {
	var err error
	attempted := false
	for range 3 {
		consistent := true
		if !identityMatches(set, p) {
			updateIdentity(set, p)
			consistent = false
		}
		if !storageMatches(set, p) {
			updateStorage(set, p)
			consistent = false
			if err = c.createClaims(ctx, set, p); err != nil {
				c.recordPodEvent("update", set, p, err)
				return err
			}
		}
		if ok, merr := c.claimsMatchRetentionPolicy(set, p); merr != nil {
			c.recordPodEvent("update", set, p, merr)
			return merr
		} else if !ok {
			if err = c.updateClaimsForRetentionPolicy(ctx, set, p); err != nil {
				c.recordPodEvent("update", set, p, err)
				return err
			}
			consistent = false
		}
		if consistent {
			err = nil
			break
		}
		attempted = true
		if _, err = c.pods.Namespace(p.Namespace).Update(ctx, p, metav1.UpdateOptions{}); err == nil || !apierrors.IsConflict(err) {
			break
		}
		fresh, gerr := c.pods.Namespace(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if gerr != nil {
			err = gerr
			break
		}
		p = fresh
	}
	if attempted {
		c.recordPodEvent("update", set, p, err)
	}
	return err
}

func (c *Controller) deletePod(ctx context.Context, set *appsv1.StatefulSet, p *corev1.Pod) error {
	err := c.pods.Namespace(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{})
	c.recordPodEvent("delete", set, p, err)
	return err
}

// createClaims creates the pod's missing claims; a claim being deleted is
// an error (the pod must wait for it to go).
func (c *Controller) createClaims(ctx context.Context, set *appsv1.StatefulSet, p *corev1.Pod) error {
	var errs []error
	for _, claim := range claimsFor(set, p) {
		existing, err := c.pvcIn.Lister().Namespace(claim.Namespace).Get(claim.Name)
		switch {
		case apierrors.IsNotFound(err):
			_, err := c.pvcs.Namespace(claim.Namespace).Create(ctx, &claim, metav1.CreateOptions{})
			if err != nil {
				errs = append(errs, fmt.Errorf("failed to create PVC %s: %w", claim.Name, err))
			}
			if err == nil || !apierrors.IsAlreadyExists(err) {
				c.recordClaimEvent("create", set, p, claim.Name, err)
			}
		case err != nil:
			errs = append(errs, fmt.Errorf("failed to retrieve PVC %s: %w", claim.Name, err))
			c.recordClaimEvent("create", set, p, claim.Name, err)
		case existing.DeletionTimestamp != nil:
			errs = append(errs, fmt.Errorf("pvc %s is being deleted", claim.Name))
		}
	}
	return errors.Join(errs...)
}

func (c *Controller) claimsMatchRetentionPolicy(set *appsv1.StatefulSet, p *corev1.Pod) (bool, error) {
	for _, want := range claimsFor(set, p) {
		claim, err := c.pvcIn.Lister().Namespace(set.Namespace).Get(want.Name)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return false, fmt.Errorf("could not retrieve claim %s for %s when checking PVC deletion policy", want.Name, p.Name)
		case !claimOwnerUpToDate(claim, set, p):
			return false, nil
		}
	}
	return true, nil
}

func (c *Controller) updateClaimsForRetentionPolicy(ctx context.Context, set *appsv1.StatefulSet, p *corev1.Pod) error {
	for _, want := range claimsFor(set, p) {
		claim, err := c.pvcIn.Lister().Namespace(set.Namespace).Get(want.Name)
		switch {
		case apierrors.IsNotFound(err):
			continue // picked up next time
		case err != nil:
			return fmt.Errorf("could not retrieve claim %s for %s when checking PVC deletion policy: %w", want.Name, p.Name, err)
		}
		if hasUnexpectedController(claim, set, p) {
			c.cfg.Recorder.Event(set, corev1.EventTypeWarning, "ConflictingController",
				fmt.Sprintf("PersistentVolumeClaim %s has a conflicting OwnerReference that acts as a manging controller, the retention policy is ignored for this claim", want.Name))
		}
		if claimOwnerUpToDate(claim, set, p) {
			continue
		}
		claim = claim.DeepCopy()
		updateClaimOwnerRefs(claim, set, p)
		_, err = c.pvcs.Namespace(claim.Namespace).Update(ctx, claim, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			// The cache lags a write of ours: decide again on the live claim.
			if claim, err = c.pvcs.Namespace(claim.Namespace).Get(ctx, claim.Name, metav1.GetOptions{}); err == nil && !claimOwnerUpToDate(claim, set, p) {
				updateClaimOwnerRefs(claim, set, p)
				_, err = c.pvcs.Namespace(claim.Namespace).Update(ctx, claim, metav1.UpdateOptions{})
			}
		}
		if err != nil {
			return fmt.Errorf("could not update claim %s for delete policy ownerRefs: %w", want.Name, err)
		}
	}
	return nil
}

// podClaimIsStale: with whenScaled=Delete, a claim still owned by an
// earlier pod of this ordinal is about to be collected; the pod waits.
func (c *Controller) podClaimIsStale(set *appsv1.StatefulSet, p *corev1.Pod) (bool, error) {
	if retentionPolicy(set).WhenScaled == appsv1.RetainPersistentVolumeClaimRetentionPolicyType {
		return false, nil
	}
	for _, want := range claimsFor(set, p) {
		claim, err := c.pvcIn.Lister().Namespace(want.Namespace).Get(want.Name)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return false, err
		case hasStaleOwnerRef(claim, p, podKind):
			return true, nil
		}
	}
	return false, nil
}

// updateStatus completes a finished rolling update and writes the status
// when it changed.
func (c *Controller) updateStatus(ctx context.Context, set *appsv1.StatefulSet, st *appsv1.StatefulSetStatus) error {
	completeRollingUpdate(set, st)
	if !inconsistentStatus(set, st) {
		return nil
	}
	cur := set.DeepCopy()
	var err error
	for i := range 2 {
		cur.Status = *st
		if _, err = c.sets.Namespace(cur.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err == nil || i == 1 || !apierrors.IsConflict(err) {
			break
		}
		fresh, gerr := c.sets.Namespace(cur.Namespace).Get(ctx, cur.Name, metav1.GetOptions{})
		if gerr != nil {
			return gerr
		}
		cur = fresh
	}
	return err
}
