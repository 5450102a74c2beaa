package kubelet

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The node's pod CIDR, as upstream's kubelet handles it: whenever the
// kubelet sees its Node (registration, status posts, and while the node is
// not ready a read of the Node every status period), a spec.podCIDRs that
// differs from the last one it gave the runtime is passed on with
// UpdateRuntimeConfig (the runtime's network plugin hands out pod IPs from
// it). Right after registration, fastStatusUpdate checks every 100 ms
// (for at most nodeReadyGracePeriod) whether the node can turn Ready
// (typically: the pod CIDR has arrived and the runtime's network is
// ready) and posts the status at once when it can, as upstream's
// fastStatusUpdateOnce.

// nodeReadyGracePeriod bounds fastStatusUpdate (upstream's).
const nodeReadyGracePeriod = 120 * time.Second

// updatePodCIDR passes node's pod CIDRs to the runtime when they changed;
// it reports whether it did.
func (k *Kubelet) updatePodCIDR(ctx context.Context, node *corev1.Node) bool {
	if node == nil {
		return false
	}
	cidrs := strings.Join(node.Spec.PodCIDRs, ",")
	if cidrs == "" {
		cidrs = node.Spec.PodCIDR
	}
	if cidrs == "" {
		return false
	}
	k.mu.Lock()
	old := k.podCIDR
	k.mu.Unlock()
	if old == cidrs {
		return false
	}
	_, err := k.cfg.Runtime.UpdateRuntimeConfig(ctx, &runtimeapi.UpdateRuntimeConfigRequest{
		RuntimeConfig: &runtimeapi.RuntimeConfig{NetworkConfig: &runtimeapi.NetworkConfig{PodCidr: cidrs}}})
	if err != nil {
		k.log.Error("Failed to update pod CIDR", "podCIDR", cidrs, "err", err)
		return false
	}
	k.mu.Lock()
	k.podCIDR = cidrs
	k.mu.Unlock()
	k.log.Info("Updating Pod CIDR", "originalPodCIDR", old, "newPodCIDR", cidrs)
	return true
}

// readNode reads the node (from the API server's cache, resourceVersion
// 0, as upstream's status update does) and applies its pod CIDR; it
// reports whether the CIDR changed.
func (k *Kubelet) readNode(ctx context.Context) bool {
	n, err := k.nodes.Get(ctx, k.cfg.NodeName, metav1.GetOptions{ResourceVersion: "0"})
	if err != nil {
		return false
	}
	return k.updatePodCIDR(ctx, n)
}

// notReady reports whether the last posted status is not Ready.
func (k *Kubelet) notReady() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.node == nil {
		return false
	}
	for _, c := range k.node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status != corev1.ConditionTrue
		}
	}
	return true
}

// notReadyWithoutCIDR reports whether the node is not Ready and no pod
// CIDR has come yet: only then is the Node read every status period
// (ready nodes, hollow ones among them, cost no extra request).
func (k *Kubelet) notReadyWithoutCIDR() bool {
	k.mu.Lock()
	cidr := k.podCIDR
	k.mu.Unlock()
	return cidr == "" && k.notReady()
}

// fastStatusUpdate posts the node's status as soon as it turns Ready
// after registration: every 100 ms, for at most nodeReadyGracePeriod,
// while the node is not Ready, it reads the Node for its pod CIDR (until
// it has one) and posts the status if it changed (the runtime's network
// may have become ready).
func (k *Kubelet) fastStatusUpdate(ctx context.Context) {
	start := k.clock.Now()
	for k.notReady() {
		if k.notReadyWithoutCIDR() {
			k.readNode(ctx)
		}
		if err := k.postNodeStatus(ctx, false); err != nil && ctx.Err() == nil {
			k.log.Warn("posting node status", "err", err)
		}
		if k.clock.Since(start) >= nodeReadyGracePeriod {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-k.clock.After(100 * time.Millisecond):
		}
	}
}
