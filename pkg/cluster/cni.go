package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/containerd"
	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
)

// The node's pod network on a real runtime: the standard CNI plugins
// (Debian's containernetworking-plugins) with a configuration skiff
// writes from the node's pod CIDR, as k3s's flannel-less setups and
// kubenet did. The kubelet passes spec.podCIDRs to the runtime with
// UpdateRuntimeConfig; cniRuntime writes CNIConfPath before passing the
// call on, and containerd's CRI plugin picks the file up (it watches its
// conf_dir), reporting NetworkReady once it has.
//
// The network (CNIConfig, a containerd.BridgeNetwork): bridge cni0 as
// the pods' gateway (isGateway, isDefaultGateway: the plugin adds the
// pods' default routes, so IPAM lists none), ipMasq so pods reach beyond
// the host, hairpin mode so a pod reaches itself through a service;
// host-local IPAM over the pod CIDR(s), its leases under
// <data-dir>/cni/networks; portmap for hostPort. The loopback interface of every sandbox is
// containerd's own (it runs the loopback plugin itself).

// podBridge is the node network's bridge device.
const podBridge = "cni0"

// podNetwork is the node's network for the given pod CIDRs (comma
// separated).
func podNetwork(podCIDRs, dataDir string) containerd.BridgeNetwork {
	return containerd.BridgeNetwork{Name: "skiff", Bridge: podBridge, Subnets: strings.Split(podCIDRs, ","),
		IPAMDataDir: filepath.Join(dataDir, "cni", "networks"), IPMasq: true, PortMap: true}
}

// CNIConfig is the conflist for the given pod CIDRs (comma separated).
func CNIConfig(podCIDRs, dataDir string) ([]byte, error) {
	return podNetwork(podCIDRs, dataDir).Conflist()
}

// writeCNIConfig writes CNIConfPath atomically, after removing a bridge
// cni0 left with an address outside the pod CIDRs (a cluster of another
// --cluster-cidr before: the bridge plugin refuses to use it).
func writeCNIConfig(dataDir, podCIDRs string, logger *slog.Logger) error {
	n := podNetwork(podCIDRs, dataDir)
	if _, err := n.Conflist(); err != nil {
		return err
	}
	if stale := staleBridge(podCIDRs); stale != "" {
		logger.Warn("removing bridge cni0: its address is outside the node's pod CIDR", "address", stale, "podCIDR", podCIDRs)
		if out, err := exec.Command("ip", "link", "del", podBridge).CombinedOutput(); err != nil {
			logger.Warn("removing bridge cni0", "err", err, "output", string(out))
		}
	}
	return n.Write(CNIConfPath(dataDir))
}

// staleBridge is an address of cni0 outside the pod CIDRs ("" when there
// is none, or no cni0).
func staleBridge(podCIDRs string) string {
	iface, err := net.InterfaceByName(podBridge)
	if err != nil {
		return ""
	}
	addrs, err := iface.Addrs()
	if err != nil {
		return ""
	}
	var cidrs []netip.Prefix
	for _, c := range strings.Split(podCIDRs, ",") {
		if p, err := netip.ParsePrefix(strings.TrimSpace(c)); err == nil {
			cidrs = append(cidrs, p)
		}
	}
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok || n.IP.IsLinkLocalUnicast() {
			continue
		}
		ip, _ := netip.AddrFromSlice(n.IP)
		ip = ip.Unmap()
		if !slices.ContainsFunc(cidrs, func(p netip.Prefix) bool { return p.Contains(ip) }) {
			return n.String()
		}
	}
	return ""
}

// cniRuntime writes the node's CNI network when the kubelet passes the
// pod CIDR on.
type cniRuntime struct {
	cri.RuntimeService
	dataDir string
	logger  *slog.Logger
}

func (r cniRuntime) UpdateRuntimeConfig(ctx context.Context, req *runtimeapi.UpdateRuntimeConfigRequest) (*runtimeapi.UpdateRuntimeConfigResponse, error) {
	if cidrs := req.GetRuntimeConfig().GetNetworkConfig().GetPodCidr(); cidrs != "" {
		if err := writeCNIConfig(r.dataDir, cidrs, r.logger); err != nil {
			return nil, fmt.Errorf("writing the CNI network: %w", err)
		}
	}
	return r.RuntimeService.UpdateRuntimeConfig(ctx, req)
}
