package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRealNodeWorkloads: real kubectl against real containers, through
// the API server and the kubelet's HTTPS API, as the checklist
// has it: a Deployment's pod Running behind a readiness probe; `kubectl
// logs` with -c, --tail, -f and --previous; `kubectl exec` with and
// without -it; `kubectl port-forward`; a failing liveness probe restarts
// its container; a Job runs to Complete; `kubectl delete pod` ends a pod
// within its grace period; `kubectl top`; a restarted kubelet keeps the
// running containers; a stopped kubelet makes the node NotReady and its
// pods are evicted after their toleration.
func TestRealNodeWorkloads(t *testing.T) {
	n := newRealNode(t, "real-node")
	n.startKubelet(t)
	k := n.k

	k.withStdin(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      tolerations:
      - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 5}
      - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 5}
      containers:
      - name: httpd
        image: busybox:e2e
        command: [sh, -c, 'echo serving; echo ok > /tmp/index.html; exec httpd -f -p 8080 -h /tmp']
        readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: duo}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: a, image: busybox:e2e, command: [sh, -c, 'echo I am a; exec sleep 100000']}
  - {name: b, image: busybox:e2e, command: [sh, -c, 'for i in 1 2 3 4 5; do echo b line $i; done; exec sleep 100000']}
---
apiVersion: v1
kind: Pod
metadata: {name: flaky}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: flaky
    image: busybox:e2e
    command: [sh, -c, 'echo started at $(cat /proc/uptime); exec sleep 100000']
    livenessProbe: {httpGet: {path: /healthz, port: 8081}, periodSeconds: 2, failureThreshold: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: slow}
spec:
  terminationGracePeriodSeconds: 3
  containers:
  - {name: slow, image: busybox:e2e, command: [sleep, '100000']}
`).ok(t, "apply", "-f", "-")
	k.ok(t, "create", "job", "done", "--image=busybox:e2e", "--", "sh", "-c", "echo finished")

	var web string
	eventually(t, 120*time.Second, "the web pod Ready", func() (bool, string) {
		o, _, _ := k.run(t, "get", "pods", "-l", "app=web", "-o", `jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}`)
		f := columns(o)
		if len(f) == 2 && f[1] == "True" {
			web = f[0]
			return true, o
		}
		return false, o
	})
	eventually(t, 120*time.Second, "duo and slow Running", func() (bool, string) {
		o, _, _ := k.run(t, "get", "pods", "duo", "slow", "-o", `jsonpath={range .items[*]}{.status.phase} {end}`)
		return o == "Running Running ", o
	})

	// Logs: -c, --tail, -f (which ends when the pod is deleted or here by
	// its timeout: only the lines already there are checked).
	wantLines(t, k.ok(t, "logs", "duo", "-c", "a"), "I am a")
	wantLines(t, k.ok(t, "logs", "duo", "-c", "b", "--tail=2"), "b line 4", "b line 5")
	follow := k.start(t, "logs", "-f", "duo", "-c", "b")
	eventually(t, 30*time.Second, "kubectl logs -f output", func() (bool, string) {
		o, _ := follow.output()
		return strings.Contains(o, "b line 5"), o
	})
	wantContains(t, k.ok(t, "logs", web), "serving")

	// Exec without and with a terminal (script gives kubectl a pty).
	// kubectl speaks WebSocket (v5.channel.k8s.io) and the API server
	// translates it to SPDY toward the kubelet: no fallback to SPDY.
	o, e, err := k.withEnv("KUBECTL_REMOTE_COMMAND_WEBSOCKETS=true").run(t, "exec", "-v=4", web, "--", "cat", "/tmp/index.html")
	if err != nil || strings.TrimSpace(o) != "ok" || strings.Contains(e, "fallback") {
		t.Errorf("kubectl exec over WebSocket: %v, stdout %q, stderr:\n%s", err, o, e)
	}
	_, _, err = k.run(t, "exec", web, "--", "sh", "-c", "exit 3")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Errorf("kubectl exec of 'exit 3': %v, want exit status 3", err)
	}
	if _, err := exec.LookPath("script"); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, "script", "-qec", fmt.Sprintf("%s --kubeconfig %s exec -it %s -- sh -c 'tty; echo rows $(stty size)'", k.bin, n.c.kubeconfig, web), "/dev/null")
		cmd.Env = k.environ()
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil || !strings.Contains(string(out), "/dev/pts/") {
			t.Errorf("kubectl exec -it: %v\n%s", err, out)
		}
	} else {
		t.Log("no script(1): kubectl exec -it not checked")
	}

	// Port-forward to the pod's 8080.
	local, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	pf := k.withTimeout(2*time.Minute).withEnv("KUBECTL_PORT_FORWARD_WEBSOCKETS=true").start(t, "port-forward", "-v=4", "pod/"+web, fmt.Sprintf("%d:8080", local))
	eventually(t, 30*time.Second, "a page through kubectl port-forward", func() (bool, string) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/index.html", local))
		if err != nil {
			o, e := pf.output()
			return false, err.Error() + "\n" + o + e
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == 200 && strings.TrimSpace(string(b)) == "ok", string(b)
	})
	// SPDY tunneled over a WebSocket, without falling back to SPDY.
	if o, e := pf.output(); strings.Contains(o+e, "fallback") {
		t.Errorf("kubectl port-forward fell back to SPDY:\n%s%s", o, e)
	}
	pf.cancel()

	// The Job completes.
	k.withTimeout(90*time.Second).ok(t, "wait", "--for=condition=complete", "job/done", "--timeout=80s")
	wantContains(t, k.ok(t, "logs", "job/done"), "finished")

	// A failing liveness probe restarts flaky; --previous shows the
	// first container's output.
	eventually(t, 90*time.Second, "flaky restarted by its liveness probe", func() (bool, string) {
		o, _, _ := k.run(t, "get", "pod", "flaky", "-o", `jsonpath={.status.containerStatuses[0].restartCount}`)
		return o != "" && o != "0", o
	})
	wantContains(t, k.ok(t, "logs", "flaky", "--previous"), "started at")
	wantContains(t, k.ok(t, "get", "events", "--field-selector", "involvedObject.name=flaky"),
		"Liveness probe failed", "Container flaky failed liveness probe, will be restarted")

	// Delete ends slow (sleep as PID 1 ignores SIGTERM) once its 3 s grace
	// period is over.
	began := time.Now()
	k.withTimeout(60*time.Second).ok(t, "delete", "pod", "slow")
	if took := time.Since(began); took > 30*time.Second {
		t.Errorf("kubectl delete pod slow took %v with a grace period of 3s", took)
	}

	// kubectl top: the metrics-server scrapes the kubelet every 15 s and
	// needs two samples.
	eventually(t, 120*time.Second, "kubectl top pod", func() (bool, string) {
		o, e, err := k.run(t, "top", "pod", web, "--no-headers")
		f := columns(o)
		if err == nil && len(f) == 3 && strings.HasSuffix(f[1], "m") && strings.HasSuffix(f[2], "Mi") {
			return true, o
		}
		raw, _, _ := k.run(t, "get", "--raw", "/api/v1/nodes/"+n.name+"/proxy/metrics/resource")
		return false, o + e + "\nthe kubelet's resource metrics:\n" + raw
	})
	eventually(t, 60*time.Second, "kubectl top node", func() (bool, string) {
		o, e, err := k.run(t, "top", "node", n.name, "--no-headers")
		return err == nil && len(columns(o)) == 5, o + e
	})

	// A restarted kubelet keeps the running containers.
	cid := func() string {
		return k.ok(t, "get", "pod", web, "-o", `jsonpath={.status.containerStatuses[0].containerID} {.status.containerStatuses[0].restartCount}`)
	}
	before := cid()
	n.stopKubelet(t)
	n.startKubelet(t)
	eventually(t, 30*time.Second, "the web pod Ready again after the kubelet's restart", func() (bool, string) {
		o, _, _ := k.run(t, "get", "pod", web, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
		return o == "True", o
	})
	if after := cid(); after != before {
		t.Errorf("container after the kubelet's restart: %q, before: %q", after, before)
	}

	// A stopped kubelet: the node goes NotReady after the node monitor
	// grace period (50 s) and its pods are evicted after their 5 s
	// toleration of the unreachable taint. A second, simulated node stays
	// Ready: with every node down the node lifecycle controller stops
	// evicting (upstream's full-disruption mode).
	sim := exec.Command(skiffBin, "kubelet", "--runtime=sim", "--kubeconfig", n.c.kubeconfig, "--hostname-override", "sim-other", "--port", "0")
	var simOut strings.Builder
	sim.Stdout, sim.Stderr = &simOut, &simOut
	if err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	simDone := make(chan error, 1)
	go func() { simDone <- sim.Wait() }()
	t.Cleanup(func() {
		sim.Process.Signal(syscall.SIGINT)
		if err := <-simDone; err != nil {
			t.Errorf("the simulated node: %v\n%s", err, simOut.String())
		}
	})
	eventually(t, 60*time.Second, "node sim-other Ready", func() (bool, string) {
		o, _, _ := k.run(t, "get", "node", "sim-other", "--no-headers")
		f := columns(o)
		return len(f) >= 2 && f[1] == "Ready", o
	})
	n.stopKubelet(t)
	eventually(t, 120*time.Second, "node NotReady", func() (bool, string) {
		o, _, _ := k.run(t, "get", "node", n.name, "--no-headers")
		f := columns(o)
		return len(f) >= 2 && f[1] == "NotReady", o
	})
	eventually(t, 60*time.Second, "the web pod evicted", func() (bool, string) {
		o, _, _ := k.run(t, "get", "pod", web, "-o", `jsonpath={.metadata.deletionTimestamp} {.status.conditions[?(@.type=="DisruptionTarget")].reason}`)
		return strings.HasSuffix(o, " DeletionByTaintManager") && len(o) > len(" DeletionByTaintManager"), o
	})
	// Back, the kubelet ends the evicted pod.
	n.startKubelet(t)
	eventually(t, 60*time.Second, "the evicted pod gone", func() (bool, string) {
		_, e, err := k.run(t, "get", "pod", web)
		return err != nil && strings.Contains(e, "NotFound"), e
	})
}
