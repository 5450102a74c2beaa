package persistentvolume

import (
	"context"
	"errors"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/controller/internal/volumeutil"
)

// Upstream's queue names.
const (
	ClaimQueueName  = "claims"
	VolumeQueueName = "volumes"
)

// DefaultSyncPeriod is upstream's --pvclaimbinder-sync-period.
const DefaultSyncPeriod = 15 * time.Second

// Config configures the binder.
type Config struct {
	Client    *client.Client
	Informers *informers.SharedInformerFactory
	Recorder  record.EventRecorder
	Clock     clock.Clock
	// Workers is ignored: one worker per queue, as upstream.
	Workers         int
	Logger          *slog.Logger
	MetricsProvider workqueue.MetricsProvider
	// SyncPeriod re-queues every claim and volume (0: DefaultSyncPeriod).
	SyncPeriod time.Duration
}

// Controller is the PersistentVolume binder.
type Controller struct {
	cfg  Config
	pvs  *client.Typed[*corev1.PersistentVolume, *corev1.PersistentVolumeList]
	pvcs *client.Typed[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]

	volumes cache.Lister[*corev1.PersistentVolume]
	claims  cache.Lister[*corev1.PersistentVolumeClaim]
	classes cache.Lister[*storagev1.StorageClass]
	pods    cache.Indexer
	synced  []cache.InformerSynced

	claimQueue  workqueue.TypedRateLimitingInterface[string]
	volumeQueue workqueue.TypedRateLimitingInterface[string]
}

// New registers the binder's informer handlers.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("persistentvolume: Client and Informers are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Recorder == nil {
		cfg.Recorder = &record.FakeRecorder{} // drops events
	}
	if cfg.SyncPeriod <= 0 {
		cfg.SyncPeriod = DefaultSyncPeriod
	}
	newQueue := func(name string) workqueue.TypedRateLimitingInterface[string] {
		return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiterWithClock[string](cfg.Clock),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name, MetricsProvider: cfg.MetricsProvider, Clock: cfg.Clock})
	}
	c := &Controller{
		cfg:         cfg,
		pvs:         client.For[*corev1.PersistentVolume, *corev1.PersistentVolumeList](cfg.Client),
		pvcs:        client.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](cfg.Client),
		claimQueue:  newQueue(ClaimQueueName),
		volumeQueue: newQueue(VolumeQueueName),
	}
	pvInf, pvcInf, scInf, podInf := cfg.Informers.PersistentVolumes(), cfg.Informers.PersistentVolumeClaims(),
		cfg.Informers.StorageClasses(), cfg.Informers.Pods()
	if _, err := pvInf.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.PersistentVolume]{
		AddFunc:    func(pv *corev1.PersistentVolume, _ bool) { c.volumeQueue.Add(pv.Name) },
		UpdateFunc: func(_, pv *corev1.PersistentVolume) { c.volumeQueue.Add(pv.Name) },
		DeleteFunc: func(d cache.DeletedObject[*corev1.PersistentVolume]) {
			// The claim bound to a deleted volume is Lost: sync it.
			if pv := d.Obj; pv != nil && pv.Spec.ClaimRef != nil {
				c.claimQueue.Add(volumeutil.ClaimKey(pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name))
			}
		},
	}); err != nil {
		return nil, err
	}
	if _, err := pvcInf.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.PersistentVolumeClaim]{
		AddFunc: func(pvc *corev1.PersistentVolumeClaim, _ bool) {
			c.claimQueue.Add(volumeutil.ClaimKey(pvc.Namespace, pvc.Name))
		},
		UpdateFunc: func(_, pvc *corev1.PersistentVolumeClaim) {
			c.claimQueue.Add(volumeutil.ClaimKey(pvc.Namespace, pvc.Name))
		},
		DeleteFunc: func(d cache.DeletedObject[*corev1.PersistentVolumeClaim]) {
			// The volume of a deleted claim is released: sync it.
			if pvc := d.Obj; pvc != nil && pvc.Spec.VolumeName != "" {
				c.volumeQueue.Add(pvc.Spec.VolumeName)
			}
		},
	}); err != nil {
		return nil, err
	}
	if err := volumeutil.AddPodPVCIndex(podInf.Informer()); err != nil {
		return nil, err
	}
	c.volumes, c.claims, c.classes, c.pods = pvInf.Lister(), pvcInf.Lister(), scInf.Lister(), podInf.Informer().GetIndexer()
	c.synced = []cache.InformerSynced{pvInf.HasSynced, pvcInf.HasSynced, scInf.HasSynced, podInf.HasSynced}
	return c, nil
}

// Run waits for the caches and runs one worker per queue and the periodic
// resync until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.claimQueue.ShutDown()
	defer c.volumeQueue.ShutDown()
	c.cfg.Logger.Info("Starting persistent volume controller")
	defer c.cfg.Logger.Info("Shutting down persistent volume controller")
	if !cache.WaitForCacheSync(ctx, c.synced...) {
		return nil
	}
	go c.resyncLoop(ctx)
	go workqueue.RunWorkers(ctx, c.volumeQueue, 1, c.syncVolume, func(key string, err error) {
		c.cfg.Logger.Error("Syncing volume failed", "volume", key, "err", err)
	})
	workqueue.RunWorkers(ctx, c.claimQueue, 1, c.syncClaim, func(key string, err error) {
		c.cfg.Logger.Error("Syncing claim failed", "claim", key, "err", err)
	})
	return nil
}

// resyncLoop re-queues every claim and volume each SyncPeriod, as
// upstream's resync (a claim waiting for a volume is retried so).
func (c *Controller) resyncLoop(ctx context.Context) {
	t := c.cfg.Clock.NewTicker(c.cfg.SyncPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			c.resync()
		}
	}
}

func (c *Controller) resync() {
	if pvcs, err := c.claims.List(labels.Everything()); err == nil {
		for _, pvc := range pvcs {
			c.claimQueue.Add(volumeutil.ClaimKey(pvc.Namespace, pvc.Name))
		}
	}
	if pvs, err := c.volumes.List(labels.Everything()); err == nil {
		for _, pv := range pvs {
			c.volumeQueue.Add(pv.Name)
		}
	}
}
