package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestScheduler: the scheduler of `skiff up` (a private cluster, so that
// its Nodes take no pod of the shared cluster's tests) places a
// Deployment's pods on the nodes that fit, and tells why a pod fits
// nowhere: Pending, PodScheduled=False and a FailedScheduling event with
// upstream's "0/N nodes are available: ..." message, shown by kubectl
// describe.
func TestScheduler(t *testing.T) {
	t.Parallel()
	c := ownCluster(t, "memory", "--disable=kubelet") // exactly the two nodes of the test
	k := c.k()
	for _, n := range []string{"worker-a", "worker-b"} {
		k.withStdin("apiVersion: v1\nkind: Node\nmetadata: {name: "+n+", labels: {pool: e2e}}\n").ok(t, "apply", "-f", "-")
		now := time.Now().UTC().Format(time.RFC3339)
		k.ok(t, "patch", "node", n, "--subresource=status", "--type=merge", "-p",
			`{"status":{"capacity":{"cpu":"2","memory":"4Gi","pods":"10"},"allocatable":{"cpu":"2","memory":"4Gi","pods":"10"},`+
				`"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"kubelet is posting ready status","lastHeartbeatTime":"`+now+`","lastTransitionTime":"`+now+`"}]}}`)
	}
	// A new Node carries the not-ready taint until the node-lifecycle
	// controller sees its Ready status (as upstream's); wait for both to
	// lose it, or every pod goes to the first one.
	eventually(t, 60*time.Second, "the not-ready taints removed", func() (bool, string) {
		out, _, _ := k.run(t, "get", "nodes", "worker-a", "worker-b", "-o", `jsonpath={range .items[*]}{.metadata.name}={.spec.taints} {end}`)
		return strings.Contains(out, "worker-a= ") && strings.Contains(out, "worker-b= "), out
	})
	wantLines(t, k.ok(t, "create", "deployment", "web", "--image=registry.k8s.io/pause:3.10", "--replicas=4"), "deployment.apps/web created")
	eventually(t, 60*time.Second, "the deployment's 4 pods bound to the two nodes", func() (bool, string) {
		out, _, _ := k.run(t, "get", "pods", "-l", "app=web", "-o", `jsonpath={range .items[*]}{.spec.nodeName} {end}`)
		nodes := strings.Fields(out)
		a, b := 0, 0
		for _, n := range nodes {
			switch n {
			case "worker-a":
				a++
			case "worker-b":
				b++
			}
		}
		// The default scoring spreads them (LeastAllocated, BalancedAllocation,
		// the system default topology spread).
		return a == 2 && b == 2, out
	})
	out := k.ok(t, "get", "events", "--field-selector", "reason=Scheduled", "-o", "jsonpath={range .items[*]}{.message}{\"\\n\"}{end}")
	if !strings.Contains(out, "Successfully assigned default/web-") || !strings.Contains(out, " to worker-") {
		t.Errorf("Scheduled events: %q", out)
	}

	k.ok(t, "run", "big", "--image=registry.k8s.io/pause:3.10", "--overrides",
		`{"spec":{"containers":[{"name":"big","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"cpu":"3"}}}]}}`)
	const why = "0/2 nodes are available: 2 Insufficient cpu."
	eventually(t, 60*time.Second, "the unschedulable pod's condition and event", func() (bool, string) {
		out, _, _ := k.run(t, "describe", "pod", "big")
		return strings.Contains(out, "PodScheduled   False") && strings.Contains(out, "FailedScheduling") && strings.Contains(out, why), out
	})
	wantLines(t, k.ok(t, "get", "pod", "big", "-o", "jsonpath={.status.phase} {.status.conditions[0].reason}"), "Pending Unschedulable")

	// A third node big enough: the waiting pod is retried on the node
	// event and bound there.
	k.withStdin("apiVersion: v1\nkind: Node\nmetadata: {name: worker-big}\n").ok(t, "apply", "-f", "-")
	now := time.Now().UTC().Format(time.RFC3339)
	k.ok(t, "patch", "node", "worker-big", "--subresource=status", "--type=merge", "-p",
		`{"status":{"capacity":{"cpu":"8","memory":"8Gi","pods":"10"},"allocatable":{"cpu":"8","memory":"8Gi","pods":"10"},`+
			`"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"kubelet is posting ready status","lastHeartbeatTime":"`+now+`","lastTransitionTime":"`+now+`"}]}}`)
	eventually(t, 60*time.Second, "the big pod bound to worker-big", func() (bool, string) {
		out, _, _ := k.run(t, "get", "pod", "big", "-o", "jsonpath={.spec.nodeName}")
		return out == "worker-big", out
	})
}
