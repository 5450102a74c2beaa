package nodelifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/controller/internal/metricsutil"
)

// Upstream's defaults (kube-controller-manager 1.32+).
const (
	// DefaultNodeMonitorPeriod is --node-monitor-period.
	DefaultNodeMonitorPeriod = 5 * time.Second
	// DefaultNodeMonitorGracePeriod is --node-monitor-grace-period (40s
	// before 1.32).
	DefaultNodeMonitorGracePeriod = 50 * time.Second
	// DefaultNodeStartupGracePeriod is --node-startup-grace-period.
	DefaultNodeStartupGracePeriod = time.Minute
	// DefaultWorkers is upstream's number of NoSchedule tainting workers
	// (scheduler.UpdateWorkerSize).
	DefaultWorkers = 8
	// QueueName is the NoSchedule tainting queue's name, upstream's.
	QueueName = "node_lifecycle_controller"
	// PodQueueName is the queue of pods bound to a node, upstream's.
	PodQueueName = "node_lifecycle_controller_pods"
	// podWorkers is upstream's podUpdateWorkerSize.
	podWorkers = 4
)

// Config configures the controller.
type Config struct {
	Client    *client.Client
	Informers *informers.SharedInformerFactory
	Recorder  record.EventRecorder
	Clock     clock.Clock
	// Workers run the NoSchedule tainting pass (0: DefaultWorkers).
	Workers         int
	Logger          *slog.Logger
	MetricsProvider workqueue.MetricsProvider
	Registry        prometheus.Registerer

	// NodeMonitorPeriod is how often node health is checked (0: default).
	NodeMonitorPeriod time.Duration
	// NodeMonitorGracePeriod is how long a node that posted its status may
	// stay silent before it is marked Unknown (0: default).
	NodeMonitorGracePeriod time.Duration
	// NodeStartupGracePeriod is the same for a node that never posted its
	// Ready condition (0: default).
	NodeStartupGracePeriod time.Duration
	// NodeEvictionRate, SecondaryNodeEvictionRate,
	// LargeClusterSizeThreshold and UnhealthyZoneThreshold are upstream's
	// --node-eviction-rate (nodes/s tainted NoExecute per zone), ... (0:
	// default; a negative rate is a rate of 0: no tainting).
	NodeEvictionRate          float64
	SecondaryNodeEvictionRate float64
	LargeClusterSizeThreshold int
	UnhealthyZoneThreshold    float64
}

// Controller is the node lifecycle controller.
type Controller struct {
	cfg     Config
	nodes   *client.Typed[*corev1.Node, *corev1.NodeList]
	nodeIn  *cache.TypedInformer[*corev1.Node]
	podIn   *cache.TypedInformer[*corev1.Pod]
	leaseIn *cache.TypedInformer[*coordinationv1.Lease]
	pods    *client.Typed[*corev1.Pod, *corev1.PodList]
	synced  []cache.InformerSynced
	// queue holds node names due for the NoSchedule tainting pass.
	queue workqueue.TypedRateLimitingInterface[string]
	// podQueue holds "<ns>/<name>" of pods just bound to a node.
	podQueue workqueue.TypedRateLimitingInterface[string]
	log      *slog.Logger

	// The health monitor's state, owned by the monitor loop.
	known       map[string]bool
	health      map[string]*nodeHealth
	podsToRetry map[string]bool
	tainters    map[string]*zoneTainter
	zoneStates  map[string]zoneState

	metrics metrics
}

// metrics are upstream's node_collector_* metrics.
type metrics struct {
	zoneHealth, zoneSize, unhealthyNodes *prometheus.GaugeVec
	evictions                            *prometheus.CounterVec
	allNodesDuration                     prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) (metrics, error) {
	var m metrics
	var err error
	gauge := func(name, help string) *prometheus.GaugeVec {
		if err != nil {
			return nil
		}
		var g *prometheus.GaugeVec
		g, err = metricsutil.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "node_collector", Name: name, Help: help}, []string{"zone"}))
		return g
	}
	m.zoneHealth = gauge("zone_health", "Gauge measuring percentage of healthy nodes per zone.")
	m.zoneSize = gauge("zone_size", "Gauge measuring number of registered Nodes per zones.")
	m.unhealthyNodes = gauge("unhealthy_nodes_in_zone", "Gauge measuring number of not Ready Nodes per zones.")
	if err != nil {
		return m, err
	}
	if m.evictions, err = metricsutil.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "node_collector", Name: "evictions_total",
		Help: "Number of Node evictions that happened since current instance of NodeController started."}, []string{"zone"})); err != nil {
		return m, err
	}
	m.allNodesDuration, err = metricsutil.Register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{Subsystem: "node_collector", Name: "update_all_nodes_health_duration_seconds",
		Help: "Duration in seconds for NodeController to update the health of all nodes.", Buckets: prometheus.ExponentialBuckets(0.01, 4, 8)}))
	return m, err
}

// New registers the controller's informer handlers.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("nodelifecycle: Client and Informers are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Workers < 1 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.NodeMonitorPeriod <= 0 {
		cfg.NodeMonitorPeriod = DefaultNodeMonitorPeriod
	}
	if cfg.NodeMonitorGracePeriod <= 0 {
		cfg.NodeMonitorGracePeriod = DefaultNodeMonitorGracePeriod
	}
	if cfg.NodeStartupGracePeriod <= 0 {
		cfg.NodeStartupGracePeriod = DefaultNodeStartupGracePeriod
	}
	switch {
	case cfg.NodeEvictionRate == 0:
		cfg.NodeEvictionRate = DefaultNodeEvictionRate
	case cfg.NodeEvictionRate < 0:
		cfg.NodeEvictionRate = 0 // no NoExecute tainting
	}
	switch {
	case cfg.SecondaryNodeEvictionRate == 0:
		cfg.SecondaryNodeEvictionRate = DefaultSecondaryNodeEvictionRate
	case cfg.SecondaryNodeEvictionRate < 0:
		cfg.SecondaryNodeEvictionRate = 0
	}
	if cfg.LargeClusterSizeThreshold <= 0 {
		cfg.LargeClusterSizeThreshold = DefaultLargeClusterSizeThreshold
	}
	if cfg.UnhealthyZoneThreshold <= 0 {
		cfg.UnhealthyZoneThreshold = DefaultUnhealthyZoneThreshold
	}
	c := &Controller{
		cfg:         cfg,
		nodes:       client.For[*corev1.Node, *corev1.NodeList](cfg.Client),
		pods:        client.For[*corev1.Pod, *corev1.PodList](cfg.Client),
		nodeIn:      cfg.Informers.Nodes(),
		podIn:       cfg.Informers.Pods(),
		leaseIn:     cfg.Informers.Leases(),
		log:         cfg.Logger,
		known:       map[string]bool{},
		health:      map[string]*nodeHealth{},
		podsToRetry: map[string]bool{},
		tainters:    map[string]*zoneTainter{},
		zoneStates:  map[string]zoneState{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiterWithClock[string](cfg.Clock),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: QueueName, MetricsProvider: cfg.MetricsProvider, Clock: cfg.Clock}),
		podQueue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiterWithClock[string](cfg.Clock),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: PodQueueName, MetricsProvider: cfg.MetricsProvider, Clock: cfg.Clock}),
	}
	var err error
	if c.metrics, err = newMetrics(cfg.Registry); err != nil {
		return nil, err
	}
	if _, err := c.nodeIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Node]{
		AddFunc:    func(n *corev1.Node, _ bool) { c.queue.Add(n.Name) },
		UpdateFunc: func(_, n *corev1.Node) { c.queue.Add(n.Name) },
	}); err != nil {
		return nil, err
	}
	if _, err := c.podIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc: func(p *corev1.Pod, _ bool) {
			if p.Spec.NodeName != "" {
				c.podQueue.Add(p.Namespace + "/" + p.Name)
			}
		},
		UpdateFunc: func(old, p *corev1.Pod) {
			if p.Spec.NodeName != "" && p.Spec.NodeName != old.Spec.NodeName {
				c.podQueue.Add(p.Namespace + "/" + p.Name)
			}
		},
	}); err != nil {
		return nil, err
	}
	c.synced = []cache.InformerSynced{c.nodeIn.HasSynced, c.podIn.HasSynced, c.leaseIn.HasSynced}
	return c, nil
}

// Run waits for the caches, then runs the tainting workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	defer c.podQueue.ShutDown()
	c.log.Info("Starting node controller")
	defer c.log.Info("Shutting down node controller")
	if !cache.WaitForCacheSync(ctx, c.synced...) {
		return nil
	}
	go c.monitor(ctx)
	go workqueue.RunWorkers(ctx, c.podQueue, podWorkers, c.syncPod, func(key string, err error) {
		c.log.Info("Unable to mark pod NotReady on node", "pod", key, "err", err)
	})
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, c.syncNoScheduleTaints, func(name string, err error) {
		c.log.Error("Failed to taint NoSchedule on node, requeue it", "node", name, "err", err)
	})
	return nil
}

// monitor checks node health every NodeMonitorPeriod, then taints the
// queued nodes NoExecute (upstream runs that pass every 100ms; here it
// follows each health pass).
func (c *Controller) monitor(ctx context.Context) {
	for {
		if err := c.MonitorNodeHealth(ctx); err != nil {
			c.log.Error("Error monitoring node health", "err", err)
		}
		c.NoExecuteTaintingPass(ctx)
		select {
		case <-ctx.Done():
			return
		case <-c.cfg.Clock.After(c.cfg.NodeMonitorPeriod):
		}
	}
}

func (c *Controller) event(obj runtime.Object, typ, reason, msg string) {
	if c.cfg.Recorder != nil {
		c.cfg.Recorder.Event(obj, typ, reason, msg)
	}
}

// syncNoScheduleTaints is the NoSchedule tainting pass of one node: its
// condition and unschedulable taints made to match its status and spec.
func (c *Controller) syncNoScheduleTaints(ctx context.Context, name string) error {
	n, err := c.nodeIn.Lister().Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	add, del := noScheduleDiff(n)
	if err := c.updateTaints(ctx, n, add, del); err != nil {
		return err
	}
	return c.reconcileNodeLabels(ctx, n)
}

// labelReconcile are upstream's labelReconcileInfo: the deprecated beta
// os and arch labels follow the GA ones (and are added when missing).
var labelReconcile = []struct{ primary, secondary string }{
	{corev1.LabelOSStable, "beta.kubernetes.io/os"},
	{corev1.LabelArchStable, "beta.kubernetes.io/arch"},
}

// reconcileNodeLabels sets beta.kubernetes.io/os and arch to the values
// of kubernetes.io/os and arch, as upstream's.
func (c *Controller) reconcileNodeLabels(ctx context.Context, n *corev1.Node) error {
	update := map[string]string{}
	for _, r := range labelReconcile {
		v, ok := n.Labels[r.primary]
		if !ok {
			continue
		}
		if cur, ok := n.Labels[r.secondary]; !ok || cur != v {
			update[r.secondary] = v
		}
	}
	if len(update) == 0 {
		return nil
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": update}})
	if err != nil {
		return err
	}
	_, err = c.nodes.Patch(ctx, n.Name, types.MergePatchType, body, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// syncPod marks a pod just bound to a node that is not Ready not Ready
// (upstream's processPod); a node without a Ready condition is left to
// the health monitor.
func (c *Controller) syncPod(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	p, err := c.podIn.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	n, err := c.nodeIn.Lister().Get(p.Spec.NodeName)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if cond := readyCondition(&n.Status); cond == nil || cond.Status == corev1.ConditionTrue {
		return nil
	}
	return c.markPodNotReady(ctx, p)
}
