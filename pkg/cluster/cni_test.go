package cluster

import (
	"encoding/json"
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestCNIConfig(t *testing.T) {
	tests := []struct {
		cidrs  string
		ranges [][]map[string]string
		err    bool
	}{
		{cidrs: "10.42.0.0/24", ranges: [][]map[string]string{{{"subnet": "10.42.0.0/24"}}}},
		{cidrs: "10.42.3.0/24,fd00:42:0:3::/64", ranges: [][]map[string]string{{{"subnet": "10.42.3.0/24"}}, {{"subnet": "fd00:42:0:3::/64"}}}},
		{cidrs: "10.42.0.0", err: true},
	}
	for _, tt := range tests {
		data, err := CNIConfig(tt.cidrs, "/d")
		if tt.err {
			if err == nil {
				t.Errorf("%s: no error", tt.cidrs)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var conf struct {
			CNIVersion string `json:"cniVersion"`
			Name       string
			Plugins    []struct {
				Type, Bridge                                     string
				IsGateway, IsDefaultGateway, IPMasq, HairpinMode bool
				IPAM                                             struct {
					Type    string
					Ranges  [][]map[string]string
					Routes  []any
					DataDir string
				}
				Capabilities map[string]bool
			}
		}
		if err := json.Unmarshal(data, &conf); err != nil {
			t.Fatal(err)
		}
		if conf.Name != "skiff" || len(conf.Plugins) != 2 {
			t.Fatalf("%s: %s", tt.cidrs, data)
		}
		b, pm := conf.Plugins[0], conf.Plugins[1]
		if b.Type != "bridge" || b.Bridge != "cni0" || !b.IsGateway || !b.IsDefaultGateway || !b.IPMasq || !b.HairpinMode ||
			b.IPAM.Type != "host-local" || !reflect.DeepEqual(b.IPAM.Ranges, tt.ranges) || b.IPAM.Routes != nil || b.IPAM.DataDir != "/d/cni/networks" {
			t.Errorf("%s: bridge %+v", tt.cidrs, b)
		}
		if pm.Type != "portmap" || !pm.Capabilities["portMappings"] {
			t.Errorf("%s: portmap %+v", tt.cidrs, pm)
		}
	}
}

// The kubelet's port: the default one, or a free one when it is taken
// (said in the output); a port asked for explicitly is an error when
// taken.
func TestKubeletListener(t *testing.T) {
	taken, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	if _, _, err := kubeletListener(port); err == nil {
		t.Fatalf("explicit port %d in use: no error", port)
	}
	ln, note, err := kubeletListener(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := ln.Addr().(*net.TCPAddr).Port
	if got == 10250 && note != "" || got != 10250 && !strings.Contains(note, "Port 10250 is in use: the kubelet serves on "+strconv.Itoa(got)) {
		t.Errorf("port %d, note %q", got, note)
	}
}
