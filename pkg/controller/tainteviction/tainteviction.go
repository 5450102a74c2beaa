package tainteviction

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
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
	"github.com/skiff-sh/skiff/pkg/componenthelpers/scheduling/corev1helpers"
	"github.com/skiff-sh/skiff/pkg/controller/internal/metricsutil"
)

const (
	// QueueName is the controller's workqueue name.
	QueueName = "taint_eviction_controller"
	// DefaultWorkers is upstream's number of update workers
	// (UpdateWorkerSize).
	DefaultWorkers = 8
)

// Config configures the controller.
type Config struct {
	Client          *client.Client
	Informers       *informers.SharedInformerFactory
	Recorder        record.EventRecorder
	Clock           clock.Clock
	Workers         int
	Logger          *slog.Logger
	MetricsProvider workqueue.MetricsProvider
	Registry        prometheus.Registerer
}

// The queue's keys: "node/<name>" (look at every pod of the node),
// "pod/<ns>/<name>" (look at one pod), "evict/<ns>/<name>" (a scheduled
// deletion that may be due).
const (
	nodePrefix  = "node/"
	podPrefix   = "pod/"
	evictPrefix = "evict/"
)

// scheduled is a pending deletion.
type scheduled struct {
	created, fire time.Time
}

// Controller is the taint eviction controller.
type Controller struct {
	cfg     Config
	pods    *client.Typed[*corev1.Pod, *corev1.PodList]
	podIn   *cache.TypedInformer[*corev1.Pod]
	nodeIn  *cache.TypedInformer[*corev1.Node]
	queue   workqueue.TypedRateLimitingInterface[string]
	log     *slog.Logger
	deleted prometheus.Counter

	mu      sync.Mutex
	pending map[string]scheduled // by "<ns>/<name>"
}

// New registers the controller's informer handlers.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("tainteviction: Client and Informers are required")
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
	c := &Controller{
		cfg:     cfg,
		pods:    client.For[*corev1.Pod, *corev1.PodList](cfg.Client),
		podIn:   cfg.Informers.Pods(),
		nodeIn:  cfg.Informers.Nodes(),
		log:     cfg.Logger,
		pending: map[string]scheduled{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiterWithClock[string](cfg.Clock),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: QueueName, MetricsProvider: cfg.MetricsProvider, Clock: cfg.Clock}),
	}
	var err error
	if c.deleted, err = metricsutil.Register(cfg.Registry, prometheus.NewCounter(prometheus.CounterOpts{
		Subsystem: "taint_eviction_controller", Name: "pod_deletions_total",
		Help: "Total number of Pods deleted by TaintEvictionController since its start.",
	})); err != nil {
		return nil, err
	}
	if _, err := c.podIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc: func(p *corev1.Pod, _ bool) {
			if p.Spec.NodeName != "" {
				c.queue.Add(podPrefix + p.Namespace + "/" + p.Name)
			}
		},
		UpdateFunc: func(old, p *corev1.Pod) {
			if p.Spec.NodeName == "" || (old.Spec.NodeName == p.Spec.NodeName && tolerationsEqual(old.Spec.Tolerations, p.Spec.Tolerations)) {
				return
			}
			c.queue.Add(podPrefix + p.Namespace + "/" + p.Name)
		},
		DeleteFunc: func(d cache.DeletedObject[*corev1.Pod]) { c.cancel(d.Key(), nil) },
	}); err != nil {
		return nil, err
	}
	if _, err := c.nodeIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Node]{
		AddFunc: func(n *corev1.Node, _ bool) { c.queue.Add(nodePrefix + n.Name) },
		UpdateFunc: func(old, n *corev1.Node) {
			if !taintsEqual(noExecuteTaints(old.Spec.Taints), noExecuteTaints(n.Spec.Taints)) {
				c.queue.Add(nodePrefix + n.Name)
			}
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run waits for the caches and runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.log.Info("Starting taint eviction controller")
	defer c.log.Info("Shutting down taint eviction controller")
	if !cache.WaitForCacheSync(ctx, c.podIn.HasSynced, c.nodeIn.HasSynced) {
		return nil
	}
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, c.sync, func(key string, err error) {
		c.log.Error("Taint eviction failed", "key", key, "err", err)
	})
	return nil
}

func (c *Controller) sync(ctx context.Context, key string) error {
	switch {
	case strings.HasPrefix(key, nodePrefix):
		return c.syncNode(strings.TrimPrefix(key, nodePrefix))
	case strings.HasPrefix(key, podPrefix):
		return c.syncPod(strings.TrimPrefix(key, podPrefix))
	case strings.HasPrefix(key, evictPrefix):
		return c.evictIfDue(ctx, strings.TrimPrefix(key, evictPrefix))
	}
	return nil
}

// syncNode looks at every pod bound to the node.
func (c *Controller) syncNode(name string) error {
	var taints []corev1.Taint
	if n, err := c.nodeIn.Lister().Get(name); err == nil {
		taints = noExecuteTaints(n.Spec.Taints)
	} else if !apierrors.IsNotFound(err) {
		return err
	} else {
		return nil // a deleted node's pods are the pod GC's
	}
	pods, err := c.podIn.Lister().List(labels.Everything())
	if err != nil {
		return err
	}
	for _, p := range pods {
		if p.Spec.NodeName == name {
			c.processPod(p, taints)
		}
	}
	return nil
}

func (c *Controller) syncPod(key string) error {
	ns, name, _ := strings.Cut(key, "/")
	p, err := c.podIn.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.cancel(key, nil)
		return nil
	}
	if err != nil {
		return err
	}
	if p.Spec.NodeName == "" {
		return nil
	}
	n, err := c.nodeIn.Lister().Get(p.Spec.NodeName)
	if err != nil {
		return nil // node not seen yet: its add looks at the pod
	}
	c.processPod(p, noExecuteTaints(n.Spec.Taints))
	return nil
}

// Decision is what to do with a pod on a node.
type Decision struct {
	// Cancel: no deletion (nothing to evict for, or tolerated forever).
	Cancel bool
	// After is how long the pod may stay (0: delete now) when !Cancel.
	After time.Duration
}

// Decide is upstream's processPodOnNode decision over the node's NoExecute
// taints and the pod's tolerations.
func Decide(taints []corev1.Taint, tolerations []corev1.Toleration) Decision {
	if len(taints) == 0 {
		return Decision{Cancel: true}
	}
	var used []corev1.Toleration
	for i := range taints {
		tolerated := false
		for j := range tolerations {
			if corev1helpers.ToleratesTaint(&tolerations[j], &taints[i]) {
				used = append(used, tolerations[j])
				tolerated = true
				break
			}
		}
		if !tolerated {
			return Decision{}
		}
	}
	minSeconds := int64(math.MaxInt64)
	for _, t := range used {
		if t.TolerationSeconds == nil {
			continue
		}
		if *t.TolerationSeconds <= 0 {
			return Decision{}
		}
		minSeconds = min(minSeconds, *t.TolerationSeconds)
	}
	if minSeconds == math.MaxInt64 {
		return Decision{Cancel: true}
	}
	return Decision{After: time.Duration(minSeconds) * time.Second}
}

// processPod schedules, keeps or cancels the pod's deletion.
func (c *Controller) processPod(p *corev1.Pod, taints []corev1.Taint) {
	key := p.Namespace + "/" + p.Name
	d := Decide(taints, p.Spec.Tolerations)
	if d.Cancel {
		c.cancel(key, p)
		return
	}
	now := c.cfg.Clock.Now()
	fire := now.Add(d.After)
	c.mu.Lock()
	if s, ok := c.pending[key]; ok {
		// Counted from when the deletion was first scheduled, as
		// upstream: kept if that is earlier than now + After.
		if s.created.Add(d.After).Before(fire) {
			c.mu.Unlock()
			return
		}
		now = s.created
		fire = now.Add(d.After)
	}
	c.pending[key] = scheduled{created: now, fire: fire}
	c.mu.Unlock()
	c.queue.AddAfter(evictPrefix+key, fire.Sub(c.cfg.Clock.Now()))
}

// cancel drops the pod's scheduled deletion (with an event when pod is
// known).
func (c *Controller) cancel(key string, p *corev1.Pod) {
	c.mu.Lock()
	_, ok := c.pending[key]
	delete(c.pending, key)
	c.mu.Unlock()
	if ok && p != nil && c.cfg.Recorder != nil {
		c.cfg.Recorder.Eventf(p, corev1.EventTypeNormal, "TaintManagerEviction", "Cancelling deletion of Pod %s", key)
	}
}

// evictIfDue deletes the pod if its scheduled deletion is due.
func (c *Controller) evictIfDue(ctx context.Context, key string) error {
	c.mu.Lock()
	s, ok := c.pending[key]
	c.mu.Unlock()
	if !ok {
		return nil
	}
	if wait := s.fire.Sub(c.cfg.Clock.Now()); wait > 0 {
		c.queue.AddAfter(evictPrefix+key, wait)
		return nil
	}
	ns, name, _ := strings.Cut(key, "/")
	if err := c.deletePod(ctx, ns, name); err != nil {
		return err
	}
	c.mu.Lock()
	if cur, ok := c.pending[key]; ok && cur == s {
		delete(c.pending, key)
	}
	c.mu.Unlock()
	return nil
}

// deletePod marks the pod DisruptionTarget and deletes it.
func (c *Controller) deletePod(ctx context.Context, ns, name string) error {
	pods := c.pods.Namespace(ns)
	p, err := pods.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if c.cfg.Recorder != nil {
		c.cfg.Recorder.Eventf(p, corev1.EventTypeNormal, "TaintManagerEviction", "Marking for deletion Pod %s/%s", ns, name)
	}
	if !hasDisruptionTarget(p) {
		body, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"uid": p.UID},
			"status": map[string]any{"conditions": []corev1.PodCondition{{
				Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
				LastTransitionTime: metav1.Time{Time: c.cfg.Clock.Now()},
				Reason:             "DeletionByTaintManager", Message: "Taint manager: deleting due to NoExecute taint",
			}}},
		})
		if err != nil {
			return err
		}
		if _, err := pods.Patch(ctx, name, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status"); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("adding the DisruptionTarget condition to pod %s/%s: %w", ns, name, err)
		}
	}
	uid := p.UID
	if err := pods.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	}
	c.deleted.Inc()
	return nil
}

func hasDisruptionTarget(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func noExecuteTaints(ts []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range ts {
		if t.Effect == corev1.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}

func taintsEqual(a, b []corev1.Taint) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || a[i].Value != b[i].Value || a[i].Effect != b[i].Effect {
			return false
		}
	}
	return true
}

func tolerationsEqual(a, b []corev1.Toleration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Key != y.Key || x.Operator != y.Operator || x.Value != y.Value || x.Effect != y.Effect ||
			(x.TolerationSeconds == nil) != (y.TolerationSeconds == nil) ||
			(x.TolerationSeconds != nil && *x.TolerationSeconds != *y.TolerationSeconds) {
			return false
		}
	}
	return true
}
