package disruption

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/discovery"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
)

const (
	// DeletionTimeout is how long an evicted pod counts as disrupted
	// (upstream's 2 minutes).
	DeletionTimeout = 2 * time.Minute
	// StalePodDisruptionTimeout is how long a DisruptionTarget condition
	// may stay on a pod that is not deleted.
	StalePodDisruptionTimeout = 2 * time.Minute
	// FieldManager is the field manager of the stale condition cleanup.
	FieldManager = "DisruptionController"
)

// Config configures a Controller.
type Config struct {
	Client    *client.Client
	Informers *informers.SharedInformerFactory
	Recorder  record.EventRecorder
	Clock     clock.Clock
	// Workers is the number of workers of each queue (default 1, as
	// upstream, which has no flag for it).
	Workers int
	Logger  *slog.Logger
	// MetricsProvider, if set, gets the workqueues' metrics.
	MetricsProvider workqueue.MetricsProvider
}

// Controller keeps PodDisruptionBudget status.
type Controller struct {
	cfg    Config
	pdbs   *client.Typed[*policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudgetList]
	pods   *client.Typed[*corev1.Pod, *corev1.PodList]
	disc   *discovery.Client
	podIn  *cache.TypedInformer[*corev1.Pod]
	pdbIn  *cache.TypedInformer[*policyv1.PodDisruptionBudget]
	rcIn   *cache.TypedInformer[*corev1.ReplicationController]
	rsIn   *cache.TypedInformer[*appsv1.ReplicaSet]
	depIn  *cache.TypedInformer[*appsv1.Deployment]
	ssIn   *cache.TypedInformer[*appsv1.StatefulSet]
	queue  workqueue.TypedRateLimitingInterface[string]
	stale  workqueue.TypedRateLimitingInterface[string]
	log    *slog.Logger
	synced []cache.InformerSynced
}

// New returns the disruption controller.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("disruption: Client and Informers are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Recorder == nil {
		cfg.Recorder = &record.FakeRecorder{}
	}
	f := cfg.Informers
	c := &Controller{
		cfg:   cfg,
		pdbs:  client.For[*policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudgetList](cfg.Client),
		pods:  client.For[*corev1.Pod, *corev1.PodList](cfg.Client),
		disc:  discovery.New(cfg.Client),
		podIn: f.Pods(), pdbIn: f.PodDisruptionBudgets(),
		rcIn: informers.InformerFor[*corev1.ReplicationController, *corev1.ReplicationControllerList](f),
		rsIn: f.ReplicaSets(), depIn: f.Deployments(), ssIn: f.StatefulSets(),
		log: cfg.Logger,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "disruption", MetricsProvider: cfg.MetricsProvider, Clock: cfg.Clock}),
		stale: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "stale_pod_disruption", MetricsProvider: cfg.MetricsProvider, Clock: cfg.Clock}),
	}
	c.synced = []cache.InformerSynced{c.podIn.HasSynced, c.pdbIn.HasSynced, c.rcIn.HasSynced, c.rsIn.HasSynced, c.depIn.HasSynced, c.ssIn.HasSynced}
	pdbKey := func(p *policyv1.PodDisruptionBudget) { c.queue.Add(p.Namespace + "/" + p.Name) }
	if _, err := c.pdbIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*policyv1.PodDisruptionBudget]{
		AddFunc:    func(p *policyv1.PodDisruptionBudget, _ bool) { pdbKey(p) },
		UpdateFunc: func(_, p *policyv1.PodDisruptionBudget) { pdbKey(p) },
		DeleteFunc: func(d cache.DeletedObject[*policyv1.PodDisruptionBudget]) { c.queue.Add(d.Key()) },
	}); err != nil {
		return nil, err
	}
	if _, err := c.podIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc: func(p *corev1.Pod, _ bool) {
			c.queuePDBsOf(p)
			c.queueIfStale(p)
		},
		UpdateFunc: func(old, cur *corev1.Pod) {
			if old.ResourceVersion == cur.ResourceVersion {
				return // a resync
			}
			c.queuePDBsOf(cur)
			if !equality.Semantic.DeepEqual(old.Labels, cur.Labels) {
				c.queuePDBsOf(old)
			}
			c.queueIfStale(cur)
		},
		DeleteFunc: func(d cache.DeletedObject[*corev1.Pod]) {
			if d.Obj != nil {
				c.queuePDBsOf(d.Obj)
			}
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// pdbsFor are the budgets of the pod's namespace whose selector matches it
// (an empty selector matches every pod; a pod without labels none, as
// upstream's lister).
func (c *Controller) pdbsFor(p *corev1.Pod) []*policyv1.PodDisruptionBudget {
	if len(p.Labels) == 0 {
		return nil
	}
	all, err := c.pdbIn.Lister().Namespace(p.Namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []*policyv1.PodDisruptionBudget
	for _, pdb := range all {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err == nil && sel.Matches(labels.Set(p.Labels)) {
			out = append(out, pdb)
		}
	}
	return out
}

func (c *Controller) queuePDBsOf(p *corev1.Pod) {
	for _, pdb := range c.pdbsFor(p) {
		c.queue.Add(pdb.Namespace + "/" + pdb.Name)
	}
}

func (c *Controller) queueIfStale(p *corev1.Pod) {
	if stale, after := c.hasStaleDisruptionCondition(p); stale {
		c.stale.AddAfter(p.Namespace+"/"+p.Name, after)
	}
}

// Run waits for the caches and runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	defer c.stale.ShutDown()
	c.cfg.Informers.Start(ctx)
	if !cache.WaitForCacheSync(ctx, c.synced...) {
		return ctx.Err()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		workqueue.RunWorkers(ctx, c.stale, c.cfg.Workers, c.SyncStalePodDisruption, func(key string, err error) {
			c.log.Info("Error syncing stale pod disruption condition", "pod", key, "err", err)
		})
	}()
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, c.Sync, func(key string, err error) {
		c.log.Info("Failed to sync PDB", "pdb", key, "err", err)
	})
	<-done
	return nil
}

// Sync computes and writes the status of one budget.
func (c *Controller) Sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	pdb, err := c.pdbIn.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	err = c.trySync(ctx, pdb)
	if err == nil || apierrors.IsConflict(err) {
		return err
	}
	c.log.Info("Failed to sync PDB", "pdb", key, "err", err)
	return c.failSafe(ctx, pdb, err)
}

func (c *Controller) trySync(ctx context.Context, pdb *policyv1.PodDisruptionBudget) error {
	pods, err := c.podsFor(pdb)
	if err != nil {
		c.cfg.Recorder.Eventf(pdb, corev1.EventTypeWarning, "NoPods", "Failed to get pods: %v", err)
		return err
	}
	if len(pods) == 0 {
		c.cfg.Recorder.Eventf(pdb, corev1.EventTypeNormal, "NoPods", "No matching pods found")
	}
	expected, desired, unmanaged, err := c.expectedPodCount(ctx, pdb, pods)
	if err != nil {
		c.cfg.Recorder.Eventf(pdb, corev1.EventTypeWarning, "CalculateExpectedPodCountFailed", "Failed to calculate the number of expected pods: %v", err)
		return err
	}
	if len(unmanaged) > 0 {
		c.cfg.Recorder.Eventf(pdb, corev1.EventTypeWarning, "UnmanagedPods", "Pods selected by this PodDisruptionBudget (selector: %v) were found "+
			"to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. "+
			"To account for these pods please set \".spec.minAvailable\" "+
			"field of the PDB to an integer value.", pdb.Spec.Selector)
	}
	now := c.cfg.Clock.Now()
	disrupted, recheck := c.buildDisruptedPods(pods, pdb, now)
	healthy := CountHealthyPods(pods, disrupted, now)
	err = c.updateStatus(ctx, pdb, healthy, desired, expected, disrupted)
	if err == nil && recheck != nil {
		c.queue.AddAfter(pdb.Namespace+"/"+pdb.Name, recheck.Sub(now))
	}
	return err
}

func (c *Controller) podsFor(pdb *policyv1.PodDisruptionBudget) ([]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		return nil, err
	}
	return c.podIn.Lister().Namespace(pdb.Namespace).List(sel)
}

// expectedPodCount is upstream's getExpectedPodCount.
func (c *Controller) expectedPodCount(ctx context.Context, pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod) (expected, desired int32, unmanaged []string, err error) {
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		expected, unmanaged, err = c.expectedScale(ctx, pdb, pods)
		if err != nil {
			return
		}
		var maxUnavailable int
		maxUnavailable, err = intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, int(expected), true)
		if err != nil {
			return
		}
		desired = max(expected-int32(maxUnavailable), 0)
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.Int:
		desired = pdb.Spec.MinAvailable.IntVal
		expected = int32(len(pods))
	case pdb.Spec.MinAvailable != nil:
		expected, unmanaged, err = c.expectedScale(ctx, pdb, pods)
		if err != nil {
			return
		}
		var minAvailable int
		minAvailable, err = intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, int(expected), true)
		if err != nil {
			return
		}
		desired = int32(minAvailable)
	}
	return
}

type controllerAndScale struct {
	uid   types.UID
	scale int32
}

// expectedScale sums the scale of the pods' controllers.
func (c *Controller) expectedScale(ctx context.Context, pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod) (int32, []string, error) {
	scales := map[types.UID]int32{}
	var unmanaged []string
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil {
			unmanaged = append(unmanaged, p.Name)
			continue
		}
		if _, ok := scales[ref.UID]; ok {
			continue
		}
		found := false
		for _, finder := range []func(context.Context, *metav1.OwnerReference, string) (*controllerAndScale, error){
			c.replicaSetScale, c.deploymentScale, c.replicationControllerScale, c.statefulSetScale, c.scaleSubresource,
		} {
			cs, err := finder(ctx, ref, p.Namespace)
			if err != nil {
				return 0, nil, err
			}
			if cs != nil {
				scales[cs.uid] = cs.scale
				found = true
				break
			}
		}
		if !found {
			return 0, nil, fmt.Errorf("found no controllers for pod %q", p.Name)
		}
	}
	var sum int32
	for _, n := range scales {
		sum += n
	}
	return sum, unmanaged, nil
}

func groupKindIs(ref *metav1.OwnerReference, kind string, groups ...string) (bool, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false, err
	}
	if ref.Kind != kind {
		return false, nil
	}
	for _, g := range groups {
		if g == gv.Group {
			return true, nil
		}
	}
	return false, nil
}

func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

// replicaSetScale: a ReplicaSet not controlled by a Deployment.
func (c *Controller) replicaSetScale(_ context.Context, ref *metav1.OwnerReference, ns string) (*controllerAndScale, error) {
	if ok, err := groupKindIs(ref, "ReplicaSet", "apps", "extensions"); !ok || err != nil {
		return nil, err
	}
	rs, err := c.rsIn.Lister().Namespace(ns).Get(ref.Name)
	if err != nil || rs.UID != ref.UID {
		return nil, nil
	}
	if owner := metav1.GetControllerOf(rs); owner != nil && owner.Kind == "Deployment" {
		return nil, nil
	}
	return &controllerAndScale{rs.UID, replicas(rs.Spec.Replicas)}, nil
}

// deploymentScale: the Deployment controlling the pod's ReplicaSet.
func (c *Controller) deploymentScale(_ context.Context, ref *metav1.OwnerReference, ns string) (*controllerAndScale, error) {
	if ok, err := groupKindIs(ref, "ReplicaSet", "apps", "extensions"); !ok || err != nil {
		return nil, err
	}
	rs, err := c.rsIn.Lister().Namespace(ns).Get(ref.Name)
	if err != nil || rs.UID != ref.UID {
		return nil, nil
	}
	owner := metav1.GetControllerOf(rs)
	if owner == nil {
		return nil, nil
	}
	if ok, err := groupKindIs(owner, "Deployment", "apps", "extensions"); !ok || err != nil {
		return nil, err
	}
	d, err := c.depIn.Lister().Namespace(ns).Get(owner.Name)
	if err != nil || d.UID != owner.UID {
		return nil, nil
	}
	return &controllerAndScale{d.UID, replicas(d.Spec.Replicas)}, nil
}

func (c *Controller) replicationControllerScale(_ context.Context, ref *metav1.OwnerReference, ns string) (*controllerAndScale, error) {
	if ok, err := groupKindIs(ref, "ReplicationController", ""); !ok || err != nil {
		return nil, err
	}
	rc, err := c.rcIn.Lister().Namespace(ns).Get(ref.Name)
	if err != nil || rc.UID != ref.UID {
		return nil, nil
	}
	return &controllerAndScale{rc.UID, replicas(rc.Spec.Replicas)}, nil
}

func (c *Controller) statefulSetScale(_ context.Context, ref *metav1.OwnerReference, ns string) (*controllerAndScale, error) {
	if ok, err := groupKindIs(ref, "StatefulSet", "apps"); !ok || err != nil {
		return nil, err
	}
	ss, err := c.ssIn.Lister().Namespace(ns).Get(ref.Name)
	if err != nil || ss.UID != ref.UID {
		return nil, nil
	}
	return &controllerAndScale{ss.UID, replicas(ss.Spec.Replicas)}, nil
}

// scaleSubresource reads any other controller's scale subresource (a
// custom resource's), finding its resource through discovery.
func (c *Controller) scaleSubresource(ctx context.Context, ref *metav1.OwnerReference, ns string) (*controllerAndScale, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, err
	}
	// Look the kind up; on a miss, once more past the discovery cache (a
	// resource defined since the last look).
	var list *metav1.APIResourceList
	var res *metav1.APIResource
	for attempt := 0; attempt < 2 && res == nil; attempt++ {
		if attempt > 0 {
			c.disc.Invalidate()
		}
		list, err = c.disc.ServerResourcesForGroupVersion(ctx, gv)
		if err != nil && list == nil {
			if attempt == 0 {
				continue
			}
			return nil, err
		}
		for i := range list.APIResources {
			if r := &list.APIResources[i]; r.Kind == ref.Kind && !strings.Contains(r.Name, "/") {
				res = r
			}
		}
	}
	if res == nil {
		return nil, fmt.Errorf("no matches for kind %q in version %q", ref.Kind, ref.APIVersion)
	}
	hasScale := false
	for _, r := range list.APIResources {
		if r.Name == res.Name+"/scale" {
			hasScale = true
		}
	}
	gr := schema.GroupResource{Group: gv.Group, Resource: res.Name}
	if !hasScale {
		return nil, fmt.Errorf("%s does not implement the scale subresource", gr.String())
	}
	r := discovery.ResourceOf(gv.WithResource(res.Name), *res)
	resp, err := c.cfg.Client.Do(ctx, &client.Request{Method: "GET", Path: r.Path(ns, ref.Name, "scale"), JSONOnly: true})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var sc autoscalingv1.Scale
	if err := json.Unmarshal(resp.Body, &sc); err != nil {
		return nil, err
	}
	if sc.UID != ref.UID {
		return nil, nil
	}
	return &controllerAndScale{sc.UID, sc.Spec.Replicas}, nil
}

// CountHealthyPods counts the Ready pods that are not being deleted and
// not recorded as disrupted within DeletionTimeout.
func CountHealthyPods(pods []*corev1.Pod, disrupted map[string]metav1.Time, now time.Time) int32 {
	var n int32
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if t, ok := disrupted[p.Name]; ok && t.Add(DeletionTimeout).After(now) {
			continue
		}
		if podReady(p) {
			n++
		}
	}
	return n
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// buildDisruptedPods keeps the disruptedPods entries of pods still there,
// not being deleted and evicted within DeletionTimeout, and returns when
// the oldest kept entry expires.
func (c *Controller) buildDisruptedPods(pods []*corev1.Pod, pdb *policyv1.PodDisruptionBudget, now time.Time) (map[string]metav1.Time, *time.Time) {
	out := map[string]metav1.Time{}
	var recheck *time.Time
	if pdb.Status.DisruptedPods == nil {
		return out, nil
	}
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		t, ok := pdb.Status.DisruptedPods[p.Name]
		if !ok {
			continue
		}
		expires := t.Add(DeletionTimeout)
		if expires.Before(now) {
			c.cfg.Recorder.Eventf(p, corev1.EventTypeWarning, "NotDeleted", "Pod was expected by PDB %s/%s to be deleted but it wasn't",
				pdb.Namespace, pdb.Namespace)
			continue
		}
		if recheck == nil || expires.Before(*recheck) {
			recheck = &expires
		}
		out[p.Name] = t
	}
	return out, recheck
}

func (c *Controller) updateStatus(ctx context.Context, pdb *policyv1.PodDisruptionBudget, healthy, desired, expected int32, disrupted map[string]metav1.Time) error {
	allowed := healthy - desired
	if expected <= 0 || allowed <= 0 {
		allowed = 0
	}
	if pdb.Status.CurrentHealthy == healthy && pdb.Status.DesiredHealthy == desired && pdb.Status.ExpectedPods == expected &&
		pdb.Status.DisruptionsAllowed == allowed && equality.Semantic.DeepEqual(pdb.Status.DisruptedPods, disrupted) &&
		pdb.Status.ObservedGeneration == pdb.Generation && conditionsUpToDate(pdb) {
		return nil
	}
	out := pdb.DeepCopy()
	out.Status = policyv1.PodDisruptionBudgetStatus{
		CurrentHealthy: healthy, DesiredHealthy: desired, ExpectedPods: expected, DisruptionsAllowed: allowed,
		DisruptedPods: disrupted, ObservedGeneration: pdb.Generation, Conditions: out.Status.Conditions,
	}
	c.setDisruptionAllowed(out)
	_, err := c.pdbs.Namespace(out.Namespace).UpdateStatus(ctx, out, metav1.UpdateOptions{})
	return err
}

func (c *Controller) setCondition(pdb *policyv1.PodDisruptionBudget, cond metav1.Condition) {
	cond.Type = policyv1.DisruptionAllowedCondition
	cond.ObservedGeneration = pdb.Status.ObservedGeneration
	cond.LastTransitionTime = metav1.NewTime(c.cfg.Clock.Now())
	if pdb.Status.Conditions == nil {
		pdb.Status.Conditions = []metav1.Condition{}
	}
	apimeta.SetStatusCondition(&pdb.Status.Conditions, cond)
}

// setDisruptionAllowed is upstream's UpdateDisruptionAllowedCondition.
func (c *Controller) setDisruptionAllowed(pdb *policyv1.PodDisruptionBudget) {
	if pdb.Status.DisruptionsAllowed > 0 {
		c.setCondition(pdb, metav1.Condition{Status: metav1.ConditionTrue, Reason: policyv1.SufficientPodsReason})
	} else {
		c.setCondition(pdb, metav1.Condition{Status: metav1.ConditionFalse, Reason: policyv1.InsufficientPodsReason})
	}
}

func conditionsUpToDate(pdb *policyv1.PodDisruptionBudget) bool {
	cond := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
	if cond == nil || pdb.Status.ObservedGeneration != pdb.Generation || cond.ObservedGeneration != pdb.Status.ObservedGeneration {
		return false
	}
	if pdb.Status.DisruptionsAllowed > 0 {
		return cond.Status == metav1.ConditionTrue && cond.Reason == policyv1.SufficientPodsReason
	}
	return cond.Status == metav1.ConditionFalse && cond.Reason == policyv1.InsufficientPodsReason
}

// failSafe allows no disruption and says why.
func (c *Controller) failSafe(ctx context.Context, pdb *policyv1.PodDisruptionBudget, cause error) error {
	out := pdb.DeepCopy()
	out.Status.DisruptionsAllowed = 0
	c.setCondition(out, metav1.Condition{Status: metav1.ConditionFalse, Reason: policyv1.SyncFailedReason, Message: cause.Error()})
	_, err := c.pdbs.Namespace(out.Namespace).UpdateStatus(ctx, out, metav1.UpdateOptions{})
	return err
}

// hasStaleDisruptionCondition: a pod not being deleted with a
// DisruptionTarget condition True that the kubelet did not set and that is
// not finished; after is how long until it counts as stale.
func (c *Controller) hasStaleDisruptionCondition(p *corev1.Pod) (bool, time.Duration) {
	if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return false, 0
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type != corev1.DisruptionTarget {
			continue
		}
		if cond.Status != corev1.ConditionTrue || cond.Reason == corev1.PodReasonTerminationByKubelet {
			return false, 0
		}
		return true, max(StalePodDisruptionTimeout-c.cfg.Clock.Since(cond.LastTransitionTime.Time), 0)
	}
	return false, 0
}

// SyncStalePodDisruption resets a stale DisruptionTarget condition of one
// pod (key "namespace/name") to False.
func (c *Controller) SyncStalePodDisruption(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	p, err := c.podIn.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	stale, after := c.hasStaleDisruptionCondition(p)
	if !stale {
		return nil
	}
	if after > 0 {
		c.stale.AddAfter(key, after)
		return nil
	}
	apply := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": p.Name, "namespace": p.Namespace, "resourceVersion": p.ResourceVersion},
		"status": map[string]any{"conditions": []any{map[string]any{
			"type": string(corev1.DisruptionTarget), "status": string(corev1.ConditionFalse),
			"lastTransitionTime": metav1.NewTime(c.cfg.Clock.Now()).Rfc3339Copy(),
		}}},
	}
	body, err := json.Marshal(apply)
	if err != nil {
		return err
	}
	_, err = c.pods.Namespace(ns).Patch(ctx, name, types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: FieldManager, Force: ptr.To(true)}, "status")
	return err
}
