package serviceaccount

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
)

// QueueName is the workqueue's (and its metrics') name, upstream's.
const QueueName = "serviceaccount"

// Config configures the controller.
type Config struct {
	Client    *client.Client
	Informers *informers.SharedInformerFactory
	Recorder  record.EventRecorder
	Clock     clock.Clock
	// Workers is 1 upstream (no flag).
	Workers         int
	Logger          *slog.Logger
	MetricsProvider workqueue.MetricsProvider
	// ServiceAccounts every active namespace gets (nil: "default").
	ServiceAccounts []corev1.ServiceAccount
}

// Controller ensures the service accounts.
type Controller struct {
	cfg      Config
	sas      *client.Typed[*corev1.ServiceAccount, *corev1.ServiceAccountList]
	saLister cache.Lister[*corev1.ServiceAccount]
	nsLister cache.Lister[*corev1.Namespace]
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
}

// New registers the controller's informer handlers.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("serviceaccount: Client and Informers are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	if cfg.ServiceAccounts == nil {
		cfg.ServiceAccounts = []corev1.ServiceAccount{{ObjectMeta: metav1.ObjectMeta{Name: "default"}}}
	}
	c := &Controller{
		cfg: cfg,
		sas: client.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](cfg.Client),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiterWithClock[string](cfg.Clock),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: QueueName, MetricsProvider: cfg.MetricsProvider, Clock: cfg.Clock}),
	}
	sas, nss := cfg.Informers.ServiceAccounts(), cfg.Informers.Namespaces()
	if _, err := sas.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.ServiceAccount]{
		DeleteFunc: func(d cache.DeletedObject[*corev1.ServiceAccount]) {
			if ns, _, err := cache.SplitMetaNamespaceKey(d.Key()); err == nil && ns != "" {
				c.queue.Add(ns)
			}
		},
	}); err != nil {
		return nil, err
	}
	if _, err := nss.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Namespace]{
		AddFunc:    func(ns *corev1.Namespace, _ bool) { c.queue.Add(ns.Name) },
		UpdateFunc: func(_, ns *corev1.Namespace) { c.queue.Add(ns.Name) },
	}); err != nil {
		return nil, err
	}
	c.saLister, c.nsLister = sas.Lister(), nss.Lister()
	c.synced = []cache.InformerSynced{sas.HasSynced, nss.HasSynced}
	return c, nil
}

// Run waits for the caches and runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.cfg.Logger.Info("Starting service account controller")
	defer c.cfg.Logger.Info("Shutting down service account controller")
	if !cache.WaitForCacheSync(ctx, c.synced...) {
		return nil
	}
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, c.sync, func(ns string, err error) {
		c.cfg.Logger.Error("Syncing namespace failed", "namespace", ns, "err", err)
	})
	return nil
}

// sync creates the missing service accounts of namespace name.
func (c *Controller) sync(ctx context.Context, name string) error {
	ns, err := c.nsLister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ns.Status.Phase != corev1.NamespaceActive {
		return nil // upstream skips namespaces that are not active
	}
	var errs []error
	for _, want := range c.cfg.ServiceAccounts {
		if _, err := c.saLister.Namespace(ns.Name).Get(want.Name); err == nil {
			continue
		} else if !apierrors.IsNotFound(err) {
			errs = append(errs, err)
			continue
		}
		sa := want.DeepCopy()
		sa.Namespace = ns.Name
		if _, err := c.sas.Namespace(ns.Name).Create(ctx, sa, metav1.CreateOptions{}); err != nil &&
			!apierrors.IsAlreadyExists(err) && !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			errs = append(errs, fmt.Errorf("creating service account %s/%s: %w", ns.Name, sa.Name, err))
		}
	}
	return errors.Join(errs...)
}
