package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skiff-sh/skiff/pkg/containerd"
	"github.com/skiff-sh/skiff/pkg/image"
)

// TestContainerdKubelet: `skiff kubelet --container-runtime-endpoint`
// against `skiff up --disable=kubelet`, on a containerd supervised by
// pkg/containerd with a CNI bridge network: the node gets Ready, a
// Deployment's pods run in real containers with pod IPs from the bridge's
// subnet, a pod fetches a page from one of them by its pod IP (and kubectl
// logs shows it), kubectl debug runs ephemeral containers in a pod (with
// --target, and attached with -i) and a node debugging pod, and a
// host-network pod runs to completion.
func TestContainerdKubelet(t *testing.T) {
	n := newRealNode(t, "ctd-node")
	n.startKubelet(t)
	k, base, subnet := n.k, n.base, n.subnet

	eventually(t, 60*time.Second, "node ctd-node Ready", func() (bool, string) {
		o, _, _ := k.run(t, "get", "node", "ctd-node", "--no-headers")
		f := columns(o)
		return len(f) >= 2 && f[1] == "Ready", o
	})
	wantLines(t, k.ok(t, "create", "deployment", "web", "--image=busybox:e2e", "--replicas=2", "--",
		"sh", "-c", "echo ok > /tmp/index.html && exec httpd -f -p 8080 -h /tmp"), "deployment.apps/web created")
	_, pnet, _ := net.ParseCIDR(subnet)
	var ips []string
	eventually(t, 90*time.Second, "2 Running web pods with IPs of the bridge's subnet", func() (bool, string) {
		o, _, _ := k.run(t, "get", "pods", "-l", "app=web", "-o", `jsonpath={range .items[*]}{.status.phase} {.spec.nodeName} {.status.podIP}{"\n"}{end}`)
		ips = nil
		for _, l := range lines(o) {
			if f := columns(l); len(f) == 3 && f[0] == "Running" && f[1] == "ctd-node" && pnet.Contains(net.ParseIP(f[2])) {
				ips = append(ips, f[2])
			}
		}
		return len(ips) == 2 && ips[0] != ips[1], o
	})
	// (nc, not wget: Debian's static busybox wget crashes without the
	// host's NSS libraries, as in this image)
	k.ok(t, "run", "fetch", "--image=busybox:e2e", "--restart=Never", "--",
		"sh", "-c", `printf 'GET /index.html HTTP/1.0\r\n\r\n' | nc -w 5 `+ips[0]+` 8080`)
	eventually(t, 60*time.Second, "pod fetch Succeeded", func() (bool, string) {
		o, _, _ := k.run(t, "get", "pod", "fetch", "-o", `jsonpath={.status.phase} {.status.containerStatuses[0].state.terminated.exitCode}`)
		return o == "Succeeded 0", o
	})
	// kubectl logs: the API server asks the kubelet's HTTPS API.
	wantContains(t, k.ok(t, "logs", "fetch"), "HTTP/1.1 200 OK", "ok")
	// kubectl exec: through the API server and the kubelet to containerd's
	// streaming server (kubectl's WebSocket translated to SPDY by the API server).
	wantLines(t, k.ok(t, "exec", "deploy/web", "--", "cat", "/tmp/index.html"), "ok")
	// kubectl debug: an ephemeral container in the web pod's sandbox, in
	// the PID namespace of its target (ps shows the target's httpd), run
	// once, with its own log; with -i kubectl attaches to it.
	web := strings.Fields(k.ok(t, "get", "pods", "-l", "app=web", "-o", "jsonpath={.items[0].metadata.name}"))[0]
	k.ok(t, "debug", web, "--image=busybox:e2e", "--target=busybox", "-c", "dbg", "--", "ps")
	eventually(t, 60*time.Second, "the debug container terminated", func() (bool, string) {
		o, _, _ := k.run(t, "get", "pod", web, "-o", `jsonpath={.status.ephemeralContainerStatuses[?(@.name=="dbg")].state.terminated.exitCode}`)
		return o == "0", o
	})
	wantContains(t, k.ok(t, "logs", web, "-c", "dbg"), "httpd -f -p 8080")
	// --profile=sysadmin: a privileged debug container, in a sandbox that
	// was created unprivileged (the sandbox config the kubelet passes with
	// it says privileged, as upstream's).
	k.ok(t, "debug", web, "--image=busybox:e2e", "--profile=sysadmin", "-c", "admin", "--", "sh", "-c", "grep CapEff /proc/self/status")
	eventually(t, 60*time.Second, "the sysadmin debug container terminated", func() (bool, string) {
		o, _, _ := k.run(t, "get", "pod", web, "-o", `jsonpath={.status.ephemeralContainerStatuses[?(@.name=="admin")].state}`)
		return strings.Contains(o, "terminated"), o
	})
	if o := k.ok(t, "logs", web, "-c", "admin"); !strings.Contains(o, "CapEff:") || strings.Contains(o, "a80425fb") {
		t.Errorf("the sysadmin debug container's capabilities: %q, want more than the default a80425fb", o)
	}
	// -it: kubectl attaches to the debug container's terminal (script
	// gives kubectl a pty; without one containerd ends an attach at the
	// end of kubectl's stdin, output or not, as with upstream's kubelet).
	if _, err := exec.LookPath("script"); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, "script", "-qec", fmt.Sprintf("%s --kubeconfig %s debug -it %s --image=busybox:e2e --target=busybox -c dbg2 -- sh -c 'sleep 1; tty; ps'", k.bin, n.c.kubeconfig, web), "/dev/null")
		cmd.Env = k.environ()
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil || !strings.Contains(string(out), "/dev/pts/") || !strings.Contains(string(out), "httpd -f -p 8080") {
			t.Errorf("kubectl debug -it: %v\n%s", err, out)
		}
	} else {
		t.Log("no script(1): kubectl debug -it not checked")
	}
	// kubectl debug node/: a pod on the host's PID and network namespaces
	// with the node's root at /host.
	k.ok(t, "debug", "node/ctd-node", "--image=busybox:e2e", "--", "sh", "-c", "ls /host/; ps")
	eventually(t, 60*time.Second, "the node debugger pod Succeeded", func() (bool, string) {
		o, _, _ := k.run(t, "get", "pods", "-o", `jsonpath={range .items[*]}{.metadata.name} {.status.phase}{"\n"}{end}`)
		for _, l := range lines(o) {
			if f := columns(l); len(f) == 2 && strings.HasPrefix(f[0], "node-debugger-ctd-node-") && f[1] == "Succeeded" {
				wantContains(t, k.ok(t, "logs", f[0]), "etc", "usr", "containerd")
				return true, o
			}
		}
		return false, o
	})
	// A host-network pod (the sandbox keeps the host's UTS namespace: no hostname).
	k.ok(t, "run", "hostnet", "--image=busybox:e2e", "--restart=Never", `--overrides={"spec":{"hostNetwork":true}}`, "--", "true")
	eventually(t, 60*time.Second, "pod hostnet Succeeded", func() (bool, string) {
		o, _, _ := k.run(t, "get", "pod", "hostnet", "-o", `jsonpath={.status.phase} {.status.podIP}`)
		return strings.HasPrefix(o, "Succeeded "), o
	})
	logs, _ := filepath.Glob(filepath.Join(base, "pods", "default_fetch_*", "fetch", "0.log"))
	if len(logs) != 1 {
		t.Fatalf("fetch's log files: %q", logs)
	}
	if b, err := os.ReadFile(logs[0]); err != nil || !strings.Contains(string(b), "200 OK") || !strings.Contains(string(b), " stdout F ok") {
		t.Errorf("fetch's log: %q, %v", b, err)
	}
}

func tail(s string, n int) string {
	l := strings.Split(s, "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// realNode is a `skiff up --disable=kubelet` cluster and a node of real
// containers beside it: a containerd supervised by pkg/containerd (with
// the pause and busybox:e2e images imported) on a CNI bridge network of
// the test's own, and `skiff kubelet --container-runtime-endpoint`
// processes started and stopped by the test.
type realNode struct {
	name, base, subnet string
	sup                *containerd.Supervisor
	c                  *cluster
	k                  kc
	port               int

	kubelet *exec.Cmd
	done    chan error
	out     lockedBuf
}

// newRealNode skips t without containerd, runc, ctr or root.
func newRealNode(t *testing.T, name string) *realNode {
	for _, bin := range []string{"containerd", "runc", "ctr"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed (apt-get install containerd runc containernetworking-plugins): this test runs real containers", bin)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: containerd and runc need root here")
	}
	t.Parallel()
	base, err := os.MkdirTemp("", "e2ectd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })

	// The pod network: the standard bridge and host-local plugins, on a
	// bridge and subnet of this test's own.
	id := (os.Getpid() + len(name)*7919) % 100000
	bridge, subnet := fmt.Sprintf("ske%d", id), fmt.Sprintf("10.252.%d.0/24", id%250)
	network := containerd.BridgeNetwork{Name: "skiff-e2e", Bridge: bridge, Subnets: []string{subnet},
		IPAMDataDir: filepath.Join(base, "cni", "ipam"), PortMap: true}
	if err := network.Write(filepath.Join(base, "cni", "net.d", "10-e2e.conflist")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { exec.Command("ip", "link", "del", bridge).Run() })

	// containerd, stopped (with its pods) when the test ends, after the kubelet.
	sup, err := containerd.New(containerd.Config{Dir: filepath.Join(base, "containerd"), RemovePodsOnStop: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	supDone := make(chan error, 1)
	go func() { supDone <- sup.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-supDone; err != nil {
			t.Errorf("containerd: %v", err)
		}
	})
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	if err := sup.WaitReady(wctx); err != nil {
		t.Fatal(err)
	}
	busybox, err := image.BusyboxImage("", []string{"busybox:e2e"})
	if err != nil {
		t.Skip(err)
	}
	pause, err := image.PauseImage(runtime.GOARCH)
	if err != nil {
		pause = busybox
		pause.Names, pause.Entrypoint, pause.Cmd = []string{containerd.SandboxImage}, []string{"/bin/sleep", "1000000000"}, nil
	}
	archive := filepath.Join(base, "images.tar")
	f, err := os.Create(archive)
	if err != nil {
		t.Fatal(err)
	}
	if err := image.WriteDockerArchive(f, pause, busybox); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := containerd.ImportImage(ctx, sup.Socket(), archive); err != nil {
		t.Fatal(err)
	}

	c := ownCluster(t, "memory", "--disable=kubelet")
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	n := &realNode{name: name, base: base, subnet: subnet, sup: sup, c: c, k: c.k(), port: port,
		out: lockedBuf{mu: new(sync.Mutex), b: new(bytes.Buffer)}}
	t.Cleanup(func() {
		n.stopKubelet(t)
		if t.Failed() {
			n.out.mu.Lock()
			t.Logf("skiff kubelet output:\n%s", n.out.b.String())
			n.out.mu.Unlock()
			log, _ := os.ReadFile(sup.Layout().Log)
			t.Logf("containerd.log (end):\n%s", tail(string(log), 40))
		}
	})
	return n
}

// startKubelet runs `skiff kubelet` for the node (the same root and log
// directories every time, as a restarted kubelet has).
func (n *realNode) startKubelet(t *testing.T) {
	t.Helper()
	cmd := exec.Command(skiffBin, "kubelet", "--kubeconfig", n.c.kubeconfig, "--container-runtime-endpoint", n.sup.Endpoint(),
		"--port", fmt.Sprint(n.port), "--address", "127.0.0.1",
		"--hostname-override", n.name, "--pod-log-dir", filepath.Join(n.base, "pods"), "--root-dir", filepath.Join(n.base, "kubelet"))
	cmd.Stdout, cmd.Stderr = n.out, n.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n.kubelet, n.done = cmd, make(chan error, 1)
	go func() { n.done <- cmd.Wait() }()
	eventually(t, 60*time.Second, "node "+n.name+" Ready", func() (bool, string) {
		o, _, _ := n.k.run(t, "get", "node", n.name, "--no-headers")
		f := columns(o)
		return len(f) >= 2 && f[1] == "Ready", o
	})
}

// stopKubelet stops the kubelet with SIGINT (its containers keep running,
// as upstream's), requiring a clean exit.
func (n *realNode) stopKubelet(t *testing.T) {
	t.Helper()
	if n.kubelet == nil {
		return
	}
	n.kubelet.Process.Signal(syscall.SIGINT)
	select {
	case err := <-n.done:
		if err != nil {
			t.Errorf("skiff kubelet exited with %v after SIGINT", err)
		}
	case <-time.After(60 * time.Second):
		n.kubelet.Process.Kill()
		<-n.done
		t.Errorf("skiff kubelet did not exit within 60s of SIGINT")
	}
	n.kubelet = nil
}
