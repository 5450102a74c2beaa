package containerd

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
)

// BridgeNetwork is a pod network of the standard CNI plugins
// (containernetworking-plugins) as a supervised containerd's CRI plugin
// reads it from its CNI configuration directory: skiff up's node network
// (pkg/cluster: bridge cni0, ipMasq, portmap) and the real-runtime tests'
// and benchmark's networks (a bridge and subnet of their own).
//
// The conflist (Conflist, cniVersion 0.4.0, which containerd 1.6 and the
// Debian plugins speak): the bridge plugin as the pods' gateway
// (isGateway, isDefaultGateway: it adds the pods' default routes itself,
// so IPAM lists none) in hairpin mode (a pod reaches itself through a
// Service), masquerading traffic leaving the subnets when IPMasq;
// host-local IPAM with one range per subnet, its leases under IPAMDataDir;
// then, when PortMap, the portmap plugin for hostPort (with SNAT, its
// default, so a hostPort answers from the host itself too).
type BridgeNetwork struct {
	Name        string   // the network's name (CNI "name")
	Bridge      string   // the bridge device
	Subnets     []string // CIDRs, one host-local range each (an IPv4 and an IPv6 for dual stack)
	IPAMDataDir string   // where host-local keeps its leases
	IPMasq      bool     // masquerade pod traffic leaving the subnets
	PortMap     bool     // chain the portmap plugin (hostPort)
}

// CNIVersion is the CNI specification version of the conflists skiff
// writes.
const CNIVersion = "0.4.0"

type (
	conflist struct {
		CNIVersion string `json:"cniVersion"`
		Name       string `json:"name"`
		Plugins    []any  `json:"plugins"`
	}
	bridgePlugin struct {
		Type             string    `json:"type"`
		Bridge           string    `json:"bridge"`
		IsGateway        bool      `json:"isGateway"`
		IsDefaultGateway bool      `json:"isDefaultGateway"`
		IPMasq           bool      `json:"ipMasq"`
		HairpinMode      bool      `json:"hairpinMode"`
		IPAM             hostLocal `json:"ipam"`
	}
	hostLocal struct {
		Type    string                `json:"type"`
		Ranges  [][]map[string]string `json:"ranges"`
		DataDir string                `json:"dataDir"`
	}
	portMapPlugin struct {
		Type         string          `json:"type"`
		Capabilities map[string]bool `json:"capabilities"`
		SNAT         bool            `json:"snat"`
	}
)

// Conflist is the network's CNI configuration list (indented JSON). It
// refuses a network without a name, bridge, subnet or IPAM data directory,
// and a subnet that is not a CIDR; a subnet's host bits are cleared.
func (n BridgeNetwork) Conflist() ([]byte, error) {
	switch {
	case n.Name == "":
		return nil, fmt.Errorf("CNI network: no name")
	case n.Bridge == "":
		return nil, fmt.Errorf("CNI network %s: no bridge", n.Name)
	case len(n.Subnets) == 0:
		return nil, fmt.Errorf("CNI network %s: no subnet", n.Name)
	case n.IPAMDataDir == "":
		return nil, fmt.Errorf("CNI network %s: no IPAM data directory", n.Name)
	}
	ranges := make([][]map[string]string, 0, len(n.Subnets))
	for _, s := range n.Subnets {
		p, err := netip.ParsePrefix(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("CNI network %s: subnet %q: %w", n.Name, s, err)
		}
		ranges = append(ranges, []map[string]string{{"subnet": p.Masked().String()}})
	}
	conf := conflist{CNIVersion: CNIVersion, Name: n.Name, Plugins: []any{bridgePlugin{
		Type: "bridge", Bridge: n.Bridge, IsGateway: true, IsDefaultGateway: true, IPMasq: n.IPMasq, HairpinMode: true,
		IPAM: hostLocal{Type: "host-local", Ranges: ranges, DataDir: n.IPAMDataDir},
	}}}
	if n.PortMap {
		conf.Plugins = append(conf.Plugins, portMapPlugin{Type: "portmap", Capabilities: map[string]bool{"portMappings": true}, SNAT: true})
	}
	return json.MarshalIndent(conf, "", "  ")
}

// Write writes the network's conflist to path (its directory made if
// missing) atomically: containerd's CRI plugin watches the directory and
// must never read half a file.
func (n BridgeNetwork) Write(path string) error {
	data, err := n.Conflist()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
