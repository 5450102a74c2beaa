package ephemeral

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
	"github.com/skiff-sh/skiff/pkg/controller/internal/volumeutil"
)

// QueueName is upstream's queue name.
const QueueName = "ephemeral_volume"

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

// Controller creates the claims of generic ephemeral volumes.
type Controller struct {
	cfg    Config
	pvcs   *client.Typed[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]
	pods   cache.Lister[*corev1.Pod]
	podIdx cache.Indexer
	claims cache.Lister[*corev1.PersistentVolumeClaim]
	synced []cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
}

// New registers the controller's informer handlers.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("ephemeral: Client and Informers are required")
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
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	c := &Controller{
		cfg:  cfg,
		pvcs: client.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](cfg.Client),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiterWithClock[string](cfg.Clock),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: QueueName, MetricsProvider: cfg.MetricsProvider, Clock: cfg.Clock}),
	}
	podInf, pvcInf := cfg.Informers.Pods(), cfg.Informers.PersistentVolumeClaims()
	enqueue := func(pod *corev1.Pod) {
		if pod.DeletionTimestamp != nil {
			return
		}
		for _, v := range pod.Spec.Volumes {
			if v.Ephemeral != nil {
				c.queue.Add(volumeutil.ClaimKey(pod.Namespace, pod.Name))
				return
			}
		}
	}
	if _, err := podInf.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc:    func(p *corev1.Pod, _ bool) { enqueue(p) },
		UpdateFunc: func(_, p *corev1.Pod) { enqueue(p) },
	}); err != nil {
		return nil, err
	}
	// A deleted claim is made again for the pods that need it.
	if _, err := pvcInf.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.PersistentVolumeClaim]{
		DeleteFunc: func(d cache.DeletedObject[*corev1.PersistentVolumeClaim]) {
			ns, name, err := cache.SplitMetaNamespaceKey(d.Key())
			if err != nil {
				return
			}
			pods, _ := volumeutil.PodsUsingClaim(c.podIdx, ns, name)
			for _, p := range pods {
				enqueue(p)
			}
		},
	}); err != nil {
		return nil, err
	}
	if err := volumeutil.AddPodPVCIndex(podInf.Informer()); err != nil {
		return nil, err
	}
	c.pods, c.podIdx, c.claims = podInf.Lister(), podInf.Informer().GetIndexer(), pvcInf.Lister()
	c.synced = []cache.InformerSynced{podInf.HasSynced, pvcInf.HasSynced}
	return c, nil
}

// Run waits for the caches and runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.cfg.Logger.Info("Starting ephemeral volume controller")
	defer c.cfg.Logger.Info("Shutting down ephemeral volume controller")
	if !cache.WaitForCacheSync(ctx, c.synced...) {
		return nil
	}
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, c.sync, func(key string, err error) {
		c.cfg.Logger.Error("Syncing pod failed", "pod", key, "err", err)
	})
	return nil
}

// sync creates the missing claims of the pod of key "namespace/name".
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pod, err := c.pods.Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if pod.DeletionTimestamp != nil {
		return nil
	}
	var errs []error
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.Ephemeral == nil {
			continue
		}
		if err := c.handleVolume(ctx, pod, v); err != nil {
			c.cfg.Recorder.Event(pod, corev1.EventTypeWarning, "FailedBinding", fmt.Sprintf("ephemeral volume %s: %v", v.Name, err))
			errs = append(errs, fmt.Errorf("pod %s, ephemeral volume %s: %w", key, v.Name, err))
		}
	}
	return errors.Join(errs...)
}

func (c *Controller) handleVolume(ctx context.Context, pod *corev1.Pod, v *corev1.Volume) error {
	name := pod.Name + "-" + v.Name
	pvc, err := c.claims.Namespace(pod.Namespace).Get(name)
	switch {
	case err == nil:
		if !metav1.IsControlledBy(pvc, pod) {
			return fmt.Errorf("PVC %s/%s was not created for pod %s/%s (pod is not owner)", pvc.Namespace, pvc.Name, pod.Namespace, pod.Name)
		}
		return nil
	case !apierrors.IsNotFound(err):
		return err
	}
	tmpl := v.Ephemeral.VolumeClaimTemplate
	if tmpl == nil {
		return nil // invalid; the API server refuses such pods
	}
	yes := true
	pvc = &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: pod.Namespace,
			Labels: tmpl.Labels, Annotations: tmpl.Annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID,
				Controller: &yes, BlockOwnerDeletion: &yes}},
		},
		Spec: *tmpl.Spec.DeepCopy(),
	}
	if _, err := c.pvcs.Namespace(pod.Namespace).Create(ctx, pvc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create PVC %s: %w", name, err)
	}
	return nil
}
