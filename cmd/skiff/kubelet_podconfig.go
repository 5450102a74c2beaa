package main

import "github.com/spf13/pflag"

// podConfigFlags are the kubelet flags of the pods' CRI configurations
// (--runtime=remote), upstream's names.
type podConfigFlags struct {
	clusterDNS     []string
	clusterDomain  string
	resolvConf     string
	seccompDefault bool
	cgroupsPerQOS  bool
}

func (p *podConfigFlags) addFlags(f *pflag.FlagSet) {
	f.StringSliceVar(&p.clusterDNS, "cluster-dns", nil, "DNS server IPs of pods with dnsPolicy ClusterFirst (--runtime=remote; none: such pods use the node's resolver configuration, with a MissingClusterDNS event).")
	f.StringVar(&p.clusterDomain, "cluster-domain", "cluster.local", "The cluster's DNS domain: pods search <namespace>.svc.<domain>, svc.<domain> and <domain> (--runtime=remote).")
	f.StringVar(&p.resolvConf, "resolv-conf", "/etc/resolv.conf", "The resolver configuration that pods with dnsPolicy Default get (--runtime=remote).")
	f.BoolVar(&p.seccompDefault, "seccomp-default", false, "Run containers without a seccomp profile with the runtime's default profile instead of Unconfined (--runtime=remote).")
	f.BoolVar(&p.cgroupsPerQOS, "cgroups-per-qos", false, "Put each pod under the cgroup /kubepods[/burstable|/besteffort]/pod<uid> (cgroupfs names; the runtime creates it, no pod-level limits are written) (--runtime=remote).")
}
