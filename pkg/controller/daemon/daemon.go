package daemon

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/controllerref"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/controller/internal/expectations"
	"github.com/skiff-sh/skiff/pkg/controller/internal/history"
	"github.com/skiff-sh/skiff/pkg/controller/internal/podutil"
)

// BurstReplicas caps creations and deletions per sync (upstream's 250).
const BurstReplicas = 250

// Event reasons, as upstream's.
const (
	SelectingAllReason        = "SelectingAll"
	FailedPlacementReason     = "FailedPlacement"
	FailedDaemonPodReason     = "FailedDaemonPod"
	SucceededDaemonPodReason  = "SucceededDaemonPod"
	SuccessfulCreateReason    = "SuccessfulCreate"
	FailedCreateReason        = "FailedCreate"
	SuccessfulDeleteReason    = "SuccessfulDelete"
	FailedDeleteReason        = "FailedDelete"
	statusUpdateRetries       = 1
	failedPodsBackoffInitial  = time.Second
	failedPodsBackoffMaxDelay = 15 * time.Minute
)

var controllerKind = appsv1.SchemeGroupVersion.WithKind("DaemonSet")

// Config configures a Controller.
type Config struct {
	Client    *client.Client
	Informers *informers.SharedInformerFactory
	Recorder  record.EventRecorder
	Clock     clock.Clock
	Workers   int
	Logger    *slog.Logger
	// BurstReplicas caps creations/deletions per sync (default 250).
	BurstReplicas int
	// MetricsProvider, if set, gets the workqueue's metrics.
	MetricsProvider workqueue.MetricsProvider
}

// Controller runs one pod of each DaemonSet on every eligible node.
type Controller struct {
	cfg     Config
	dss     *client.Typed[*appsv1.DaemonSet, *appsv1.DaemonSetList]
	pods    *client.Typed[*corev1.Pod, *corev1.PodList]
	revs    *client.Typed[*appsv1.ControllerRevision, *appsv1.ControllerRevisionList]
	dsIn    *cache.TypedInformer[*appsv1.DaemonSet]
	podIn   *cache.TypedInformer[*corev1.Pod]
	nodeIn  *cache.TypedInformer[*corev1.Node]
	revIn   *cache.TypedInformer[*appsv1.ControllerRevision]
	history *history.History
	queue   workqueue.TypedRateLimitingInterface[string]
	// Expectations are the pod creations/deletions issued and not yet
	// observed, per DaemonSet key.
	Expectations *expectations.Expectations
	backoff      *backoff
	log          *slog.Logger
}

// New returns the DaemonSet controller.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("daemon: Client and Informers are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.BurstReplicas <= 0 {
		cfg.BurstReplicas = BurstReplicas
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Recorder == nil {
		cfg.Recorder = &record.FakeRecorder{}
	}
	c := &Controller{
		cfg:          cfg,
		dss:          client.For[*appsv1.DaemonSet, *appsv1.DaemonSetList](cfg.Client),
		pods:         client.For[*corev1.Pod, *corev1.PodList](cfg.Client),
		revs:         client.For[*appsv1.ControllerRevision, *appsv1.ControllerRevisionList](cfg.Client),
		dsIn:         cfg.Informers.DaemonSets(),
		podIn:        cfg.Informers.Pods(),
		nodeIn:       cfg.Informers.Nodes(),
		revIn:        cfg.Informers.ControllerRevisions(),
		Expectations: expectations.New(cfg.Clock),
		backoff:      newBackoff(failedPodsBackoffInitial, failedPodsBackoffMaxDelay),
		log:          cfg.Logger.With("controller", "daemonset"),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "daemonset", MetricsProvider: cfg.MetricsProvider}),
	}
	c.history = history.New(cfg.Client, c.revIn.Lister())
	if _, err := c.dsIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*appsv1.DaemonSet]{
		AddFunc:    func(ds *appsv1.DaemonSet, _ bool) { c.enqueue(ds) },
		UpdateFunc: func(_, ds *appsv1.DaemonSet) { c.enqueue(ds) },
		DeleteFunc: func(d cache.DeletedObject[*appsv1.DaemonSet]) {
			if d.Obj != nil {
				c.Expectations.Delete(keyOf(d.Obj))
				c.enqueue(d.Obj)
			}
		},
	}); err != nil {
		return nil, err
	}
	// A sync reads its own pods and the namespace's orphans by index, as
	// upstream's FilterPodsByOwner.
	if err := controllerref.AddControllerUIDIndex(c.podIn.Informer()); err != nil {
		return nil, err
	}
	if _, err := c.podIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc:    func(p *corev1.Pod, _ bool) { c.addPod(p) },
		UpdateFunc: c.updatePod,
		DeleteFunc: func(d cache.DeletedObject[*corev1.Pod]) {
			if d.Obj != nil {
				c.deletePod(d.Obj)
			}
		},
	}); err != nil {
		return nil, err
	}
	if _, err := c.nodeIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Node]{
		AddFunc: func(*corev1.Node, bool) { c.enqueueAll() },
		UpdateFunc: func(old, cur *corev1.Node) {
			if !apiequality.Semantic.DeepEqual(old.Labels, cur.Labels) || !apiequality.Semantic.DeepEqual(old.Spec.Taints, cur.Spec.Taints) {
				c.enqueueAll()
			}
		},
		DeleteFunc: func(cache.DeletedObject[*corev1.Node]) { c.enqueueAll() },
	}); err != nil {
		return nil, err
	}
	if _, err := c.revIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*appsv1.ControllerRevision]{}); err != nil {
		return nil, err
	}
	return c, nil
}

func keyOf(ds *appsv1.DaemonSet) string { return ds.Namespace + "/" + ds.Name }

func (c *Controller) enqueue(ds *appsv1.DaemonSet) { c.queue.Add(keyOf(ds)) }

// enqueueAll queues every DaemonSet (a node appeared, went or changed its
// labels or taints).
func (c *Controller) enqueueAll() {
	all, err := c.dsIn.Lister().List(labels.Everything())
	if err != nil {
		return
	}
	for _, ds := range all {
		c.enqueue(ds)
	}
}

// Run waits for the caches and runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.cfg.Informers.Start(ctx)
	if !cache.WaitForCacheSync(ctx, c.dsIn.HasSynced, c.podIn.HasSynced, c.nodeIn.HasSynced, c.revIn.HasSynced) {
		return ctx.Err()
	}
	go func() {
		t := c.cfg.Clock.NewTicker(time.Minute)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C():
				c.backoff.gc(c.cfg.Clock.Now())
			}
		}
	}()
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, c.Sync, func(key string, err error) {
		c.log.Info("sync failed", "key", key, "err", err)
	})
	return nil
}

func (c *Controller) resolve(ns string, ref *metav1.OwnerReference) *appsv1.DaemonSet {
	ds, _ := controllerref.Resolve(ref, controllerKind.Kind, c.dsIn.Lister().Namespace(ns).Get)
	return ds
}

// dsForPod are the DaemonSets whose selector matches an orphan pod.
func (c *Controller) dsForPod(p *corev1.Pod) []*appsv1.DaemonSet {
	all, err := c.dsIn.Lister().Namespace(p.Namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	return controllerref.Selecting(all, func(ds *appsv1.DaemonSet) *metav1.LabelSelector { return ds.Spec.Selector }, p.Labels)
}

func (c *Controller) addPod(p *corev1.Pod) {
	if p.DeletionTimestamp != nil {
		c.deletePod(p)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
		if ds := c.resolve(p.Namespace, ref); ds != nil {
			c.Expectations.CreationObserved(keyOf(ds))
			c.enqueue(ds)
		}
		return
	}
	for _, ds := range c.dsForPod(p) {
		c.enqueue(ds)
	}
}

func (c *Controller) updatePod(old, cur *corev1.Pod) {
	if cur.ResourceVersion == old.ResourceVersion {
		return
	}
	if cur.DeletionTimestamp != nil {
		c.deletePod(cur)
		return
	}
	curRef, oldRef := metav1.GetControllerOfNoCopy(cur), metav1.GetControllerOfNoCopy(old)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if ds := c.resolve(old.Namespace, oldRef); ds != nil {
			c.enqueue(ds)
		}
	}
	if curRef != nil {
		ds := c.resolve(cur.Namespace, curRef)
		if ds == nil {
			return
		}
		c.enqueue(ds)
		if !podutil.IsPodReady(old) && podutil.IsPodReady(cur) && ds.Spec.MinReadySeconds > 0 {
			c.queue.AddAfter(keyOf(ds), time.Duration(ds.Spec.MinReadySeconds)*time.Second+time.Second)
		}
		return
	}
	if refChanged || !reflect.DeepEqual(cur.Labels, old.Labels) {
		for _, ds := range c.dsForPod(cur) {
			c.enqueue(ds)
		}
	}
}

func (c *Controller) deletePod(p *corev1.Pod) {
	ref := metav1.GetControllerOfNoCopy(p)
	if ref == nil {
		return
	}
	ds := c.resolve(p.Namespace, ref)
	if ds == nil {
		return
	}
	c.Expectations.DeletionObserved(keyOf(ds), p.Namespace+"/"+p.Name)
	c.enqueue(ds)
}
