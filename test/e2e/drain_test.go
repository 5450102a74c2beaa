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

// TestDrain: `kubectl drain` on simulated nodes evicts through the
// eviction subresource and respects PodDisruptionBudgets: a budget that
// allows no disruption holds the drain with upstream's message, one that
// allows it lets the drain finish as the replacements run on the other
// node; the drained node stays cordoned until `kubectl uncordon`.
func TestDrain(t *testing.T) {
	t.Parallel()
	c := ownCluster(t, "memory", "--disable=kubelet")
	k := c.k()
	kubelet := exec.Command(skiffBin, "kubelet", "--kubeconfig", c.kubeconfig, "--runtime=sim", "--nodes=2", "--sim-stop-latency=200ms")
	out := lockedBuf{mu: new(sync.Mutex), b: new(bytes.Buffer)}
	kubelet.Stdout, kubelet.Stderr = out, out
	if err := kubelet.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- kubelet.Wait() }()
	t.Cleanup(func() {
		kubelet.Process.Signal(syscall.SIGINT)
		if err := <-done; err != nil {
			t.Errorf("skiff kubelet: %v", err)
		}
	})
	eventually(t, 60*time.Second, "2 Ready simulated nodes", func() (bool, string) {
		o, _, _ := k.run(t, "get", "nodes", "--no-headers")
		ready := 0
		for _, l := range lines(o) {
			if f := columns(l); len(f) >= 2 && f[1] == "Ready" {
				ready++
			}
		}
		return ready == 2, o
	})
	// Both replicas on sim-node-0 (the other node cordoned meanwhile).
	k.ok(t, "cordon", "sim-node-1")
	k.ok(t, "create", "deployment", "web", "--image=busybox:1.35.0", "--replicas=2")
	eventually(t, 60*time.Second, "2 web pods Running on sim-node-0", func() (bool, string) {
		o, _, _ := k.run(t, "get", "pods", "-l", "app=web", "-o", `jsonpath={range .items[*]}{.status.phase}/{.spec.nodeName} {end}`)
		return o == "Running/sim-node-0 Running/sim-node-0 ", o
	})
	k.ok(t, "uncordon", "sim-node-1")

	// A budget that allows no disruption holds the drain.
	k.ok(t, "create", "poddisruptionbudget", "web", "--selector=app=web", "--min-available=2")
	eventually(t, 30*time.Second, "the budget observed", func() (bool, string) {
		o, _, _ := k.run(t, "get", "pdb", "web", "-o", "jsonpath={.status.currentHealthy}/{.status.disruptionsAllowed}")
		return o == "2/0", o
	})
	_, errOut, err := k.withTimeout(60*time.Second).run(t, "drain", "sim-node-0", "--timeout=6s")
	if err == nil {
		t.Fatal("kubectl drain succeeded against a budget that allows no disruption")
	}
	wantContains(t, errOut, "Cannot evict pod as it would violate the pod's disruption budget.")
	wantContains(t, k.ok(t, "get", "node", "sim-node-0", "--no-headers"), "SchedulingDisabled")

	// One allowed disruption at a time: the drain evicts a pod, waits for
	// its replacement on sim-node-1, then evicts the other.
	k.ok(t, "patch", "pdb", "web", "--type=merge", "-p", `{"spec":{"minAvailable":1}}`)
	o := k.withTimeout(120*time.Second).ok(t, "drain", "sim-node-0", "--timeout=100s")
	wantContains(t, o, "evicted", "node/sim-node-0 drained")
	eventually(t, 60*time.Second, "both web pods on sim-node-1", func() (bool, string) {
		o, _, _ := k.run(t, "get", "pods", "-l", "app=web", "-o", `jsonpath={range .items[*]}{.status.phase}/{.spec.nodeName} {end}`)
		return o == "Running/sim-node-1 Running/sim-node-1 ", o
	})
	k.ok(t, "uncordon", "sim-node-0")
	if strings.Contains(k.ok(t, "get", "node", "sim-node-0", "--no-headers"), "SchedulingDisabled") {
		t.Error("sim-node-0 still cordoned after uncordon")
	}
}
