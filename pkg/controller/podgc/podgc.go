package podgc

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/controller/internal/metricsutil"
)

const (
	// GCCheckPeriod is how often the collector runs.
	GCCheckPeriod = 20 * time.Second
	// QuarantineTime is how long a node missing from the cache is waited
	// for before the server is asked whether it really is gone.
	QuarantineTime = 40 * time.Second
	// FieldManager owns the phase and condition the collector writes.
	FieldManager = "PodGC"
	// DefaultTerminatedPodThreshold is upstream's
	// --terminated-pod-gc-threshold.
	DefaultTerminatedPodThreshold = 12500
)

// The reason label of the force-delete metrics, as upstream's.
const (
	reasonTerminated   = "terminated"
	reasonOutOfService = "out-of-service"
	reasonOrphaned     = "orphaned"
	reasonUnscheduled  = "unscheduled"
)

// Config configures a Controller.
type Config struct {
	Client    *client.Client
	Informers *informers.SharedInformerFactory
	// Recorder is unused (upstream's collector records no events).
	Recorder        record.EventRecorder
	Clock           clock.Clock
	Logger          *slog.Logger
	MetricsProvider workqueue.MetricsProvider
	// TerminatedPodThreshold is how many terminated pods are kept; <= 0
	// keeps them all.
	TerminatedPodThreshold int
	// Registry, if set, gets upstream's
	// pod_gc_collector_force_delete_pods_total and
	// pod_gc_collector_force_delete_pod_errors_total.
	Registry prometheus.Registerer
}

// Controller is the pod garbage collector.
type Controller struct {
	cfg       Config
	podIn     *cache.TypedInformer[*corev1.Pod]
	nodeIn    *cache.TypedInformer[*corev1.Node]
	pods      *client.Typed[*corev1.Pod, *corev1.PodList]
	nodes     *client.Typed[*corev1.Node, *corev1.NodeList]
	nodeQueue workqueue.TypedDelayingInterface[string]
	log       *slog.Logger
	// deleting and deleteErrors count force deletions by namespace and reason.
	deleting, deleteErrors *prometheus.CounterVec
}

// New returns the pod garbage collector.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("podgc: Client and Informers are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Controller{
		cfg:    cfg,
		podIn:  cfg.Informers.Pods(),
		nodeIn: cfg.Informers.Nodes(),
		pods:   client.For[*corev1.Pod, *corev1.PodList](cfg.Client),
		nodes:  client.For[*corev1.Node, *corev1.NodeList](cfg.Client),
		log:    cfg.Logger.With("controller", "podgc"),
		nodeQueue: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{
			Name: "orphaned_pods_nodes", MetricsProvider: cfg.MetricsProvider, Clock: cfg.Clock}),
	}
	var err error
	if c.deleting, err = metricsutil.Register(cfg.Registry, prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "pod_gc_collector", Name: "force_delete_pods_total",
		Help: "Number of pods that are being forcefully deleted since the Pod GC Controller started.",
	}, []string{"namespace", "reason"})); err != nil {
		return nil, err
	}
	if c.deleteErrors, err = metricsutil.Register(cfg.Registry, prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "pod_gc_collector", Name: "force_delete_pod_errors_total",
		Help: "Number of errors encountered when forcefully deleting the pods since the Pod GC Controller started.",
	}, []string{"namespace", "reason"})); err != nil {
		return nil, err
	}
	return c, nil
}

// Run waits for the caches, then collects every GCCheckPeriod until ctx
// ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.nodeQueue.ShutDown()
	c.cfg.Informers.Start(ctx)
	if !cache.WaitForCacheSync(ctx, c.podIn.HasSynced, c.nodeIn.HasSynced) {
		return ctx.Err()
	}
	for {
		c.GC(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-c.cfg.Clock.After(GCCheckPeriod):
		}
	}
}

// GC is one pass of the collector.
func (c *Controller) GC(ctx context.Context) {
	pods, err := c.podIn.Lister().List(labels.Everything())
	if err != nil {
		c.log.Error("listing pods", "err", err)
		return
	}
	nodes, err := c.nodeIn.Lister().List(labels.Everything())
	if err != nil {
		c.log.Error("listing nodes", "err", err)
		return
	}
	if c.cfg.TerminatedPodThreshold > 0 {
		c.gcTerminated(ctx, pods)
	}
	c.gcTerminating(ctx, pods)
	c.gcOrphaned(ctx, pods, nodes)
	c.gcUnscheduledTerminating(ctx, pods)
}

func isTerminated(p *corev1.Pod) bool {
	switch p.Status.Phase {
	case corev1.PodPending, corev1.PodRunning, corev1.PodUnknown:
		return false
	}
	return true
}

func (c *Controller) gcTerminated(ctx context.Context, pods []*corev1.Pod) {
	var terminated []*corev1.Pod
	for _, p := range pods {
		if isTerminated(p) {
			terminated = append(terminated, p)
		}
	}
	n := len(terminated) - c.cfg.TerminatedPodThreshold
	if n <= 0 {
		return
	}
	// Pods whose force deletion the server already accepted count, but
	// are not deleted again: they only wait for their finalizers.
	var candidates []*corev1.Pod
	for _, p := range terminated {
		if !blockedOnFinalizers(p) {
			candidates = append(candidates, p)
		}
	}
	n = min(n, len(candidates))
	if n == 0 {
		return
	}
	c.log.Info("garbage collecting pods", "numPods", n)
	sortForDeletion(candidates)
	c.deleteAll(ctx, candidates[:n], nil, reasonTerminated)
}

// blockedOnFinalizers: a terminated pod whose deletion with a zero grace
// period was accepted, kept only by its finalizers.
func blockedOnFinalizers(p *corev1.Pod) bool {
	return isTerminated(p) && p.DeletionTimestamp != nil && len(p.Finalizers) > 0 &&
		p.DeletionGracePeriodSeconds != nil && *p.DeletionGracePeriodSeconds == 0
}

// gcTerminating force-deletes terminating pods on not-ready nodes tainted
// node.kubernetes.io/out-of-service.
func (c *Controller) gcTerminating(ctx context.Context, pods []*corev1.Pod) {
	var terminating []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			continue
		}
		node, err := c.nodeIn.Lister().Get(p.Spec.NodeName)
		if err != nil {
			continue
		}
		if !nodeReady(node) && hasTaint(node, corev1.TaintNodeOutOfService) {
			terminating = append(terminating, p)
		}
	}
	if len(terminating) == 0 {
		return
	}
	c.log.Info("garbage collecting pods that are terminating on nodes tainted with node.kubernetes.io/out-of-service", "numPods", len(terminating))
	sortForDeletion(terminating)
	c.deleteAll(ctx, terminating, nil, reasonOutOfService)
}

// gcOrphaned force-deletes pods bound to nodes that no longer exist.
func (c *Controller) gcOrphaned(ctx context.Context, pods []*corev1.Pod, nodes []*corev1.Node) {
	existing := map[string]bool{}
	for _, n := range nodes {
		existing[n.Name] = true
	}
	for _, p := range pods {
		if p.Spec.NodeName != "" && !existing[p.Spec.NodeName] {
			c.nodeQueue.AddAfter(p.Spec.NodeName, QuarantineTime)
		}
	}
	deleted, quit := c.discoverDeletedNodes(ctx, existing)
	if quit {
		return
	}
	cond := &corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: "DeletionByPodGC", Message: "PodGC: node no longer exists"}
	var orphans []*corev1.Pod
	for _, p := range pods {
		if deleted[p.Spec.NodeName] {
			orphans = append(orphans, p)
		}
	}
	c.deleteAll(ctx, orphans, cond, reasonOrphaned)
}

// discoverDeletedNodes drains the quarantined nodes that are due and
// returns those the server confirms absent.
func (c *Controller) discoverDeletedNodes(ctx context.Context, existing map[string]bool) (map[string]bool, bool) {
	deleted := map[string]bool{}
	for c.nodeQueue.Len() > 0 {
		name, quit := c.nodeQueue.Get()
		if quit {
			return nil, true
		}
		if !existing[name] {
			_, err := c.nodes.Get(ctx, name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				deleted[name] = true
			case err != nil:
				// Added back by the next pass if still missing.
				c.log.Error("getting node", "node", name, "err", err)
			}
		}
		c.nodeQueue.Done(name)
	}
	return deleted, false
}

// gcUnscheduledTerminating force-deletes terminating pods that were never
// scheduled.
func (c *Controller) gcUnscheduledTerminating(ctx context.Context, pods []*corev1.Pod) {
	var unscheduled []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp != nil && p.Spec.NodeName == "" {
			unscheduled = append(unscheduled, p)
		}
	}
	c.deleteAll(ctx, unscheduled, nil, reasonUnscheduled)
}

func (c *Controller) deleteAll(ctx context.Context, pods []*corev1.Pod, cond *corev1.PodCondition, reason string) {
	for _, p := range pods {
		c.deleting.WithLabelValues(p.Namespace, reason).Inc()
		if err := c.markFailedAndDelete(ctx, p, cond); err != nil {
			c.deleteErrors.WithLabelValues(p.Namespace, reason).Inc()
			if !apierrors.IsNotFound(err) {
				c.log.Error("force deleting pod", "pod", p.Namespace+"/"+p.Name, "err", err)
			}
		}
	}
}

// markFailedAndDelete moves an unfinished pod to Failed (with cond) and
// deletes it with a zero grace period.
func (c *Controller) markFailedAndDelete(ctx context.Context, p *corev1.Pod, cond *corev1.PodCondition) error {
	c.log.Info("PodGC is force deleting Pod", "pod", p.Namespace+"/"+p.Name)
	if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
		status := map[string]any{"phase": corev1.PodFailed}
		if cond != nil {
			cc := *cond
			cc.LastTransitionTime = metav1.Time{Time: c.cfg.Clock.Now()}
			status["conditions"] = []corev1.PodCondition{cc}
		}
		body, err := json.Marshal(map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": p.Name, "namespace": p.Namespace},
			"status":   status,
		})
		if err != nil {
			return err
		}
		force := true
		if _, err := c.pods.Namespace(p.Namespace).Patch(ctx, p.Name, types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: FieldManager, Force: &force}, "status"); err != nil {
			return err
		}
	}
	zero := int64(0)
	return c.pods.Namespace(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
}

// sortForDeletion orders evicted pods first, then by creation time, then
// by name.
func sortForDeletion(pods []*corev1.Pod) {
	sort.Slice(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		if ae, be := evicted(a), evicted(b); ae != be {
			return ae
		}
		if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.Name < b.Name
		}
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	})
}

func evicted(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed && p.Status.Reason == "Evicted"
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}
