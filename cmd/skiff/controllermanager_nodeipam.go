package main

import (
	"github.com/spf13/pflag"

	"github.com/skiff-sh/skiff/pkg/controllermanager"
)

// addNodeIPAMFlags adds upstream's node IPAM flags.
func addNodeIPAMFlags(f *pflag.FlagSet, cfg *controllermanager.Config) {
	c := &cfg.NodeIPAM
	f.BoolVar(&c.AllocateNodeCIDRs, "allocate-node-cidrs", false, "Should CIDRs for Pods be allocated and set on the cloud provider.")
	f.StringVar(&c.ClusterCIDR, "cluster-cidr", "", "CIDR Range for Pods in cluster. Only used when --allocate-node-cidrs=true; if false, this option will be ignored.")
	f.StringVar(&c.ServiceClusterIPRange, "service-cluster-ip-range", "", "CIDR Range for Services in cluster. Only used when --allocate-node-cidrs=true; if false, this option will be ignored.")
	f.IntVar(&c.NodeCIDRMaskSize, "node-cidr-mask-size", 0, "Mask size for node cidr in cluster. Default is 24 for IPv4 and 64 for IPv6.")
	f.IntVar(&c.NodeCIDRMaskSizeIPv4, "node-cidr-mask-size-ipv4", 0, "Mask size for IPv4 node cidr in dual-stack cluster. Default is 24.")
	f.IntVar(&c.NodeCIDRMaskSizeIPv6, "node-cidr-mask-size-ipv6", 0, "Mask size for IPv6 node cidr in dual-stack cluster. Default is 64.")
	f.StringVar(&c.CIDRAllocatorType, "cidr-allocator-type", "RangeAllocator", "Type of CIDR allocator to use")
}
