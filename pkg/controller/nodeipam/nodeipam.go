package nodeipam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"

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

// Upstream's constants.
const (
	// DefaultWorkers is upstream's cidrUpdateWorkers.
	DefaultWorkers = 30
	// QueueName is the allocator's queue, upstream's.
	QueueName = "cidrallocator_node"
	// EventComponent is the source component of the allocator's events,
	// upstream's.
	EventComponent = "cidrAllocator"
	// DefaultNodeCIDRMaskSizeIPv4 and DefaultNodeCIDRMaskSizeIPv6 are
	// upstream's --node-cidr-mask-size-ipv4/-ipv6 defaults.
	DefaultNodeCIDRMaskSizeIPv4 = 24
	DefaultNodeCIDRMaskSizeIPv6 = 64
	// cidrUpdateRetries is how often a node's patch is tried, upstream's.
	cidrUpdateRetries = 3
)

// Event reasons, upstream's.
const (
	ReasonCIDRNotAvailable     = "CIDRNotAvailable"
	ReasonCIDRAssignmentFailed = "CIDRAssignmentFailed"
)

// Config configures the controller.
type Config struct {
	Client    *client.Client
	Informers *informers.SharedInformerFactory
	// Recorder records the allocator's events (upstream's source
	// component is EventComponent).
	Recorder record.EventRecorder
	Clock    clock.Clock
	// Workers sync nodes (0: DefaultWorkers).
	Workers         int
	Logger          *slog.Logger
	MetricsProvider workqueue.MetricsProvider
	Registry        prometheus.Registerer

	// ClusterCIDRs is --cluster-cidr: one CIDR, or one of each family
	// (dual stack). Required.
	ClusterCIDRs []netip.Prefix
	// NodeCIDRMaskSizes is the node CIDR size of each cluster CIDR (0 or
	// missing: the family's default).
	NodeCIDRMaskSizes []int
	// ServiceCIDRs (--service-cluster-ip-range, up to one per family) are
	// never handed out to nodes where they overlap a cluster CIDR.
	ServiceCIDRs []netip.Prefix
}

// Controller is the node IPAM controller with upstream's range allocator.
type Controller struct {
	cfg    Config
	nodes  *client.Typed[*corev1.Node, *corev1.NodeList]
	nodeIn *cache.TypedInformer[*corev1.Node]
	queue  workqueue.TypedRateLimitingInterface[string]
	sets   []*CIDRSet
	log    *slog.Logger
}

// setMetrics are upstream's node_ipam_controller_cidrset_* series of one
// cluster CIDR.
type setMetrics struct {
	allocations, releases prometheus.Counter
	usage                 prometheus.Gauge
}

func (m *setMetrics) changed(allocated, released, inUse, max int) {
	if m == nil {
		return
	}
	m.allocations.Add(float64(allocated))
	m.releases.Add(float64(released))
	m.usage.Set(float64(inUse) / float64(max))
}

func newSetMetrics(reg prometheus.Registerer, s *CIDRSet) (*setMetrics, error) {
	if reg == nil {
		return nil, nil
	}
	label := []string{"clusterCIDR"}
	const sub = "node_ipam_controller"
	allocs, err := metricsutil.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: sub, Name: "cidrset_cidrs_allocations_total",
		Help: "Counter measuring total number of CIDR allocations."}, label))
	if err != nil {
		return nil, err
	}
	rels, err := metricsutil.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: sub, Name: "cidrset_cidrs_releases_total",
		Help: "Counter measuring total number of CIDR releases."}, label))
	if err != nil {
		return nil, err
	}
	maxG, err := metricsutil.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: sub, Name: "cirdset_max_cidrs", // sic, upstream's name
		Help: "Maximum number of CIDRs that can be allocated."}, label))
	if err != nil {
		return nil, err
	}
	usage, err := metricsutil.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: sub, Name: "cidrset_usage_cidrs",
		Help: "Gauge measuring percentage of allocated CIDRs."}, label))
	if err != nil {
		return nil, err
	}
	l := s.Cluster().String()
	maxG.WithLabelValues(l).Set(float64(s.MaxCIDRs()))
	return &setMetrics{allocations: allocs.WithLabelValues(l), releases: rels.WithLabelValues(l), usage: usage.WithLabelValues(l)}, nil
}

// New checks the configuration and registers the node informer's
// handlers (a deleted node's CIDRs are released by the delete handler, as
// upstream's: nodes have no finalizer).
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("nodeipam: Client and Informers are required")
	}
	if len(cfg.ClusterCIDRs) == 0 {
		return nil, errors.New("Controller: Must specify --cluster-cidr if --allocate-node-cidrs is set")
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
		cfg:    cfg,
		nodes:  client.For[*corev1.Node, *corev1.NodeList](cfg.Client),
		nodeIn: cfg.Informers.Nodes(),
		log:    cfg.Logger,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiterWithClock[string](cfg.Clock),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: QueueName, MetricsProvider: cfg.MetricsProvider, Clock: cfg.Clock}),
	}
	for i, cidr := range cfg.ClusterCIDRs {
		size := 0
		if i < len(cfg.NodeCIDRMaskSizes) {
			size = cfg.NodeCIDRMaskSizes[i]
		}
		if size == 0 {
			size = DefaultNodeCIDRMaskSizeIPv4
			if cidr.Addr().Is6() {
				size = DefaultNodeCIDRMaskSizeIPv6
			}
		}
		if cidr.Bits() > size {
			return nil, errors.New("Controller: Invalid --cluster-cidr, mask size of cluster CIDR must be less than or equal to --node-cidr-mask-size configured for CIDR family")
		}
		s, err := NewCIDRSet(cidr, size)
		if err != nil {
			return nil, err
		}
		if s.m, err = newSetMetrics(cfg.Registry, s); err != nil {
			return nil, err
		}
		c.sets = append(c.sets, s)
	}
	// Service ranges overlapping a cluster CIDR are never handed out.
	for _, svc := range cfg.ServiceCIDRs {
		for _, s := range c.sets {
			if svc.Overlaps(s.Cluster()) {
				if err := s.Occupy(svc); err != nil {
					c.log.Error("Error filtering out service cidr out cluster cidr", "CIDR", s.Cluster().String(), "serviceCIDR", svc.String(), "err", err)
				}
			}
		}
	}
	if _, err := c.nodeIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Node]{
		AddFunc:    func(n *corev1.Node, _ bool) { c.queue.Add(n.Name) },
		UpdateFunc: func(_, n *corev1.Node) { c.queue.Add(n.Name) },
		DeleteFunc: func(d cache.DeletedObject[*corev1.Node]) {
			n := d.Obj
			if n == nil {
				return
			}
			if err := c.ReleaseCIDRs(n); err != nil {
				c.log.Error("error while processing CIDR Release", "node", n.Name, "err", err)
			}
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Sets are the controller's CIDR sets, one per cluster CIDR (tests).
func (c *Controller) Sets() []*CIDRSet { return c.sets }

// Run waits for the node cache, marks the CIDRs of the nodes that have
// them as taken (an unparsable or out-of-range CIDR there is an error, as
// upstream's, whose manager then fails to start: the cluster CIDR was
// changed under existing nodes), then syncs nodes until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.log.Info("Starting range CIDR allocator")
	defer c.log.Info("Shutting down range CIDR allocator")
	if !cache.WaitForCacheSync(ctx, c.nodeIn.HasSynced) {
		return nil
	}
	if err := c.OccupyExisting(); err != nil {
		return err
	}
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, c.syncNode, func(name string, err error) {
		c.log.Error("error syncing node, requeuing", "node", name, "err", err)
	})
	return nil
}

// OccupyExisting marks the CIDRs of every node in the cache as taken.
func (c *Controller) OccupyExisting() error {
	nodes, err := c.nodeIn.Lister().List(labels.Everything())
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if len(n.Spec.PodCIDRs) == 0 {
			continue
		}
		if err := c.occupy(n); err != nil {
			return err
		}
	}
	return nil
}

// parse reads a node's CIDR i.
func (c *Controller) parse(n *corev1.Node, i int, cidr string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(strings.TrimSpace(cidr))
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("failed to parse node %s, CIDR %s", n.Name, n.Spec.PodCIDR)
	}
	if i >= len(c.sets) {
		return netip.Prefix{}, fmt.Errorf("node:%s has an allocated cidr: %v at index:%v that does not exist in cluster cidrs configuration", n.Name, cidr, i)
	}
	return p.Masked(), nil
}

// occupy marks n's CIDRs as taken.
func (c *Controller) occupy(n *corev1.Node) error {
	for i, cidr := range n.Spec.PodCIDRs {
		p, err := c.parse(n, i, cidr)
		if err != nil {
			return err
		}
		if err := c.sets[i].Occupy(p); err != nil {
			return fmt.Errorf("failed to mark cidr[%v] at idx [%v] as occupied for node: %v: %v", p, i, n.Name, err)
		}
	}
	return nil
}

// ReleaseCIDRs returns n's CIDRs to the sets.
func (c *Controller) ReleaseCIDRs(n *corev1.Node) error {
	for i, cidr := range n.Spec.PodCIDRs {
		p, err := c.parse(n, i, cidr)
		if err != nil {
			return err
		}
		c.log.Debug("Release CIDR for node", "CIDR", cidr, "node", n.Name)
		if err := c.sets[i].Release(p); err != nil {
			return fmt.Errorf("error when releasing CIDR %v: %v", cidr, err)
		}
	}
	return nil
}

// syncNode gives a node without pod CIDRs one from each cluster CIDR, or
// marks the ones it has as taken (upstream's AllocateOrOccupyCIDR).
func (c *Controller) syncNode(ctx context.Context, name string) error {
	n, err := c.nodeIn.Lister().Get(name)
	if apierrors.IsNotFound(err) {
		return nil // released by the delete handler
	}
	if err != nil {
		return err
	}
	if n.DeletionTimestamp != nil {
		return nil
	}
	if len(n.Spec.PodCIDRs) > 0 {
		return c.occupy(n)
	}
	allocated := make([]netip.Prefix, 0, len(c.sets))
	for i, s := range c.sets {
		p, err := s.AllocateNext()
		if err != nil {
			c.release(allocated)
			c.nodeEvent(n, ReasonCIDRNotAvailable)
			return fmt.Errorf("failed to allocate cidr from cluster cidr at idx:%v: %v", i, err)
		}
		allocated = append(allocated, p)
	}
	return c.assign(ctx, name, allocated)
}

func (c *Controller) release(cidrs []netip.Prefix) {
	for i, p := range cidrs {
		if err := c.sets[i].Release(p); err != nil {
			c.log.Error("Error when releasing CIDR", "index", i, "CIDR", p.String(), "err", err)
		}
	}
}

// assign writes allocated to the node (upstream's updateCIDRsAllocation).
func (c *Controller) assign(ctx context.Context, name string, allocated []netip.Prefix) error {
	cidrs := make([]string, len(allocated))
	for i, p := range allocated {
		cidrs[i] = p.String()
	}
	n, err := c.nodeIn.Lister().Get(name)
	if err != nil {
		c.release(allocated)
		return err
	}
	if len(n.Spec.PodCIDRs) > 0 {
		if strings.Join(n.Spec.PodCIDRs, ",") == strings.Join(cidrs, ",") {
			return nil
		}
		c.log.Error("Node already has a CIDR allocated. Releasing the new one", "node", name, "podCIDRs", n.Spec.PodCIDRs)
		c.release(allocated)
		return nil
	}
	body, err := json.Marshal(map[string]any{"spec": map[string]any{"podCIDR": cidrs[0], "podCIDRs": cidrs}})
	if err != nil {
		return err
	}
	for range cidrUpdateRetries {
		if _, err = c.nodes.Patch(ctx, name, types.StrategicMergePatchType, body, metav1.PatchOptions{}); err == nil {
			c.log.Info("Set node PodCIDR", "node", name, "podCIDRs", cidrs)
			return nil
		}
	}
	c.log.Error("Failed to update node PodCIDR after multiple attempts", "node", name, "podCIDRs", cidrs, "err", err)
	c.nodeEvent(n, ReasonCIDRAssignmentFailed)
	// As upstream: after a timeout the patch may have gone through, so
	// the CIDRs stay taken (a restart returns them); otherwise they go
	// back.
	if !apierrors.IsServerTimeout(err) {
		c.release(allocated)
	}
	return err
}

// nodeEvent is upstream's RecordNodeStatusChange.
func (c *Controller) nodeEvent(n *corev1.Node, status string) {
	if c.cfg.Recorder == nil {
		return
	}
	ref := &corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: n.Name, UID: n.UID}
	c.cfg.Recorder.Eventf(ref, corev1.EventTypeNormal, status, "Node %s status is now: %s", n.Name, status)
}

// ParseClusterCIDRs parses --cluster-cidr (comma separated; at most one
// CIDR of each family), with upstream's messages.
func ParseClusterCIDRs(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range strings.Split(strings.TrimSpace(list), ",") {
		s = strings.TrimSpace(s)
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("failed to parse cidr value:%q with error:%v", s, err)
		}
		out = append(out, p.Masked())
	}
	if len(out) > 1 && (len(out) != 2 || out[0].Addr().Is4() == out[1].Addr().Is4()) {
		if len(out) > 2 {
			return nil, fmt.Errorf("length of clusterCIDRs is:%v more than max allowed of 2", len(out))
		}
		return nil, fmt.Errorf("len of ClusterCIDRs==%v and they are not configured as dual stack (at least one from each IPFamily", len(out))
	}
	return out, nil
}

// NodeCIDRMaskSizes is upstream's setNodeCIDRMaskSizes: the node CIDR
// size of each cluster CIDR from --node-cidr-mask-size (single stack) or
// --node-cidr-mask-size-ipv4/-ipv6 (0: not set).
func NodeCIDRMaskSizes(clusterCIDRs []netip.Prefix, size, v4, v6 int) ([]int, error) {
	ipv4, ipv6 := DefaultNodeCIDRMaskSizeIPv4, DefaultNodeCIDRMaskSizeIPv6
	sizes := func() []int {
		out := make([]int, len(clusterCIDRs))
		for i, c := range clusterCIDRs {
			out[i] = ipv4
			if c.Addr().Is6() {
				out[i] = ipv6
			}
		}
		return out
	}
	if len(clusterCIDRs) > 1 {
		if size != 0 {
			return nil, errors.New("usage of --node-cidr-mask-size is not allowed with dual-stack clusters")
		}
		if v4 != 0 {
			ipv4 = v4
		}
		if v6 != 0 {
			ipv6 = v6
		}
		return sizes(), nil
	}
	if size != 0 {
		if v4 != 0 || v6 != 0 {
			return nil, errors.New("usage of --node-cidr-mask-size-ipv4 and --node-cidr-mask-size-ipv6 is not allowed if --node-cidr-mask-size is set. For dual-stack clusters please unset it and use IPFamily specific flags")
		}
		ipv4, ipv6 = size, size
		return sizes(), nil
	}
	single6 := len(clusterCIDRs) == 1 && clusterCIDRs[0].Addr().Is6()
	if v4 != 0 {
		if single6 {
			return nil, errors.New("usage of --node-cidr-mask-size-ipv4 is not allowed for a single-stack IPv6 cluster")
		}
		ipv4 = v4
	}
	if v6 != 0 {
		if !single6 {
			return nil, errors.New("usage of --node-cidr-mask-size-ipv6 is not allowed for a single-stack IPv4 cluster")
		}
		ipv6 = v6
	}
	return sizes(), nil
}
