package e2e

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSkiffUpNode: `skiff up` runs a node of its own, named after the
// host, on the simulated runtime (this machine's skiff up is told so with
// --container-runtime=sim; it says so plainly), labelled
// skiff.sh/runtime=sim, Ready with a pod CIDR of --cluster-cidr from the
// node IPAM controller; a Deployment's pods run on it with IPs from that
// CIDR. The kubelet is system:node:<name> in system:nodes: the Node
// authorizer keeps it from another node's object, NodeRestriction from
// restricted labels of its own.
func TestSkiffUpNode(t *testing.T) {
	t.Parallel()
	c := ownCluster(t, "memory", "--container-runtime=sim")
	k := c.k()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	name := strings.ToLower(host)
	eventually(t, 10*time.Second, "the simulated runtime announced", func() (bool, string) {
		l := c.logs()
		return strings.Contains(l, "the node "+name+" runs a simulated runtime (pods are scheduled, get IPs and reach Running, but no container runs; the node is labelled skiff.sh/runtime=sim)"), l
	})
	eventually(t, 60*time.Second, "the node Ready with a pod CIDR", func() (bool, string) {
		out, _, _ := k.run(t, "get", "nodes", "-l", "skiff.sh/runtime=sim", "-o",
			`jsonpath={range .items[*]}{.metadata.name} {.spec.podCIDR} {range .status.conditions[?(@.type=="Ready")]}{.status}{end}{"\n"}{end}`)
		return strings.TrimSpace(out) == name+" 10.42.0.0/24 True", out
	})
	wantLines(t, k.ok(t, "create", "deployment", "web", "--image=registry.k8s.io/pause:3.10", "--replicas=3"), "deployment.apps/web created")
	cidr := netip.MustParsePrefix("10.42.0.0/24")
	eventually(t, 60*time.Second, "3 Running pods with IPs of the node's pod CIDR", func() (bool, string) {
		out, _, _ := k.run(t, "get", "pods", "-l", "app=web", "-o", `jsonpath={range .items[*]}{.status.phase} {.spec.nodeName} {.status.podIP}{"\n"}{end}`)
		n := 0
		for _, l := range lines(out) {
			f := columns(l)
			if len(f) != 3 || f[0] != "Running" || f[1] != name {
				continue
			}
			if ip, err := netip.ParseAddr(f[2]); err == nil && cidr.Contains(ip) {
				n++
			}
		}
		return n == 3, out
	})

	// The node's identity and what NodeRestriction leaves it.
	kubelet := []string{"--kubeconfig", filepath.Join(c.dataDir, "kubelet.kubeconfig")}
	out := k.ok(t, append(kubelet, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}")...)
	wantEqual(t, "kubelet identity", out, `system:node:`+name+` ["system:nodes","system:authenticated"]`)
	k.withStdin("apiVersion: v1\nkind: Node\nmetadata: {name: other}\n").ok(t, "apply", "-f", "-")
	// The Node authorizer: not another node's object.
	errOut := k.fails(t, append(kubelet, "label", "node", "other", "x=y")...)
	wantContains(t, errOut, `nodes "other" is forbidden: User "system:node:`+name+`" cannot get resource "nodes" in API group "" at the cluster scope: node '`+name+`' cannot read 'other', only its own Node object`)
	// NodeRestriction: its own, but not the restricted labels.
	wantLines(t, k.ok(t, append(kubelet, "label", "node", name, "example.com/x=y")...), "node/"+name+" labeled")
	errOut = k.fails(t, append(kubelet, "label", "node", name, "node-restriction.kubernetes.io/x=y")...)
	wantContains(t, errOut, `is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/x`)
}
