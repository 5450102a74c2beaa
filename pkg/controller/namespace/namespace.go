package namespace

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/discovery"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/metadata"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
)

// DefaultWorkers is upstream's --concurrent-namespace-syncs default.
const DefaultWorkers = 10

// DefaultResync is upstream's namespace resync period.
const DefaultResync = 5 * time.Minute

// Config configures the namespace controller.
type Config struct {
	Client    *client.Client
	Informers *informers.SharedInformerFactory
	Recorder  record.EventRecorder
	// Clock drives the work queue (requeues after an estimate).
	Clock   clock.Clock
	Workers int
	Logger  *slog.Logger
	// MetricsProvider for the work queue (may be nil).
	MetricsProvider workqueue.MetricsProvider
}

// Controller is the namespace controller.
type Controller struct {
	cfg        Config
	log        *slog.Logger
	disc       *discovery.Client
	meta       *metadata.Client
	namespaces *client.Typed[*corev1.Namespace, *corev1.NamespaceList]
	pods       *client.Typed[*corev1.Pod, *corev1.PodList]
	informer   *cache.TypedInformer[*corev1.Namespace]
	queue      workqueue.TypedRateLimitingInterface[string]
}

// New returns a namespace controller; its handlers are registered on
// cfg.Informers (made when nil).
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil {
		return nil, errors.New("namespace: no client")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.Informers == nil {
		cfg.Informers = informers.NewSharedInformerFactory(cfg.Client, DefaultResync)
	}
	c := &Controller{
		cfg:        cfg,
		log:        cfg.Logger.With("controller", "namespace"),
		disc:       discovery.New(cfg.Client),
		meta:       metadata.New(cfg.Client),
		namespaces: client.For[*corev1.Namespace, *corev1.NamespaceList](cfg.Client),
		pods:       client.For[*corev1.Pod, *corev1.PodList](cfg.Client),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(namespaceRateLimiter(cfg.Clock),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "namespace", Clock: cfg.Clock, MetricsProvider: cfg.MetricsProvider}),
	}
	c.informer = cfg.Informers.Namespaces()
	if _, err := c.informer.Informer().AddEventHandlerWithResyncPeriod(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, cur any) { c.enqueue(cur) },
	}, DefaultResync); err != nil {
		return nil, err
	}
	return c, nil
}

// namespaceRateLimiter is upstream's: per-item exponential back-off from
// 5ms to 60s (no overall bucket: namespace deletion is rare).
func namespaceRateLimiter(clk clock.Clock) workqueue.TypedRateLimiter[string] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 60*time.Second)
}

func (c *Controller) enqueue(obj any) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok || ns.DeletionTimestamp == nil {
		return
	}
	// Deleting a namespace is costly: let the queue coalesce bursts.
	c.queue.AddAfter(ns.Name, time.Second)
}

// Run runs the controller until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer c.queue.ShutDown()
	c.cfg.Informers.Start(ctx)
	if !cache.WaitForSynced(ctx, c.informer.Informer().Synced()) {
		return nil
	}
	for range c.cfg.Workers {
		wg.Go(func() {
			for c.processNext(ctx) {
			}
		})
	}
	<-ctx.Done()
	return nil
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	err := c.sync(ctx, key)
	if err == nil {
		c.queue.Forget(key)
		return true
	}
	var remaining *ResourcesRemainingError
	if errors.As(err, &remaining) {
		t := remaining.Estimate/2 + 1
		c.log.Debug("content remaining in namespace", "namespace", key, "waiting", t)
		c.queue.AddAfter(key, time.Duration(t)*time.Second)
		return true
	}
	if ctx.Err() == nil {
		c.log.Info("deletion of namespace failed", "namespace", key, "err", err)
	}
	c.queue.AddRateLimited(key)
	return true
}

// sync runs one deletion pass for a namespace.
func (c *Controller) sync(ctx context.Context, name string) error {
	ns, err := c.informer.Lister().Get(name)
	if err != nil || ns.DeletionTimestamp == nil {
		return nil // gone, or not being deleted
	}
	return c.deleteNamespace(ctx, name)
}
