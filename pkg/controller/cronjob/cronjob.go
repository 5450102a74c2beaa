package cronjob

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"
	_ "time/tzdata" // spec.timeZone must resolve without a system time zone database.

	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/controllerref"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/controller/internal/metricsutil"
)

var controllerKind = batchv1.SchemeGroupVersion.WithKind("CronJob")

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
	// cronjob_controller_job_creation_skew_duration_seconds.
	Registry prometheus.Registerer
}

// Controller starts the Jobs of CronJobs.
type Controller struct {
	cfg   Config
	cjIn  *cache.TypedInformer[*batchv1.CronJob]
	jobIn *cache.TypedInformer[*batchv1.Job]
	cjs   *client.Typed[*batchv1.CronJob, *batchv1.CronJobList]
	jobs  *client.Typed[*batchv1.Job, *batchv1.JobList]
	queue workqueue.TypedRateLimitingInterface[string]
	log   *slog.Logger
	// skew observes how late each Job was created after its schedule time.
	skew prometheus.Histogram
}

// New returns the CronJob controller.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("cronjob: Client and Informers are required")
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
		cfg.Recorder = &record.FakeRecorder{} // drops events
	}
	c := &Controller{
		cfg:   cfg,
		cjIn:  cfg.Informers.CronJobs(),
		jobIn: cfg.Informers.Jobs(),
		cjs:   client.For[*batchv1.CronJob, *batchv1.CronJobList](cfg.Client),
		jobs:  client.For[*batchv1.Job, *batchv1.JobList](cfg.Client),
		log:   cfg.Logger.With("controller", "cronjob"),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiterWithClock[string](cfg.Clock),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "cronjob", MetricsProvider: cfg.MetricsProvider, Clock: cfg.Clock}),
	}
	skew, err := metricsutil.Register(cfg.Registry, prometheus.NewHistogram(prometheus.HistogramOpts{
		Subsystem: "cronjob_controller", Name: "job_creation_skew_duration_seconds",
		Help:    "Time between when a cronjob is scheduled to be run, and when the corresponding job is created",
		Buckets: prometheus.ExponentialBuckets(1, 2, 10),
	}))
	if err != nil {
		return nil, err
	}
	c.skew = skew
	if _, err := c.cjIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*batchv1.CronJob]{
		AddFunc:    func(cj *batchv1.CronJob, _ bool) { c.enqueue(cj) },
		UpdateFunc: c.cronJobUpdated,
		DeleteFunc: func(d cache.DeletedObject[*batchv1.CronJob]) {
			if d.Obj != nil {
				c.enqueue(d.Obj)
			}
		},
	}); err != nil {
		return nil, err
	}
	if _, err := c.jobIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*batchv1.Job]{
		AddFunc: func(j *batchv1.Job, _ bool) {
			if j.DeletionTimestamp != nil {
				// On a restart a Job being deleted shows up as added.
				c.jobDeleted(j)
				return
			}
			c.enqueueOwner(j.Namespace, controllerref.GetControllerOfNoCopy(j))
		},
		UpdateFunc: func(old, cur *batchv1.Job) {
			if old.ResourceVersion == cur.ResourceVersion {
				return
			}
			oldRef, curRef := controllerref.GetControllerOfNoCopy(old), controllerref.GetControllerOfNoCopy(cur)
			if oldRef != nil && (curRef == nil || oldRef.UID != curRef.UID) {
				c.enqueueOwner(old.Namespace, oldRef)
			}
			c.enqueueOwner(cur.Namespace, curRef)
		},
		DeleteFunc: func(d cache.DeletedObject[*batchv1.Job]) {
			if d.Obj != nil {
				c.jobDeleted(d.Obj)
			}
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Controller) enqueue(cj *batchv1.CronJob) { c.queue.Add(cj.Namespace + "/" + cj.Name) }

func (c *Controller) jobDeleted(j *batchv1.Job) {
	c.enqueueOwner(j.Namespace, controllerref.GetControllerOfNoCopy(j))
}

// enqueueOwner enqueues the CronJob a controller reference designates.
func (c *Controller) enqueueOwner(ns string, ref *metav1.OwnerReference) {
	if ref == nil || ref.Kind != controllerKind.Kind {
		return
	}
	cj, err := c.cjIn.Lister().Namespace(ns).Get(ref.Name)
	if err != nil || cj.UID != ref.UID {
		return
	}
	c.enqueue(cj)
}

// cronJobUpdated requeues at the new schedule's next time when the
// schedule or its time zone changed (a sooner time wins in the queue; a
// later one makes the already-queued sync a no-op), at once otherwise.
func (c *Controller) cronJobUpdated(old, cur *batchv1.CronJob) {
	if old.Spec.Schedule != cur.Spec.Schedule || !equalPtr(old.Spec.TimeZone, cur.Spec.TimeZone) {
		sched, err := parseSchedule(cur, nil)
		if err != nil {
			c.cfg.Recorder.Eventf(cur, corev1.EventTypeWarning, "UnParseableCronJobSchedule", "unparseable schedule for cronjob: %s", cur.Spec.Schedule)
			return
		}
		c.queue.AddAfter(cur.Namespace+"/"+cur.Name, nextScheduleTimeDuration(cur, c.cfg.Clock.Now(), sched))
		return
	}
	c.enqueue(cur)
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// Run waits for the caches and runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.cfg.Informers.Start(ctx)
	if !cache.WaitForCacheSync(ctx, c.cjIn.HasSynced, c.jobIn.HasSynced) {
		return ctx.Err()
	}
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, c.process, func(key string, err error) {
		c.log.Info("sync failed", "key", key, "err", err)
	})
	return nil
}

// process syncs one key; a sync that asks for a requeue is added back
// after that duration (on the queue's clock).
func (c *Controller) process(ctx context.Context, key string) error {
	after, err := c.Sync(ctx, key)
	if err != nil {
		return err
	}
	if after != nil {
		c.queue.AddAfter(key, *after)
	}
	return nil
}

// Sync reconciles one CronJob (key "namespace/name") at the clock's time:
// finished Jobs beyond the history limits are deleted, status.active
// follows the Jobs, and a Job is started when a schedule time is due. It
// returns when to look again (nil: not until something changes).
func (c *Controller) Sync(ctx context.Context, key string) (*time.Duration, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil, err
	}
	cached, err := c.cjIn.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	jobs, err := c.jobsOf(cached)
	if err != nil {
		return nil, err
	}
	cj := cached.DeepCopy()
	cleaned := c.cleanupFinishedJobs(ctx, cj, jobs)
	after, synced, syncErr := c.syncCronJob(ctx, cj, jobs)
	if syncErr != nil {
		c.log.Debug("error reconciling cronjob", "cronjob", key, "err", syncErr)
	}
	if cleaned || synced {
		if _, err := c.cjs.Namespace(ns).UpdateStatus(ctx, cj, metav1.UpdateOptions{}); err != nil {
			return nil, err
		}
	}
	if after != nil {
		return after, nil
	}
	return nil, syncErr
}

// jobsOf lists the Jobs whose controller reference names the CronJob
// (by name, as upstream: labels may have changed since they were made).
func (c *Controller) jobsOf(cj *batchv1.CronJob) ([]*batchv1.Job, error) {
	all, err := c.jobIn.Lister().Namespace(cj.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var out []*batchv1.Job
	for _, j := range all {
		if ref := controllerref.GetControllerOfNoCopy(j); ref != nil && ref.Name == cj.Name {
			out = append(out, j)
		}
	}
	return out, nil
}

// syncCronJob is the decision: it updates cj's status in place and says
// whether the status must be written and when to requeue.
func (c *Controller) syncCronJob(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) (*time.Duration, bool, error) {
	now := c.cfg.Clock.Now()
	rec := c.cfg.Recorder
	update := false

	children := map[types.UID]bool{}
	for _, j := range jobs {
		children[j.UID] = true
		found := inActiveList(cj, j.UID)
		switch {
		case !found && !isJobFinished(j):
			// Our status may be older than the Job list: read it again
			// before calling the Job unexpected.
			fresh, err := c.cjs.Namespace(cj.Namespace).Get(ctx, cj.Name, metav1.GetOptions{})
			if err != nil {
				return nil, update, err
			}
			if inActiveList(fresh, j.UID) {
				*cj = *fresh
				continue
			}
			rec.Eventf(cj, corev1.EventTypeWarning, "UnexpectedJob", "Saw a job that the controller did not create or forgot: %s", j.Name)
		case found && isJobFinished(j):
			_, cond := finishedStatus(j)
			deleteFromActiveList(cj, j.UID)
			rec.Eventf(cj, corev1.EventTypeNormal, "SawCompletedJob", "Saw completed job: %s, condition: %v", j.Name, cond)
			update = true
		case isJobSucceeded(j):
			// Finished successfully, whether or not it was active.
			if cj.Status.LastSuccessfulTime == nil && j.Status.CompletionTime != nil {
				cj.Status.LastSuccessfulTime = j.Status.CompletionTime
				update = true
			}
			if j.Status.CompletionTime != nil && cj.Status.LastSuccessfulTime != nil && j.Status.CompletionTime.After(cj.Status.LastSuccessfulTime.Time) {
				cj.Status.LastSuccessfulTime = j.Status.CompletionTime
				update = true
			}
		}
	}
	// An active Job that is gone is removed from the list (else the
	// CronJob would stay active forever); the server is asked first, the
	// cache may simply be late.
	for _, ref := range append([]corev1.ObjectReference(nil), cj.Status.Active...) {
		if children[ref.UID] {
			continue
		}
		_, err := c.jobs.Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			rec.Eventf(cj, corev1.EventTypeNormal, "MissingJob", "Active job went missing: %v", ref.Name)
			deleteFromActiveList(cj, ref.UID)
			update = true
		case err != nil:
			return nil, update, err
		}
	}

	if cj.DeletionTimestamp != nil {
		return nil, update, nil
	}
	if cj.Spec.TimeZone != nil {
		if _, err := time.LoadLocation(*cj.Spec.TimeZone); err != nil {
			rec.Eventf(cj, corev1.EventTypeWarning, "UnknownTimeZone", "invalid timeZone: %q: %s", *cj.Spec.TimeZone, err)
			return nil, update, nil
		}
	}
	if cj.Spec.Suspend != nil && *cj.Spec.Suspend {
		return nil, update, nil
	}
	sched, err := parseSchedule(cj, rec)
	if err != nil {
		// A user error: nothing to do until the spec changes.
		rec.Eventf(cj, corev1.EventTypeWarning, "UnparseableSchedule", "unparseable schedule: %q : %s", cj.Spec.Schedule, err)
		return nil, update, nil
	}
	scheduled, err := nextScheduleTime(cj, now, sched, rec)
	if err != nil {
		rec.Eventf(cj, corev1.EventTypeWarning, "InvalidSchedule", "invalid schedule: %s : %s", cj.Spec.Schedule, err)
		return nil, update, nil
	}
	requeue := func() *time.Duration {
		d := nextScheduleTimeDuration(cj, now, sched)
		return &d
	}
	if scheduled == nil {
		// Nothing due (after a restart or an early wake-up).
		return requeue(), update, nil
	}
	if cj.Spec.StartingDeadlineSeconds != nil &&
		scheduled.Add(time.Duration(*cj.Spec.StartingDeadlineSeconds)*time.Second).Before(now) {
		rec.Eventf(cj, corev1.EventTypeWarning, "MissSchedule", "Missed scheduled time to start a job: %s", scheduled.UTC().Format(time.RFC1123Z))
		return requeue(), update, nil
	}
	if inActiveListByName(cj, jobName(cj, *scheduled)) ||
		(cj.Status.LastScheduleTime != nil && cj.Status.LastScheduleTime.Time.Equal(*scheduled)) {
		// This time was already handled.
		return requeue(), update, nil
	}
	if cj.Spec.ConcurrencyPolicy == batchv1.ForbidConcurrent && len(cj.Status.Active) > 0 {
		rec.Eventf(cj, corev1.EventTypeNormal, "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid")
		return requeue(), update, nil
	}
	if cj.Spec.ConcurrencyPolicy == batchv1.ReplaceConcurrent {
		for _, ref := range append([]corev1.ObjectReference(nil), cj.Status.Active...) {
			j, err := c.jobs.Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				rec.Eventf(cj, corev1.EventTypeWarning, "FailedGet", "Get job: %v", err)
				return nil, update, err
			}
			if !c.deleteJob(ctx, cj, j) {
				return nil, update, fmt.Errorf("could not replace job %s/%s", j.Namespace, j.Name)
			}
			update = true
		}
	}

	req, err := jobFromTemplate(cj, *scheduled)
	if err != nil {
		return nil, update, err
	}
	created, err := c.jobs.Namespace(cj.Namespace).Create(ctx, req, metav1.CreateOptions{})
	switch {
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		// Every creation fails in a terminating namespace.
		return nil, update, err
	case apierrors.IsAlreadyExists(err):
		existing, err := c.jobs.Namespace(cj.Namespace).Get(ctx, req.Name, metav1.GetOptions{})
		if err != nil {
			return nil, update, err
		}
		// Someone else's Job, or ours already in the list: their business.
		if !controllerref.IsControlledBy(existing, cj) || inActiveList(cj, existing.UID) {
			return nil, update, nil
		}
		c.log.Info("job already exists", "cronjob", cj.Namespace+"/"+cj.Name, "job", req.Name)
		created = existing
	case err != nil:
		rec.Eventf(cj, corev1.EventTypeWarning, "FailedCreate", "Error creating job: %v", err)
		return nil, update, err
	default:
		c.skew.Observe(created.CreationTimestamp.Sub(*scheduled).Seconds())
		rec.Eventf(cj, corev1.EventTypeNormal, "SuccessfulCreate", "Created job %v", created.Name)
	}
	cj.Status.Active = append(cj.Status.Active, jobRef(created))
	cj.Status.LastScheduleTime = &metav1.Time{Time: *scheduled}
	return requeue(), true, nil
}

// cleanupFinishedJobs deletes the oldest finished Jobs beyond
// successfulJobsHistoryLimit and failedJobsHistoryLimit.
func (c *Controller) cleanupFinishedJobs(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) bool {
	if cj.Spec.SuccessfulJobsHistoryLimit == nil && cj.Spec.FailedJobsHistoryLimit == nil {
		return false
	}
	var succeeded, failed []*batchv1.Job
	for _, j := range jobs {
		switch finished, cond := finishedStatus(j); {
		case finished && cond == batchv1.JobComplete:
			succeeded = append(succeeded, j)
		case finished && cond == batchv1.JobFailed:
			failed = append(failed, j)
		}
	}
	update := false
	if cj.Spec.SuccessfulJobsHistoryLimit != nil && c.removeOldestJobs(ctx, cj, succeeded, *cj.Spec.SuccessfulJobsHistoryLimit) {
		update = true
	}
	if cj.Spec.FailedJobsHistoryLimit != nil && c.removeOldestJobs(ctx, cj, failed, *cj.Spec.FailedJobsHistoryLimit) {
		update = true
	}
	return update
}

// removeOldestJobs deletes all but the max most recently started Jobs.
func (c *Controller) removeOldestJobs(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job, max int32) bool {
	n := len(jobs) - int(max)
	if n <= 0 {
		return false
	}
	sort.Slice(jobs, func(a, b int) bool { return startedBefore(jobs[a], jobs[b]) })
	update := false
	for _, j := range jobs[:n] {
		if c.deleteJob(ctx, cj, j) {
			update = true
		}
	}
	return update
}

// startedBefore orders Jobs by start time (unstarted last), then name.
func startedBefore(a, b *batchv1.Job) bool {
	as, bs := a.Status.StartTime, b.Status.StartTime
	switch {
	case as == nil && bs != nil:
		return false
	case as != nil && bs == nil:
		return true
	case as.Equal(bs):
		return a.Name < b.Name
	}
	return as.Before(bs)
}

// deleteJob deletes a Job (background propagation) and drops it from the
// active list.
func (c *Controller) deleteJob(ctx context.Context, cj *batchv1.CronJob, j *batchv1.Job) bool {
	bg := metav1.DeletePropagationBackground
	if err := c.jobs.Namespace(j.Namespace).Delete(ctx, j.Name, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		c.cfg.Recorder.Eventf(cj, corev1.EventTypeWarning, "FailedDelete", "Deleted job: %v", err)
		c.log.Info("error deleting job", "cronjob", cj.Namespace+"/"+cj.Name, "job", j.Name, "err", err)
		return false
	}
	deleteFromActiveList(cj, j.UID)
	c.cfg.Recorder.Eventf(cj, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted job %v", j.Name)
	return true
}

// finishedStatus says whether the Job has finished (a Complete or Failed
// condition that is True) and which.
func finishedStatus(j *batchv1.Job) (bool, batchv1.JobConditionType) {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true, c.Type
		}
	}
	return false, ""
}

func isJobFinished(j *batchv1.Job) bool {
	ok, _ := finishedStatus(j)
	return ok
}

func isJobSucceeded(j *batchv1.Job) bool {
	ok, cond := finishedStatus(j)
	return ok && cond == batchv1.JobComplete
}

func inActiveList(cj *batchv1.CronJob, uid types.UID) bool {
	for _, r := range cj.Status.Active {
		if r.UID == uid {
			return true
		}
	}
	return false
}

func inActiveListByName(cj *batchv1.CronJob, name string) bool {
	for _, r := range cj.Status.Active {
		if r.Name == name && r.Namespace == cj.Namespace {
			return true
		}
	}
	return false
}

func deleteFromActiveList(cj *batchv1.CronJob, uid types.UID) {
	kept := cj.Status.Active[:0]
	for _, r := range cj.Status.Active {
		if r.UID != uid {
			kept = append(kept, r)
		}
	}
	cj.Status.Active = kept
}

func jobRef(j *batchv1.Job) corev1.ObjectReference {
	return corev1.ObjectReference{
		Kind: "Job", APIVersion: batchv1.SchemeGroupVersion.String(),
		Namespace: j.Namespace, Name: j.Name, UID: j.UID, ResourceVersion: j.ResourceVersion,
	}
}
