package rootcacertpublisher

import (
	"context"
	"errors"
	"log/slog"
	"maps"

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

// Upstream's names.
const (
	// ConfigMapName is the published ConfigMap.
	ConfigMapName = "kube-root-ca.crt"
	// DataKey holds the CA bundle.
	DataKey = "ca.crt"
	// DescriptionAnnotation says what the ConfigMap is for.
	DescriptionAnnotation = "kubernetes.io/description"
	Description           = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."
	// QueueName is the workqueue's (and its metrics') name.
	QueueName = "root_ca_cert_publisher"
)

// Config configures the publisher.
type Config struct {
	Client    *client.Client
	Informers *informers.SharedInformerFactory
	Recorder  record.EventRecorder
	Clock     clock.Clock
	// Workers is 1 upstream (no flag).
	Workers         int
	Logger          *slog.Logger
	MetricsProvider workqueue.MetricsProvider
	// RootCA is the PEM bundle to publish (required).
	RootCA []byte
}

// Controller publishes the root CA.
type Controller struct {
	cfg      Config
	cms      *client.Typed[*corev1.ConfigMap, *corev1.ConfigMapList]
	cmLister cache.Lister[*corev1.ConfigMap]
	nsLister cache.Lister[*corev1.Namespace]
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
}

// New registers the publisher's informer handlers.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("rootcacertpublisher: Client and Informers are required")
	}
	if len(cfg.RootCA) == 0 {
		return nil, errors.New("rootcacertpublisher: no root CA to publish")
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
	c := &Controller{
		cfg: cfg,
		cms: client.For[*corev1.ConfigMap, *corev1.ConfigMapList](cfg.Client),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiterWithClock[string](cfg.Clock),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: QueueName, MetricsProvider: cfg.MetricsProvider, Clock: cfg.Clock}),
	}
	cms, nss := cfg.Informers.ConfigMaps(), cfg.Informers.Namespaces()
	if _, err := cms.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.ConfigMap]{
		UpdateFunc: func(_, cm *corev1.ConfigMap) {
			if cm.Name == ConfigMapName {
				c.queue.Add(cm.Namespace)
			}
		},
		DeleteFunc: func(d cache.DeletedObject[*corev1.ConfigMap]) {
			if ns, name, err := cache.SplitMetaNamespaceKey(d.Key()); err == nil && name == ConfigMapName {
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
	c.cmLister, c.nsLister = cms.Lister(), nss.Lister()
	c.synced = []cache.InformerSynced{cms.HasSynced, nss.HasSynced}
	return c, nil
}

// Run waits for the caches and runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.cfg.Logger.Info("Starting root CA cert publisher controller")
	defer c.cfg.Logger.Info("Shutting down root CA cert publisher controller")
	if !cache.WaitForCacheSync(ctx, c.synced...) {
		return nil
	}
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, c.sync, func(ns string, err error) {
		c.cfg.Logger.Error("Syncing namespace failed", "namespace", ns, "err", err)
	})
	return nil
}

// sync makes namespace ns's kube-root-ca.crt what it should be.
func (c *Controller) sync(ctx context.Context, ns string) error {
	want := map[string]string{DataKey: string(c.cfg.RootCA)}
	cm, err := c.cmLister.Namespace(ns).Get(ConfigMapName)
	switch {
	case apierrors.IsNotFound(err):
		_, err := c.cms.Namespace(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ConfigMapName, Annotations: map[string]string{DescriptionAnnotation: Description}},
			Data:       want,
		}, metav1.CreateOptions{})
		if apierrors.IsNotFound(err) || apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) || apierrors.IsAlreadyExists(err) {
			return nil // gone or going (or the cache is behind: its update event follows)
		}
		return err
	case err != nil:
		return err
	}
	if maps.Equal(cm.Data, want) && cm.Annotations[DescriptionAnnotation] != "" {
		return nil
	}
	cm = cm.DeepCopy()
	cm.Data = want
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[DescriptionAnnotation] = Description
	_, err = c.cms.Namespace(ns).Update(ctx, cm, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil // deleted meanwhile: its delete event queues ns again
	}
	return err
}
