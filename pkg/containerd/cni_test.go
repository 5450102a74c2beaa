package containerd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBridgeNetworkConflist(t *testing.T) {
	tests := []struct {
		name string
		n    BridgeNetwork
		want string // the conflist, compact
		err  string
	}{{
		name: "skiff up's node network",
		n: BridgeNetwork{Name: "skiff", Bridge: "cni0", Subnets: []string{"10.42.0.0/24"}, IPAMDataDir: "/d/cni/networks",
			IPMasq: true, PortMap: true},
		want: `{"cniVersion":"0.4.0","name":"skiff","plugins":[` +
			`{"type":"bridge","bridge":"cni0","isGateway":true,"isDefaultGateway":true,"ipMasq":true,"hairpinMode":true,` +
			`"ipam":{"type":"host-local","ranges":[[{"subnet":"10.42.0.0/24"}]],"dataDir":"/d/cni/networks"}},` +
			`{"type":"portmap","capabilities":{"portMappings":true},"snat":true}]}`,
	}, {
		name: "dual stack, host bits cleared, spaces trimmed",
		n: BridgeNetwork{Name: "skiff", Bridge: "cni0", Subnets: []string{"10.42.3.7/24", " fd00:42:0:3::1/64"}, IPAMDataDir: "/d",
			IPMasq: true, PortMap: true},
		want: `{"cniVersion":"0.4.0","name":"skiff","plugins":[` +
			`{"type":"bridge","bridge":"cni0","isGateway":true,"isDefaultGateway":true,"ipMasq":true,"hairpinMode":true,` +
			`"ipam":{"type":"host-local","ranges":[[{"subnet":"10.42.3.0/24"}],[{"subnet":"fd00:42:0:3::/64"}]],"dataDir":"/d"}},` +
			`{"type":"portmap","capabilities":{"portMappings":true},"snat":true}]}`,
	}, {
		name: "a test's network: own bridge, no masquerading, no portmap",
		n:    BridgeNetwork{Name: "skiff-bench", Bridge: "skb42", Subnets: []string{"10.251.3.0/24"}, IPAMDataDir: "/b/cni/ipam"},
		want: `{"cniVersion":"0.4.0","name":"skiff-bench","plugins":[` +
			`{"type":"bridge","bridge":"skb42","isGateway":true,"isDefaultGateway":true,"ipMasq":false,"hairpinMode":true,` +
			`"ipam":{"type":"host-local","ranges":[[{"subnet":"10.251.3.0/24"}]],"dataDir":"/b/cni/ipam"}}]}`,
	}, {
		name: "portmap without masquerading",
		n:    BridgeNetwork{Name: "skiff-e2e", Bridge: "ske7", Subnets: []string{"10.252.7.0/24"}, IPAMDataDir: "/e", PortMap: true},
		want: `{"cniVersion":"0.4.0","name":"skiff-e2e","plugins":[` +
			`{"type":"bridge","bridge":"ske7","isGateway":true,"isDefaultGateway":true,"ipMasq":false,"hairpinMode":true,` +
			`"ipam":{"type":"host-local","ranges":[[{"subnet":"10.252.7.0/24"}]],"dataDir":"/e"}},` +
			`{"type":"portmap","capabilities":{"portMappings":true},"snat":true}]}`,
	}, {
		name: "not a CIDR",
		n:    BridgeNetwork{Name: "skiff", Bridge: "cni0", Subnets: []string{"10.42.0.0"}, IPAMDataDir: "/d"},
		err:  `subnet "10.42.0.0"`,
	}, {
		name: "no subnet",
		n:    BridgeNetwork{Name: "skiff", Bridge: "cni0", IPAMDataDir: "/d"},
		err:  "no subnet",
	}, {
		name: "no bridge",
		n:    BridgeNetwork{Name: "skiff", Subnets: []string{"10.42.0.0/24"}, IPAMDataDir: "/d"},
		err:  "no bridge",
	}, {
		name: "no name",
		n:    BridgeNetwork{Bridge: "cni0", Subnets: []string{"10.42.0.0/24"}, IPAMDataDir: "/d"},
		err:  "no name",
	}, {
		name: "no IPAM data directory",
		n:    BridgeNetwork{Name: "skiff", Bridge: "cni0", Subnets: []string{"10.42.0.0/24"}},
		err:  "no IPAM data directory",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := tt.n.Conflist()
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := json.Compact(&got, data); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, data)
			}
			if got.String() != tt.want {
				t.Errorf("conflist\n got %s\nwant %s", got.String(), tt.want)
			}
		})
	}
}

// Write puts the conflist in place (making the directory) and leaves no
// temporary file behind; an invalid network writes nothing.
func TestBridgeNetworkWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "net.d", "10-x.conflist")
	n := BridgeNetwork{Name: "x", Bridge: "skx0", Subnets: []string{"10.9.0.0/24"}, IPAMDataDir: dir}
	if err := n.Write(path); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := n.Conflist()
	if string(got) != string(want) {
		t.Errorf("file %s, want %s", got, want)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("net.d holds %d entries, want the conflist only", len(entries))
	}
	bad := filepath.Join(dir, "net.d", "20-bad.conflist")
	if err := (BridgeNetwork{Name: "bad"}).Write(bad); err == nil {
		t.Error("invalid network written")
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("invalid network: file %s exists (%v)", bad, err)
	}
}
