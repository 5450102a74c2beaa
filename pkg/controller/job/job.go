package job

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/controllerref"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/controller/internal/expectations"
)

// ControllerName is the value of spec.managedBy this controller handles
// (and the one a Job without managedBy gets).
const ControllerName = "kubernetes.io/job-controller"

// Limits and periods, as upstream's.
const (
	// MaxPodCreateDeletePerSync caps creations or deletions per sync.
	MaxPodCreateDeletePerSync = 500
	// MaxUncountedPods caps status.uncountedTerminatedPods.
	MaxUncountedPods = 500
	// DefaultSyncBatchPeriod is how long pod events are batched before a
	// Job is synced.
	DefaultSyncBatchPeriod = time.Second
)

// Event reasons, as upstream's.
const (
	SuccessfulCreateReason = "SuccessfulCreate"
	FailedCreateReason     = "FailedCreate"
	SuccessfulDeleteReason = "SuccessfulDelete"
	FailedDeleteReason     = "FailedDelete"
)

var jobKind = batchv1.SchemeGroupVersion.WithKind("Job")

// Config configures a Controller.
type Config struct {
	Client    *client.Client
	Informers *informers.SharedInformerFactory
	Recorder  record.EventRecorder
	Clock     clock.Clock
	Workers   int
	Logger    *slog.Logger
	// MetricsProvider, if set, gets the workqueues' metrics ("job",
	// "job_orphan_pod").
	MetricsProvider workqueue.MetricsProvider
	// Registry, if set, gets the job_controller_* metrics (upstream's
	// names); vectors already registered there are shared.
	Registry prometheus.Registerer
	// SyncBatchPeriod delays syncs caused by pod events and status
	// updates so that bursts coalesce (default 1s, upstream's); negative:
	// no delay.
	SyncBatchPeriod time.Duration
}

// Controller runs the pods of Jobs.
type Controller struct {
	cfg         Config
	jobs        *client.Typed[*batchv1.Job, *batchv1.JobList]
	pods        *client.Typed[*corev1.Pod, *corev1.PodList]
	jobIn       *cache.TypedInformer[*batchv1.Job]
	podIn       *cache.TypedInformer[*corev1.Pod]
	queue       workqueue.TypedRateLimitingInterface[string]
	orphanQueue workqueue.TypedRateLimitingInterface[string]
	// Expectations are the pod creations/deletions issued and not yet
	// observed, per Job key.
	Expectations *expectations.Expectations
	finalizers   *finalizerExpectations
	backoff      *backoffStore
	metrics      *metrics
	log          *slog.Logger
}

// New returns the Job controller; it registers its informer handlers.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("job: Client and Informers are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 5
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Recorder == nil {
		cfg.Recorder = &record.FakeRecorder{}
	}
	if cfg.SyncBatchPeriod == 0 {
		cfg.SyncBatchPeriod = DefaultSyncBatchPeriod
	} else if cfg.SyncBatchPeriod < 0 {
		cfg.SyncBatchPeriod = 0
	}
	newQueue := func(name string) workqueue.TypedRateLimitingInterface[string] {
		return workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, time.Minute),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name, MetricsProvider: cfg.MetricsProvider, Clock: cfg.Clock})
	}
	m, err := newMetrics(cfg.Registry)
	if err != nil {
		return nil, err
	}
	c := &Controller{
		metrics:      m,
		cfg:          cfg,
		jobs:         client.For[*batchv1.Job, *batchv1.JobList](cfg.Client),
		pods:         client.For[*corev1.Pod, *corev1.PodList](cfg.Client),
		jobIn:        cfg.Informers.Jobs(),
		podIn:        cfg.Informers.Pods(),
		queue:        newQueue("job"),
		orphanQueue:  newQueue("job_orphan_pod"),
		Expectations: expectations.New(cfg.Clock),
		finalizers:   newFinalizerExpectations(),
		backoff:      newBackoffStore(),
		log:          cfg.Logger.With("controller", "job"),
	}
	if err := controllerref.AddControllerUIDIndex(c.podIn.Informer()); err != nil {
		return nil, err
	}
	if _, err := c.jobIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*batchv1.Job]{
		AddFunc: func(j *batchv1.Job, _ bool) {
			c.enqueue(j, 0)
			if managedByOther(j) {
				c.metrics.byExternalController.WithLabelValues(*j.Spec.ManagedBy).Inc()
			}
		},
		UpdateFunc: c.updateJob,
		DeleteFunc: func(d cache.DeletedObject[*batchv1.Job]) {
			if d.Obj != nil {
				c.enqueue(d.Obj, 0)
				c.cleanupPodFinalizers(d.Obj)
			}
		},
	}); err != nil {
		return nil, err
	}
	if _, err := c.podIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc:    func(p *corev1.Pod, _ bool) { c.addPod(p) },
		UpdateFunc: c.updatePod,
		DeleteFunc: func(d cache.DeletedObject[*corev1.Pod]) {
			if d.Obj != nil {
				c.deletePod(d.Obj, true)
			}
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

func keyOf(o metav1.Object) string { return o.GetNamespace() + "/" + o.GetName() }

func (c *Controller) enqueue(j *batchv1.Job, delay time.Duration) {
	if delay <= 0 {
		c.queue.Add(keyOf(j))
		return
	}
	c.queue.AddAfter(keyOf(j), delay)
}

func (c *Controller) enqueueBatched(j *batchv1.Job) { c.enqueue(j, c.cfg.SyncBatchPeriod) }

// Run waits for the caches and runs the workers (and the orphan-pod
// worker) until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	defer c.orphanQueue.ShutDown()
	c.cfg.Informers.Start(ctx)
	if !cache.WaitForCacheSync(ctx, c.podIn.HasSynced, c.jobIn.HasSynced) {
		return ctx.Err()
	}
	go workqueue.RunWorkers(ctx, c.orphanQueue, 1, c.SyncOrphanPod, func(key string, err error) {
		c.log.Info("orphan pod sync failed", "key", key, "err", err)
	})
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, c.Sync, func(key string, err error) {
		c.log.Info("sync failed", "key", key, "err", err)
	})
	return nil
}

func (c *Controller) updateJob(old, cur *batchv1.Job) {
	if cur.Generation == old.Generation {
		c.enqueueBatched(cur)
	} else {
		c.enqueue(cur, 0)
	}
	if isFinished(cur) {
		c.cleanupPodFinalizers(cur)
	}
	// A changed activeDeadlineSeconds gets its own timer.
	if cur.Status.StartTime != nil && cur.Spec.ActiveDeadlineSeconds != nil {
		if o := old.Spec.ActiveDeadlineSeconds; o == nil || *o != *cur.Spec.ActiveDeadlineSeconds {
			total := time.Duration(*cur.Spec.ActiveDeadlineSeconds) * time.Second
			c.queue.AddAfter(keyOf(cur), total-c.cfg.Clock.Since(cur.Status.StartTime.Time))
		}
	}
}

// resolve returns the Job a controller reference names, if it exists.
func (c *Controller) resolve(ns string, ref *metav1.OwnerReference) *batchv1.Job {
	j, _ := controllerref.Resolve(ref, jobKind.Kind, c.jobIn.Lister().Namespace(ns).Get)
	return j
}

// podJobs are the Jobs whose selector matches an orphan pod.
func (c *Controller) podJobs(p *corev1.Pod) []*batchv1.Job {
	all, err := c.jobIn.Lister().Namespace(p.Namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	return controllerref.Selecting(all, func(j *batchv1.Job) *metav1.LabelSelector { return j.Spec.Selector }, p.Labels)
}

func (c *Controller) addPod(p *corev1.Pod) {
	c.metrics.observePodTransition(nil, p)
	if p.DeletionTimestamp != nil {
		c.deletePod(p, false)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
		j := c.resolve(p.Namespace, ref)
		if j == nil {
			return
		}
		c.Expectations.CreationObserved(keyOf(j))
		c.enqueueBatched(j)
		return
	}
	if hasFinalizer(p) {
		c.orphanQueue.Add(keyOf(p))
	}
	for _, j := range c.podJobs(p) {
		c.enqueueBatched(j)
	}
}

func (c *Controller) updatePod(old, cur *corev1.Pod) {
	c.metrics.observePodTransition(old, cur)
	if cur.ResourceVersion == old.ResourceVersion {
		return
	}
	if cur.DeletionTimestamp != nil {
		c.deletePod(cur, false)
		return
	}
	finalizerRemoved := !hasFinalizer(cur)
	curRef, oldRef := metav1.GetControllerOfNoCopy(cur), metav1.GetControllerOfNoCopy(old)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if j := c.resolve(old.Namespace, oldRef); j != nil {
			if finalizerRemoved {
				c.finalizers.observed(keyOf(j), cur.UID)
			}
			c.enqueueBatched(j)
		}
	}
	if curRef != nil {
		j := c.resolve(cur.Namespace, curRef)
		if j == nil {
			return
		}
		if finalizerRemoved {
			c.finalizers.observed(keyOf(j), cur.UID)
		}
		c.enqueueBatched(j)
		return
	}
	if hasFinalizer(cur) {
		c.orphanQueue.Add(keyOf(cur))
	}
	if refChanged || !reflect.DeepEqual(cur.Labels, old.Labels) {
		for _, j := range c.podJobs(cur) {
			c.enqueueBatched(j)
		}
	}
}

// deletePod handles a pod deletion (final) or a pod that got a deletion
// timestamp.
func (c *Controller) deletePod(p *corev1.Pod, final bool) {
	if final {
		c.metrics.observePodTransition(p, nil)
	}
	ref := metav1.GetControllerOfNoCopy(p)
	if ref == nil {
		if hasFinalizer(p) {
			c.orphanQueue.Add(keyOf(p))
		}
		return
	}
	j := c.resolve(p.Namespace, ref)
	if j != nil && (final || !hasFinalizer(p)) {
		c.finalizers.observed(keyOf(j), p.UID)
	}
	if j == nil || isFinished(j) {
		if hasFinalizer(p) {
			c.orphanQueue.Add(keyOf(p))
		}
		return
	}
	c.Expectations.DeletionObserved(keyOf(j), keyOf(p))
	c.enqueueBatched(j)
}

// cleanupPodFinalizers queues the pods of a deleted or finished Job that
// still carry the tracking finalizer.
func (c *Controller) cleanupPodFinalizers(j *batchv1.Job) {
	sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector)
	if err != nil {
		return
	}
	pods, _ := c.podIn.Lister().Namespace(j.Namespace).List(sel)
	for _, p := range pods {
		if metav1.IsControlledBy(p, j) && hasFinalizer(p) {
			c.orphanQueue.Add(keyOf(p))
		}
	}
}

// SyncOrphanPod removes the tracking finalizer from a pod whose Job is
// gone or finished (key "namespace/name").
func (c *Controller) SyncOrphanPod(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	p, err := c.podIn.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
		if ref.Kind != jobKind.Kind || ref.APIVersion != batchv1.SchemeGroupVersion.String() {
			return nil
		}
		if j := c.resolve(ns, ref); j != nil && (managedByOther(j) || !isFinished(j)) {
			return nil
		}
	}
	if err := c.removeFinalizer(ctx, p); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// removeFinalizerPatch is the strategic merge patch dropping the tracking
// finalizer (nil if the pod has none).
func removeFinalizerPatch(p *corev1.Pod) []byte {
	if !hasFinalizer(p) {
		return nil
	}
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"$deleteFromPrimitiveList/finalizers": []string{batchv1.JobTrackingFinalizer},
	}})
	return b
}

func (c *Controller) removeFinalizer(ctx context.Context, p *corev1.Pod) error {
	patch := removeFinalizerPatch(p)
	if patch == nil {
		return nil
	}
	_, err := c.pods.Namespace(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	return err
}
