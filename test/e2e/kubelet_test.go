package e2e

import (
	"bytes"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestSimulatedKubelets: `skiff kubelet --runtime=sim --nodes=3` against
// `skiff up` (whose own kubelet slot is left out): three Ready nodes, a
// Deployment's six pods Running with pod IPs on the three, a Job runs to
// Complete, and `kubectl delete pod` ends with the pod gone (the kubelet
// stops its containers and deletes it with grace 0).
func TestSimulatedKubelets(t *testing.T) {
	t.Parallel()
	c := ownCluster(t, "memory", "--disable=kubelet")
	k := c.k()
	kubelet := exec.Command(skiffBin, "kubelet", "--kubeconfig", c.kubeconfig, "--runtime=sim", "--nodes=3",
		"--sim-run-duration=1s", "--sim-stop-latency=500ms")
	out := lockedBuf{mu: new(sync.Mutex), b: new(bytes.Buffer)}
	kubelet.Stdout, kubelet.Stderr = out, out
	if err := kubelet.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- kubelet.Wait() }()
	t.Cleanup(func() {
		kubelet.Process.Signal(syscall.SIGINT)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("skiff kubelet exited with %v after SIGINT", err)
			}
		case <-time.After(30 * time.Second):
			kubelet.Process.Kill()
			t.Errorf("skiff kubelet did not exit within 30s of SIGINT")
		}
		if t.Failed() {
			out.mu.Lock()
			t.Logf("skiff kubelet output:\n%s", out.b.String())
			out.mu.Unlock()
		}
	})

	eventually(t, 60*time.Second, "3 Ready simulated nodes", func() (bool, string) {
		o, _, _ := k.run(t, "get", "nodes", "-l", "skiff.sh/runtime=sim", "--no-headers")
		ready := 0
		for _, l := range lines(o) {
			if f := columns(l); len(f) >= 2 && f[1] == "Ready" {
				ready++
			}
		}
		return ready == 3, o
	})
	// --disable=kubelet: skiff up's own node is not there, only the three.
	wantEqual(t, "nodes", strings.Join(strings.Fields(k.ok(t, "get", "nodes", "-o", "jsonpath={.items[*].metadata.name}")), " "), "sim-node-0 sim-node-1 sim-node-2")
	wantLines(t, k.ok(t, "create", "deployment", "web", "--image=registry.k8s.io/pause:3.10", "--replicas=6"), "deployment.apps/web created")
	eventually(t, 90*time.Second, "6 Running pods with IPs on the 3 nodes", func() (bool, string) {
		o, _, _ := k.run(t, "get", "pods", "-l", "app=web", "-o", `jsonpath={range .items[*]}{.status.phase} {.spec.nodeName} {.status.podIP}{"\n"}{end}`)
		running, nodes := 0, map[string]bool{}
		for _, l := range lines(o) {
			if f := columns(l); len(f) == 3 && f[0] == "Running" {
				running++
				nodes[f[1]] = true
			}
		}
		return running == 6 && len(nodes) == 3, o
	})
	eventually(t, 30*time.Second, "the kubelets' Started events", func() (bool, string) {
		o, _, _ := k.run(t, "get", "events", "--field-selector", "reason=Started", "-o", "jsonpath={range .items[*]}{.source.component} {.message}{\"\\n\"}{end}")
		return strings.Contains(o, "kubelet Started container pause"), o
	})
	eventually(t, 60*time.Second, "the deployment available", func() (bool, string) {
		o, _, _ := k.run(t, "get", "deployment", "web", "-o", "jsonpath={.status.availableReplicas}")
		return o == "6", o
	})

	k.ok(t, "create", "job", "once", "--image=busybox", "--", "true")
	eventually(t, 60*time.Second, "the job Complete", func() (bool, string) {
		o, _, _ := k.run(t, "get", "job", "once", "-o", `jsonpath={.status.succeeded} {.status.conditions[?(@.type=="Complete")].status}`)
		return o == "1 True", o
	})

	pod := strings.TrimPrefix(k.ok(t, "get", "pods", "-l", "app=web", "-o", "name"), "pod/")
	pod = strings.TrimSpace(lines(pod)[0])
	k.withTimeout(60*time.Second).ok(t, "delete", "pod", pod)
	if _, stderr, err := k.run(t, "get", "pod", pod); err == nil || !strings.Contains(stderr, "NotFound") {
		t.Errorf("pod %s still there after kubectl delete: %v %s", pod, err, stderr)
	}
}
