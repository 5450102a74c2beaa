package endpoints

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/controller/internal/endpointutil"
)

const (
	// MaxCapacity is the most addresses an Endpoints object holds.
	MaxCapacity = 1000
	// Truncated is the value of the over-capacity annotation.
	Truncated = "truncated"
	// leaderAnnotation marks leader-election Endpoints (never cleaned up).
	leaderAnnotation = "control-plane.alpha.kubernetes.io/leader"
)

// Config configures a Controller.
type Config struct {
	Client    *client.Client
	Informers *informers.SharedInformerFactory
	Recorder  record.EventRecorder
	Clock     clock.Clock
	Workers   int
	Logger    *slog.Logger
	// MetricsProvider, if set, gets the workqueue's metrics.
	MetricsProvider workqueue.MetricsProvider
	// UpdatesBatchPeriod delays the syncs pod changes trigger, so that
	// changes close in time make one write (--endpoint-updates-batch-period, 0).
	UpdatesBatchPeriod time.Duration
}

// Controller writes the Endpoints of Services with selectors.
type Controller struct {
	cfg       Config
	endpoints *client.Typed[*corev1.Endpoints, *corev1.EndpointsList]
	podIn     *cache.TypedInformer[*corev1.Pod]
	svcIn     *cache.TypedInformer[*corev1.Service]
	epIn      *cache.TypedInformer[*corev1.Endpoints]
	queue     workqueue.TypedRateLimitingInterface[string]
	triggers  *endpointutil.TriggerTimeTracker
	stale     *staleTracker
	log       *slog.Logger
}

// New returns the endpoints controller.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("endpoints: Client and Informers are required")
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
	c := &Controller{
		cfg:       cfg,
		endpoints: client.For[*corev1.Endpoints, *corev1.EndpointsList](cfg.Client),
		podIn:     cfg.Informers.Pods(),
		svcIn:     cfg.Informers.Services(),
		epIn:      cfg.Informers.Endpoints(),
		triggers:  endpointutil.NewTriggerTimeTracker(),
		stale:     &staleTracker{rv: map[string]string{}},
		log:       cfg.Logger,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "endpoint", MetricsProvider: cfg.MetricsProvider}),
	}
	svcKey := func(s *corev1.Service) { c.queue.Add(endpointutil.Key(s.Namespace, s.Name)) }
	if _, err := c.svcIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Service]{
		AddFunc:    func(s *corev1.Service, _ bool) { svcKey(s) },
		UpdateFunc: func(_, s *corev1.Service) { svcKey(s) },
		DeleteFunc: func(d cache.DeletedObject[*corev1.Service]) { c.queue.Add(d.Key()) },
	}); err != nil {
		return nil, err
	}
	if _, err := c.podIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc:    func(p *corev1.Pod, _ bool) { c.addPod(p) },
		UpdateFunc: c.updatePod,
		DeleteFunc: func(d cache.DeletedObject[*corev1.Pod]) {
			if d.Obj != nil {
				c.addPod(d.Obj)
			}
		},
	}); err != nil {
		return nil, err
	}
	if _, err := c.epIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Endpoints]{
		DeleteFunc: func(d cache.DeletedObject[*corev1.Endpoints]) { c.queue.Add(d.Key()) },
	}); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Controller) services(ns string) []*corev1.Service {
	s, _ := c.svcIn.Lister().Namespace(ns).List(labels.Everything())
	return s
}

func (c *Controller) addPod(p *corev1.Pod) {
	for k := range endpointutil.ServicesForPod(c.services(p.Namespace), p) {
		c.queue.AddAfter(k, c.cfg.UpdatesBatchPeriod)
	}
}

func (c *Controller) updatePod(old, cur *corev1.Pod) {
	for k := range endpointutil.ServicesToUpdateOnPodChange(c.services(cur.Namespace), old, cur) {
		c.queue.AddAfter(k, c.cfg.UpdatesBatchPeriod)
	}
}

// Run waits for the caches, queues every existing Endpoints once (to
// remove leftovers) and runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.cfg.Informers.Start(ctx)
	if !cache.WaitForCacheSync(ctx, c.podIn.HasSynced, c.svcIn.HasSynced, c.epIn.HasSynced) {
		return ctx.Err()
	}
	c.queueLeftovers()
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, c.Sync, func(key string, err error) {
		c.log.Info("Error syncing endpoints, retrying", "service", key, "err", err)
	})
	return nil
}

func (c *Controller) queueLeftovers() {
	eps, err := c.epIn.Lister().List(labels.Everything())
	if err != nil {
		return
	}
	for _, ep := range eps {
		if _, ok := ep.Annotations[leaderAnnotation]; ok {
			continue
		}
		c.queue.Add(endpointutil.Key(ep.Namespace, ep.Name))
	}
}

// Sync reconciles the Endpoints of one Service (key "namespace/name").
func (c *Controller) Sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	svc, err := c.svcIn.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		if err := c.endpoints.Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		c.triggers.DeleteService(ns, name)
		c.stale.forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.Selector == nil {
		return nil
	}
	pods, err := c.podIn.Lister().Namespace(ns).List(labels.SelectorFromValidatedSet(svc.Spec.Selector))
	if err != nil {
		return err
	}
	// Computed on every sync so that the tracker's state moves on even
	// when nothing is written.
	trigger := c.triggers.Compute(svc, pods)
	subsets := DesiredSubsets(svc, pods)

	current, err := c.epIn.Lister().Namespace(ns).Get(name)
	if err != nil {
		if !apierrors.IsNotFound(err) {
			return err
		}
		current = &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Namespace: ns, Labels: svc.Labels}}
	} else if c.stale.isStale(key, current.ResourceVersion) {
		// Our last write replaced this version: the informer has not
		// caught up, and comparing against it could skip a needed write.
		return fmt.Errorf("endpoints informer cache is out of date, resource version %s already processed for endpoints %s", current.ResourceVersion, key)
	}
	create := current.ResourceVersion == ""
	compareLabels := current.Labels
	if _, ok := compareLabels[corev1.IsHeadlessService]; ok {
		compareLabels = without(compareLabels, corev1.IsHeadlessService)
	}
	if !create && endpointutil.SubsetsEqualIgnoringResourceVersion(current.Subsets, subsets) &&
		labelsEqual(compareLabels, svc.Labels) && capacityAnnotationCorrect(current.Annotations, current.Subsets) {
		return nil
	}
	ep := current.DeepCopy()
	ep.Subsets = subsets
	ep.Labels = svc.Labels
	if ep.Annotations == nil {
		ep.Annotations = map[string]string{}
	}
	if !trigger.IsZero() {
		ep.Annotations[corev1.EndpointsLastChangeTriggerTime] = trigger.UTC().Format(time.RFC3339Nano)
	} else {
		delete(ep.Annotations, corev1.EndpointsLastChangeTriggerTime)
	}
	if Truncate(ep) {
		ep.Annotations[corev1.EndpointsOverCapacity] = Truncated
	} else {
		delete(ep.Annotations, corev1.EndpointsOverCapacity)
	}
	if !endpointutil.IsServiceIPSet(svc) {
		ep.Labels = with(ep.Labels, corev1.IsHeadlessService, "")
	} else {
		ep.Labels = without(ep.Labels, corev1.IsHeadlessService)
	}
	var written *corev1.Endpoints
	if create {
		written, err = c.endpoints.Namespace(ns).Create(ctx, ep, metav1.CreateOptions{})
	} else {
		written, err = c.endpoints.Namespace(ns).Update(ctx, ep, metav1.UpdateOptions{})
	}
	if err != nil {
		if create && apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil
		}
		if create {
			c.cfg.Recorder.Eventf(ep, corev1.EventTypeWarning, "FailedToCreateEndpoint", "Failed to create endpoint for service %v/%v: %v", ns, name, err)
		} else {
			c.cfg.Recorder.Eventf(ep, corev1.EventTypeWarning, "FailedToUpdateEndpoint", "Failed to update endpoint %v/%v: %v", ns, name, err)
		}
		return err
	}
	// An update may be a no-op (same resourceVersion back): only a version
	// we replaced is known stale.
	if !create && written != nil && written.ResourceVersion != current.ResourceVersion {
		c.stale.replaced(key, current.ResourceVersion)
	}
	return nil
}

// staleTracker remembers, per Endpoints key, the resourceVersion our last
// update replaced (upstream's staleEndpointsTracker): seeing that version
// in the lister again means the informer lags behind our own write.
type staleTracker struct {
	mu sync.Mutex
	rv map[string]string
}

func (t *staleTracker) replaced(key, rv string) {
	t.mu.Lock()
	t.rv[key] = rv
	t.mu.Unlock()
}

func (t *staleTracker) isStale(key, rv string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	old, ok := t.rv[key]
	return ok && old == rv
}

func (t *staleTracker) forget(key string) {
	t.mu.Lock()
	delete(t.rv, key)
	t.mu.Unlock()
}

// DesiredSubsets are the repacked subsets of a Service's Endpoints given
// the pods its selector matches.
func DesiredSubsets(svc *corev1.Service, pods []*corev1.Pod) []corev1.EndpointSubset {
	subsets := []corev1.EndpointSubset{}
	for _, p := range pods {
		if !endpointutil.ShouldPodBeInEndpoints(p, svc.Spec.PublishNotReadyAddresses) {
			continue
		}
		addr := addressFor(svc, p)
		if addr == nil {
			continue
		}
		if endpointutil.ShouldSetHostname(p, svc) {
			addr.Hostname = p.Spec.Hostname
		}
		if len(svc.Spec.Ports) == 0 {
			if svc.Spec.ClusterIP == corev1.ClusterIPNone {
				subsets = addSubset(subsets, p, *addr, nil, svc.Spec.PublishNotReadyAddresses)
			}
			continue
		}
		for i := range svc.Spec.Ports {
			sp := &svc.Spec.Ports[i]
			num, err := endpointutil.FindPort(p, sp)
			if err != nil {
				continue
			}
			subsets = addSubset(subsets, p, *addr, &corev1.EndpointPort{Name: sp.Name, Port: num, Protocol: sp.Protocol, AppProtocol: sp.AppProtocol},
				svc.Spec.PublishNotReadyAddresses)
		}
	}
	return endpointutil.RepackSubsets(subsets)
}

// addressFor is the pod's address of the Service's IP family (its first
// family; without families, the cluster IP's, or for a headless Service
// the pod's primary IP's); nil when the pod has none.
func addressFor(svc *corev1.Service, p *corev1.Pod) *corev1.EndpointAddress {
	ips := endpointutil.PodIPs(p)
	v6 := false
	switch {
	case len(svc.Spec.IPFamilies) > 0:
		v6 = svc.Spec.IPFamilies[0] == corev1.IPv6Protocol
	case endpointutil.IsServiceIPSet(svc):
		v6 = endpointutil.IsIPv6(svc.Spec.ClusterIP)
	default:
		v6 = endpointutil.IsIPv6(ips[0])
	}
	for _, ip := range ips {
		if endpointutil.IsIPv6(ip) == v6 {
			a := &corev1.EndpointAddress{IP: ip,
				TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID}}
			if p.Spec.NodeName != "" {
				// Upstream points at the (always set) node name; a pod
				// without one (no scheduler ran) gets none, which
				// validation would refuse as "".
				n := p.Spec.NodeName
				a.NodeName = &n
			}
			return a
		}
	}
	return nil
}

func addSubset(subsets []corev1.EndpointSubset, p *corev1.Pod, addr corev1.EndpointAddress, port *corev1.EndpointPort, tolerateUnready bool) []corev1.EndpointSubset {
	ports := []corev1.EndpointPort{}
	if port != nil {
		ports = append(ports, *port)
	}
	if tolerateUnready || endpointutil.IsPodReady(p) {
		return append(subsets, corev1.EndpointSubset{Addresses: []corev1.EndpointAddress{addr}, Ports: ports})
	}
	return append(subsets, corev1.EndpointSubset{NotReadyAddresses: []corev1.EndpointAddress{addr}, Ports: ports})
}

// capacityAnnotationCorrect: false when over capacity (a truncation is
// due) or when the annotation is set while under it.
func capacityAnnotationCorrect(annotations map[string]string, subsets []corev1.EndpointSubset) bool {
	n := 0
	for _, s := range subsets {
		n += len(s.Addresses) + len(s.NotReadyAddresses)
	}
	if n > MaxCapacity {
		return false
	}
	_, ok := annotations[corev1.EndpointsOverCapacity]
	return !ok
}

// Truncate cuts the Endpoints down to MaxCapacity addresses, as upstream:
// ready addresses are kept first; the addresses kept are spread over the
// subsets in proportion to their sizes (rounded up, so the last subsets
// may get fewer). It reports whether it truncated.
func Truncate(ep *corev1.Endpoints) bool {
	totalReady, totalNotReady := 0, 0
	for _, s := range ep.Subsets {
		totalReady += len(s.Addresses)
		totalNotReady += len(s.NotReadyAddresses)
	}
	if totalReady+totalNotReady <= MaxCapacity {
		return false
	}
	truncateReady := totalReady > MaxCapacity
	limit, total := MaxCapacity-totalReady, totalNotReady
	if truncateReady {
		limit, total = MaxCapacity, totalReady
	}
	left := limit
	for i := range ep.Subsets {
		s := ep.Subsets[i]
		n := len(s.NotReadyAddresses)
		if truncateReady {
			n = len(s.Addresses)
		}
		keep := min(int(math.Ceil(float64(n)/float64(total)*float64(limit))), left)
		if truncateReady {
			s.Addresses = s.Addresses[:min(len(s.Addresses), keep)]
			s.NotReadyAddresses = []corev1.EndpointAddress{}
			left -= len(s.Addresses)
		} else {
			s.NotReadyAddresses = s.NotReadyAddresses[:min(len(s.NotReadyAddresses), keep)]
			left -= len(s.NotReadyAddresses)
		}
		ep.Subsets[i] = s
	}
	return true
}

func labelsEqual(a, b map[string]string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

func with(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for a, b := range m {
		out[a] = b
	}
	out[k] = v
	return out
}

func without(m map[string]string, k string) map[string]string {
	out := make(map[string]string, len(m))
	for a, b := range m {
		if a != k {
			out[a] = b
		}
	}
	return out
}
