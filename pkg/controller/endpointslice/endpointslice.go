package endpointslice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/controller/internal/endpointutil"
)

// DefaultMaxEndpointsPerSlice is upstream's --max-endpoints-per-slice.
const DefaultMaxEndpointsPerSlice = 100

// ErrStaleCache: the EndpointSlice informer has not caught up with this
// controller's own writes; the sync is retried.
var ErrStaleCache = errors.New("EndpointSlice informer cache is out of date")

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
	// UpdatesBatchPeriod delays the syncs pod changes trigger, so that
	// changes close in time make one write (--endpointslice-updates-batch-period, 0).
	UpdatesBatchPeriod time.Duration
	// MaxEndpointsPerSlice caps the endpoints of one slice (default 100).
	MaxEndpointsPerSlice int
}

// Controller keeps the EndpointSlices of Services with selectors.
type Controller struct {
	cfg      Config
	slices   *client.Typed[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList]
	podIn    *cache.TypedInformer[*corev1.Pod]
	svcIn    *cache.TypedInformer[*corev1.Service]
	sliceIn  *cache.TypedInformer[*discoveryv1.EndpointSlice]
	nodeIn   *cache.TypedInformer[*corev1.Node]
	queue    workqueue.TypedRateLimitingInterface[string]
	triggers *endpointutil.TriggerTimeTracker
	// Tracker remembers the slices this controller wrote.
	Tracker *endpointutil.SliceTracker
	log     *slog.Logger
}

// New returns the EndpointSlice controller.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("endpointslice: Client and Informers are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 5
	}
	if cfg.MaxEndpointsPerSlice <= 0 {
		cfg.MaxEndpointsPerSlice = DefaultMaxEndpointsPerSlice
	}
	if cfg.MaxEndpointsPerSlice > 1000 {
		return nil, fmt.Errorf("endpointslice: max endpoints per slice %d: must be at most 1000", cfg.MaxEndpointsPerSlice)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Recorder == nil {
		cfg.Recorder = &record.FakeRecorder{}
	}
	c := &Controller{
		cfg:      cfg,
		slices:   client.For[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList](cfg.Client),
		podIn:    cfg.Informers.Pods(),
		svcIn:    cfg.Informers.Services(),
		sliceIn:  cfg.Informers.EndpointSlices(),
		nodeIn:   cfg.Informers.Nodes(),
		triggers: endpointutil.NewTriggerTimeTracker(),
		Tracker:  endpointutil.NewSliceTracker(),
		log:      cfg.Logger,
		// Upstream's queue: per-item exponential back-off from 1s up to
		// 1000s, plus the overall bucket.
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.NewTypedMaxOfRateLimiter(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, 1000*time.Second),
			workqueue.DefaultTypedControllerRateLimiter[string]()),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "endpoint_slice", MetricsProvider: cfg.MetricsProvider}),
	}
	svcKey := func(s *corev1.Service) { c.queue.Add(endpointutil.Key(s.Namespace, s.Name)) }
	if _, err := c.svcIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Service]{
		AddFunc:    func(s *corev1.Service, _ bool) { svcKey(s) },
		UpdateFunc: func(_, s *corev1.Service) { svcKey(s) },
		DeleteFunc: func(d cache.DeletedObject[*corev1.Service]) { c.queue.Add(d.Key()) },
	}); err != nil {
		return nil, err
	}
	if _, err := c.podIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc:    func(p *corev1.Pod, _ bool) { c.addPod(p) },
		UpdateFunc: c.updatePod,
		DeleteFunc: func(d cache.DeletedObject[*corev1.Pod]) {
			if d.Obj != nil {
				c.addPod(d.Obj)
			}
		},
	}); err != nil {
		return nil, err
	}
	if _, err := c.sliceIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*discoveryv1.EndpointSlice]{
		AddFunc: func(s *discoveryv1.EndpointSlice, _ bool) {
			if managed(s) && c.Tracker.ShouldSync(s) {
				c.queueSlice(s)
			}
		},
		UpdateFunc: func(old, cur *discoveryv1.EndpointSlice) {
			if !managed(old) && !managed(cur) {
				return
			}
			if old.Labels[discoveryv1.LabelServiceName] != cur.Labels[discoveryv1.LabelServiceName] || managed(old) != managed(cur) {
				c.queueSlice(old)
				c.queueSlice(cur)
				return
			}
			if c.Tracker.ShouldSync(cur) {
				c.queueSlice(cur)
			}
		},
		DeleteFunc: func(d cache.DeletedObject[*discoveryv1.EndpointSlice]) {
			if d.Obj != nil && managed(d.Obj) && c.Tracker.HandleDeletion(d.Obj) {
				c.queueSlice(d.Obj)
			}
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

func managed(s *discoveryv1.EndpointSlice) bool {
	return s.Labels[discoveryv1.LabelManagedBy] == ControllerName && s.Labels[discoveryv1.LabelServiceName] != ""
}

func (c *Controller) queueSlice(s *discoveryv1.EndpointSlice) {
	if name := s.Labels[discoveryv1.LabelServiceName]; name != "" {
		c.queue.Add(endpointutil.Key(s.Namespace, name))
	}
}

func (c *Controller) services(ns string) []*corev1.Service {
	s, _ := c.svcIn.Lister().Namespace(ns).List(labels.Everything())
	return s
}

func (c *Controller) addPod(p *corev1.Pod) {
	for k := range endpointutil.ServicesForPod(c.services(p.Namespace), p) {
		c.queue.AddAfter(k, c.cfg.UpdatesBatchPeriod)
	}
}

func (c *Controller) updatePod(old, cur *corev1.Pod) {
	for k := range endpointutil.ServicesToUpdateOnPodChange(c.services(cur.Namespace), old, cur) {
		c.queue.AddAfter(k, c.cfg.UpdatesBatchPeriod)
	}
}

// Run waits for the caches and runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.cfg.Informers.Start(ctx)
	if !cache.WaitForCacheSync(ctx, c.podIn.HasSynced, c.svcIn.HasSynced, c.sliceIn.HasSynced, c.nodeIn.HasSynced) {
		return ctx.Err()
	}
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, c.Sync, func(key string, err error) {
		c.log.Info("Error syncing endpoint slices for service, retrying", "service", key, "err", err)
	})
	return nil
}

// Sync reconciles the EndpointSlices of one Service (key
// "namespace/name").
func (c *Controller) Sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	svc, err := c.svcIn.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		// The garbage collector removes the slices it owned.
		c.triggers.DeleteService(ns, name)
		c.Tracker.DeleteService(ns, name)
		return nil
	}
	if err != nil {
		return err
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.Selector == nil {
		return nil
	}
	pods, err := c.podIn.Lister().Namespace(ns).List(labels.SelectorFromValidatedSet(svc.Spec.Selector))
	if err != nil {
		return err
	}
	listed, err := c.sliceIn.Lister().Namespace(ns).List(labels.SelectorFromValidatedSet(map[string]string{
		discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: ControllerName}))
	if err != nil {
		return err
	}
	var existing []*discoveryv1.EndpointSlice
	for _, s := range listed {
		if s.DeletionTimestamp == nil {
			existing = append(existing, s)
		}
	}
	if c.Tracker.StaleSlices(ns, name, existing) {
		return ErrStaleCache
	}
	trigger := c.triggers.Compute(svc, pods)
	plan, planErr := Reconcile(svc, pods, existing, func(n string) (*corev1.Node, error) {
		return c.nodeIn.Lister().Get(n)
	}, c.cfg.MaxEndpointsPerSlice)
	if err := c.apply(ctx, svc, plan, trigger); err != nil {
		c.cfg.Recorder.Eventf(svc, corev1.EventTypeWarning, "FailedToUpdateEndpointSlices",
			"Error updating Endpoint Slices for Service %s/%s: %v", ns, name, err)
		return err
	}
	return planErr
}

func setTrigger(s *discoveryv1.EndpointSlice, trigger time.Time) {
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	if !trigger.IsZero() {
		s.Annotations[corev1.EndpointsLastChangeTriggerTime] = trigger.UTC().Format(time.RFC3339Nano)
	} else {
		delete(s.Annotations, corev1.EndpointsLastChangeTriggerTime)
	}
}

// apply writes a plan: creations (none for a Service being deleted),
// updates, then deletions.
func (c *Controller) apply(ctx context.Context, svc *corev1.Service, plan Plan, trigger time.Time) error {
	api := c.slices.Namespace(svc.Namespace)
	if svc.DeletionTimestamp == nil {
		for _, s := range plan.Create {
			setTrigger(s, trigger)
			out, err := api.Create(ctx, s, metav1.CreateOptions{})
			if err != nil {
				if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
					return nil
				}
				return fmt.Errorf("failed to create EndpointSlice for Service %s/%s: %v", svc.Namespace, svc.Name, err)
			}
			c.Tracker.Update(out)
		}
	}
	for _, s := range plan.Update {
		setTrigger(s, trigger)
		out, err := api.Update(ctx, s, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("failed to update %s EndpointSlice for Service %s/%s: %v", s.Name, svc.Namespace, svc.Name, err)
		}
		c.Tracker.Update(out)
	}
	for _, s := range plan.Delete {
		if err := api.Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("failed to delete %s EndpointSlice for Service %s/%s: %v", s.Name, svc.Namespace, svc.Name, err)
		}
		c.Tracker.ExpectDeletion(s)
	}
	return nil
}
