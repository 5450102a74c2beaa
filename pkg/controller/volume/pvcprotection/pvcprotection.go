package pvcprotection

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
const QueueName = "pvcprotection"

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

// Controller keeps the pvc-protection finalizer.
type Controller struct {
	cfg    Config
	pvcs   *client.Typed[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]
	pods   *client.Typed[*corev1.Pod, *corev1.PodList]
	claims cache.Lister[*corev1.PersistentVolumeClaim]
	podIdx cache.Indexer
	synced []cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
}

// New registers the controller's informer handlers.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("pvcprotection: Client and Informers are required")
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
		cfg:  cfg,
		pvcs: client.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](cfg.Client),
		pods: client.For[*corev1.Pod, *corev1.PodList](cfg.Client),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiterWithClock[string](cfg.Clock),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: QueueName, MetricsProvider: cfg.MetricsProvider, Clock: cfg.Clock}),
	}
	pvcInf, podInf := cfg.Informers.PersistentVolumeClaims(), cfg.Informers.Pods()
	enqueue := func(pvc *corev1.PersistentVolumeClaim) {
		if needToAddFinalizer(pvc) || isDeletionCandidate(pvc) {
			c.queue.Add(volumeutil.ClaimKey(pvc.Namespace, pvc.Name))
		}
	}
	if _, err := pvcInf.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.PersistentVolumeClaim]{
		AddFunc:    func(pvc *corev1.PersistentVolumeClaim, _ bool) { enqueue(pvc) },
		UpdateFunc: func(_, pvc *corev1.PersistentVolumeClaim) { enqueue(pvc) },
	}); err != nil {
		return nil, err
	}
	// A pod that finishes or goes may free a claim being deleted.
	podChanged := func(pod *corev1.Pod) {
		keys, _ := volumeutil.PodPVCIndexFunc(pod)
		for _, k := range keys {
			ns, name, _ := cache.SplitMetaNamespaceKey(k)
			if pvc, err := c.claims.Namespace(ns).Get(name); err == nil && isDeletionCandidate(pvc) {
				c.queue.Add(k)
			}
		}
	}
	if _, err := podInf.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc:    func(p *corev1.Pod, _ bool) { podChanged(p) },
		UpdateFunc: func(_, p *corev1.Pod) { podChanged(p) },
		DeleteFunc: func(d cache.DeletedObject[*corev1.Pod]) {
			if d.Obj != nil {
				podChanged(d.Obj)
			}
		},
	}); err != nil {
		return nil, err
	}
	if err := volumeutil.AddPodPVCIndex(podInf.Informer()); err != nil {
		return nil, err
	}
	c.claims, c.podIdx = pvcInf.Lister(), podInf.Informer().GetIndexer()
	c.synced = []cache.InformerSynced{pvcInf.HasSynced, podInf.HasSynced}
	return c, nil
}

// Run waits for the caches and runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.cfg.Logger.Info("Starting PVC protection controller")
	defer c.cfg.Logger.Info("Shutting down PVC protection controller")
	if !cache.WaitForCacheSync(ctx, c.synced...) {
		return nil
	}
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, c.sync, func(key string, err error) {
		c.cfg.Logger.Error("PVC protection failed", "claim", key, "err", err)
	})
	return nil
}

func needToAddFinalizer(pvc *corev1.PersistentVolumeClaim) bool {
	return pvc.DeletionTimestamp == nil && !slices.Contains(pvc.Finalizers, volumeutil.PVCProtectionFinalizer)
}

func isDeletionCandidate(pvc *corev1.PersistentVolumeClaim) bool {
	return pvc.DeletionTimestamp != nil && slices.Contains(pvc.Finalizers, volumeutil.PVCProtectionFinalizer)
}

// sync adds or removes the finalizer of the claim of key "namespace/name".
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pvc, err := c.claims.Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case isDeletionCandidate(pvc):
		cached, err := volumeutil.PodsUsingClaim(c.podIdx, ns, name)
		if err != nil {
			return err
		}
		if anyUses(cached, pvc) {
			return nil // a pod event brings it back
		}
		// The cache may be behind a pod just created: ask the server.
		live, err := c.pods.Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		pods := make([]*corev1.Pod, 0, len(live.Items))
		for i := range live.Items {
			pods = append(pods, &live.Items[i])
		}
		if anyUses(pods, pvc) {
			return nil
		}
		clone := pvc.DeepCopy()
		clone.Finalizers = slices.DeleteFunc(clone.Finalizers, func(f string) bool { return f == volumeutil.PVCProtectionFinalizer })
		if _, err := c.pvcs.Namespace(ns).Update(ctx, clone, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		c.cfg.Logger.Debug("Removed PVC protection finalizer", "claim", key)
	case needToAddFinalizer(pvc):
		clone := pvc.DeepCopy()
		clone.Finalizers = append(clone.Finalizers, volumeutil.PVCProtectionFinalizer)
		if _, err := c.pvcs.Namespace(ns).Update(ctx, clone, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// anyUses reports whether one of pods uses the claim.
func anyUses(pods []*corev1.Pod, pvc *corev1.PersistentVolumeClaim) bool {
	for _, p := range pods {
		if podUsesClaim(p, pvc) {
			return true
		}
	}
	return false
}

// podUsesClaim: scheduled, not finished nor shut down, and naming the
// claim (directly or as its generic ephemeral volume).
func podUsesClaim(pod *corev1.Pod, pvc *corev1.PersistentVolumeClaim) bool {
	if pod.Namespace != pvc.Namespace || pod.Spec.NodeName == "" {
		return false
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	if pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil && *pod.DeletionGracePeriodSeconds == 0 {
		return false // shut down: waits only for its own removal
	}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == pvc.Name {
			return true
		}
		if v.Ephemeral != nil && pod.Name+"-"+v.Name == pvc.Name && metav1.IsControlledBy(pvc, pod) {
			return true
		}
	}
	return false
}
