package podautoscaler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/discovery"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
)

// QueueName is upstream's queue name.
const QueueName = "horizontalpodautoscaler"

// Upstream's defaults.
const (
	DefaultSyncPeriod                   = 15 * time.Second
	DefaultDownscaleStabilizationWindow = 5 * time.Minute
	scaleUpLimitFactor                  = 2.0
	scaleUpLimitMinimum                 = 4.0
)

// Config configures the controller.
type Config struct {
	Client    *client.Client
	Informers *informers.SharedInformerFactory
	Recorder  record.EventRecorder
	Clock     clock.Clock
	// Workers is --concurrent-horizontal-pod-autoscaler-syncs (5).
	Workers         int
	Logger          *slog.Logger
	MetricsProvider workqueue.MetricsProvider
	// Metrics reads pod metrics (nil: RESTMetricsClient over Client).
	Metrics MetricsClient
	// SyncPeriod is --horizontal-pod-autoscaler-sync-period (15s).
	SyncPeriod time.Duration
	// DownscaleStabilizationWindow is
	// --horizontal-pod-autoscaler-downscale-stabilization (5m).
	DownscaleStabilizationWindow time.Duration
	// Tolerance is --horizontal-pod-autoscaler-tolerance (0.1).
	Tolerance float64
	// CPUInitializationPeriod (5m) and DelayOfInitialReadinessStatus
	// (30s) are upstream's flags of the same names.
	CPUInitializationPeriod       time.Duration
	DelayOfInitialReadinessStatus time.Duration
}

type recommendation struct {
	replicas int32
	at       time.Time
}

type scaleEvent struct {
	change   int32
	at       time.Time
	outdated bool
}

// Controller autoscales the targets of HorizontalPodAutoscalers.
type Controller struct {
	cfg       Config
	hpas      *client.Typed[*autoscalingv2.HorizontalPodAutoscaler, *autoscalingv2.HorizontalPodAutoscalerList]
	hpaLister cache.Lister[*autoscalingv2.HorizontalPodAutoscaler]
	podLister cache.Lister[*corev1.Pod]
	synced    []cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]
	discovery *discovery.Client

	mu              sync.Mutex
	recommendations map[string][]recommendation
	scaleUpEvents   map[string][]scaleEvent
	scaleDownEvents map[string][]scaleEvent
	// selectors are the HPAs' targets' pod selectors by HPA key, to find
	// pods that two HPAs would scale (AmbiguousSelector).
	selectors map[string]labels.Selector
}

// New registers the controller's informer handlers.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("podautoscaler: Client and Informers are required")
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
		cfg.Workers = 5
	}
	if cfg.Metrics == nil {
		cfg.Metrics = RESTMetricsClient{Client: cfg.Client}
	}
	if cfg.SyncPeriod <= 0 {
		cfg.SyncPeriod = DefaultSyncPeriod
	}
	if cfg.DownscaleStabilizationWindow <= 0 {
		cfg.DownscaleStabilizationWindow = DefaultDownscaleStabilizationWindow
	}
	if cfg.Tolerance <= 0 {
		cfg.Tolerance = DefaultTolerance
	}
	if cfg.CPUInitializationPeriod <= 0 {
		cfg.CPUInitializationPeriod = DefaultCPUInitializationPeriod
	}
	if cfg.DelayOfInitialReadinessStatus <= 0 {
		cfg.DelayOfInitialReadinessStatus = DefaultDelayOfInitialReadinessStatus
	}
	c := &Controller{
		cfg:             cfg,
		hpas:            client.For[*autoscalingv2.HorizontalPodAutoscaler, *autoscalingv2.HorizontalPodAutoscalerList](cfg.Client),
		discovery:       discovery.New(cfg.Client),
		recommendations: map[string][]recommendation{},
		scaleUpEvents:   map[string][]scaleEvent{},
		scaleDownEvents: map[string][]scaleEvent{},
		selectors:       map[string]labels.Selector{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiterWithClock[string](cfg.Clock),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: QueueName, MetricsProvider: cfg.MetricsProvider, Clock: cfg.Clock}),
	}
	hpas := informers.InformerFor[*autoscalingv2.HorizontalPodAutoscaler, *autoscalingv2.HorizontalPodAutoscalerList](cfg.Informers)
	pods := cfg.Informers.Pods()
	c.hpaLister, c.podLister = hpas.Lister(), pods.Lister()
	c.synced = []cache.InformerSynced{hpas.HasSynced, pods.HasSynced}
	// As upstream: every HPA is processed once per sync period after it
	// is seen (an HPA already waiting is not queued twice).
	enqueue := func(h *autoscalingv2.HorizontalPodAutoscaler) {
		if key, err := cache.MetaNamespaceKeyFunc(h); err == nil {
			c.queue.AddAfter(key, c.cfg.SyncPeriod)
		}
	}
	if _, err := hpas.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*autoscalingv2.HorizontalPodAutoscaler]{
		AddFunc:    func(h *autoscalingv2.HorizontalPodAutoscaler, _ bool) { enqueue(h) },
		UpdateFunc: func(_, h *autoscalingv2.HorizontalPodAutoscaler) { enqueue(h) },
		DeleteFunc: func(d cache.DeletedObject[*autoscalingv2.HorizontalPodAutoscaler]) {
			c.queue.Forget(d.Key())
			c.mu.Lock()
			delete(c.selectors, d.Key())
			c.mu.Unlock()
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run waits for the caches and runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.cfg.Logger.Info("Starting HPA controller")
	defer c.cfg.Logger.Info("Shutting down HPA controller")
	if !cache.WaitForCacheSync(ctx, c.synced...) {
		return nil
	}
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, func(ctx context.Context, key string) error {
		deleted, err := c.reconcileKey(ctx, key)
		if err != nil {
			c.cfg.Logger.Error("Reconciling HPA failed", "hpa", key, "err", err)
		}
		if !deleted {
			c.queue.AddAfter(key, c.cfg.SyncPeriod)
		}
		return nil
	}, nil)
	return nil
}

// reconcileKey reconciles the HPA key; deleted says it is gone (its
// recommendations and scale events are forgotten).
func (c *Controller) reconcileKey(ctx context.Context, key string) (deleted bool, err error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return true, err
	}
	hpa, err := c.hpaLister.Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.mu.Lock()
		delete(c.recommendations, key)
		delete(c.scaleUpEvents, key)
		delete(c.scaleDownEvents, key)
		delete(c.selectors, key)
		c.mu.Unlock()
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return false, c.reconcile(ctx, key, hpa)
}

// scale is a target's scale subresource and where it lives.
type scaleTarget struct {
	res   client.Resource
	scale *autoscalingv1.Scale
}

// getScale finds the resource of ref by discovery and reads its scale.
func (c *Controller) getScale(ctx context.Context, ns string, ref autoscalingv2.CrossVersionObjectReference) (*scaleTarget, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("invalid API version in scale target reference: %v", err)
	}
	var res *client.Resource
	for attempt := 0; attempt < 2 && res == nil; attempt++ {
		l, err := c.discovery.ServerResourcesForGroupVersion(ctx, gv)
		if err == nil {
			hasScale := map[string]bool{}
			for _, r := range l.APIResources {
				if base, sub, ok := strings.Cut(r.Name, "/"); ok && sub == "scale" {
					hasScale[base] = true
				}
			}
			for _, r := range l.APIResources {
				if r.Kind == ref.Kind && !strings.Contains(r.Name, "/") && hasScale[r.Name] {
					rr := discovery.ResourceOf(gv.WithResource(r.Name), r)
					res = &rr
					break
				}
			}
		}
		if res == nil {
			c.discovery.Invalidate()
		}
	}
	if res == nil {
		return nil, fmt.Errorf("unable to determine resource for scale target reference: no matches for kind %q in group %q", ref.Kind, gv.Group)
	}
	resp, err := c.cfg.Client.Do(ctx, &client.Request{Method: http.MethodGet, Path: res.Path(ns, ref.Name, "scale"), JSONOnly: true})
	if err != nil {
		return nil, err
	}
	s := &autoscalingv1.Scale{}
	if err := json.Unmarshal(resp.Body, s); err != nil {
		return nil, err
	}
	return &scaleTarget{res: *res, scale: s}, nil
}

func (c *Controller) updateScale(ctx context.Context, ns string, t *scaleTarget) error {
	t.scale.APIVersion, t.scale.Kind = "autoscaling/v1", "Scale"
	body, err := json.Marshal(t.scale)
	if err != nil {
		return err
	}
	_, err = c.cfg.Client.Do(ctx, &client.Request{Method: http.MethodPut, Path: t.res.Path(ns, t.scale.Name, "scale"), Body: body, JSONOnly: true})
	return err
}

// reconcile is upstream's reconcileAutoscaler.
func (c *Controller) reconcile(ctx context.Context, key string, shared *autoscalingv2.HorizontalPodAutoscaler) error {
	hpa := shared.DeepCopy()
	original := hpa.Status.DeepCopy()
	now := c.cfg.Clock.Now()
	defaultBehavior(hpa)
	ref := hpa.Spec.ScaleTargetRef
	reference := fmt.Sprintf("%s/%s/%s", ref.Kind, hpa.Namespace, ref.Name)

	target, err := c.getScale(ctx, hpa.Namespace, ref)
	if err != nil {
		c.cfg.Recorder.Event(shared, corev1.EventTypeWarning, "FailedGetScale", err.Error())
		setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedGetScale", now, "the HPA controller was unable to get the target's current scale: %v", err)
		if uerr := c.updateStatusIfNeeded(ctx, original, hpa); uerr != nil {
			c.cfg.Logger.Error("Updating HPA status", "hpa", key, "err", uerr)
		}
		return fmt.Errorf("failed to query scale subresource for %s: %v", reference, err)
	}
	setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", now, "the HPA controller was able to get the target's current scale")
	current := target.scale.Spec.Replicas
	c.mu.Lock()
	if c.recommendations[key] == nil {
		c.recommendations[key] = []recommendation{{current, now}}
	}
	c.mu.Unlock()

	minReplicas := int32(1)
	if hpa.Spec.MinReplicas != nil {
		minReplicas = *hpa.Spec.MinReplicas
	}
	var (
		statuses []autoscalingv2.MetricStatus
		desired  int32
		reason   string
		retErr   error
	)
	rescale := true
	switch {
	case current == 0 && minReplicas != 0:
		desired, rescale = 0, false
		setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "ScalingDisabled", now, "scaling is disabled since the replica count of the target is zero")
	case current > hpa.Spec.MaxReplicas:
		reason, desired = "Current number of replicas above Spec.MaxReplicas", hpa.Spec.MaxReplicas
	case current < minReplicas:
		reason, desired = "Current number of replicas below Spec.MinReplicas", minReplicas
	default:
		proposal, metric, st, err := c.computeReplicasForMetrics(ctx, hpa, target.scale, now)
		statuses = st
		if err != nil && proposal == -1 {
			setStatus(hpa, current, hpa.Status.DesiredReplicas, statuses, false, now)
			if uerr := c.updateStatusIfNeeded(ctx, original, hpa); uerr != nil {
				c.cfg.Logger.Error("Updating HPA status", "hpa", key, "err", uerr)
			}
			c.cfg.Recorder.Event(shared, corev1.EventTypeWarning, "FailedComputeMetricsReplicas", err.Error())
			return fmt.Errorf("failed to compute desired number of replicas based on listed metrics for %s: %v", reference, err)
		}
		retErr = err
		rescaleMetric := ""
		if proposal > desired {
			desired, rescaleMetric = proposal, metric
		}
		if desired > current {
			reason = fmt.Sprintf("%s above target", rescaleMetric)
		}
		if desired < current {
			reason = "All metrics below target"
		}
		if hpa.Spec.Behavior == nil {
			desired = c.normalize(hpa, key, current, desired, minReplicas, now)
		} else {
			desired = c.normalizeWithBehaviors(hpa, key, current, desired, minReplicas, now)
		}
		rescale = desired != current
	}

	if rescale {
		target.scale.Spec.Replicas = desired
		if err := c.updateScale(ctx, hpa.Namespace, target); err != nil {
			c.cfg.Recorder.Eventf(shared, corev1.EventTypeWarning, "FailedRescale", "New size: %d; reason: %s; error: %v", desired, reason, err.Error())
			setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedUpdateScale", now, "the HPA controller was unable to update the target scale: %v", err)
			setStatus(hpa, current, hpa.Status.DesiredReplicas, statuses, false, now)
			if uerr := c.updateStatusIfNeeded(ctx, original, hpa); uerr != nil {
				c.cfg.Logger.Error("Updating HPA status", "hpa", key, "err", uerr)
			}
			return fmt.Errorf("failed to rescale %s: %v", reference, err)
		}
		setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededRescale", now, "the HPA controller was able to update the target scale to %d", desired)
		c.cfg.Recorder.Eventf(shared, corev1.EventTypeNormal, "SuccessfulRescale", "New size: %d; reason: %s", desired, reason)
		c.storeScaleEvent(hpa.Spec.Behavior, key, current, desired, now)
		c.cfg.Logger.Info("Successfully rescaled", "hpa", key, "currentReplicas", current, "desiredReplicas", desired, "reason", reason)
	} else {
		desired = current
	}
	setStatus(hpa, current, desired, statuses, rescale, now)
	if err := c.updateStatusIfNeeded(ctx, original, hpa); err != nil {
		return err
	}
	return retErr
}

// computeReplicasForMetrics is upstream's: the largest proposal of the
// metrics that could be computed; -1 and an error when none could, or
// when some failed and the others would scale down.
func (c *Controller) computeReplicasForMetrics(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, scale *autoscalingv1.Scale, now time.Time) (int32, string, []autoscalingv2.MetricStatus, error) {
	selector, err := c.parseSelector(hpa, scale.Status.Selector, now)
	if err != nil {
		return -1, "", nil, err
	}
	specs := hpa.Spec.Metrics
	statuses := make([]autoscalingv2.MetricStatus, len(specs))
	var (
		replicas     int32
		metric       string
		invalid      int
		firstErr     error
		firstCond    autoscalingv2.HorizontalPodAutoscalerCondition
		specReplicas = scale.Spec.Replicas
	)
	for i, spec := range specs {
		proposal, name, cond, err := c.computeReplicasForMetric(ctx, hpa, spec, specReplicas, selector, &statuses[i], now)
		if err != nil {
			if invalid == 0 {
				firstErr, firstCond = err, cond
			}
			invalid++
			continue
		}
		if replicas == 0 || proposal > replicas {
			replicas, metric = proposal, name
		}
	}
	if firstErr != nil {
		firstErr = fmt.Errorf("invalid metrics (%v invalid out of %v), first error is: %v", invalid, len(specs), firstErr)
	}
	if invalid >= len(specs) || (invalid > 0 && replicas < specReplicas) {
		setCondition(hpa, firstCond.Type, firstCond.Status, firstCond.Reason, now, "%s", firstCond.Message)
		return -1, "", statuses, firstErr
	}
	setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound", now, "the HPA was able to successfully calculate a replica count from %s", metric)
	return replicas, metric, statuses, firstErr
}

func (c *Controller) parseSelector(hpa *autoscalingv2.HorizontalPodAutoscaler, selector string, now time.Time) (labels.Selector, error) {
	if selector == "" {
		msg := "selector is required"
		c.cfg.Recorder.Event(hpa, corev1.EventTypeWarning, "SelectorRequired", msg)
		setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", now, "the HPA target's scale is missing a selector")
		return nil, errors.New(msg)
	}
	s, err := labels.Parse(selector)
	if err != nil {
		msg := fmt.Sprintf("couldn't convert selector into a corresponding internal selector object: %v", err)
		c.cfg.Recorder.Event(hpa, corev1.EventTypeWarning, "InvalidSelector", msg)
		setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", now, "%s", msg)
		return nil, errors.New(msg)
	}
	key := hpa.Namespace + "/" + hpa.Name
	c.mu.Lock()
	c.selectors[key] = s
	c.mu.Unlock()
	pods, err := c.podLister.Namespace(hpa.Namespace).List(s)
	if err != nil {
		return nil, err
	}
	if selecting := c.hpasSelecting(hpa.Namespace, pods); len(selecting) > 1 {
		msg := fmt.Sprintf("pods by selector %v are controlled by multiple HPAs: %v", selector, selecting)
		c.cfg.Recorder.Event(hpa, corev1.EventTypeWarning, "AmbiguousSelector", msg)
		setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "AmbiguousSelector", now, "%s", msg)
		return nil, errors.New(msg)
	}
	return s, nil
}

// hpasSelecting are the keys of the HPAs of namespace ns whose targets
// select one of pods, sorted.
func (c *Controller) hpasSelecting(ns string, pods []*corev1.Pod) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for key, sel := range c.selectors {
		if !strings.HasPrefix(key, ns+"/") {
			continue
		}
		for _, p := range pods {
			if sel.Matches(labels.Set(p.Labels)) {
				out = append(out, key)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// unableCondition is upstream's getUnableComputeReplicaCountCondition
// (it records the event too).
func (c *Controller) unableCondition(hpa *autoscalingv2.HorizontalPodAutoscaler, reason string, err error) autoscalingv2.HorizontalPodAutoscalerCondition {
	c.cfg.Recorder.Event(hpa, corev1.EventTypeWarning, reason, err.Error())
	return autoscalingv2.HorizontalPodAutoscalerCondition{
		Type: autoscalingv2.ScalingActive, Status: corev1.ConditionFalse, Reason: reason,
		Message: fmt.Sprintf("the HPA was unable to compute the replica count: %v", err),
	}
}

func (c *Controller) computeReplicasForMetric(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, spec autoscalingv2.MetricSpec, specReplicas int32,
	selector labels.Selector, status *autoscalingv2.MetricStatus, now time.Time) (int32, string, autoscalingv2.HorizontalPodAutoscalerCondition, error) {
	switch spec.Type {
	case autoscalingv2.ResourceMetricSourceType:
		if spec.Resource == nil {
			break
		}
		replicas, value, name, err := c.resourceMetric(ctx, hpa.Namespace, c.tolerances(hpa), specReplicas, spec.Resource.Target, spec.Resource.Name, "", selector, spec.Type, now)
		if err != nil {
			return 0, "", c.unableCondition(hpa, "FailedGetResourceMetric", err), fmt.Errorf("failed to get %s resource metric value: %v", spec.Resource.Name, err)
		}
		*status = autoscalingv2.MetricStatus{Type: spec.Type, Resource: &autoscalingv2.ResourceMetricStatus{Name: spec.Resource.Name, Current: *value}}
		return replicas, name, autoscalingv2.HorizontalPodAutoscalerCondition{}, nil
	case autoscalingv2.ContainerResourceMetricSourceType:
		if spec.ContainerResource == nil {
			break
		}
		cr := spec.ContainerResource
		replicas, value, name, err := c.resourceMetric(ctx, hpa.Namespace, c.tolerances(hpa), specReplicas, cr.Target, cr.Name, cr.Container, selector, spec.Type, now)
		if err != nil {
			return 0, "", c.unableCondition(hpa, "FailedGetContainerResourceMetric", err), fmt.Errorf("failed to get %s container metric value: %v", cr.Name, err)
		}
		*status = autoscalingv2.MetricStatus{Type: spec.Type, ContainerResource: &autoscalingv2.ContainerResourceMetricStatus{Name: cr.Name, Container: cr.Container, Current: *value}}
		return replicas, name, autoscalingv2.HorizontalPodAutoscalerCondition{}, nil
	case autoscalingv2.PodsMetricSourceType, autoscalingv2.ObjectMetricSourceType:
		// No custom metrics API can be served yet.
		reason, what := "FailedGetPodsMetric", "pods"
		name := ""
		if spec.Pods != nil {
			name = spec.Pods.Metric.Name
		}
		if spec.Type == autoscalingv2.ObjectMetricSourceType {
			reason, what = "FailedGetObjectMetric", "object"
			if spec.Object != nil {
				name = spec.Object.Metric.Name
			}
		}
		err := fmt.Errorf("unable to get metric %s: unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered", name)
		return 0, "", c.unableCondition(hpa, reason, err), fmt.Errorf("failed to get %s metric value: %v", what, err)
	case autoscalingv2.ExternalMetricSourceType:
		name := ""
		if spec.External != nil {
			name = spec.External.Metric.Name
		}
		err := fmt.Errorf("unable to get external metric %s/%s/nil: unable to fetch metrics from external metrics API: the server could not find the requested resource (get %s.external.metrics.k8s.io)", hpa.Namespace, name, name)
		return 0, "", c.unableCondition(hpa, "FailedGetExternalMetric", err), fmt.Errorf("failed to get external metric value: %v", err)
	}
	err := fmt.Errorf("unknown metric source type %q", string(spec.Type))
	return 0, "", c.unableCondition(hpa, "InvalidMetricSourceType", err), err
}

// tolerances are --horizontal-pod-autoscaler-tolerance, or the
// behavior's scaleUp/scaleDown tolerance where set (upstream's
// HPAConfigurableTolerance).
func (c *Controller) tolerances(hpa *autoscalingv2.HorizontalPodAutoscaler) tolerances {
	t := tolerances{scaleDown: c.cfg.Tolerance, scaleUp: c.cfg.Tolerance}
	if b := hpa.Spec.Behavior; b != nil {
		if b.ScaleDown != nil && b.ScaleDown.Tolerance != nil {
			t.scaleDown = b.ScaleDown.Tolerance.AsApproximateFloat64()
		}
		if b.ScaleUp != nil && b.ScaleUp.Tolerance != nil {
			t.scaleUp = b.ScaleUp.Tolerance.AsApproximateFloat64()
		}
	}
	return t
}

// resourceMetric is upstream's computeStatusForResourceMetricGeneric.
func (c *Controller) resourceMetric(ctx context.Context, ns string, tol tolerances, current int32, target autoscalingv2.MetricTarget, res corev1.ResourceName, container string,
	selector labels.Selector, source autoscalingv2.MetricSourceType, now time.Time) (int32, *autoscalingv2.MetricValueStatus, string, error) {
	calc := calculator{tolerance: tol, cpuInitializationPeriod: c.cfg.CPUInitializationPeriod,
		delayOfInitialReadinessStatus: c.cfg.DelayOfInitialReadinessStatus, now: now}
	fetch := func() (PodMetricsInfo, []*corev1.Pod, error) {
		metrics, _, err := c.cfg.Metrics.GetResourceMetric(ctx, res, ns, selector, container)
		if err != nil {
			return nil, nil, fmt.Errorf("unable to get metrics for resource %s: %v", res, err)
		}
		pods, err := c.podLister.Namespace(ns).List(selector)
		if err != nil {
			return nil, nil, fmt.Errorf("unable to get pods while calculating replica count: %v", err)
		}
		return metrics, pods, nil
	}
	if target.AverageValue != nil {
		metrics, pods, err := fetch()
		var replicas int32
		var usage int64
		if err == nil {
			replicas, usage, err = calc.rawResourceReplicas(current, target.AverageValue.MilliValue(), res, pods, metrics)
		}
		if err != nil {
			return 0, nil, "", fmt.Errorf("failed to get %s usage: %v", res, err)
		}
		return replicas, &autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(usage, resource.DecimalSI)}, fmt.Sprintf("%s resource", res), nil
	}
	if target.AverageUtilization == nil {
		return 0, nil, "", errors.New("invalid resource metric source: neither an average utilization target nor an average value (usage) target was set")
	}
	metrics, pods, err := fetch()
	var replicas, utilization int32
	var raw int64
	if err == nil {
		replicas, utilization, raw, err = calc.resourceReplicas(current, *target.AverageUtilization, res, container, pods, metrics)
	}
	if err != nil {
		return 0, nil, "", fmt.Errorf("failed to get %s utilization: %v", res, err)
	}
	name := fmt.Sprintf("%s resource utilization (percentage of request)", res)
	if source == autoscalingv2.ContainerResourceMetricSourceType {
		name = fmt.Sprintf("%s container resource utilization (percentage of request)", res)
	}
	return replicas, &autoscalingv2.MetricValueStatus{AverageUtilization: &utilization, AverageValue: resource.NewMilliQuantity(raw, resource.DecimalSI)}, name, nil
}

// normalize is upstream's normalizeDesiredReplicas (no behavior): the
// highest recommendation of the downscale stabilization window, then the
// min/max and scale-up limits.
func (c *Controller) normalize(hpa *autoscalingv2.HorizontalPodAutoscaler, key string, current, desired, minReplicas int32, now time.Time) int32 {
	stabilized := c.stabilize(key, desired, now)
	if stabilized != desired {
		setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ScaleDownStabilized", now, "recent recommendations were higher than current one, applying the highest recent recommendation")
	} else {
		setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ReadyForNewScale", now, "recommended size matches current size")
	}
	replicas, reason, message := convertDesiredReplicasWithRules(current, stabilized, minReplicas, hpa.Spec.MaxReplicas)
	status := corev1.ConditionTrue
	if replicas == stabilized {
		status = corev1.ConditionFalse
	}
	setCondition(hpa, autoscalingv2.ScalingLimited, status, reason, now, "%s", message)
	return replicas
}

func (c *Controller) stabilize(key string, desired int32, now time.Time) int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	maxRec := desired
	old := -1
	cutoff := now.Add(-c.cfg.DownscaleStabilizationWindow)
	for i, r := range c.recommendations[key] {
		if r.at.Before(cutoff) {
			old = i
		} else if r.replicas > maxRec {
			maxRec = r.replicas
		}
	}
	if old >= 0 {
		c.recommendations[key][old] = recommendation{desired, now}
	} else {
		c.recommendations[key] = append(c.recommendations[key], recommendation{desired, now})
	}
	return maxRec
}

func convertDesiredReplicasWithRules(current, desired, minReplicas, maxReplicas int32) (int32, string, string) {
	scaleUpLimit := int32(math.Max(scaleUpLimitFactor*float64(current), scaleUpLimitMinimum))
	maxAllowed := maxReplicas
	reason, message := "TooManyReplicas", "the desired replica count is more than the maximum replica count"
	if maxReplicas > scaleUpLimit {
		maxAllowed = scaleUpLimit
		reason, message = "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"
	}
	if desired < minReplicas {
		return minReplicas, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
	}
	if desired > maxAllowed {
		return maxAllowed, reason, message
	}
	return desired, "DesiredWithinRange", "the desired count is within the acceptable range"
}

// normalizeWithBehaviors is upstream's normalizeDesiredReplicasWithBehaviors.
func (c *Controller) normalizeWithBehaviors(hpa *autoscalingv2.HorizontalPodAutoscaler, key string, current, desired, minReplicas int32, now time.Time) int32 {
	b := hpa.Spec.Behavior
	if b.ScaleDown.StabilizationWindowSeconds == nil {
		w := int32(c.cfg.DownscaleStabilizationWindow.Seconds())
		b.ScaleDown.StabilizationWindowSeconds = &w
	}
	stabilized, reason, message := c.stabilizeWithBehaviors(key, b, current, desired, now)
	if stabilized != desired {
		setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, reason, now, "%s", message)
	} else {
		setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ReadyForNewScale", now, "recommended size matches current size")
	}
	replicas, reason, message := c.convertWithBehaviorRate(key, b, current, stabilized, minReplicas, hpa.Spec.MaxReplicas, now)
	status := corev1.ConditionTrue
	if replicas == stabilized {
		status = corev1.ConditionFalse
	}
	setCondition(hpa, autoscalingv2.ScalingLimited, status, reason, now, "%s", message)
	return replicas
}

func (c *Controller) stabilizeWithBehaviors(key string, b *autoscalingv2.HorizontalPodAutoscalerBehavior, current, desired int32, now time.Time) (int32, string, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	up, down := desired, desired
	upCutoff := now.Add(-time.Duration(*b.ScaleUp.StabilizationWindowSeconds) * time.Second)
	downCutoff := now.Add(-time.Duration(*b.ScaleDown.StabilizationWindowSeconds) * time.Second)
	old := -1
	for i, r := range c.recommendations[key] {
		if r.at.After(upCutoff) {
			up = min(r.replicas, up)
		}
		if r.at.After(downCutoff) {
			down = max(r.replicas, down)
		}
		if r.at.Before(upCutoff) && r.at.Before(downCutoff) {
			old = i
		}
	}
	rec := current
	if rec < up {
		rec = up
	}
	if rec > down {
		rec = down
	}
	if old >= 0 {
		c.recommendations[key][old] = recommendation{desired, now}
	} else {
		c.recommendations[key] = append(c.recommendations[key], recommendation{desired, now})
	}
	if desired >= current {
		return rec, "ScaleUpStabilized", "recent recommendations were lower than current one, applying the lowest recent recommendation"
	}
	return rec, "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation"
}

func (c *Controller) convertWithBehaviorRate(key string, b *autoscalingv2.HorizontalPodAutoscalerBehavior, current, desired, minReplicas, maxReplicas int32, now time.Time) (int32, string, string) {
	c.mu.Lock()
	ups, downs := c.scaleUpEvents[key], c.scaleDownEvents[key]
	c.mu.Unlock()
	switch {
	case desired > current:
		limit := scaleUpLimitWithRules(current, ups, downs, b.ScaleUp, now)
		if limit < current {
			limit = current
		}
		maxAllowed := maxReplicas
		reason, message := "TooManyReplicas", "the desired replica count is more than the maximum replica count"
		if maxAllowed > limit {
			maxAllowed = limit
			reason, message = "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"
		}
		if desired > maxAllowed {
			return maxAllowed, reason, message
		}
	case desired < current:
		limit := scaleDownLimitWithRules(current, ups, downs, b.ScaleDown, now)
		if limit > current {
			limit = current
		}
		minAllowed := minReplicas
		reason, message := "TooFewReplicas", "the desired replica count is less than the minimum replica count"
		if minAllowed < limit {
			minAllowed = limit
			reason, message = "ScaleDownLimit", "the desired replica count is decreasing faster than the maximum scale rate"
		}
		if desired < minAllowed {
			return minAllowed, reason, message
		}
	}
	return desired, "DesiredWithinRange", "the desired count is within the acceptable range"
}

func changeInPeriod(periodSeconds int32, events []scaleEvent, now time.Time) int32 {
	cutoff := now.Add(-time.Duration(periodSeconds) * time.Second)
	var n int32
	for _, e := range events {
		if e.at.After(cutoff) {
			n += e.change
		}
	}
	return n
}

func scaleUpLimitWithRules(current int32, ups, downs []scaleEvent, rules *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	if rules.SelectPolicy != nil && *rules.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return current
	}
	pick, result := maxI32, int32(math.MinInt32)
	if rules.SelectPolicy != nil && *rules.SelectPolicy == autoscalingv2.MinChangePolicySelect {
		pick, result = minI32, math.MaxInt32
	}
	for _, p := range rules.Policies {
		start := current - changeInPeriod(p.PeriodSeconds, ups, now) + changeInPeriod(p.PeriodSeconds, downs, now)
		var proposed int32
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			proposed = start + p.Value
		case autoscalingv2.PercentScalingPolicy:
			proposed = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		}
		result = pick(result, proposed)
	}
	return result
}

func scaleDownLimitWithRules(current int32, ups, downs []scaleEvent, rules *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	if rules.SelectPolicy != nil && *rules.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return current
	}
	pick, result := minI32, int32(math.MaxInt32)
	if rules.SelectPolicy != nil && *rules.SelectPolicy == autoscalingv2.MinChangePolicySelect {
		pick, result = maxI32, math.MinInt32
	}
	for _, p := range rules.Policies {
		start := current - changeInPeriod(p.PeriodSeconds, ups, now) + changeInPeriod(p.PeriodSeconds, downs, now)
		var proposed int32
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			proposed = start - p.Value
		case autoscalingv2.PercentScalingPolicy:
			proposed = int32(float64(start) * (1 - float64(p.Value)/100))
		}
		result = pick(result, proposed)
	}
	return result
}

func longestPeriod(rules *autoscalingv2.HPAScalingRules) int32 {
	var p int32
	for _, pol := range rules.Policies {
		p = max(p, pol.PeriodSeconds)
	}
	return p
}

// storeScaleEvent records a rescale for the behaviors' rate policies,
// reusing an event older than the longest policy period.
func (c *Controller) storeScaleEvent(b *autoscalingv2.HorizontalPodAutoscalerBehavior, key string, prev, next int32, now time.Time) {
	if b == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	store := func(events map[string][]scaleEvent, rules *autoscalingv2.HPAScalingRules, change int32) {
		cutoff := now.Add(-time.Duration(longestPeriod(rules)) * time.Second)
		list := events[key]
		for i := range list {
			if list[i].at.Before(cutoff) {
				list[i].outdated = true
			}
		}
		for i := range list {
			if list[i].outdated {
				list[i] = scaleEvent{change: change, at: now}
				return
			}
		}
		events[key] = append(list, scaleEvent{change: change, at: now})
	}
	if next > prev {
		store(c.scaleUpEvents, b.ScaleUp, next-prev)
	} else {
		store(c.scaleDownEvents, b.ScaleDown, prev-next)
	}
}

// defaultBehavior fills a behavior's unset rules with upstream's
// defaults (the API server's defaulting does it too).
func defaultBehavior(hpa *autoscalingv2.HorizontalPodAutoscaler) {
	b := hpa.Spec.Behavior
	if b == nil {
		return
	}
	maxPolicy := autoscalingv2.MaxChangePolicySelect
	if b.ScaleUp == nil {
		b.ScaleUp = &autoscalingv2.HPAScalingRules{}
	}
	if b.ScaleUp.StabilizationWindowSeconds == nil {
		zero := int32(0)
		b.ScaleUp.StabilizationWindowSeconds = &zero
	}
	if b.ScaleUp.SelectPolicy == nil {
		b.ScaleUp.SelectPolicy = &maxPolicy
	}
	if len(b.ScaleUp.Policies) == 0 {
		b.ScaleUp.Policies = []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
		}
	}
	if b.ScaleDown == nil {
		b.ScaleDown = &autoscalingv2.HPAScalingRules{}
	}
	if b.ScaleDown.SelectPolicy == nil {
		b.ScaleDown.SelectPolicy = &maxPolicy
	}
	if len(b.ScaleDown.Policies) == 0 {
		b.ScaleDown.Policies = []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}
	}
}

// setStatus is upstream's: replicas, metrics and (on a rescale) the
// last scale time; the conditions are kept.
func setStatus(hpa *autoscalingv2.HorizontalPodAutoscaler, current, desired int32, metrics []autoscalingv2.MetricStatus, rescale bool, now time.Time) {
	hpa.Status = autoscalingv2.HorizontalPodAutoscalerStatus{
		CurrentReplicas: current, DesiredReplicas: desired, LastScaleTime: hpa.Status.LastScaleTime,
		CurrentMetrics: metrics, Conditions: hpa.Status.Conditions,
	}
	if rescale {
		t := metav1.NewTime(now)
		hpa.Status.LastScaleTime = &t
	}
}

// setCondition sets a condition, its transition time moving only when
// its status changes.
func setCondition(hpa *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType, status corev1.ConditionStatus, reason string, now time.Time, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	for i := range hpa.Status.Conditions {
		c := &hpa.Status.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = metav1.NewTime(now)
		}
		c.Status, c.Reason, c.Message = status, reason, msg
		return
	}
	hpa.Status.Conditions = append(hpa.Status.Conditions, autoscalingv2.HorizontalPodAutoscalerCondition{
		Type: t, Status: status, Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(now),
	})
}

func (c *Controller) updateStatusIfNeeded(ctx context.Context, old *autoscalingv2.HorizontalPodAutoscalerStatus, hpa *autoscalingv2.HorizontalPodAutoscaler) error {
	if equality.Semantic.DeepEqual(old, &hpa.Status) {
		return nil
	}
	if _, err := c.hpas.Namespace(hpa.Namespace).UpdateStatus(ctx, hpa, metav1.UpdateOptions{}); err != nil {
		c.cfg.Recorder.Event(hpa, corev1.EventTypeWarning, "FailedUpdateStatus", err.Error())
		return fmt.Errorf("failed to update status for %s: %v", hpa.Name, err)
	}
	return nil
}

func minI32(a, b int32) int32 { return min(a, b) }

func maxI32(a, b int32) int32 { return max(a, b) }
