package statefulset

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/controllerref"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/controller/internal/history"
	"github.com/skiff-sh/skiff/pkg/controller/internal/podutil"
)

// Config configures a Controller.
type Config struct {
	Client    *client.Client
	Informers *informers.SharedInformerFactory
	Recorder  record.EventRecorder
	Clock     clock.Clock
	Workers   int
	Logger    *slog.Logger
	// MetricsProvider, if set, gets the workqueue's metrics.
	MetricsProvider workqueue.MetricsProvider
}

// Controller manages the pods, claims and revisions of StatefulSets.
type Controller struct {
	cfg     Config
	sets    *client.Typed[*appsv1.StatefulSet, *appsv1.StatefulSetList]
	pods    *client.Typed[*corev1.Pod, *corev1.PodList]
	pvcs    *client.Typed[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]
	setIn   *cache.TypedInformer[*appsv1.StatefulSet]
	podIn   *cache.TypedInformer[*corev1.Pod]
	pvcIn   *cache.TypedInformer[*corev1.PersistentVolumeClaim]
	revIn   *cache.TypedInformer[*appsv1.ControllerRevision]
	history *history.History
	queue   workqueue.TypedRateLimitingInterface[string]
	log     *slog.Logger
}

// New returns the StatefulSet controller.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("statefulset: Client and Informers are required")
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
		cfg.Recorder = &record.FakeRecorder{}
	}
	c := &Controller{
		cfg:   cfg,
		sets:  client.For[*appsv1.StatefulSet, *appsv1.StatefulSetList](cfg.Client),
		pods:  client.For[*corev1.Pod, *corev1.PodList](cfg.Client),
		pvcs:  client.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](cfg.Client),
		setIn: cfg.Informers.StatefulSets(),
		podIn: cfg.Informers.Pods(),
		pvcIn: cfg.Informers.PersistentVolumeClaims(),
		revIn: cfg.Informers.ControllerRevisions(),
		log:   cfg.Logger.With("controller", "statefulset"),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "statefulset", MetricsProvider: cfg.MetricsProvider}),
	}
	c.history = history.New(cfg.Client, c.revIn.Lister())
	if _, err := c.setIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*appsv1.StatefulSet]{
		AddFunc:    func(s *appsv1.StatefulSet, _ bool) { c.enqueue(s) },
		UpdateFunc: func(_, s *appsv1.StatefulSet) { c.enqueue(s) },
		DeleteFunc: func(d cache.DeletedObject[*appsv1.StatefulSet]) {
			if d.Obj != nil {
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
		UpdateFunc: c.onPodUpdate,
		DeleteFunc: func(d cache.DeletedObject[*corev1.Pod]) {
			if d.Obj != nil {
				c.onPodDelete(d.Obj)
			}
		},
	}); err != nil {
		return nil, err
	}
	// The claim and revision listers are read in syncs.
	if _, err := c.pvcIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.PersistentVolumeClaim]{}); err != nil {
		return nil, err
	}
	if _, err := c.revIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*appsv1.ControllerRevision]{}); err != nil {
		return nil, err
	}
	return c, nil
}

func keyOf(s *appsv1.StatefulSet) string { return s.Namespace + "/" + s.Name }

func (c *Controller) enqueue(s *appsv1.StatefulSet) { c.queue.Add(keyOf(s)) }

// Run waits for the caches and runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.cfg.Informers.Start(ctx)
	if !cache.WaitForCacheSync(ctx, c.setIn.HasSynced, c.podIn.HasSynced, c.pvcIn.HasSynced, c.revIn.HasSynced) {
		return ctx.Err()
	}
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, c.Sync, func(key string, err error) {
		c.log.Info("sync failed", "key", key, "err", err)
	})
	return nil
}

func (c *Controller) resolve(ns string, ref *metav1.OwnerReference) *appsv1.StatefulSet {
	s, _ := controllerref.Resolve(ref, controllerKind.Kind, c.setIn.Lister().Namespace(ns).Get)
	return s
}

// setsForPod are the sets whose selector matches an orphan pod.
func (c *Controller) setsForPod(p *corev1.Pod) []*appsv1.StatefulSet {
	all, err := c.setIn.Lister().Namespace(p.Namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	return controllerref.Selecting(all, func(s *appsv1.StatefulSet) *metav1.LabelSelector { return s.Spec.Selector }, p.Labels)
}

func (c *Controller) addPod(p *corev1.Pod) {
	if p.DeletionTimestamp != nil {
		c.onPodDelete(p)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
		if s := c.resolve(p.Namespace, ref); s != nil {
			c.enqueue(s)
		}
		return
	}
	for _, s := range c.setsForPod(p) {
		c.enqueue(s)
	}
}

func (c *Controller) onPodUpdate(old, cur *corev1.Pod) {
	if cur.ResourceVersion == old.ResourceVersion {
		return
	}
	labelChanged := !reflect.DeepEqual(cur.Labels, old.Labels)
	curRef, oldRef := metav1.GetControllerOfNoCopy(cur), metav1.GetControllerOfNoCopy(old)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if s := c.resolve(old.Namespace, oldRef); s != nil {
			c.enqueue(s)
		}
	}
	if curRef != nil {
		s := c.resolve(cur.Namespace, curRef)
		if s == nil {
			return
		}
		c.enqueue(s)
		if !podutil.IsPodReady(old) && podutil.IsPodReady(cur) && s.Spec.MinReadySeconds > 0 {
			c.queue.AddAfter(keyOf(s), time.Duration(s.Spec.MinReadySeconds)*time.Second+time.Second)
		}
		return
	}
	if labelChanged || refChanged {
		for _, s := range c.setsForPod(cur) {
			c.enqueue(s)
		}
	}
}

func (c *Controller) onPodDelete(p *corev1.Pod) {
	if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
		if s := c.resolve(p.Namespace, ref); s != nil {
			c.enqueue(s)
		}
	}
}

func (c *Controller) canAdopt(set *appsv1.StatefulSet) func(context.Context) error {
	return controllerref.RecheckDeletionTimestamp(set, func(ctx context.Context) (metav1.Object, error) {
		return c.sets.Namespace(set.Namespace).Get(ctx, set.Name, metav1.GetOptions{})
	})
}

// Sync reconciles one StatefulSet (key "namespace/name"): adopt orphan
// revisions, claim its pods, create, update and delete pods and claims,
// write status, trim history.
func (c *Controller) Sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	set, err := c.setIn.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	selector, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil {
		return nil // validation forbids invalid selectors
	}
	revs, err := c.history.List(set, selector)
	if err != nil {
		return err
	}
	if err := c.history.Adopt(ctx, set, controllerKind, revs, c.canAdopt(set)); err != nil {
		return fmt.Errorf("can't adopt ControllerRevisions: %w", err)
	}
	all, err := controllerref.Controlled[*corev1.Pod](c.podIn.Informer().GetIndexer(), ns, set.UID, true)
	if err != nil {
		return err
	}
	m := &controllerref.Manager{Controller: set, Kind: controllerKind, Selector: selector, CanAdopt: c.canAdopt(set),
		Patch: controllerref.PatcherFor(c.pods)}
	pods, err := controllerref.Claim(ctx, m, all, func(p *corev1.Pod) bool { return isMemberOf(set, p) })
	if err != nil {
		return err
	}
	status, err := c.updateStatefulSet(ctx, set, pods)
	if err != nil {
		return err
	}
	if set.Spec.MinReadySeconds > 0 && status != nil && int(status.AvailableReplicas) != replicasOf(set) {
		c.queue.AddAfter(key, time.Duration(set.Spec.MinReadySeconds)*time.Second)
	}
	return nil
}
