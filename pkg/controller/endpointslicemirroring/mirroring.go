package endpointslicemirroring

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

// Event reasons, as upstream's.
const (
	InvalidIPAddressReason         = "InvalidIPAddress"
	TooManyAddressesToMirrorReason = "TooManyAddressesToMirror"
	leaderAnnotation               = "control-plane.alpha.kubernetes.io/leader"
)

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
	// MaxEndpointsPerSubset caps the addresses mirrored per subset
	// (default 1000).
	MaxEndpointsPerSubset int
}

// Controller mirrors custom Endpoints into EndpointSlices.
type Controller struct {
	cfg     Config
	slices  *client.Typed[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList]
	epIn    *cache.TypedInformer[*corev1.Endpoints]
	svcIn   *cache.TypedInformer[*corev1.Service]
	sliceIn *cache.TypedInformer[*discoveryv1.EndpointSlice]
	queue   workqueue.TypedRateLimitingInterface[string]
	// Tracker remembers the slices this controller wrote.
	Tracker *endpointutil.SliceTracker
	log     *slog.Logger
}

// New returns the mirroring controller.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("endpointslicemirroring: Client and Informers are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 5
	}
	if cfg.MaxEndpointsPerSubset <= 0 {
		cfg.MaxEndpointsPerSubset = DefaultMaxEndpointsPerSubset
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Recorder == nil {
		cfg.Recorder = &record.FakeRecorder{}
	}
	c := &Controller{
		cfg:     cfg,
		slices:  client.For[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList](cfg.Client),
		epIn:    cfg.Informers.Endpoints(),
		svcIn:   cfg.Informers.Services(),
		sliceIn: cfg.Informers.EndpointSlices(),
		Tracker: endpointutil.NewSliceTracker(),
		log:     cfg.Logger,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.NewTypedMaxOfRateLimiter(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, 1000*time.Second),
			workqueue.DefaultTypedControllerRateLimiter[string]()),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "endpoint_slice_mirroring", MetricsProvider: cfg.MetricsProvider}),
	}
	if _, err := c.svcIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Service]{
		AddFunc: func(s *corev1.Service, _ bool) { c.queue.Add(endpointutil.Key(s.Namespace, s.Name)) },
		UpdateFunc: func(old, cur *corev1.Service) {
			if (old.Spec.Selector == nil) != (cur.Spec.Selector == nil) {
				c.queue.Add(endpointutil.Key(cur.Namespace, cur.Name))
			}
		},
		DeleteFunc: func(d cache.DeletedObject[*corev1.Service]) { c.queue.Add(d.Key()) },
	}); err != nil {
		return nil, err
	}
	if _, err := c.epIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Endpoints]{
		AddFunc: func(ep *corev1.Endpoints, _ bool) {
			if shouldMirror(ep) {
				c.queue.Add(endpointutil.Key(ep.Namespace, ep.Name))
			}
		},
		UpdateFunc: func(old, cur *corev1.Endpoints) {
			if shouldMirror(old) || shouldMirror(cur) {
				c.queue.Add(endpointutil.Key(cur.Namespace, cur.Name))
			}
		},
		DeleteFunc: func(d cache.DeletedObject[*corev1.Endpoints]) {
			if d.Obj == nil || shouldMirror(d.Obj) {
				c.queue.Add(d.Key())
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
			if old.Labels[discoveryv1.LabelServiceName] != cur.Labels[discoveryv1.LabelServiceName] || managed(old) != managed(cur) {
				c.queueSlice(old)
				c.queueSlice(cur)
				return
			}
			if managed(cur) && c.Tracker.ShouldSync(cur) {
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

// shouldMirror: not labelled skip-mirror, not a leader-election record.
func shouldMirror(ep *corev1.Endpoints) bool {
	if ep == nil || ep.Labels[discoveryv1.LabelSkipMirror] == "true" {
		return false
	}
	_, leader := ep.Annotations[leaderAnnotation]
	return !leader
}

func managed(s *discoveryv1.EndpointSlice) bool {
	return s.Labels[discoveryv1.LabelManagedBy] == ControllerName && s.Labels[discoveryv1.LabelServiceName] != ""
}

func (c *Controller) queueSlice(s *discoveryv1.EndpointSlice) {
	if managed(s) {
		c.queue.Add(endpointutil.Key(s.Namespace, s.Labels[discoveryv1.LabelServiceName]))
	}
}

// Run waits for the caches and runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.cfg.Informers.Start(ctx)
	if !cache.WaitForCacheSync(ctx, c.epIn.HasSynced, c.svcIn.HasSynced, c.sliceIn.HasSynced) {
		return ctx.Err()
	}
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, c.Sync, func(key string, err error) {
		c.log.Info("Error mirroring EndpointSlices for Endpoints, retrying", "endpoints", key, "err", err)
	})
	return nil
}

// mirrored are the slices this controller made for ns/name.
func (c *Controller) mirrored(ns, name string) ([]*discoveryv1.EndpointSlice, error) {
	return c.sliceIn.Lister().Namespace(ns).List(labels.SelectorFromValidatedSet(map[string]string{
		discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: ControllerName}))
}

// Sync mirrors one Endpoints object (key "namespace/name"), or removes
// its mirrored slices when it no longer qualifies.
func (c *Controller) Sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	ep, err := c.epIn.Lister().Namespace(ns).Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	mirror := err == nil && shouldMirror(ep)
	if mirror {
		svc, err := c.svcIn.Lister().Namespace(ns).Get(name)
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		mirror = err == nil && svc.Spec.Selector == nil
	}
	if !mirror {
		c.Tracker.DeleteService(ns, name)
		return c.deleteMirrored(ctx, ns, name)
	}
	existing, err := c.mirrored(ns, name)
	if err != nil {
		return err
	}
	if c.Tracker.StaleSlices(ns, name, existing) {
		return ErrStaleCache
	}
	plan := Reconcile(ep, existing, c.cfg.MaxEndpointsPerSubset)
	if plan.InvalidAddresses > 0 {
		c.cfg.Recorder.Eventf(ep, corev1.EventTypeWarning, InvalidIPAddressReason,
			"Skipped %d invalid IP addresses when mirroring to EndpointSlices", plan.InvalidAddresses)
	}
	if plan.SkippedAddresses > plan.InvalidAddresses {
		c.cfg.Recorder.Eventf(ep, corev1.EventTypeWarning, TooManyAddressesToMirrorReason,
			"A max of %d addresses can be mirrored to EndpointSlices per Endpoints subset. %d addresses were skipped",
			c.cfg.MaxEndpointsPerSubset, plan.SkippedAddresses)
	}
	return c.apply(ctx, ep, plan)
}

func (c *Controller) deleteMirrored(ctx context.Context, ns, name string) error {
	existing, err := c.mirrored(ns, name)
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range existing {
		if err := c.slices.Namespace(ns).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (c *Controller) apply(ctx context.Context, ep *corev1.Endpoints, plan Plan) error {
	api := c.slices.Namespace(ep.Namespace)
	if ep.DeletionTimestamp == nil {
		for _, s := range plan.Create {
			out, err := api.Create(ctx, s, metav1.CreateOptions{})
			if err != nil {
				if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
					return nil
				}
				return fmt.Errorf("failed to create EndpointSlice for Endpoints %s/%s: %v", ep.Namespace, ep.Name, err)
			}
			c.Tracker.Update(out)
		}
	}
	for _, s := range plan.Update {
		out, err := api.Update(ctx, s, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("failed to update %s EndpointSlice for Endpoints %s/%s: %v", s.Name, ep.Namespace, ep.Name, err)
		}
		c.Tracker.Update(out)
	}
	for _, s := range plan.Delete {
		if err := api.Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("failed to delete %s EndpointSlice for Endpoints %s/%s: %v", s.Name, ep.Namespace, ep.Name, err)
		}
		c.Tracker.ExpectDeletion(s)
	}
	return nil
}
