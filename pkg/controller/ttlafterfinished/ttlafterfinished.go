package ttlafterfinished

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/controller/internal/metricsutil"
)

// Config configures a Controller.
type Config struct {
	Client          *client.Client
	Informers       *informers.SharedInformerFactory
	Recorder        record.EventRecorder
	Clock           clock.Clock
	Workers         int
	Logger          *slog.Logger
	MetricsProvider workqueue.MetricsProvider
	// Registry, if set, gets upstream's
	// ttl_after_finished_controller_job_deletion_duration_seconds.
	Registry prometheus.Registerer
}

// Controller deletes finished Jobs whose TTL expired.
type Controller struct {
	cfg   Config
	jobIn *cache.TypedInformer[*batchv1.Job]
	jobs  *client.Typed[*batchv1.Job, *batchv1.JobList]
	queue workqueue.TypedRateLimitingInterface[string]
	log   *slog.Logger
	// deletion observes how long after expiry each Job was deleted.
	deletion prometheus.Histogram
}

// New returns the TTL-after-finished controller.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("ttlafterfinished: Client and Informers are required")
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
	c := &Controller{
		cfg:   cfg,
		jobIn: cfg.Informers.Jobs(),
		jobs:  client.For[*batchv1.Job, *batchv1.JobList](cfg.Client),
		log:   cfg.Logger.With("controller", "ttlafterfinished"),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiterWithClock[string](cfg.Clock),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "ttl_jobs_to_delete", MetricsProvider: cfg.MetricsProvider, Clock: cfg.Clock}),
	}
	deletion, err := metricsutil.Register(cfg.Registry, prometheus.NewHistogram(prometheus.HistogramOpts{
		Subsystem: "ttl_after_finished_controller", Name: "job_deletion_duration_seconds",
		Help:    "The time it took to delete the job since it became eligible for deletion",
		Buckets: prometheus.ExponentialBuckets(0.1, 2, 14),
	}))
	if err != nil {
		return nil, err
	}
	c.deletion = deletion
	if _, err := c.jobIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*batchv1.Job]{
		AddFunc:    func(j *batchv1.Job, _ bool) { c.jobChanged(j) },
		UpdateFunc: func(_, j *batchv1.Job) { c.jobChanged(j) },
	}); err != nil {
		return nil, err
	}
	return c, nil
}

func key(j *batchv1.Job) string { return j.Namespace + "/" + j.Name }

func (c *Controller) jobChanged(j *batchv1.Job) {
	if j.DeletionTimestamp == nil && needsCleanup(j) {
		c.queue.Add(key(j))
	}
}

// Run waits for the cache and runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.cfg.Informers.Start(ctx)
	if !cache.WaitForCacheSync(ctx, c.jobIn.HasSynced) {
		return ctx.Err()
	}
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, c.Sync, func(key string, err error) {
		c.log.Info("error cleaning up Job", "job", key, "err", err)
	})
	return nil
}

// Sync handles one Job (key "namespace/name"): it deletes it when its TTL
// expired (checked again on a fresh read), or requeues it for when it
// will.
func (c *Controller) Sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	j, err := c.jobIn.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if expired, err := c.processTTL(j); err != nil || expired == nil {
		return err
	}
	// The cache may be stale: decide again on the server's copy.
	fresh, err := c.jobs.Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	expired, err := c.processTTL(fresh)
	if err != nil || expired == nil {
		return err
	}
	fg := metav1.DeletePropagationForeground
	c.log.Debug("cleaning up Job", "job", key)
	if err := c.jobs.Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{
		PropagationPolicy: &fg,
		Preconditions:     &metav1.Preconditions{UID: &fresh.UID},
	}); err != nil {
		return err
	}
	c.deletion.Observe(c.cfg.Clock.Since(*expired).Seconds())
	return nil
}

// processTTL returns when the Job's TTL expired if it did; a Job whose TTL
// has not expired yet is requeued for the time left.
func (c *Controller) processTTL(j *batchv1.Job) (*time.Time, error) {
	if j.DeletionTimestamp != nil || !needsCleanup(j) {
		return nil, nil
	}
	now := c.cfg.Clock.Now()
	left, expireAt, err := timeLeft(j, now)
	if err != nil {
		return nil, err
	}
	if left <= 0 {
		return &expireAt, nil
	}
	c.queue.AddAfter(key(j), left)
	return nil, nil
}

// needsCleanup: the Job has a TTL and has finished.
func needsCleanup(j *batchv1.Job) bool {
	return j.Spec.TTLSecondsAfterFinished != nil && finished(j)
}

func finished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// finishTime is the lastTransitionTime of the Job's Complete or Failed
// condition (false: not finished, or no transition time).
func finishTime(j *batchv1.Job) (time.Time, bool) {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time, !c.LastTransitionTime.IsZero()
		}
	}
	return time.Time{}, false
}

// timeLeft is how long until the finished Job's TTL expires (negative:
// expired) and when it does.
func timeLeft(j *batchv1.Job, now time.Time) (time.Duration, time.Time, error) {
	finishAt, ok := finishTime(j)
	if !ok {
		return 0, time.Time{}, fmt.Errorf("unable to find the time when the Job %s/%s finished", j.Namespace, j.Name)
	}
	expireAt := finishAt.Add(time.Duration(*j.Spec.TTLSecondsAfterFinished) * time.Second)
	return expireAt.Sub(now), expireAt, nil
}
