package pvprotection

import (
	"context"
	"errors"
	"log/slog"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/controller/internal/volumeutil"
)

// QueueName is upstream's queue name.
const QueueName = "pvprotection"

// Config configures the controller.
type Config struct {
	Client          *client.Client
	Informers       *informers.SharedInformerFactory
	Recorder        record.EventRecorder
	Clock           clock.Clock
	Workers         int
	Logger          *slog.Logger
	MetricsProvider workqueue.MetricsProvider
}

// Controller keeps the pv-protection finalizer.
type Controller struct {
	cfg     Config
	pvs     *client.Typed[*corev1.PersistentVolume, *corev1.PersistentVolumeList]
	volumes cache.Lister[*corev1.PersistentVolume]
	synced  []cache.InformerSynced
	queue   workqueue.TypedRateLimitingInterface[string]
}

// New registers the controller's informer handlers.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("pvprotection: Client and Informers are required")
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
		pvs: client.For[*corev1.PersistentVolume, *corev1.PersistentVolumeList](cfg.Client),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiterWithClock[string](cfg.Clock),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: QueueName, MetricsProvider: cfg.MetricsProvider, Clock: cfg.Clock}),
	}
	inf := cfg.Informers.PersistentVolumes()
	enqueue := func(pv *corev1.PersistentVolume) {
		if needToAddFinalizer(pv) || isDeletionCandidate(pv) {
			c.queue.Add(pv.Name)
		}
	}
	if _, err := inf.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.PersistentVolume]{
		AddFunc:    func(pv *corev1.PersistentVolume, _ bool) { enqueue(pv) },
		UpdateFunc: func(_, pv *corev1.PersistentVolume) { enqueue(pv) },
	}); err != nil {
		return nil, err
	}
	c.volumes = inf.Lister()
	c.synced = []cache.InformerSynced{inf.HasSynced}
	return c, nil
}

// Run waits for the cache and runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.cfg.Logger.Info("Starting PV protection controller")
	defer c.cfg.Logger.Info("Shutting down PV protection controller")
	if !cache.WaitForCacheSync(ctx, c.synced...) {
		return nil
	}
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, c.sync, func(key string, err error) {
		c.cfg.Logger.Error("PV protection failed", "volume", key, "err", err)
	})
	return nil
}

func needToAddFinalizer(pv *corev1.PersistentVolume) bool {
	return pv.DeletionTimestamp == nil && !slices.Contains(pv.Finalizers, volumeutil.PVProtectionFinalizer)
}

func isDeletionCandidate(pv *corev1.PersistentVolume) bool {
	return pv.DeletionTimestamp != nil && slices.Contains(pv.Finalizers, volumeutil.PVProtectionFinalizer)
}

// sync adds the finalizer, or removes it from a deleted volume no longer
// Bound.
func (c *Controller) sync(ctx context.Context, name string) error {
	pv, err := c.volumes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	clone := pv.DeepCopy()
	switch {
	case isDeletionCandidate(pv):
		if pv.Status.Phase == corev1.VolumeBound {
			return nil // in use; its next update brings it back
		}
		clone.Finalizers = slices.DeleteFunc(clone.Finalizers, func(f string) bool { return f == volumeutil.PVProtectionFinalizer })
	case needToAddFinalizer(pv):
		clone.Finalizers = append(clone.Finalizers, volumeutil.PVProtectionFinalizer)
	default:
		return nil
	}
	if _, err := c.pvs.Update(ctx, clone, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}
