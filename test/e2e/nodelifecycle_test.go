package e2e

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// TestNodeLifecycle: the node lifecycle controller of `skiff up` (a
// private cluster: its Node would reach the shared cluster's DaemonSets).
// A Node created with kubectl carries admission's not-ready:NoSchedule
// taint; once its status says Ready the taint goes, while a taint of its
// own stays; `kubectl cordon` adds unschedulable:NoSchedule and `uncordon`
// takes it off; a Ready=False status brings not-ready back.
func TestNodeLifecycle(t *testing.T) {
	t.Parallel()
	c := ownCluster(t, "memory", "--disable=kubelet") // only the test's nodes
	k := c.k()
	k.withStdin(`apiVersion: v1
kind: Node
metadata: {name: worker-1}
spec:
  taints: [{key: example.com/dedicated, value: db, effect: NoSchedule}]
`).ok(t, "apply", "-f", "-")
	taints := func() string {
		out, _, _ := k.run(t, "get", "node", "worker-1", "-o", `jsonpath={range .spec.taints[*]}{.key}:{.effect} {end}`)
		return out
	}
	wantTaints := func(what, want string) {
		t.Helper()
		eventually(t, 30*time.Second, what, func() (bool, string) {
			out := taints()
			return out == want, out
		})
	}
	status := func(ready string) {
		t.Helper()
		now := time.Now().UTC().Format(time.RFC3339)
		k.ok(t, "patch", "node", "worker-1", "--subresource=status", "--type=merge", "-p",
			`{"status":{"conditions":[{"type":"Ready","status":"`+ready+`","reason":"KubeletReady","message":"kubelet is posting ready status","lastHeartbeatTime":"`+now+`","lastTransitionTime":"`+now+`"}]}}`)
	}
	// The admission plugin's taint is there before any status; a status
	// of Ready=False keeps it.
	status("False")
	wantTaints("not-ready with Ready=False", "example.com/dedicated:NoSchedule node.kubernetes.io/not-ready:NoSchedule ")
	status("True")
	wantTaints("the not-ready taint gone once Ready", "example.com/dedicated:NoSchedule ")

	wantLines(t, k.ok(t, "cordon", "worker-1"), "node/worker-1 cordoned")
	wantTaints("unschedulable after cordon", "example.com/dedicated:NoSchedule node.kubernetes.io/unschedulable:NoSchedule ")
	wantLines(t, k.ok(t, "uncordon", "worker-1"), "node/worker-1 uncordoned")
	wantTaints("unschedulable gone after uncordon", "example.com/dedicated:NoSchedule ")

	status("False")
	wantTaints("not-ready back with Ready=False", "example.com/dedicated:NoSchedule node.kubernetes.io/not-ready:NoSchedule ")

	// Taint eviction: a NoExecute taint evicts the pods on the node that
	// do not tolerate it, and only those.
	k.withStdin("apiVersion: v1\nkind: Node\nmetadata: {name: worker-2}\n").ok(t, "apply", "-f", "-")
	stop := playNodeKubelets(t, k, "worker-2")
	defer stop()
	const ns = "e2e-taint-eviction"
	createNS(t, c, ns)
	k.ok(t, "-n", ns, "run", "plain", "--image=busybox", "--overrides", `{"spec":{"nodeName":"worker-2"}}`)
	k.ok(t, "-n", ns, "run", "tolerant", "--image=busybox", "--overrides",
		`{"spec":{"nodeName":"worker-2","tolerations":[{"key":"example.com/drain","operator":"Exists","effect":"NoExecute"}]}}`)
	wantLines(t, k.ok(t, "taint", "nodes", "worker-2", "example.com/drain=now:NoExecute"), "node/worker-2 tainted")
	eventually(t, 30*time.Second, "the pod without the toleration evicted", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "pods", "-o",
			`jsonpath={range .items[*]}{.metadata.name}={.metadata.deletionTimestamp!=""}{range .status.conditions[?(@.type=="DisruptionTarget")]}/{.reason}{end} {end}`)
		return strings.Contains(out, "/DeletionByTaintManager") && !strings.Contains(out, "tolerant=true/"), out
	})
	if out := jsonpath(t, k, "{.metadata.deletionTimestamp}", "-n", ns, "get", "pod", "tolerant"); out != "" {
		t.Errorf("the tolerant pod is being deleted (%s)", out)
	}
	eventually(t, 30*time.Second, "the TaintManagerEviction event", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "events", "--field-selector=involvedObject.name=plain", "-o", `jsonpath={range .items[*]}{.reason}: {.message}{"\n"}{end}`)
		return strings.Contains(out, "TaintManagerEviction: Marking for deletion Pod "+ns+"/plain"), out
	})
}

// playNodeKubelets posts Ready=True with a fresh heartbeat on the nodes
// now and every 2s until stopped (skiff has no kubelet yet), so that the
// node lifecycle controller keeps them Ready: a node that never posts its
// status is marked Unknown and tainted unreachable after 60s.
func playNodeKubelets(t *testing.T, k kc, nodes ...string) (stop func()) {
	beat := func() {
		now := time.Now().UTC().Format(time.RFC3339)
		for _, n := range nodes {
			_, _, _ = k.run(t, "patch", "node", n, "--subresource=status", "--type=merge", "-p",
				`{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"kubelet is posting ready status","lastHeartbeatTime":"`+now+`","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`)
		}
	}
	beat()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(2 * time.Second):
			}
			beat()
		}
	})
	return func() { close(done); wg.Wait() }
}
