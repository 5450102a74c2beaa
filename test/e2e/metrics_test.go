package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMetricsAndHPA: on a fresh `skiff up` (its node on the simulated
// runtime, whose containers use what the pod annotation
// sim.skiff.sh/cpu-usage says), skiff's metrics-server serves
// metrics.k8s.io: `kubectl top` shows the node and the pods, and the HPA
// controller scales a Deployment on CPU.
func TestMetricsAndHPA(t *testing.T) {
	t.Parallel()
	c := ownCluster(t, "memory", "--container-runtime=sim")
	k := c.k()
	eventually(t, 60*time.Second, "the node Ready", func() (bool, string) {
		o, _, _ := k.run(t, "get", "nodes", "--no-headers")
		f := columns(o)
		return len(f) >= 2 && f[1] == "Ready", o
	})
	k.withStdin(`apiVersion: apps/v1
kind: Deployment
metadata: {name: busy}
spec:
  replicas: 1
  selector: {matchLabels: {app: busy}}
  template:
    metadata:
      labels: {app: busy}
      annotations: {sim.skiff.sh/cpu-usage: 200m, sim.skiff.sh/memory-usage: 64Mi}
    spec:
      containers:
      - name: app
        image: busybox:1.35.0
        resources: {requests: {cpu: 100m}}
`).ok(t, "apply", "-f", "-")
	k.ok(t, "autoscale", "deployment", "busy", "--cpu-percent=50", "--min=1", "--max=4")

	// Two scrapes 15 s apart give a rate: 200m of CPU, 64Mi.
	eventually(t, 90*time.Second, "kubectl top pods", func() (bool, string) {
		o, e, err := k.run(t, "top", "pods", "-l", "app=busy", "--no-headers")
		for _, l := range lines(o) {
			if f := columns(l); len(f) == 3 && f[1] == "200m" && f[2] == "64Mi" {
				return err == nil, o
			}
		}
		return false, o + e
	})
	eventually(t, 30*time.Second, "kubectl top nodes", func() (bool, string) {
		o, e, err := k.run(t, "top", "nodes", "--no-headers")
		f := columns(o)
		return err == nil && len(f) == 5 && strings.HasSuffix(f[1], "m"), o + e
	})
	// 200% of the request against a 50% target: the HPA scales to its max.
	eventually(t, 120*time.Second, "the HPA scales busy to 4", func() (bool, string) {
		o, _, _ := k.run(t, "get", "deployment", "busy", "-o", "jsonpath={.spec.replicas}")
		n, _ := strconv.Atoi(o)
		return n == 4, o
	})
	wantContains(t, k.ok(t, "describe", "hpa", "busy"), "SuccessfulRescale", "New size: 4; reason: cpu resource utilization (percentage of request) above target")
}
