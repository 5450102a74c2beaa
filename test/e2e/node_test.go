package e2e

import (
	"net"
	"net/netip"
	"os"
	"os/exec"
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
		return strings.Contains(l, "--container-runtime=sim: the node "+name+" runs a simulated runtime: pods are scheduled, get IPs and reach Running, but no container runs (the node is labelled skiff.sh/runtime=sim)."), l
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

	// Its kubelet API, through the API server.
	wantEqual(t, "node proxy healthz", k.ok(t, "get", "--raw", "/api/v1/nodes/"+name+"/proxy/healthz"), "ok")

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

// TestSkiffUpContainerd: `skiff up` on a machine with containerd (root):
// it starts and supervises containerd under <data-dir>/containerd, imports
// its pause image, writes the CNI network from the node's pod CIDR
// (bridge cni0, host-local over 10.42.0.0/24) and runs its node on it: a
// Deployment's busybox httpd pods run in real containers with IPs of the
// node's pod CIDR, `kubectl exec` runs in one and a pod fetches a page
// from another by its IP, `kubectl logs` shows its output. With
// --storage=memory, stopping skiff removes the containers.
func TestSkiffUpContainerd(t *testing.T) {
	for _, bin := range []string{"containerd", "runc", "ctr"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed (apt-get install containerd runc containernetworking-plugins): this test runs real containers", bin)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: containerd and runc need root here")
	}
	if _, err := os.Stat("/bin/busybox"); err != nil {
		t.Skip("no static /bin/busybox (apt-get install busybox-static) to build the test image from")
	}
	t.Parallel()
	if _, err := net.InterfaceByName("cni0"); err != nil {
		t.Cleanup(func() { exec.Command("ip", "link", "del", "cni0").Run() })
	}
	var dataDir string
	// Registered first, so it runs after the cluster has stopped.
	t.Cleanup(func() {
		if dataDir == "" {
			return
		}
		out, _ := exec.Command("ps", "-eo", "args").Output()
		for _, l := range lines(string(out)) {
			if strings.Contains(l, "containerd") && strings.Contains(l, dataDir) {
				t.Errorf("left running after skiff stopped: %s", l)
			}
		}
	})
	c := ownCluster(t, "memory", "--container-runtime=containerd")
	dataDir = c.dataDir
	k := c.k()
	host, _ := os.Hostname()
	name := strings.ToLower(host)
	eventually(t, 30*time.Second, "containerd announced", func() (bool, string) {
		l := c.logs()
		return strings.Contains(l, "The node "+name+" runs pods in real containers: skiff started containerd (socket "+filepath.Join(c.dataDir, "containerd", "containerd.sock")), l
	})
	eventually(t, 120*time.Second, "the node Ready on containerd with a pod CIDR", func() (bool, string) {
		out, _, _ := k.run(t, "get", "node", name, "-o",
			`jsonpath={.status.nodeInfo.containerRuntimeVersion} {.spec.podCIDR} {range .status.conditions[?(@.type=="Ready")]}{.status}{end}`)
		f := columns(out)
		return len(f) == 3 && strings.HasPrefix(f[0], "containerd://") && f[1] == "10.42.0.0/24" && f[2] == "True", out
	})
	conf, err := os.ReadFile(filepath.Join(c.dataDir, "cni", "net.d", "10-skiff.conflist"))
	if err != nil || !strings.Contains(string(conf), `"subnet": "10.42.0.0/24"`) || !strings.Contains(string(conf), `"bridge": "cni0"`) {
		t.Fatalf("CNI network: %s %v", conf, err)
	}

	tarball := filepath.Join(c.dataDir, "busybox.tar")
	if out, err := exec.Command(skiffBin, "image", "build-busybox", "-o", tarball, "--tag", "busybox:e2e").CombinedOutput(); err != nil {
		t.Fatalf("skiff image build-busybox: %v\n%s", err, out)
	}
	if out, err := exec.Command(skiffBin, "image", "import", "--data-dir", c.dataDir, tarball).CombinedOutput(); err != nil {
		t.Fatalf("skiff image import: %v\n%s", err, out)
	}
	wantLines(t, k.ok(t, "create", "deployment", "web", "--image=busybox:e2e", "--replicas=2", "--",
		"sh", "-c", "echo ok > /tmp/index.html && exec httpd -f -p 8080 -h /tmp"), "deployment.apps/web created")
	cidr := netip.MustParsePrefix("10.42.0.0/24")
	var pods, ips []string
	eventually(t, 90*time.Second, "2 Running web pods with IPs of the node's pod CIDR", func() (bool, string) {
		o, _, _ := k.run(t, "get", "pods", "-l", "app=web", "-o", `jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.spec.nodeName} {.status.podIP}{"\n"}{end}`)
		pods, ips = nil, nil
		for _, l := range lines(o) {
			f := columns(l)
			if len(f) != 4 || f[1] != "Running" || f[2] != name {
				continue
			}
			if ip, err := netip.ParseAddr(f[3]); err == nil && cidr.Contains(ip) {
				pods, ips = append(pods, f[0]), append(ips, f[3])
			}
		}
		return len(ips) == 2 && ips[0] != ips[1], o
	})
	wantEqual(t, "exec", strings.TrimSpace(k.ok(t, "exec", pods[0], "--", "cat", "/tmp/index.html")), "ok")
	k.ok(t, "run", "fetch", "--image=busybox:e2e", "--restart=Never", "--",
		"sh", "-c", `printf 'GET /index.html HTTP/1.0\r\n\r\n' | nc -w 5 `+ips[1]+` 8080`)
	eventually(t, 60*time.Second, "pod fetch Succeeded", func() (bool, string) {
		o, _, _ := k.run(t, "get", "pod", "fetch", "-o", `jsonpath={.status.phase} {.status.containerStatuses[0].state.terminated.exitCode}`)
		return o == "Succeeded 0", o
	})
	logs := k.ok(t, "logs", "fetch")
	wantContains(t, logs, "200 OK", "ok")
}
