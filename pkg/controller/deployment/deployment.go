package deployment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sort"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/controllerref"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
)

// maxRevHistoryLengthInChars bounds the revision-history annotation.
const maxRevHistoryLengthInChars = 2000

var controllerKind = appsv1.SchemeGroupVersion.WithKind("Deployment")

// Config configures a Controller.
type Config struct {
	Client          *client.Client
	Informers       *informers.SharedInformerFactory
	Recorder        record.EventRecorder
	Clock           clock.Clock
	Workers         int
	Logger          *slog.Logger
	MetricsProvider workqueue.MetricsProvider
}

// Controller reconciles Deployments.
type Controller struct {
	cfg   Config
	dIn   *cache.TypedInformer[*appsv1.Deployment]
	rsIn  *cache.TypedInformer[*appsv1.ReplicaSet]
	podIn *cache.TypedInformer[*corev1.Pod]
	ds    *client.Typed[*appsv1.Deployment, *appsv1.DeploymentList]
	rss   *client.Typed[*appsv1.ReplicaSet, *appsv1.ReplicaSetList]
	queue workqueue.TypedRateLimitingInterface[string]
	log   *slog.Logger
}

// New returns the Deployment controller.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("deployment: Client and Informers are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 5
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Recorder == nil {
		cfg.Recorder = &record.FakeRecorder{} // drops events
	}
	c := &Controller{
		cfg:   cfg,
		dIn:   cfg.Informers.Deployments(),
		rsIn:  cfg.Informers.ReplicaSets(),
		podIn: cfg.Informers.Pods(),
		ds:    client.For[*appsv1.Deployment, *appsv1.DeploymentList](cfg.Client),
		rss:   client.For[*appsv1.ReplicaSet, *appsv1.ReplicaSetList](cfg.Client),
		log:   cfg.Logger.With("controller", "deployment"),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "deployment", MetricsProvider: cfg.MetricsProvider}),
	}
	for _, inf := range []cache.SharedIndexInformer{c.rsIn.Informer(), c.podIn.Informer()} {
		if err := controllerref.AddControllerUIDIndex(inf); err != nil {
			return nil, err
		}
	}
	if _, err := c.dIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*appsv1.Deployment]{
		AddFunc:    func(d *appsv1.Deployment, _ bool) { c.enqueue(d) },
		UpdateFunc: func(_, d *appsv1.Deployment) { c.enqueue(d) },
		DeleteFunc: func(d cache.DeletedObject[*appsv1.Deployment]) {
			if d.Obj != nil {
				c.enqueue(d.Obj)
			}
		},
	}); err != nil {
		return nil, err
	}
	if _, err := c.rsIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*appsv1.ReplicaSet]{
		AddFunc: func(rs *appsv1.ReplicaSet, _ bool) { c.rsChanged(nil, rs) },
		UpdateFunc: func(old, cur *appsv1.ReplicaSet) {
			if old.ResourceVersion != cur.ResourceVersion {
				c.rsChanged(old, cur)
			}
		},
		DeleteFunc: func(d cache.DeletedObject[*appsv1.ReplicaSet]) {
			if d.Obj != nil {
				if dep := c.resolve(d.Obj.Namespace, metav1.GetControllerOfNoCopy(d.Obj)); dep != nil {
					c.enqueue(dep)
				}
			}
		},
	}); err != nil {
		return nil, err
	}
	if _, err := c.podIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Pod]{
		DeleteFunc: func(d cache.DeletedObject[*corev1.Pod]) {
			if d.Obj != nil {
				c.podDeleted(d.Obj)
			}
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Controller) enqueue(d *appsv1.Deployment) { c.queue.Add(d.Namespace + "/" + d.Name) }

func (c *Controller) resolve(ns string, ref *metav1.OwnerReference) *appsv1.Deployment {
	d, _ := controllerref.Resolve(ref, controllerKind.Kind, c.dIn.Lister().Namespace(ns).Get)
	return d
}

// deploymentsFor are the deployments whose selector matches an orphan RS.
func (c *Controller) deploymentsFor(rs *appsv1.ReplicaSet) []*appsv1.Deployment {
	all, _ := c.dIn.Lister().Namespace(rs.Namespace).List(labels.Everything())
	return controllerref.Selecting(all, func(d *appsv1.Deployment) *metav1.LabelSelector { return d.Spec.Selector }, rs.Labels)
}

func (c *Controller) rsChanged(old, cur *appsv1.ReplicaSet) {
	if old != nil {
		if oldRef := metav1.GetControllerOfNoCopy(old); oldRef != nil && !reflect.DeepEqual(oldRef, metav1.GetControllerOfNoCopy(cur)) {
			if d := c.resolve(old.Namespace, oldRef); d != nil {
				c.enqueue(d)
			}
		}
	}
	if ref := metav1.GetControllerOfNoCopy(cur); ref != nil {
		if d := c.resolve(cur.Namespace, ref); d != nil {
			c.enqueue(d)
		}
		return
	}
	if cur.DeletionTimestamp != nil {
		return
	}
	for _, d := range c.deploymentsFor(cur) {
		c.enqueue(d)
	}
}

// podDeleted wakes a Recreate deployment waiting for its old pods to end.
func (c *Controller) podDeleted(p *corev1.Pod) {
	ref := metav1.GetControllerOfNoCopy(p)
	if ref == nil || ref.Kind != "ReplicaSet" {
		return
	}
	rs, err := c.rsIn.Lister().Namespace(p.Namespace).Get(ref.Name)
	if err != nil || rs.UID != ref.UID {
		return
	}
	if d := c.resolve(rs.Namespace, metav1.GetControllerOfNoCopy(rs)); d != nil && d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		c.enqueue(d)
	}
}

// Run waits for the caches and runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.cfg.Informers.Start(ctx)
	if !cache.WaitForCacheSync(ctx, c.dIn.HasSynced, c.rsIn.HasSynced, c.podIn.HasSynced) {
		return ctx.Err()
	}
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, c.Sync, func(key string, err error) {
		c.log.Info("sync failed", "key", key, "err", err)
	})
	return nil
}

func (c *Controller) now() time.Time { return c.cfg.Clock.Now() }

// Sync reconciles one Deployment (key "namespace/name").
func (c *Controller) Sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	cached, err := c.dIn.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	d := cached.DeepCopy()
	if reflect.DeepEqual(d.Spec.Selector, &metav1.LabelSelector{}) {
		c.cfg.Recorder.Eventf(d, corev1.EventTypeWarning, "SelectingAll", "This deployment is selecting all pods. A non-empty selector is required.")
		if d.Status.ObservedGeneration < d.Generation {
			d.Status.ObservedGeneration = d.Generation
			_, err := c.ds.Namespace(ns).UpdateStatus(ctx, d, metav1.UpdateOptions{})
			return err
		}
		return nil
	}
	rsList, err := c.replicaSetsFor(ctx, d)
	if err != nil {
		return err
	}
	if d.DeletionTimestamp != nil {
		newRS, olds, err := c.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
		if err != nil {
			return err
		}
		return c.syncDeploymentStatus(ctx, append(olds, newRS), newRS, d)
	}
	if err := c.checkPausedConditions(ctx, d); err != nil {
		return err
	}
	if d.Spec.Paused {
		return c.sync(ctx, d, rsList)
	}
	if scaling, err := c.isScalingEvent(ctx, d, rsList); err != nil {
		return err
	} else if scaling {
		return c.sync(ctx, d, rsList)
	}
	switch d.Spec.Strategy.Type {
	case appsv1.RecreateDeploymentStrategyType:
		return c.rolloutRecreate(ctx, d, rsList)
	case appsv1.RollingUpdateDeploymentStrategyType:
		return c.rolloutRolling(ctx, d, rsList)
	}
	return fmt.Errorf("unexpected deployment strategy type: %s", d.Spec.Strategy.Type)
}

// replicaSetsFor claims the namespace's ReplicaSets for d.
func (c *Controller) replicaSetsFor(ctx context.Context, d *appsv1.Deployment) ([]*appsv1.ReplicaSet, error) {
	// d's ReplicaSets and the namespace's orphans, which it may adopt.
	all, err := controllerref.Controlled[*appsv1.ReplicaSet](c.rsIn.Informer().GetIndexer(), d.Namespace, d.UID, true)
	if err != nil {
		return nil, err
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("deployment %s/%s has invalid label selector: %v", d.Namespace, d.Name, err)
	}
	m := &controllerref.Manager{
		Controller: d, Kind: controllerKind, Selector: sel,
		CanAdopt: controllerref.RecheckDeletionTimestamp(d, func(ctx context.Context) (metav1.Object, error) {
			return c.ds.Namespace(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
		}),
		Patch: controllerref.PatcherFor(c.rss),
	}
	return controllerref.Claim(ctx, m, all)
}

// getAllReplicaSetsAndSyncRevision finds (or, if create, creates) the new
// ReplicaSet and syncs revisions.
func (c *Controller) getAllReplicaSetsAndSyncRevision(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet, create bool) (*appsv1.ReplicaSet, []*appsv1.ReplicaSet, error) {
	_, allOld := FindOldReplicaSets(d, rsList)
	newRS, err := c.getNewReplicaSet(ctx, d, rsList, allOld, create)
	return newRS, allOld, err
}

func (c *Controller) getNewReplicaSet(ctx context.Context, d *appsv1.Deployment, rsList, olds []*appsv1.ReplicaSet, create bool) (*appsv1.ReplicaSet, error) {
	existing := FindNewReplicaSet(d, rsList)
	newRevision := strconv.FormatInt(MaxRevision(olds)+1, 10)
	if existing != nil {
		rsCopy := existing.DeepCopy()
		annotationsUpdated := SetNewReplicaSetAnnotations(d, rsCopy, newRevision, true, maxRevHistoryLengthInChars)
		if annotationsUpdated || rsCopy.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
			rsCopy.Spec.MinReadySeconds = d.Spec.MinReadySeconds
			return c.rss.Namespace(rsCopy.Namespace).Update(ctx, rsCopy, metav1.UpdateOptions{})
		}
		needsUpdate := setDeploymentRevision(d, rsCopy.Annotations[RevisionAnnotation])
		if HasProgressDeadline(d) && GetCondition(d.Status, appsv1.DeploymentProgressing) == nil {
			SetCondition(&d.Status, NewCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, FoundNewRSReason, fmt.Sprintf("Found new replica set %q", rsCopy.Name), c.now()))
			needsUpdate = true
		}
		if needsUpdate {
			if err := c.updateDeploymentStatus(ctx, d); err != nil {
				return nil, err
			}
		}
		return rsCopy, nil
	}
	if !create {
		return nil, nil
	}
	tmpl := d.Spec.Template.DeepCopy()
	hash := ComputeHash(&d.Spec.Template, d.Status.CollisionCount)
	if tmpl.Labels == nil {
		tmpl.Labels = map[string]string{}
	}
	tmpl.Labels[DefaultDeploymentUniqueLabelKey] = hash
	sel := d.Spec.Selector.DeepCopy()
	if sel.MatchLabels == nil {
		sel.MatchLabels = map[string]string{}
	}
	sel.MatchLabels[DefaultDeploymentUniqueLabelKey] = hash
	zero := int32(0)
	newRS := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name:            d.Name + "-" + hash,
			Namespace:       d.Namespace,
			OwnerReferences: []metav1.OwnerReference{*controllerref.NewControllerRef(d, controllerKind)},
			Labels:          tmpl.Labels,
		},
		Spec: appsv1.ReplicaSetSpec{Replicas: &zero, MinReadySeconds: d.Spec.MinReadySeconds, Selector: sel, Template: *tmpl},
	}
	n := NewRSNewReplicas(d, append(append([]*appsv1.ReplicaSet(nil), olds...), newRS), newRS)
	newRS.Spec.Replicas = &n
	SetNewReplicaSetAnnotations(d, newRS, newRevision, false, maxRevHistoryLengthInChars)
	created, err := c.rss.Namespace(d.Namespace).Create(ctx, newRS, metav1.CreateOptions{})
	alreadyExists := false
	switch {
	case apierrors.IsAlreadyExists(err):
		alreadyExists = true
		rs, gerr := c.rsIn.Lister().Namespace(d.Namespace).Get(newRS.Name)
		if gerr != nil {
			return nil, gerr
		}
		if ref := metav1.GetControllerOfNoCopy(rs); ref != nil && ref.UID == d.UID && EqualIgnoreHash(&d.Spec.Template, &rs.Spec.Template) {
			created, err = rs, nil
			break
		}
		// A hash collision: bump collisionCount so the next sync hashes differently.
		if d.Status.CollisionCount == nil {
			d.Status.CollisionCount = new(int32)
		}
		*d.Status.CollisionCount++
		if uerr := c.updateDeploymentStatus(ctx, d); uerr != nil {
			return nil, uerr
		}
		return nil, err
	case err != nil:
		msg := fmt.Sprintf("Failed to create new replica set %q: %v", newRS.Name, err)
		if HasProgressDeadline(d) {
			SetCondition(&d.Status, NewCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, FailedRSCreateReason, msg, c.now()))
			_ = c.updateDeploymentStatus(ctx, d)
		}
		c.cfg.Recorder.Event(d, corev1.EventTypeWarning, FailedRSCreateReason, msg)
		return nil, err
	}
	if !alreadyExists && n > 0 {
		c.cfg.Recorder.Eventf(d, corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled up replica set %s from 0 to %d", created.Name, n)
	}
	needsUpdate := setDeploymentRevision(d, newRevision)
	if !alreadyExists && HasProgressDeadline(d) {
		SetCondition(&d.Status, NewCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, NewReplicaSetReason, fmt.Sprintf("Created new replica set %q", created.Name), c.now()))
		needsUpdate = true
	}
	if needsUpdate {
		if err := c.updateDeploymentStatus(ctx, d); err != nil {
			return nil, err
		}
	}
	return created, nil
}

// updateDeploymentStatus writes d's status (and, as upstream's status
// subresource keeps metadata changes, its revision annotation); d takes the
// result.
func (c *Controller) updateDeploymentStatus(ctx context.Context, d *appsv1.Deployment) error {
	out, err := c.ds.Namespace(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	*d = *out
	return nil
}

func setDeploymentRevision(d *appsv1.Deployment, revision string) bool {
	if d.Annotations[RevisionAnnotation] == revision {
		return false
	}
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	d.Annotations[RevisionAnnotation] = revision
	return true
}

func (c *Controller) checkPausedConditions(ctx context.Context, d *appsv1.Deployment) error {
	if !HasProgressDeadline(d) {
		return nil
	}
	cond := GetCondition(d.Status, appsv1.DeploymentProgressing)
	if cond != nil && cond.Reason == TimedOutReason {
		return nil
	}
	pausedExists := cond != nil && cond.Reason == PausedDeployReason
	switch {
	case d.Spec.Paused && !pausedExists:
		SetCondition(&d.Status, NewCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, PausedDeployReason, "Deployment is paused", c.now()))
	case !d.Spec.Paused && pausedExists:
		SetCondition(&d.Status, NewCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, ResumedDeployReason, "Deployment is resumed", c.now()))
	default:
		return nil
	}
	out, err := c.ds.Namespace(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	*d = *out
	return nil
}

func (c *Controller) isScalingEvent(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) (bool, error) {
	newRS, olds, err := c.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return false, err
	}
	for _, rs := range FilterActive(append(olds, newRS)) {
		desired, err := strconv.Atoi(rs.Annotations[DesiredReplicasAnnotation])
		if err != nil {
			continue
		}
		if int32(desired) != replicas(d) {
			return true, nil
		}
	}
	return false, nil
}

// sync handles scaling (and paused deployments): no new ReplicaSet.
func (c *Controller) sync(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, olds, err := c.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	if err := c.scale(ctx, d, newRS, olds); err != nil {
		return err
	}
	if d.Spec.Paused {
		if err := c.cleanupDeployment(ctx, olds, d); err != nil {
			return err
		}
	}
	return c.syncDeploymentStatus(ctx, append(olds, newRS), newRS, d)
}

// scale brings the active ReplicaSets to the deployment's size,
// proportionally during a rolling update.
func (c *Controller) scale(ctx context.Context, d *appsv1.Deployment, newRS *appsv1.ReplicaSet, olds []*appsv1.ReplicaSet) error {
	if rs := FindActiveOrLatest(newRS, olds); rs != nil {
		if rsReplicas(rs) == replicas(d) {
			return nil
		}
		_, _, err := c.scaleReplicaSetAndRecordEvent(ctx, rs, replicas(d), d)
		return err
	}
	if IsSaturated(d, newRS) {
		for _, old := range FilterActive(olds) {
			if _, _, err := c.scaleReplicaSetAndRecordEvent(ctx, old, 0, d); err != nil {
				return err
			}
		}
		return nil
	}
	if !isRollingUpdate(d) {
		return nil
	}
	plan := ProportionalScale(d, FilterActive(append(append([]*appsv1.ReplicaSet(nil), olds...), newRS)))
	for _, p := range plan {
		if _, _, err := c.scaleReplicaSet(ctx, p.RS, p.Size, d, p.Operation); err != nil {
			return err
		}
	}
	return nil
}

// ScaleStep is one ReplicaSet's new size in a proportional scale.
type ScaleStep struct {
	RS        *appsv1.ReplicaSet
	Size      int32
	Operation string // "up", "down" or ""
}

// ProportionalScale spreads the difference between the deployment's
// allowed size (replicas+maxSurge) and the active ReplicaSets' total over
// them, in proportion to their size (upstream's algorithm).
func ProportionalScale(d *appsv1.Deployment, active []*appsv1.ReplicaSet) []ScaleStep {
	allowed := int32(0)
	if replicas(d) > 0 {
		allowed = replicas(d) + MaxSurge(d)
	}
	toAdd := allowed - sumSpec(active)
	op := ""
	switch {
	case toAdd > 0:
		sort.Sort(BySizeNewer(active))
		op = "up"
	case toAdd < 0:
		sort.Sort(BySizeOlder(active))
		op = "down"
	}
	added := int32(0)
	sizes := make([]int32, len(active))
	for i, rs := range active {
		if toAdd != 0 {
			p := GetProportion(rs, d, toAdd, added)
			sizes[i] = rsReplicas(rs) + p
			added += p
		} else {
			sizes[i] = rsReplicas(rs)
		}
	}
	steps := make([]ScaleStep, len(active))
	for i, rs := range active {
		if i == 0 && toAdd != 0 {
			sizes[i] = max(sizes[i]+toAdd-added, 0)
		}
		steps[i] = ScaleStep{RS: rs, Size: sizes[i], Operation: op}
	}
	return steps
}

func (c *Controller) scaleReplicaSetAndRecordEvent(ctx context.Context, rs *appsv1.ReplicaSet, n int32, d *appsv1.Deployment) (bool, *appsv1.ReplicaSet, error) {
	if rsReplicas(rs) == n {
		return false, rs, nil
	}
	op := "up"
	if rsReplicas(rs) > n {
		op = "down"
	}
	return c.scaleReplicaSet(ctx, rs, n, d, op)
}

func (c *Controller) scaleReplicaSet(ctx context.Context, rs *appsv1.ReplicaSet, n int32, d *appsv1.Deployment, op string) (bool, *appsv1.ReplicaSet, error) {
	sizeChange := rsReplicas(rs) != n
	annChange := replicasAnnotationsNeedUpdate(rs, replicas(d), replicas(d)+MaxSurge(d))
	if !sizeChange && !annChange {
		return false, rs, nil
	}
	old := rsReplicas(rs)
	cp := rs.DeepCopy()
	cp.Spec.Replicas = &n
	SetReplicasAnnotations(cp, replicas(d), replicas(d)+MaxSurge(d))
	out, err := c.rss.Namespace(cp.Namespace).Update(ctx, cp, metav1.UpdateOptions{})
	if err != nil {
		return false, rs, err
	}
	if sizeChange {
		c.cfg.Recorder.Eventf(d, corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled %s replica set %s from %d to %d", op, rs.Name, old, n)
	}
	return sizeChange, out, nil
}

func (c *Controller) rolloutRolling(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, olds, err := c.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, true)
	if err != nil {
		return err
	}
	all := append(append([]*appsv1.ReplicaSet(nil), olds...), newRS)
	if rsReplicas(newRS) != replicas(d) {
		target := replicas(d)
		if rsReplicas(newRS) < replicas(d) {
			target = NewRSNewReplicas(d, all, newRS)
		}
		scaled, _, err := c.scaleReplicaSetAndRecordEvent(ctx, newRS, target, d)
		if err != nil {
			return err
		}
		if scaled {
			return c.syncRolloutStatus(ctx, all, newRS, d)
		}
	}
	scaledDown, err := c.reconcileOldReplicaSets(ctx, all, FilterActive(olds), newRS, d)
	if err != nil {
		return err
	}
	if scaledDown {
		return c.syncRolloutStatus(ctx, all, newRS, d)
	}
	if DeploymentComplete(d, &d.Status) {
		if err := c.cleanupDeployment(ctx, olds, d); err != nil {
			return err
		}
	}
	return c.syncRolloutStatus(ctx, all, newRS, d)
}

func (c *Controller) reconcileOldReplicaSets(ctx context.Context, all, olds []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) (bool, error) {
	if sumSpec(olds) == 0 {
		return false, nil
	}
	minAvailable := replicas(d) - MaxUnavailable(d)
	newUnavailable := rsReplicas(newRS) - newRS.Status.AvailableReplicas
	maxScaledDown := sumSpec(all) - minAvailable - newUnavailable
	if maxScaledDown <= 0 {
		return false, nil
	}
	// Clean up unhealthy replicas first, oldest ReplicaSets first.
	sort.Sort(ByCreationTimestamp(olds))
	var cleaned int32
	for i, rs := range olds {
		if cleaned >= maxScaledDown {
			break
		}
		if rsReplicas(rs) == 0 || rsReplicas(rs) == rs.Status.AvailableReplicas {
			continue
		}
		down := min(maxScaledDown-cleaned, rsReplicas(rs)-rs.Status.AvailableReplicas)
		_, out, err := c.scaleReplicaSetAndRecordEvent(ctx, rs, rsReplicas(rs)-down, d)
		if err != nil {
			return false, err
		}
		olds[i] = out
		cleaned += down
	}
	all = append(append([]*appsv1.ReplicaSet(nil), olds...), newRS)
	// Then scale down healthy ones while availability allows.
	available := sumStatus(all, func(s *appsv1.ReplicaSetStatus) int32 { return s.AvailableReplicas })
	var scaled int32
	if available > minAvailable {
		total := available - minAvailable
		for _, rs := range olds {
			if scaled >= total {
				break
			}
			if rsReplicas(rs) == 0 {
				continue
			}
			down := min(rsReplicas(rs), total-scaled)
			if _, _, err := c.scaleReplicaSetAndRecordEvent(ctx, rs, rsReplicas(rs)-down, d); err != nil {
				return false, err
			}
			scaled += down
		}
	}
	return cleaned+scaled > 0, nil
}

func (c *Controller) rolloutRecreate(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, olds, err := c.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	all := append(append([]*appsv1.ReplicaSet(nil), olds...), newRS)
	scaledDown := false
	for _, rs := range FilterActive(olds) {
		scaled, _, err := c.scaleReplicaSetAndRecordEvent(ctx, rs, 0, d)
		if err != nil {
			return err
		}
		scaledDown = scaledDown || scaled
	}
	if scaledDown || c.oldPodsRunning(newRS, olds) {
		return c.syncRolloutStatus(ctx, all, newRS, d)
	}
	if newRS == nil {
		if newRS, olds, err = c.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, true); err != nil {
			return err
		}
		all = append(append([]*appsv1.ReplicaSet(nil), olds...), newRS)
	}
	if _, _, err := c.scaleReplicaSetAndRecordEvent(ctx, newRS, replicas(d), d); err != nil {
		return err
	}
	if DeploymentComplete(d, &d.Status) {
		if err := c.cleanupDeployment(ctx, olds, d); err != nil {
			return err
		}
	}
	return c.syncRolloutStatus(ctx, all, newRS, d)
}

// oldPodsRunning: an old ReplicaSet still reports pods, or a pod of one
// has not terminated.
func (c *Controller) oldPodsRunning(newRS *appsv1.ReplicaSet, olds []*appsv1.ReplicaSet) bool {
	if sumStatus(olds, func(s *appsv1.ReplicaSetStatus) int32 { return s.Replicas }) > 0 {
		return true
	}
	uids := map[types.UID]bool{}
	for _, rs := range olds {
		uids[rs.UID] = true
	}
	if newRS != nil {
		delete(uids, newRS.UID)
	}
	if len(uids) == 0 {
		return false
	}
	ns := olds[0].Namespace
	for uid := range uids {
		pods, _ := controllerref.Controlled[*corev1.Pod](c.podIn.Informer().GetIndexer(), ns, uid, false)
		for _, p := range pods {
			if p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded {
				return true
			}
		}
	}
	return false
}

// cleanupDeployment deletes the oldest ReplicaSets beyond
// revisionHistoryLimit that have no replicas.
func (c *Controller) cleanupDeployment(ctx context.Context, olds []*appsv1.ReplicaSet, d *appsv1.Deployment) error {
	if d.Spec.RevisionHistoryLimit == nil {
		return nil
	}
	for _, rs := range HistoryToDelete(olds, *d.Spec.RevisionHistoryLimit) {
		if err := c.rss.Namespace(rs.Namespace).Delete(ctx, rs.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// HistoryToDelete picks the old ReplicaSets cleanup deletes: the lowest
// revisions beyond limit, skipping any with replicas, unobserved
// generations or being deleted.
func HistoryToDelete(olds []*appsv1.ReplicaSet, limit int32) []*appsv1.ReplicaSet {
	var alive []*appsv1.ReplicaSet
	for _, rs := range olds {
		if rs != nil && rs.DeletionTimestamp == nil {
			alive = append(alive, rs)
		}
	}
	diff := int32(len(alive)) - limit
	if diff <= 0 {
		return nil
	}
	sort.Sort(ByRevision(alive))
	var out []*appsv1.ReplicaSet
	for _, rs := range alive[:diff] {
		if rs.Status.Replicas != 0 || rsReplicas(rs) != 0 || rs.Generation > rs.Status.ObservedGeneration {
			continue
		}
		out = append(out, rs)
	}
	return out
}

func (c *Controller) syncDeploymentStatus(ctx context.Context, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) error {
	st := CalculateStatus(all, newRS, d, c.now())
	if reflect.DeepEqual(d.Status, st) {
		return nil
	}
	d.Status = st
	_, err := c.ds.Namespace(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	return err
}

// RolloutStatus is the status syncRolloutStatus writes (conditions
// included) and, when the progress deadline is still ahead, when to look
// again (0: not needed).
func RolloutStatus(all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment, now time.Time) (appsv1.DeploymentStatus, time.Duration) {
	st := CalculateStatus(all, newRS, d, now)
	if !HasProgressDeadline(d) {
		RemoveCondition(&st, appsv1.DeploymentProgressing)
	}
	cur := GetCondition(d.Status, appsv1.DeploymentProgressing)
	complete := st.Replicas == st.UpdatedReplicas && cur != nil && cur.Reason == NewRSAvailableReason
	if HasProgressDeadline(d) && !complete {
		switch {
		case DeploymentComplete(d, &st):
			msg := fmt.Sprintf("Deployment %q has successfully progressed.", d.Name)
			if newRS != nil {
				msg = fmt.Sprintf("ReplicaSet %q has successfully progressed.", newRS.Name)
			}
			SetCondition(&st, NewCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, NewRSAvailableReason, msg, now))
		case DeploymentProgressing(d, &st):
			msg := fmt.Sprintf("Deployment %q is progressing.", d.Name)
			if newRS != nil {
				msg = fmt.Sprintf("ReplicaSet %q is progressing.", newRS.Name)
			}
			cond := NewCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReplicaSetUpdatedReason, msg, now)
			if cur != nil {
				if cur.Status == corev1.ConditionTrue {
					cond.LastTransitionTime = cur.LastTransitionTime
				}
				RemoveCondition(&st, appsv1.DeploymentProgressing)
			}
			SetCondition(&st, cond)
		case DeploymentTimedOut(d, &st, now):
			msg := fmt.Sprintf("Deployment %q has timed out progressing.", d.Name)
			if newRS != nil {
				msg = fmt.Sprintf("ReplicaSet %q has timed out progressing.", newRS.Name)
			}
			SetCondition(&st, NewCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, TimedOutReason, msg, now))
		}
	}
	if f := replicaFailure(all, newRS); f != nil {
		SetCondition(&st, *f)
	} else {
		RemoveCondition(&st, appsv1.DeploymentReplicaFailure)
	}
	// When to check the deadline again (upstream's requeueStuckDeployment).
	var after time.Duration
	if pc := GetCondition(st, appsv1.DeploymentProgressing); HasProgressDeadline(d) && pc != nil &&
		!DeploymentComplete(d, &st) && pc.Reason != TimedOutReason {
		after = pc.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Sub(now)
		if after < time.Second {
			after = time.Millisecond
		} else {
			after += time.Second
		}
	}
	return st, after
}

func replicaFailure(all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) *appsv1.DeploymentCondition {
	fromRS := func(rs *appsv1.ReplicaSet) *appsv1.DeploymentCondition {
		for _, c := range rs.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure {
				return &appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: c.Status,
					LastUpdateTime: c.LastTransitionTime, LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message}
			}
		}
		return nil
	}
	if newRS != nil {
		if c := fromRS(newRS); c != nil {
			return c
		}
	}
	for _, rs := range all {
		if rs != nil && rs != newRS {
			if c := fromRS(rs); c != nil {
				return c
			}
		}
	}
	return nil
}

func (c *Controller) syncRolloutStatus(ctx context.Context, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) error {
	st, after := RolloutStatus(all, newRS, d, c.now())
	key := d.Namespace + "/" + d.Name
	if reflect.DeepEqual(d.Status, st) {
		if after > 0 {
			c.queue.AddAfter(key, after)
		}
		return nil
	}
	d.Status = st
	_, err := c.ds.Namespace(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	return err
}
