package controllermanager

import (
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/skiff-sh/skiff/pkg/controller/nodeipam"
)

// NodeIPAMConfig is upstream's node IPAM flags.
type NodeIPAMConfig struct {
	// AllocateNodeCIDRs is --allocate-node-cidrs (off: the controller does
	// not start, as upstream).
	AllocateNodeCIDRs bool
	// ClusterCIDR is --cluster-cidr (comma separated, one per family).
	ClusterCIDR string
	// ServiceClusterIPRange is --service-cluster-ip-range: never handed
	// out to nodes where it overlaps the cluster CIDR.
	ServiceClusterIPRange string
	// NodeCIDRMaskSize, NodeCIDRMaskSizeIPv4 and NodeCIDRMaskSizeIPv6 are
	// --node-cidr-mask-size(-ipv4/-ipv6) (0: unset; defaults 24 and 64).
	NodeCIDRMaskSize, NodeCIDRMaskSizeIPv4, NodeCIDRMaskSizeIPv6 int
	// CIDRAllocatorType is --cidr-allocator-type: only RangeAllocator
	// ("" means it).
	CIDRAllocatorType string
}

// The InitFunc of the node IPAM controller (upstream's
// startNodeIpamController).
func startNodeIpamController(cc ControllerContext) (Controller, error) {
	c := cc.Config.NodeIPAM
	if !c.AllocateNodeCIDRs {
		return nil, nil
	}
	if c.CIDRAllocatorType != "" && c.CIDRAllocatorType != "RangeAllocator" {
		return nil, fmt.Errorf("--cidr-allocator-type %q: only RangeAllocator is supported (CloudAllocator needs a cloud provider)", c.CIDRAllocatorType)
	}
	if strings.TrimSpace(c.ClusterCIDR) == "" {
		return nil, fmt.Errorf("Controller: Must specify --cluster-cidr if --allocate-node-cidrs is set")
	}
	clusterCIDRs, err := nodeipam.ParseClusterCIDRs(c.ClusterCIDR)
	if err != nil {
		return nil, err
	}
	var services []netip.Prefix
	if s := strings.TrimSpace(c.ServiceClusterIPRange); s != "" {
		for _, r := range strings.Split(s, ",") {
			p, err := netip.ParsePrefix(strings.TrimSpace(r))
			if err != nil {
				cc.Logger.Info("Warning: unsuccessful parsing of service CIDR", "CIDR", r, "err", err)
				continue
			}
			services = append(services, p.Masked())
		}
	}
	sizes, err := nodeipam.NodeCIDRMaskSizes(clusterCIDRs, c.NodeCIDRMaskSize, c.NodeCIDRMaskSizeIPv4, c.NodeCIDRMaskSizeIPv6)
	if err != nil {
		return nil, err
	}
	return nodeipam.New(nodeipam.Config{
		Client: cc.Client, Informers: cc.Informers, Clock: cc.Clock, Logger: cc.Logger,
		Recorder:        cc.Broadcaster.NewRecorder(corev1.EventSource{Component: nodeipam.EventComponent}),
		Workers:         nodeipam.DefaultWorkers,
		MetricsProvider: cc.MetricsProvider, Registry: cc.Registry,
		ClusterCIDRs: clusterCIDRs, NodeCIDRMaskSizes: sizes, ServiceCIDRs: services,
	})
}
