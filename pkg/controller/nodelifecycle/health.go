package nodelifecycle

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Upstream's eviction knobs (kube-controller-manager defaults).
const (
	// DefaultNodeEvictionRate is --node-eviction-rate: nodes per second
	// tainted NoExecute in a healthy zone.
	DefaultNodeEvictionRate = 0.1
	// DefaultSecondaryNodeEvictionRate is --secondary-node-eviction-rate:
	// the same in a partially disrupted zone of a large cluster.
	DefaultSecondaryNodeEvictionRate = 0.01
	// DefaultLargeClusterSizeThreshold is --large-cluster-size-threshold.
	DefaultLargeClusterSizeThreshold = 50
	// DefaultUnhealthyZoneThreshold is --unhealthy-zone-threshold.
	DefaultUnhealthyZoneThreshold = 0.55
	// nodeHealthUpdateRetry bounds the status writes of one node per pass.
	nodeHealthUpdateRetry = 5
	// labelNodeDisruptionExclusion keeps a node out of the zone states.
	labelNodeDisruptionExclusion = "node.kubernetes.io/exclude-disruption"
)

// The reasons and messages of the conditions set for a silent kubelet.
const (
	reasonNeverUpdated  = "NodeStatusNeverUpdated"
	messageNeverUpdated = "Kubelet never posted node status."
	reasonUnknown       = "NodeStatusUnknown"
	messageUnknown      = "Kubelet stopped posting node status."
)

// monitoredConditions are set to Unknown when the kubelet goes silent
// (NetworkUnavailable is left alone: it is not the kubelet's).
var monitoredConditions = []corev1.NodeConditionType{corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure}

// nodeHealth is what the controller last saw of a node's kubelet.
type nodeHealth struct {
	// probe is when the controller last saw the kubelet alive (a new Ready
	// heartbeat or a renewed Lease); readyTransition when the Ready
	// condition last changed.
	probe, readyTransition time.Time
	// ready is the Ready condition last seen (nil: none).
	ready *corev1.NodeCondition
	// leaseRenew is the renewTime of the node's Lease last seen.
	leaseRenew *metav1.MicroTime
}

type zoneState string

const (
	stateInitial           zoneState = "Initial"
	stateNormal            zoneState = "Normal"
	stateFullDisruption    zoneState = "FullDisruption"
	statePartialDisruption zoneState = "PartialDisruption"
)

// zoneKey is upstream's zone key of a node: region and zone labels ("" for
// a node with neither).
func zoneKey(n *corev1.Node) string {
	region, zone := n.Labels[corev1.LabelTopologyRegion], n.Labels[corev1.LabelTopologyZone]
	if region == "" {
		region = n.Labels[corev1.LabelFailureDomainBetaRegion]
	}
	if zone == "" {
		zone = n.Labels[corev1.LabelFailureDomainBetaZone]
	}
	if region == "" && zone == "" {
		return ""
	}
	return region + ":\x00:" + zone
}

// computeZoneState is upstream's: no Ready node and some not Ready is a
// full disruption; more than two not Ready making at least
// unhealthyThreshold of the zone is a partial one.
func computeZoneState(conds []*corev1.NodeCondition, unhealthyThreshold float64) (int, zoneState) {
	ready, notReady := 0, 0
	for _, c := range conds {
		if c != nil && c.Status == corev1.ConditionTrue {
			ready++
		} else {
			notReady++
		}
	}
	switch {
	case ready == 0 && notReady > 0:
		return notReady, stateFullDisruption
	case notReady > 2 && float64(notReady)/float64(notReady+ready) >= unhealthyThreshold:
		return notReady, statePartialDisruption
	default:
		return notReady, stateNormal
	}
}

// zoneTainter is a zone's rate-limited queue of nodes to taint NoExecute
// (upstream's RateLimitedTimedQueue over a token bucket of burst 1).
type zoneTainter struct {
	queue  []string
	queued map[string]bool
	qps    float64
	tokens float64
	last   time.Time
}

func newZoneTainter(qps float64, now time.Time) *zoneTainter {
	return &zoneTainter{queued: map[string]bool{}, qps: qps, tokens: 1, last: now}
}

func (z *zoneTainter) add(name string) {
	if !z.queued[name] {
		z.queued[name] = true
		z.queue = append(z.queue, name)
	}
}

func (z *zoneTainter) remove(name string) {
	if !z.queued[name] {
		return
	}
	delete(z.queued, name)
	for i, n := range z.queue {
		if n == name {
			z.queue = append(z.queue[:i], z.queue[i+1:]...)
			return
		}
	}
}

// setRate swaps the limiter's rate; 0 stops the zone's tainting.
func (z *zoneTainter) setRate(qps float64, now time.Time) {
	z.refill(now)
	z.qps = qps
}

func (z *zoneTainter) refill(now time.Time) {
	if z.qps > 0 && now.After(z.last) {
		z.tokens = min(1, z.tokens+now.Sub(z.last).Seconds()*z.qps)
	}
	z.last = now
}

func (z *zoneTainter) tryAccept(now time.Time) bool {
	z.refill(now)
	if z.qps <= 0 || z.tokens < 1 {
		return false
	}
	z.tokens--
	return true
}

// MonitorNodeHealth is one pass of upstream's monitorNodeHealth: every
// node whose kubelet has not been heard of (no new Ready heartbeat, no
// renewed Lease in kube-node-lease) for its grace period gets its
// conditions set to Unknown; nodes not Ready are queued for their
// NoExecute taint (Ready ones lose it); pods of a node that has just
// stopped being Ready are marked not Ready; zone states follow.
func (c *Controller) MonitorNodeHealth(ctx context.Context) error {
	start := time.Now()
	defer func() { c.metrics.allNodesDuration.Observe(time.Since(start).Seconds()) }()
	nodes, err := c.nodeIn.Lister().List(labels.Everything())
	if err != nil {
		return err
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	now := c.cfg.Clock.Now()
	seen := map[string]bool{}
	for _, n := range nodes {
		seen[n.Name] = true
		if _, ok := c.known[n.Name]; ok {
			continue
		}
		c.log.Info("Controller observed a new Node", "node", n.Name)
		c.event(n, corev1.EventTypeNormal, "RegisteredNode", fmt.Sprintf("Registered Node %v in Controller", n.Name))
		c.known[n.Name] = true
		if _, ok := c.tainters[zoneKey(n)]; !ok {
			c.tainters[zoneKey(n)] = newZoneTainter(c.cfg.NodeEvictionRate, now)
			c.zoneStates[zoneKey(n)] = stateInitial
		}
		if err := c.markNodeAsReachable(ctx, n); err != nil {
			c.log.Error("Failed to remove taints from Node", "node", n.Name, "err", err)
		}
	}
	for name := range c.known {
		if !seen[name] {
			c.log.Info("Controller observed a Node deletion", "node", name)
			c.event(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, corev1.EventTypeNormal, "RemovingNode", fmt.Sprintf("Removing Node %v from Controller", name))
			delete(c.known, name)
			delete(c.health, name)
			delete(c.podsToRetry, name)
		}
	}

	zoneConds := map[string][]*corev1.NodeCondition{}
	for _, cached := range nodes {
		n := cached.DeepCopy()
		var observed corev1.NodeCondition
		var current *corev1.NodeCondition
		for attempt := 0; ; attempt++ {
			observed, current, err = c.tryUpdateNodeHealth(ctx, n)
			if err == nil {
				break
			}
			if attempt >= nodeHealthUpdateRetry {
				break
			}
			if n, err = c.nodes.Get(ctx, cached.Name, metav1.GetOptions{}); err != nil {
				break
			}
		}
		if err != nil {
			c.log.Error("Update health of Node from Controller error, Skipping - no pods will be evicted", "node", cached.Name, "err", err)
			continue
		}
		if _, excluded := n.Labels[labelNodeDisruptionExclusion]; !excluded {
			zoneConds[zoneKey(n)] = append(zoneConds[zoneKey(n)], current)
		}
		if current == nil {
			delete(c.podsToRetry, n.Name)
			continue
		}
		c.processTaintBaseEviction(ctx, n, observed)
		switch {
		case current.Status != corev1.ConditionTrue && observed.Status == corev1.ConditionTrue:
			c.event(n, corev1.EventTypeNormal, "NodeNotReady", fmt.Sprintf("Node %s status is now: %s", n.Name, "NodeNotReady"))
			fallthrough
		case c.podsToRetry[n.Name] && observed.Status != corev1.ConditionTrue:
			if err := c.markPodsNotReady(ctx, n.Name); err != nil {
				c.log.Error("unable to mark all pods NotReady on node; queuing for retry", "node", n.Name, "err", err)
				c.podsToRetry[n.Name] = true
				continue
			}
		}
		delete(c.podsToRetry, n.Name)
	}
	c.handleDisruption(ctx, zoneConds, nodes)
	return nil
}

func readyCondition(st *corev1.NodeStatus) *corev1.NodeCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == corev1.NodeReady {
			return &st.Conditions[i]
		}
	}
	return nil
}

// tryUpdateNodeHealth is upstream's: it returns the Ready condition as
// observed (a made-up Unknown one, dated at creation, when the node has
// none) and as it is after this pass (nil: none), having written the
// Unknown conditions when the node's grace period is over.
func (c *Controller) tryUpdateNodeHealth(ctx context.Context, n *corev1.Node) (corev1.NodeCondition, *corev1.NodeCondition, error) {
	now := c.cfg.Clock.Now()
	h := c.health[n.Name]
	var observed corev1.NodeCondition
	var grace time.Duration
	current := readyCondition(&n.Status)
	if current == nil {
		observed = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown,
			LastHeartbeatTime: n.CreationTimestamp, LastTransitionTime: n.CreationTimestamp}
		grace = c.cfg.NodeStartupGracePeriod
		if h == nil {
			h = &nodeHealth{probe: n.CreationTimestamp.Time, readyTransition: n.CreationTimestamp.Time}
		}
		h.ready = nil
	} else {
		observed = *current
		grace = c.cfg.NodeMonitorGracePeriod
	}
	switch {
	case h == nil:
		h = &nodeHealth{probe: now, readyTransition: now, ready: current.DeepCopy()}
	case h.ready == nil && current != nil:
		// First Ready condition seen (or the controller restarted).
		h = &nodeHealth{probe: now, readyTransition: now, ready: current.DeepCopy(), leaseRenew: h.leaseRenew}
	case h.ready != nil && current != nil && !h.ready.LastHeartbeatTime.Equal(&current.LastHeartbeatTime):
		transition := h.readyTransition
		if !h.ready.LastTransitionTime.Equal(&current.LastTransitionTime) {
			transition = now
		}
		h = &nodeHealth{probe: now, readyTransition: transition, ready: current.DeepCopy(), leaseRenew: h.leaseRenew}
	}
	// A renewed Lease is a sign of life too (a kubelet that renews its
	// Lease but never posted a status is taken for healthy, as upstream).
	if lease, err := c.leaseIn.Lister().Namespace(corev1.NamespaceNodeLease).Get(n.Name); err == nil && lease.Spec.RenewTime != nil &&
		(h.leaseRenew == nil || h.leaseRenew.Before(lease.Spec.RenewTime)) {
		h.leaseRenew = lease.Spec.RenewTime.DeepCopy()
		h.probe = now
	}
	c.health[n.Name] = h

	if !now.After(h.probe.Add(grace)) {
		return observed, current, nil
	}
	stamp := metav1.Time{Time: now}
	for _, t := range monitoredConditions {
		var cond *corev1.NodeCondition
		for i := range n.Status.Conditions {
			if n.Status.Conditions[i].Type == t {
				cond = &n.Status.Conditions[i]
			}
		}
		switch {
		case cond == nil:
			n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: t, Status: corev1.ConditionUnknown,
				Reason: reasonNeverUpdated, Message: messageNeverUpdated, LastHeartbeatTime: n.CreationTimestamp, LastTransitionTime: stamp})
		case cond.Status != corev1.ConditionUnknown:
			cond.Status, cond.Reason, cond.Message, cond.LastTransitionTime = corev1.ConditionUnknown, reasonUnknown, messageUnknown, stamp
		}
	}
	current = readyCondition(&n.Status)
	if equality.Semantic.DeepEqual(current, &observed) {
		return observed, current, nil
	}
	updated, err := c.nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{})
	if err != nil {
		return observed, current, err
	}
	*n = *updated
	c.health[n.Name] = &nodeHealth{probe: h.probe, readyTransition: now, ready: readyCondition(&updated.Status).DeepCopy(), leaseRenew: h.leaseRenew}
	return observed, readyCondition(&n.Status), nil
}

// processTaintBaseEviction is upstream's: a node whose observed Ready
// condition is False or Unknown is queued for its NoExecute taint (or has
// the opposite one swapped at once); a Ready node loses both.
func (c *Controller) processTaintBaseEviction(ctx context.Context, n *corev1.Node, observed corev1.NodeCondition) {
	var want, opposite corev1.Taint
	switch observed.Status {
	case corev1.ConditionFalse:
		want, opposite = notReadyNoExecute, unreachableNoExecute
	case corev1.ConditionUnknown:
		want, opposite = unreachableNoExecute, notReadyNoExecute
	case corev1.ConditionTrue:
		if err := c.markNodeAsReachable(ctx, n); err != nil {
			c.log.Error("Failed to remove taints from node. Will retry in next iteration", "node", n.Name, "err", err)
		}
		return
	default:
		return
	}
	if containsTaint(n.Spec.Taints, opposite) {
		if err := c.updateTaints(ctx, n, []corev1.Taint{want}, []corev1.Taint{opposite}); err != nil {
			c.log.Error("Failed to instantly swap NoExecute taints. Will try again in the next cycle", "node", n.Name, "err", err)
		}
		return
	}
	if containsTaint(n.Spec.Taints, want) {
		return
	}
	c.tainter(n).add(n.Name)
}

func (c *Controller) tainter(n *corev1.Node) *zoneTainter {
	z := zoneKey(n)
	t, ok := c.tainters[z]
	if !ok {
		t = newZoneTainter(c.cfg.NodeEvictionRate, c.cfg.Clock.Now())
		c.tainters[z] = t
		c.zoneStates[z] = stateInitial
	}
	return t
}

// markNodeAsReachable takes both NoExecute taints off and the node out of
// its zone's queue.
func (c *Controller) markNodeAsReachable(ctx context.Context, n *corev1.Node) error {
	c.tainter(n).remove(n.Name)
	var del []corev1.Taint
	for _, t := range []corev1.Taint{unreachableNoExecute, notReadyNoExecute} {
		if containsTaint(n.Spec.Taints, t) {
			del = append(del, t)
		}
	}
	return c.updateTaints(ctx, n, nil, del)
}

// NoExecuteTaintingPass taints the queued nodes of every zone NoExecute,
// as fast as the zone's rate allows (upstream's doNoExecuteTaintingPass):
// not-ready for Ready False, unreachable for Unknown, the two mutually
// exclusive; a node Ready again leaves the queue untainted.
func (c *Controller) NoExecuteTaintingPass(ctx context.Context) {
	zones := make([]string, 0, len(c.tainters))
	for z := range c.tainters {
		zones = append(zones, z)
	}
	sort.Strings(zones)
	for _, z := range zones {
		q := c.tainters[z]
		for len(q.queue) > 0 {
			name := q.queue[0]
			if !q.tryAccept(c.cfg.Clock.Now()) {
				break
			}
			q.remove(name)
			n, err := c.nodeIn.Lister().Get(name)
			if err != nil {
				continue // gone
			}
			cond := readyCondition(&n.Status)
			if cond == nil {
				continue
			}
			var want, opposite corev1.Taint
			switch cond.Status {
			case corev1.ConditionFalse:
				want, opposite = notReadyNoExecute, unreachableNoExecute
			case corev1.ConditionUnknown:
				want, opposite = unreachableNoExecute, notReadyNoExecute
			default:
				continue
			}
			if err := c.updateTaints(ctx, n, []corev1.Taint{want}, []corev1.Taint{opposite}); err != nil {
				c.log.Error("Failed to taint node NoExecute", "node", name, "err", err)
				q.add(name)
				continue
			}
			c.metrics.evictions.WithLabelValues(z).Inc()
		}
	}
}

// handleDisruption is upstream's: zone states from the nodes' Ready
// conditions set each zone's tainting rate; when every zone is fully
// disrupted the controller assumes the control plane, not the nodes, has
// a problem: it takes every NoExecute taint off and stops tainting until
// some node is Ready again.
func (c *Controller) handleDisruption(ctx context.Context, zoneConds map[string][]*corev1.NodeCondition, nodes []*corev1.Node) {
	now := c.cfg.Clock.Now()
	newStates := map[string]zoneState{}
	allFully := true
	for z, conds := range zoneConds {
		unhealthy, st := computeZoneState(conds, c.cfg.UnhealthyZoneThreshold)
		c.metrics.zoneSize.WithLabelValues(z).Set(float64(len(conds)))
		c.metrics.zoneHealth.WithLabelValues(z).Set(float64(100*(len(conds)-unhealthy)) / float64(len(conds)))
		c.metrics.unhealthyNodes.WithLabelValues(z).Set(float64(unhealthy))
		if st != stateFullDisruption {
			allFully = false
		}
		newStates[z] = st
		if _, ok := c.zoneStates[z]; !ok {
			c.zoneStates[z] = stateInitial
		}
	}
	allWasFully := true
	for z, st := range c.zoneStates {
		if _, ok := zoneConds[z]; !ok {
			c.metrics.zoneSize.WithLabelValues(z).Set(0)
			c.metrics.zoneHealth.WithLabelValues(z).Set(100)
			c.metrics.unhealthyNodes.WithLabelValues(z).Set(0)
			delete(c.zoneStates, z)
			continue
		}
		if st != stateFullDisruption {
			allWasFully = false
		}
	}
	if allFully && allWasFully {
		return
	}
	if allFully {
		c.log.Info("Controller detected that all Nodes are not-Ready. Entering master disruption mode")
		for _, n := range nodes {
			if err := c.markNodeAsReachable(ctx, n); err != nil {
				c.log.Error("Failed to remove taints from Node", "node", n.Name, "err", err)
			}
		}
		for z := range c.zoneStates {
			if t, ok := c.tainters[z]; ok {
				t.setRate(0, now)
			}
			c.zoneStates[z] = stateFullDisruption
		}
		return
	}
	if allWasFully && len(c.zoneStates) > 0 {
		c.log.Info("Controller detected that some Nodes are Ready. Exiting master disruption mode")
		for _, n := range nodes {
			if h := c.health[n.Name]; h != nil {
				h.probe, h.readyTransition = now, now
			}
		}
		for z := range c.zoneStates {
			c.setZoneRate(z, len(zoneConds[z]), newStates[z], now)
			c.zoneStates[z] = newStates[z]
		}
		return
	}
	for z, st := range c.zoneStates {
		if st == newStates[z] {
			continue
		}
		c.log.Info("Controller detected that zone is now in new state", "zone", z, "newState", newStates[z])
		c.setZoneRate(z, len(zoneConds[z]), newStates[z], now)
		c.zoneStates[z] = newStates[z]
	}
}

// setZoneRate is upstream's setLimiterInZone with its default
// ReducedQPSFunc (0 for a zone of at most LargeClusterSizeThreshold nodes)
// and HealthyQPSFunc.
func (c *Controller) setZoneRate(z string, size int, st zoneState, now time.Time) {
	t, ok := c.tainters[z]
	if !ok {
		return
	}
	switch st {
	case stateNormal, stateFullDisruption:
		t.setRate(c.cfg.NodeEvictionRate, now)
	case statePartialDisruption:
		if size > c.cfg.LargeClusterSizeThreshold {
			t.setRate(c.cfg.SecondaryNodeEvictionRate, now)
		} else {
			t.setRate(0, now)
		}
	}
}

// markPodsNotReady sets the Ready condition of the node's pods that have
// one to False (upstream's MarkPodsNotReady) and records NodeNotReady on
// each.
func (c *Controller) markPodsNotReady(ctx context.Context, nodeName string) error {
	pods, err := c.podIn.Lister().List(labels.Everything())
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range pods {
		if p.Spec.NodeName != nodeName {
			continue
		}
		if err := c.markPodNotReady(ctx, p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// markPodNotReady sets the pod's Ready condition, if it has one, to False
// and records NodeNotReady on it.
func (c *Controller) markPodNotReady(ctx context.Context, cached *corev1.Pod) error {
	p := cached.DeepCopy()
	for i := range p.Status.Conditions {
		cond := &p.Status.Conditions[i]
		if cond.Type != corev1.PodReady {
			continue
		}
		if cond.Status == corev1.ConditionFalse {
			return nil
		}
		cond.Status = corev1.ConditionFalse
		cond.LastTransitionTime = metav1.Time{Time: c.cfg.Clock.Now()}
		c.log.Info("Updating ready status of pod to false", "pod", p.Namespace+"/"+p.Name)
		if _, err := c.pods.Namespace(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
		c.event(p, corev1.EventTypeWarning, "NodeNotReady", "Node is not ready")
		return nil
	}
	return nil
}
