package kubelet

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/kubelet/sim"
)

func nodeReady(n *corev1.Node) (corev1.ConditionStatus, string) {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status, c.Message
		}
	}
	return "", ""
}

// A runtime whose network waits for the pod CIDR keeps the node NotReady
// until the node gets spec.podCIDR (node IPAM); the kubelet passes it to
// the runtime (UpdateRuntimeConfig) and posts Ready at once (within the
// 100 ms fast status loop, not the 10 s status period); pods get IPs
// from it.
func TestPodCIDRFromNode(t *testing.T) {
	h := newHarness(t, sim.Config{WaitForPodCIDR: true})
	nodes := client.For[*corev1.Node, *corev1.NodeList](h.c)
	waitFor(t, "node NotReady for want of a pod CIDR", func() (bool, error) {
		n, err := nodes.Get(h.ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		st, msg := nodeReady(n)
		return st == corev1.ConditionFalse && strings.Contains(msg, "NetworkPluginNotReady"), nil
	})
	patched := h.clk.Now()
	if _, err := nodes.Patch(h.ctx, nodeName, types.MergePatchType, []byte(`{"spec":{"podCIDR":"10.42.3.0/24","podCIDRs":["10.42.3.0/24"]}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitStepping(t, "node Ready", 100*time.Millisecond, func() (bool, error) {
		n, err := nodes.Get(h.ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		st, _ := nodeReady(n)
		return st == corev1.ConditionTrue, nil
	})
	if d := h.clk.Since(patched); d >= 10*time.Second {
		t.Errorf("Ready %v after the pod CIDR came: the status period, not the fast status update", d)
	}
	h.create(t, simplePod("web", "web"))
	p := h.podWhere(t, "web", time.Second, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" })
	if ip := netip.MustParseAddr(p.Status.PodIP); !netip.MustParsePrefix("10.42.3.0/24").Contains(ip) {
		t.Errorf("pod IP %s not in the node's pod CIDR", ip)
	}
}
