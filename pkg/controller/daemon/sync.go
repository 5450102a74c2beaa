package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/controllerref"
	"github.com/skiff-sh/skiff/pkg/controller/internal/history"
	"github.com/skiff-sh/skiff/pkg/controller/internal/podutil"
)

// Sync reconciles one DaemonSet (key "namespace/name"): revisions, one pod
// per eligible node (when expectations allow), the rolling update, history
// cleanup and status.
func (c *Controller) Sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	ds, err := c.dsIn.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.Expectations.Delete(key)
		return nil
	}
	if err != nil {
		return err
	}
	nodes, err := c.nodeIn.Lister().List(labels.Everything())
	if err != nil {
		return err
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	if ds.Spec.Selector == nil || (len(ds.Spec.Selector.MatchLabels) == 0 && len(ds.Spec.Selector.MatchExpressions) == 0) {
		c.cfg.Recorder.Eventf(ds, corev1.EventTypeWarning, SelectingAllReason, "This daemon set is selecting all pods. A non-empty selector is required.")
		return nil
	}
	if ds.DeletionTimestamp != nil {
		return nil
	}
	cur, old, err := c.constructHistory(ctx, ds)
	if err != nil {
		return fmt.Errorf("failed to construct revisions of DaemonSet: %w", err)
	}
	hash := cur.Labels[HashLabel]
	if !c.Expectations.Satisfied(key) {
		return c.updateStatus(ctx, ds, nodes, hash, false)
	}
	err = c.update(ctx, ds, nodes, hash, key, old)
	statusErr := c.updateStatus(ctx, ds, nodes, hash, true)
	if err != nil {
		return err
	}
	return statusErr
}

func (c *Controller) update(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, hash, key string, old []*appsv1.ControllerRevision) error {
	if err := c.manage(ctx, ds, nodes, hash); err != nil {
		return err
	}
	if c.Expectations.Satisfied(key) && ds.Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if err := c.rollingUpdate(ctx, ds, nodes, hash); err != nil {
			return err
		}
	}
	if err := c.cleanupHistory(ctx, ds, old); err != nil {
		return fmt.Errorf("failed to clean up revisions of DaemonSet: %w", err)
	}
	return nil
}

func (c *Controller) canAdopt(ds *appsv1.DaemonSet) func(context.Context) error {
	return controllerref.RecheckDeletionTimestamp(ds, func(ctx context.Context) (metav1.Object, error) {
		return c.dss.Namespace(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{})
	})
}

// daemonPods claims the DaemonSet's pods (adopting orphans its selector
// matches, releasing owned pods it no longer matches).
func (c *Controller) daemonPods(ctx context.Context, ds *appsv1.DaemonSet) ([]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		return nil, err
	}
	all, err := controllerref.Controlled[*corev1.Pod](c.podIn.Informer().GetIndexer(), ds.Namespace, ds.UID, true)
	if err != nil {
		return nil, err
	}
	m := &controllerref.Manager{Controller: ds, Kind: controllerKind, Selector: sel, CanAdopt: c.canAdopt(ds),
		Patch: controllerref.PatcherFor(c.pods)}
	return controllerref.Claim(ctx, m, all)
}

// nodesToDaemonPods maps node names to the DaemonSet's pods there (pods
// that terminated and are being deleted left out unless includeDeletedTerminal).
func (c *Controller) nodesToDaemonPods(ctx context.Context, ds *appsv1.DaemonSet, includeDeletedTerminal bool) (map[string][]*corev1.Pod, error) {
	pods, err := c.daemonPods(ctx, ds)
	if err != nil {
		return nil, err
	}
	out := map[string][]*corev1.Pod{}
	for _, p := range pods {
		if !includeDeletedTerminal && podutil.IsPodTerminal(p) && p.DeletionTimestamp != nil {
			continue
		}
		node, err := targetNodeName(p)
		if err != nil {
			continue
		}
		out[node] = append(out[node], p)
	}
	return out, nil
}

// byCreationAndPhase: scheduled pods first, then oldest, then name.
func byCreationAndPhase(pods []*corev1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		if (a.Spec.NodeName != "") != (b.Spec.NodeName != "") {
			return a.Spec.NodeName != ""
		}
		if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.Name < b.Name
		}
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	})
}

func (c *Controller) manage(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, hash string) error {
	byNode, err := c.nodesToDaemonPods(ctx, ds, false)
	if err != nil {
		return fmt.Errorf("couldn't get node to daemon pod mapping for daemon set %q: %w", ds.Name, err)
	}
	var create, del []string
	running := map[string]bool{}
	for _, n := range nodes {
		running[n.Name] = true
		cr, dl := c.podsShouldBeOnNode(n, byNode, ds, hash)
		create = append(create, cr...)
		del = append(del, dl...)
	}
	// Pods bound for nodes that are gone and never scheduled go too.
	for node, pods := range byNode {
		if running[node] {
			continue
		}
		for _, p := range pods {
			if p.Spec.NodeName == "" {
				del = append(del, p.Name)
			}
		}
	}
	return c.syncNodes(ctx, ds, del, create, hash)
}

// podsShouldBeOnNode decides for one node: create a pod, delete failed,
// succeeded, duplicate or misplaced ones (upstream's, surge included).
func (c *Controller) podsShouldBeOnNode(node *corev1.Node, byNode map[string][]*corev1.Pod, ds *appsv1.DaemonSet, hash string) (create, del []string) {
	shouldRun, shouldContinue := NodeShouldRunDaemonPod(node, ds)
	pods, exists := byNode[node.Name]
	now := c.cfg.Clock.Now()
	switch {
	case shouldRun && !exists:
		create = append(create, node.Name)
	case shouldContinue:
		var live []*corev1.Pod
		for _, p := range pods {
			if p.DeletionTimestamp != nil {
				continue
			}
			switch p.Status.Phase {
			case corev1.PodFailed:
				// Deleted (and so recreated) with a per-node back-off.
				key := fmt.Sprintf("%s/%d/%s", ds.UID, ds.Status.ObservedGeneration, node.Name)
				if c.backoff.inBackoffSinceUpdate(key, now) {
					c.queue.AddAfter(keyOf(ds), c.backoff.get(key))
					continue
				}
				c.backoff.next(key, now)
				c.cfg.Recorder.Eventf(ds, corev1.EventTypeWarning, FailedDaemonPodReason,
					"Found failed daemon pod %s/%s on node %s, will try to kill it", p.Namespace, p.Name, node.Name)
				del = append(del, p.Name)
			case corev1.PodSucceeded:
				c.cfg.Recorder.Eventf(ds, corev1.EventTypeNormal, SucceededDaemonPodReason,
					"Found succeeded daemon pod %s/%s on node %s, will try to delete it", p.Namespace, p.Name, node.Name)
				del = append(del, p.Name)
			default:
				live = append(live, p)
			}
		}
		if !allowsSurge(ds) {
			if len(live) > 1 {
				byCreationAndPhase(live)
				for _, p := range live[1:] {
					del = append(del, p.Name)
				}
			}
			break
		}
		if len(live) <= 1 {
			if len(live) == 0 && shouldRun {
				create = append(create, node.Name)
			}
			break
		}
		// Surge: keep the oldest new and oldest old pod; the old one goes
		// once the new one is available (or if it is not ready).
		byCreationAndPhase(live)
		var oldestNew, oldestOld *corev1.Pod
		for _, p := range live {
			if p.Labels[HashLabel] == hash {
				if oldestNew == nil {
					oldestNew = p
					continue
				}
			} else if oldestOld == nil {
				oldestOld = p
				continue
			}
			del = append(del, p.Name)
		}
		if oldestNew != nil && oldestOld != nil {
			switch {
			case !podutil.IsPodReady(oldestOld):
				del = append(del, oldestOld.Name)
			case podutil.IsPodAvailable(oldestNew, ds.Spec.MinReadySeconds, now):
				del = append(del, oldestOld.Name)
			}
		}
	case exists:
		for _, p := range pods {
			if p.DeletionTimestamp == nil {
				del = append(del, p.Name)
			}
		}
	}
	return create, del
}

// podTemplate is the template of new daemon pods: daemon tolerations, the
// template generation and hash labels.
func podTemplate(ds *appsv1.DaemonSet, hash string) *corev1.PodTemplateSpec {
	t := ds.Spec.Template.DeepCopy()
	addDaemonTolerations(&t.Spec)
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	if g := templateGeneration(ds); g != nil {
		t.Labels[TemplateGenerationLabel] = fmt.Sprint(*g)
	}
	if hash != "" {
		t.Labels[HashLabel] = hash
	}
	return t
}

// syncNodes creates a pod for each node of create (slow-start batches) and
// deletes the pods named in del, at most BurstReplicas of each, under
// expectations.
func (c *Controller) syncNodes(ctx context.Context, ds *appsv1.DaemonSet, del, create []string, hash string) error {
	key := keyOf(ds)
	create = create[:min(len(create), c.cfg.BurstReplicas)]
	del = del[:min(len(del), c.cfg.BurstReplicas)]
	podKeys := make([]string, len(del))
	for i, n := range del {
		podKeys[i] = ds.Namespace + "/" + n
	}
	c.Expectations.SetExpectations(key, len(create), podKeys)
	var errs []error
	var mu sync.Mutex
	tmpl := podTemplate(ds, hash)
	var attempted atomic.Int32
	_, err := podutil.SlowStartBatch(len(create), 1, func(i int) error {
		attempted.Add(1)
		if err := c.createPod(ctx, ds, podForNode(ds, tmpl, create[i])); err != nil {
			if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
				return nil
			}
			c.Expectations.CreationObserved(key)
			return err
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
		// Creations never issued after the failing batch are not expected.
		if skipped := len(create) - int(attempted.Load()); skipped > 0 {
			c.Expectations.LowerCreations(key, skipped)
		}
	}
	var wg sync.WaitGroup
	for i, name := range del {
		wg.Go(func() {
			if err := c.deletePodAPI(ctx, ds, name); err != nil {
				c.Expectations.DeletionObserved(key, podKeys[i])
				if !apierrors.IsNotFound(err) {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// NewPod is the pod the controller creates for ds on node, whose template
// hash is hash: the template with the daemon tolerations, the hash and
// template generation labels and a required metadata.name node affinity,
// generateName "<ds>-", ds as controller (upstream's CreatePods).
func NewPod(ds *appsv1.DaemonSet, node, hash string) *corev1.Pod {
	return podForNode(ds, podTemplate(ds, hash), node)
}

func podForNode(ds *appsv1.DaemonSet, tmpl *corev1.PodTemplateSpec, node string) *corev1.Pod {
	t := tmpl.DeepCopy()
	t.Spec.Affinity = nodeNameAffinity(t.Spec.Affinity, node)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       ds.Namespace,
			GenerateName:    ds.Name + "-",
			Labels:          t.Labels,
			Annotations:     t.Annotations,
			Finalizers:      t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{*controllerref.NewControllerRef(ds, controllerKind)},
		},
		Spec: t.Spec,
	}
}

func (c *Controller) createPod(ctx context.Context, ds *appsv1.DaemonSet, p *corev1.Pod) error {
	created, err := c.pods.Namespace(ds.Namespace).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			c.cfg.Recorder.Eventf(ds, corev1.EventTypeWarning, FailedCreateReason, "Error creating: %v", err)
		}
		return err
	}
	c.cfg.Recorder.Eventf(ds, corev1.EventTypeNormal, SuccessfulCreateReason, "Created pod: %v", created.Name)
	return nil
}

func (c *Controller) deletePodAPI(ctx context.Context, ds *appsv1.DaemonSet, name string) error {
	err := c.pods.Namespace(ds.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil {
		if !apierrors.IsNotFound(err) {
			c.cfg.Recorder.Eventf(ds, corev1.EventTypeWarning, FailedDeleteReason, "Error deleting: %v", err)
		}
		return err
	}
	c.cfg.Recorder.Eventf(ds, corev1.EventTypeNormal, SuccessfulDeleteReason, "Deleted pod: %v", name)
	return nil
}

// updateStatus computes and writes the status counts (observedGeneration
// only after a full sync).
func (c *Controller) updateStatus(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, hash string, updateObservedGen bool) error {
	byNode, err := c.nodesToDaemonPods(ctx, ds, false)
	if err != nil {
		return fmt.Errorf("couldn't get node to daemon pod mapping for daemon set %q: %w", ds.Name, err)
	}
	now := c.cfg.Clock.Now()
	gen := templateGeneration(ds)
	var desired, current, mis, ready, updated, available int32
	for _, n := range nodes {
		shouldRun, _ := NodeShouldRunDaemonPod(n, ds)
		pods := byNode[n.Name]
		scheduled := len(pods) > 0
		if !shouldRun {
			if scheduled {
				mis++
			}
			continue
		}
		desired++
		if !scheduled {
			continue
		}
		current++
		byCreationAndPhase(pods)
		p := pods[0]
		if podutil.IsPodReady(p) {
			ready++
			if podutil.IsPodAvailable(p, ds.Spec.MinReadySeconds, now) {
				available++
			}
		}
		if isPodUpdated(p, hash, gen) {
			updated++
		}
	}
	st := ds.Status
	if st.DesiredNumberScheduled != desired || st.CurrentNumberScheduled != current || st.NumberMisscheduled != mis ||
		st.NumberReady != ready || st.UpdatedNumberScheduled != updated || st.NumberAvailable != available ||
		st.NumberUnavailable != desired-available || st.ObservedGeneration < ds.Generation {
		toUpdate := ds.DeepCopy()
		for i := 0; ; i++ {
			if updateObservedGen {
				toUpdate.Status.ObservedGeneration = ds.Generation
			}
			s := &toUpdate.Status
			s.DesiredNumberScheduled, s.CurrentNumberScheduled, s.NumberMisscheduled = desired, current, mis
			s.NumberReady, s.UpdatedNumberScheduled, s.NumberAvailable, s.NumberUnavailable = ready, updated, available, desired-available
			_, err = c.dss.Namespace(ds.Namespace).UpdateStatus(ctx, toUpdate, metav1.UpdateOptions{})
			if err == nil || i >= statusUpdateRetries {
				break
			}
			if toUpdate, err = c.dss.Namespace(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		if err != nil {
			return fmt.Errorf("error storing status for daemon set %s: %w", ds.Name, err)
		}
	}
	if ds.Spec.MinReadySeconds > 0 && ready != available {
		c.queue.AddAfter(keyOf(ds), time.Duration(ds.Spec.MinReadySeconds)*time.Second)
	}
	return nil
}

// rollingUpdate replaces old pods: without surge it deletes old pods while
// at most maxUnavailable nodes are unavailable (a new pod comes with the
// next manage); with surge it starts new pods next to old ones on at most
// maxSurge nodes and deletes each old pod once its replacement is
// available (upstream's).
func (c *Controller) rollingUpdate(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, hash string) error {
	byNode, err := c.nodesToDaemonPods(ctx, ds, false)
	if err != nil {
		return fmt.Errorf("couldn't get node to daemon pod mapping for daemon set %q: %w", ds.Name, err)
	}
	nodeByName := map[string]*corev1.Node{}
	desired := 0
	for _, n := range nodes {
		nodeByName[n.Name] = n
		if run, _ := NodeShouldRunDaemonPod(n, ds); run {
			desired++
			if _, ok := byNode[n.Name]; !ok {
				byNode[n.Name] = nil
			}
		}
	}
	maxUnavail, err := unavailableCount(ds, desired)
	if err != nil {
		return fmt.Errorf("invalid value for MaxUnavailable: %w", err)
	}
	maxSurge, err := surgeCount(ds, desired)
	if err != nil {
		return fmt.Errorf("invalid value for MaxSurge: %w", err)
	}
	if desired > 0 && maxUnavail == 0 && maxSurge == 0 {
		maxUnavail = 1
	}
	now := c.cfg.Clock.Now()
	gen := templateGeneration(ds)
	avail := func(p *corev1.Pod) bool { return podutil.IsPodAvailable(p, ds.Spec.MinReadySeconds, now) }
	names := make([]string, 0, len(byNode))
	for n := range byNode {
		names = append(names, n)
	}
	sort.Strings(names) // deterministic order (upstream ranges over a map)

	if maxSurge == 0 {
		unavailable := 0
		var allowed, candidates []string
		for _, node := range names {
			newPod, oldPod, ok := findUpdatedPodsOnNode(byNode[node], hash, gen)
			if !ok {
				unavailable++ // more than one of a kind: manage cleans up
				continue
			}
			switch {
			case oldPod == nil && newPod == nil, oldPod != nil && newPod != nil:
				unavailable++
			case newPod != nil:
				if !avail(newPod) {
					unavailable++
				}
			default:
				switch {
				case !avail(oldPod):
					allowed = append(allowed, oldPod.Name) // already unavailable: replace at once
					unavailable++
				case unavailable >= maxUnavail:
				default:
					candidates = append(candidates, oldPod.Name)
				}
			}
		}
		remaining := max(maxUnavail-unavailable, 0)
		remaining = min(remaining, len(candidates))
		return c.syncNodes(ctx, ds, append(allowed, candidates[:remaining]...), nil, hash)
	}

	var oldToDelete, shouldNotRun, candidateNew, allowedNew []string
	numSurge, numAvailable := 0, 0
	for _, node := range names {
		newPod, oldPod, ok := findUpdatedPodsOnNode(byNode[node], hash, gen)
		if !ok {
			numSurge++
			continue
		}
		if oldPod != nil {
			if avail(oldPod) {
				numAvailable++
			}
		} else if newPod != nil && avail(newPod) {
			numAvailable++
		}
		switch {
		case oldPod == nil:
		case newPod == nil:
			n := nodeByName[node]
			run := false
			if n != nil {
				run, _ = NodeShouldRunDaemonPod(n, ds)
			}
			switch {
			case !avail(oldPod):
				if !run {
					oldToDelete = append(oldToDelete, oldPod.Name)
					continue
				}
				allowedNew = append(allowedNew, node)
			case !run:
				shouldNotRun = append(shouldNotRun, oldPod.Name)
			case numSurge >= maxSurge:
			default:
				candidateNew = append(candidateNew, node)
			}
		default:
			if !avail(newPod) {
				numSurge++
				continue
			}
			oldToDelete = append(oldToDelete, oldPod.Name)
		}
	}
	remaining := max(maxSurge-numSurge, 0)
	if deletable := numAvailable - desired; deletable > 0 {
		oldToDelete = append(oldToDelete, shouldNotRun[:min(deletable, len(shouldNotRun))]...)
	}
	remaining = min(remaining, len(candidateNew))
	return c.syncNodes(ctx, ds, oldToDelete, append(allowedNew, candidateNew[:remaining]...), hash)
}

// findUpdatedPodsOnNode splits a node's live pods into the new and the old
// one; ok is false when there are several of either.
func findUpdatedPodsOnNode(pods []*corev1.Pod, hash string, gen *int64) (newPod, oldPod *corev1.Pod, ok bool) {
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if isPodUpdated(p, hash, gen) {
			if newPod != nil {
				return nil, nil, false
			}
			newPod = p
		} else {
			if oldPod != nil {
				return nil, nil, false
			}
			oldPod = p
		}
	}
	return newPod, oldPod, true
}

// Patch is the DaemonSet's revision data (upstream's getPatch).
func Patch(ds *appsv1.DaemonSet) ([]byte, error) { return history.TemplatePatch(ds) }

// Hash is the DaemonSet's current template hash (upstream's
// pod-template-hash of its template and status.collisionCount): its
// revision is "<ds>-<hash>" and its pods carry controller-revision-hash=<hash>.
func Hash(ds *appsv1.DaemonSet) string {
	return history.ComputeHash(&ds.Spec.Template, ds.Status.CollisionCount)
}

// constructHistory claims the DaemonSet's revisions and returns the one
// matching its template (created if none: "<ds>-<pod-template-hash>",
// upstream's snapshot) and the others.
func (c *Controller) constructHistory(ctx context.Context, ds *appsv1.DaemonSet) (cur *appsv1.ControllerRevision, old []*appsv1.ControllerRevision, err error) {
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		return nil, nil, err
	}
	revs, err := c.history.Claim(ctx, ds, controllerKind, sel, c.canAdopt(ds))
	if err != nil {
		return nil, nil, err
	}
	patch, err := Patch(ds)
	if err != nil {
		return nil, nil, err
	}
	var curs []*appsv1.ControllerRevision
	for _, r := range revs {
		if _, ok := r.Labels[HashLabel]; !ok {
			// Label it with its name (a patch: the cached copy may predate
			// its adoption a moment ago).
			patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{HashLabel: r.Name}}})
			if r, err = c.revs.Namespace(ds.Namespace).Patch(ctx, r.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return nil, nil, err
			}
		}
		if bytes.Equal(patch, r.Data.Raw) {
			curs = append(curs, r)
		} else {
			old = append(old, r)
		}
	}
	next := history.MaxRevision(old) + 1
	if len(curs) == 0 {
		cur, err = c.snapshot(ctx, ds, patch, next)
		return cur, old, err
	}
	if cur, err = c.dedupCurHistories(ctx, ds, curs); err != nil {
		return nil, nil, err
	}
	if cur.Revision < next {
		up := cur.DeepCopy()
		up.Revision = next
		if _, err = c.revs.Namespace(ds.Namespace).Update(ctx, up, metav1.UpdateOptions{}); err != nil {
			return nil, nil, err
		}
	}
	return cur, old, nil
}

// snapshot creates the revision of the DaemonSet's template; a name taken
// by another template bumps status.collisionCount and fails (retried).
func (c *Controller) snapshot(ctx context.Context, ds *appsv1.DaemonSet, patch []byte, revision int64) (*appsv1.ControllerRevision, error) {
	hash := Hash(ds)
	l := map[string]string{}
	for k, v := range ds.Spec.Template.Labels {
		l[k] = v
	}
	l[HashLabel] = hash
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name: ds.Name + "-" + hash, Namespace: ds.Namespace, Labels: l, Annotations: ds.Annotations,
			OwnerReferences: []metav1.OwnerReference{*controllerref.NewControllerRef(ds, controllerKind)},
		},
		Data:     runtime.RawExtension{Raw: patch},
		Revision: revision,
	}
	created, err := c.revs.Namespace(ds.Namespace).Create(ctx, cr, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return created, err
	}
	existing, gerr := c.revs.Namespace(ds.Namespace).Get(ctx, cr.Name, metav1.GetOptions{})
	if gerr != nil {
		return nil, gerr
	}
	if bytes.Equal(existing.Data.Raw, patch) {
		return existing, nil
	}
	fresh, gerr := c.dss.Namespace(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{})
	if gerr != nil {
		return nil, gerr
	}
	if !equalPtr(fresh.Status.CollisionCount, ds.Status.CollisionCount) {
		return nil, fmt.Errorf("found a stale collision count (%v, expected %v) of DaemonSet %q while processing; will retry until it is updated", ds.Status.CollisionCount, fresh.Status.CollisionCount, ds.Name)
	}
	if fresh.Status.CollisionCount == nil {
		fresh.Status.CollisionCount = new(int32)
	}
	*fresh.Status.CollisionCount++
	if _, uerr := c.dss.Namespace(ds.Namespace).UpdateStatus(ctx, fresh, metav1.UpdateOptions{}); uerr != nil {
		return nil, uerr
	}
	return nil, err
}

func equalPtr(a, b *int32) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// dedupCurHistories keeps the highest-numbered of several revisions of the
// current template, relabels pods to its hash and deletes the others.
func (c *Controller) dedupCurHistories(ctx context.Context, ds *appsv1.DaemonSet, curs []*appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	if len(curs) == 1 {
		return curs[0], nil
	}
	keep := curs[0]
	for _, r := range curs {
		if r.Revision >= keep.Revision {
			keep = r
		}
	}
	pods, err := c.daemonPods(ctx, ds)
	if err != nil {
		return nil, err
	}
	for _, p := range pods {
		if p.Labels[HashLabel] == keep.Labels[HashLabel] {
			continue
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{HashLabel: keep.Labels[HashLabel]}}})
		if _, err := c.pods.Namespace(ds.Namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return nil, err
		}
	}
	for _, r := range curs {
		if r.Name == keep.Name {
			continue
		}
		if err := c.history.Delete(ctx, r); err != nil {
			return nil, err
		}
	}
	return keep, nil
}

// cleanupHistory deletes the oldest old revisions beyond
// revisionHistoryLimit that no pod's hash names.
func (c *Controller) cleanupHistory(ctx context.Context, ds *appsv1.DaemonSet, old []*appsv1.ControllerRevision) error {
	limit := 10
	if ds.Spec.RevisionHistoryLimit != nil {
		limit = int(*ds.Spec.RevisionHistoryLimit)
	}
	toKill := len(old) - limit
	if toKill <= 0 {
		return nil
	}
	byNode, err := c.nodesToDaemonPods(ctx, ds, true)
	if err != nil {
		return err
	}
	live := map[string]bool{}
	for _, pods := range byNode {
		for _, p := range pods {
			if h := p.Labels[HashLabel]; h != "" {
				live[h] = true
			}
		}
	}
	sorted := append([]*appsv1.ControllerRevision(nil), old...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Revision < sorted[j].Revision })
	for _, r := range sorted {
		if toKill <= 0 {
			break
		}
		if live[r.Labels[HashLabel]] {
			continue
		}
		if err := c.history.Delete(ctx, r); err != nil {
			return err
		}
		toKill--
	}
	return nil
}
