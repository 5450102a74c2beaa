package resourcequota

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/discovery"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/metadata"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/quota"
)

// QueueName is upstream's queue name.
const QueueName = "resourcequota_primary"

// DefaultResyncPeriod is upstream's --resource-quota-sync-period.
const DefaultResyncPeriod = 5 * time.Minute

// Config configures the controller.
type Config struct {
	Client    *client.Client
	Informers *informers.SharedInformerFactory
	Recorder  record.EventRecorder
	Clock     clock.Clock
	// Workers is --concurrent-resource-quota-syncs (5).
	Workers         int
	Logger          *slog.Logger
	MetricsProvider workqueue.MetricsProvider
	// ResyncPeriod is --resource-quota-sync-period (0: 5m).
	ResyncPeriod time.Duration
}

// Controller keeps the ResourceQuotas' status.
type Controller struct {
	cfg       Config
	quotas    *client.Typed[*corev1.ResourceQuota, *corev1.ResourceQuotaList]
	rqLister  cache.Lister[*corev1.ResourceQuota]
	pods      cache.Lister[*corev1.Pod]
	services  cache.Lister[*corev1.Service]
	pvcs      cache.Lister[*corev1.PersistentVolumeClaim]
	synced    []cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]
	discovery *discovery.Client
	meta      *metadata.SharedInformerFactory

	mu       sync.Mutex
	runCtx   context.Context // set by Run: monitors are started in it
	monitors map[schema.GroupVersionResource]*metadata.Informer
}

// New registers the controller's informer handlers.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("resourcequota: Client and Informers are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Workers < 1 {
		cfg.Workers = 5
	}
	if cfg.ResyncPeriod <= 0 {
		cfg.ResyncPeriod = DefaultResyncPeriod
	}
	c := &Controller{
		cfg:       cfg,
		quotas:    client.For[*corev1.ResourceQuota, *corev1.ResourceQuotaList](cfg.Client),
		discovery: discovery.New(cfg.Client),
		meta:      metadata.NewSharedInformerFactory(cfg.Client, 0),
		monitors:  map[schema.GroupVersionResource]*metadata.Informer{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiterWithClock[string](cfg.Clock),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: QueueName, MetricsProvider: cfg.MetricsProvider, Clock: cfg.Clock}),
	}
	rqs := informers.InformerFor[*corev1.ResourceQuota, *corev1.ResourceQuotaList](cfg.Informers)
	pods, svcs, pvcs := cfg.Informers.Pods(), cfg.Informers.Services(), cfg.Informers.PersistentVolumeClaims()
	c.rqLister, c.pods, c.services, c.pvcs = rqs.Lister(), pods.Lister(), svcs.Lister(), pvcs.Lister()
	c.synced = []cache.InformerSynced{rqs.HasSynced, pods.HasSynced, svcs.HasSynced, pvcs.HasSynced}
	if _, err := rqs.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.ResourceQuota]{
		AddFunc: func(q *corev1.ResourceQuota, _ bool) { c.enqueue(q) },
		UpdateFunc: func(old, q *corev1.ResourceQuota) {
			// A spec.hard change calls for a recalculation, and so does a
			// status.used change: the ResourceQuota admission plugin
			// charges objects in status.used, and its charge can reach
			// this informer after the charged object's own events (a
			// config map created and deleted before the quota's update
			// arrives left the charge in place until the next resync).
			// The controller's own writes cost one sync that writes
			// nothing.
			if !quota.Equals(old.Spec.Hard, q.Spec.Hard) || !quota.Equals(old.Status.Used, q.Status.Used) {
				c.enqueue(q)
			}
		},
		DeleteFunc: func(d cache.DeletedObject[*corev1.ResourceQuota]) {
			if ns, _, err := cache.SplitMetaNamespaceKey(d.Key()); err == nil {
				c.replenish(ns, matchingQuotaCounts)
			}
		},
	}); err != nil {
		return nil, err
	}
	if _, err := pods.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc: func(p *corev1.Pod, _ bool) { c.replenish(p.Namespace, quota.MatchingPodResources) },
		UpdateFunc: func(old, p *corev1.Pod) {
			now := c.cfg.Clock.Now()
			if quota.QuotaPod(old, now) && !quota.QuotaPod(p, now) {
				c.replenish(p.Namespace, quota.MatchingPodResources)
			}
		},
		DeleteFunc: func(d cache.DeletedObject[*corev1.Pod]) { c.replenishKey(d.Key(), quota.MatchingPodResources) },
	}); err != nil {
		return nil, err
	}
	if _, err := svcs.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Service]{
		AddFunc: func(s *corev1.Service, _ bool) { c.replenish(s.Namespace, quota.MatchingServiceResources) },
		UpdateFunc: func(old, s *corev1.Service) {
			if quota.QuotaServiceType(old) != quota.QuotaServiceType(s) {
				c.replenish(s.Namespace, quota.MatchingServiceResources)
			}
		},
		DeleteFunc: func(d cache.DeletedObject[*corev1.Service]) { c.replenishKey(d.Key(), quota.MatchingServiceResources) },
	}); err != nil {
		return nil, err
	}
	if _, err := pvcs.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.PersistentVolumeClaim]{
		AddFunc: func(p *corev1.PersistentVolumeClaim, _ bool) { c.replenish(p.Namespace, quota.MatchingPVCResources) },
		UpdateFunc: func(old, p *corev1.PersistentVolumeClaim) {
			if !equality.Semantic.DeepEqual(quota.PVCStorage(old), quota.PVCStorage(p)) {
				c.replenish(p.Namespace, quota.MatchingPVCResources)
			}
		},
		DeleteFunc: func(d cache.DeletedObject[*corev1.PersistentVolumeClaim]) {
			c.replenishKey(d.Key(), quota.MatchingPVCResources)
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Controller) enqueue(q *corev1.ResourceQuota) {
	if key, err := cache.MetaNamespaceKeyFunc(q); err == nil {
		c.queue.Add(key)
	}
}

func (c *Controller) replenishKey(key string, matching func([]corev1.ResourceName) []corev1.ResourceName) {
	if ns, _, err := cache.SplitMetaNamespaceKey(key); err == nil {
		c.replenish(ns, matching)
	}
}

// replenish queues the quotas of namespace ns that track a resource
// matching says is affected.
func (c *Controller) replenish(ns string, matching func([]corev1.ResourceName) []corev1.ResourceName) {
	qs, err := c.rqLister.Namespace(ns).List(labels.Everything())
	if err != nil {
		return
	}
	for _, q := range qs {
		if len(matching(quota.ResourceNames(q.Spec.Hard))) > 0 {
			c.enqueue(q)
		}
	}
}

// enqueueAll queues every quota (the periodic full resync).
func (c *Controller) enqueueAll() {
	qs, err := c.rqLister.List(labels.Everything())
	if err != nil {
		return
	}
	for _, q := range qs {
		c.enqueue(q)
	}
}

// Run waits for the caches and runs the workers and the resync until ctx
// ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.cfg.Logger.Info("Starting resource quota controller")
	defer c.cfg.Logger.Info("Shutting down resource quota controller")
	defer c.meta.Shutdown()
	if !cache.WaitForCacheSync(ctx, c.synced...) {
		return nil
	}
	c.mu.Lock()
	c.runCtx = ctx
	c.mu.Unlock()
	go func() {
		t := c.cfg.Clock.NewTicker(c.cfg.ResyncPeriod)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C():
				c.enqueueAll()
			}
		}
	}()
	go func() {
		// Upstream's quota monitors follow discovery every 30s: the
		// informer of a resource no longer served (a deleted CRD) stops
		// instead of failing its list and watch forever.
		t := c.cfg.Clock.NewTicker(DiscoveryPeriod)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C():
				c.pruneMonitors(ctx)
			}
		}
	}()
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, c.sync, func(key string, err error) {
		c.cfg.Logger.Error("Syncing resource quota failed", "quota", key, "err", err)
	})
	return nil
}

// sync recalculates the quota key's usage and writes its status when it
// changed.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	q, err := c.rqLister.Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	dirty := !quota.Equals(q.Spec.Hard, q.Status.Hard) || q.Status.Hard == nil || q.Status.Used == nil
	used := corev1.ResourceList{}
	for k, v := range q.Status.Used {
		used[k] = v.DeepCopy()
	}
	newUsage, calcErr := c.calculateUsage(ctx, q)
	for k, v := range newUsage {
		used[k] = v
	}
	hard := corev1.ResourceList{}
	for k, v := range q.Spec.Hard {
		hard[k] = v.DeepCopy()
	}
	for k := range used {
		if _, ok := hard[k]; !ok {
			delete(used, k)
		}
	}
	dirty = dirty || !quota.Equals(used, q.Status.Used)
	var errs []error
	if calcErr != nil {
		errs = append(errs, calcErr)
	}
	if dirty {
		update := q.DeepCopy()
		update.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: used}
		if _, err := c.quotas.Namespace(ns).UpdateStatus(ctx, update, metav1.UpdateOptions{}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// calculateUsage is upstream's CalculateUsage: each evaluator's usage of
// the resources of spec.hard it tracks, masked to them; the resources of
// an evaluator that failed are left out.
func (c *Controller) calculateUsage(ctx context.Context, q *corev1.ResourceQuota) (corev1.ResourceList, error) {
	hard := quota.ResourceNames(q.Spec.Hard)
	now := c.cfg.Clock.Now()
	scoped := len(q.Spec.Scopes) > 0 || (q.Spec.ScopeSelector != nil && len(q.Spec.ScopeSelector.MatchExpressions) > 0)
	usage := corev1.ResourceList{}
	var errs []error

	// Pods.
	if tracked := quota.MatchingPodResources(hard); len(tracked) > 0 {
		stats := quota.Zeroed(tracked)
		pods, err := c.pods.Namespace(q.Namespace).List(labels.Everything())
		if err != nil {
			errs = append(errs, err)
		} else {
			for _, p := range pods {
				ok, err := quota.PodMatchesQuota(q, p)
				if err != nil {
					errs = append(errs, err)
					break
				}
				if ok {
					quota.Add(stats, quota.PodUsage(p, now))
				}
			}
			quota.MergeMasked(usage, stats, tracked)
		}
	}
	// Services and claims: nothing under a scope (upstream's
	// MatchesNoScopeFunc).
	if tracked := quota.MatchingServiceResources(hard); len(tracked) > 0 {
		stats := quota.Zeroed(tracked)
		if !scoped {
			svcs, err := c.services.Namespace(q.Namespace).List(labels.Everything())
			if err != nil {
				errs = append(errs, err)
			}
			for _, s := range svcs {
				quota.Add(stats, quota.ServiceUsage(s))
			}
		}
		quota.MergeMasked(usage, stats, tracked)
	}
	if tracked := quota.MatchingPVCResources(hard); len(tracked) > 0 {
		stats := quota.Zeroed(tracked)
		if !scoped {
			pvcs, err := c.pvcs.Namespace(q.Namespace).List(labels.Everything())
			if err != nil {
				errs = append(errs, err)
			}
			for _, p := range pvcs {
				quota.Add(stats, quota.PVCUsage(p))
			}
		}
		quota.MergeMasked(usage, stats, tracked)
	}
	// Object counts.
	for _, name := range hard {
		gr, ok := quota.CountedResource(name)
		if !ok {
			continue
		}
		if scoped {
			usage[name] = quota.Zero()
			continue
		}
		n, err := c.count(ctx, gr, q.Namespace)
		if err != nil {
			errs = append(errs, fmt.Errorf("counting %s: %w", name, err))
			continue
		}
		usage[name] = *resource.NewQuantity(n, resource.DecimalSI)
	}
	return usage, errors.Join(errs...)
}

// matchingQuotaCounts: the names that count resourcequotas.
func matchingQuotaCounts(names []corev1.ResourceName) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, n := range names {
		if gr, ok := quota.CountedResource(n); ok && gr == (schema.GroupResource{Resource: "resourcequotas"}) {
			out = append(out, n)
		}
	}
	return out
}

// count is the number of objects of gr in namespace ns: from the quota
// lister for resourcequotas, else from the resource's metadata informer
// once synced, else by a list.
func (c *Controller) count(ctx context.Context, gr schema.GroupResource, ns string) (int64, error) {
	if gr == (schema.GroupResource{Resource: "resourcequotas"}) {
		qs, err := c.rqLister.Namespace(ns).List(labels.Everything())
		return int64(len(qs)), err
	}
	res, err := c.resolve(ctx, gr)
	if err != nil {
		return 0, err
	}
	if inf := c.monitor(res); inf != nil && inf.HasSynced() {
		objs, err := inf.Informer().GetIndexer().ByIndex(cache.NamespaceIndex, ns)
		return int64(len(objs)), err
	}
	var n int64
	opts := metav1.ListOptions{Limit: 500}
	for {
		l, err := c.meta.Client().Resource(res).Namespace(ns).List(ctx, opts)
		if err != nil {
			return 0, err
		}
		n += int64(len(l.Items))
		if l.Continue == "" {
			return n, nil
		}
		opts.Continue = l.Continue
	}
}

// resolve finds the served, namespaced resource gr (its preferred
// version) by discovery, refreshed once when it is not known.
func (c *Controller) resolve(ctx context.Context, gr schema.GroupResource) (client.Resource, error) {
	for attempt := 0; attempt < 2; attempt++ {
		lists, err := c.discovery.ServerPreferredNamespacedResources(ctx)
		if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
			return client.Resource{}, err
		}
		for _, l := range lists {
			gv, err := schema.ParseGroupVersion(l.GroupVersion)
			if err != nil || gv.Group != gr.Group {
				continue
			}
			for _, r := range l.APIResources {
				if r.Name == gr.Resource && slices.Contains(r.Verbs, "list") {
					return discovery.ResourceOf(gv.WithResource(r.Name), r), nil
				}
			}
		}
		c.discovery.Invalidate()
	}
	return client.Resource{}, fmt.Errorf("the server does not serve %s", gr)
}

// DiscoveryPeriod is how often the monitors are checked against discovery
// (upstream's quota controller: 30s).
const DiscoveryPeriod = 30 * time.Second

// pruneMonitors stops the informers of resources the server no longer
// serves. A discovery that fails, even partly, prunes nothing.
func (c *Controller) pruneMonitors(ctx context.Context) {
	c.discovery.Invalidate()
	lists, err := c.discovery.ServerPreferredNamespacedResources(ctx)
	if err != nil {
		return
	}
	served := map[schema.GroupVersionResource]bool{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			served[gv.WithResource(r.Name)] = true
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for gvr := range c.monitors {
		if !served[gvr] {
			c.meta.Stop(gvr)
			delete(c.monitors, gvr)
			c.cfg.Logger.Info("Stopped monitoring a resource no longer served", "resource", gvr.String())
		}
	}
}

// monitor returns the started metadata informer of res, starting it the
// first time (nil before Run: sync then lists).
func (c *Controller) monitor(res client.Resource) *metadata.Informer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runCtx == nil {
		return nil
	}
	gvr := res.GroupVersionResource()
	if inf, ok := c.monitors[gvr]; ok {
		return inf
	}
	inf := c.meta.ForResource(res)
	gr := gvr.GroupResource()
	matching := func(names []corev1.ResourceName) []corev1.ResourceName {
		var out []corev1.ResourceName
		for _, n := range names {
			if g, ok := quota.CountedResource(n); ok && g == gr {
				out = append(out, n)
			}
		}
		return out
	}
	_, _ = inf.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*metav1.PartialObjectMetadata]{
		AddFunc:    func(o *metav1.PartialObjectMetadata, _ bool) { c.replenish(o.Namespace, matching) },
		DeleteFunc: func(d cache.DeletedObject[*metav1.PartialObjectMetadata]) { c.replenishKey(d.Key(), matching) },
	})
	c.monitors[gvr] = inf
	c.meta.Start(c.runCtx)
	return inf
}
