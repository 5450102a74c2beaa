package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestMiscControllers: the ResourceQuota and horizontal pod autoscaler
// controllers of `skiff up`, driven with kubectl on the shared cluster.
func TestMiscControllers(t *testing.T) {
	t.Parallel()
	c := shared(t)
	k := c.k()
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, c *cluster, k kc)
	}{
		{"quota", kubectlQuota},
		{"autoscale", kubectlAutoscale},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, c, k)
		})
	}
}

// kubectlQuota: `kubectl create quota`, then `kubectl describe quota`
// shows what the namespace uses, and follows a new pod and config map.
func kubectlQuota(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-quota"
	createNS(t, c, ns)
	k.ok(t, "-n", ns, "create", "configmap", "settings", "--from-literal=a=b")
	k.ok(t, "-n", ns, "run", "one", "--image=nginx", "--overrides", `{"spec":{"containers":[{"name":"one","image":"nginx","resources":{"requests":{"cpu":"100m","memory":"32Mi"}}}]}}`)
	wantLines(t, k.ok(t, "-n", ns, "create", "quota", "team", "--hard=pods=5,requests.cpu=1,requests.memory=1Gi,configmaps=10,services=2,count/deployments.apps=3"),
		"resourcequota/team created")
	describe := func(want ...string) {
		t.Helper()
		eventually(t, 30*time.Second, "describe quota shows "+strings.Join(want, ", "), func() (bool, string) {
			out, _, err := k.run(t, "-n", ns, "describe", "quota", "team")
			if err != nil {
				return false, out
			}
			for _, w := range want {
				if !strings.Contains(strings.Join(strings.Fields(out), " "), w) {
					return false, out
				}
			}
			return true, out
		})
	}
	// configmaps: ours and kube-root-ca.crt.
	describe("Name: team", "Namespace: "+ns, "Resource Used Hard",
		"configmaps 2 10", "count/deployments.apps 0 3", "pods 1 5", "requests.cpu 100m 1", "requests.memory 32Mi 1Gi", "services 0 2")
	k.ok(t, "-n", ns, "create", "deployment", "web", "--image=nginx", "--replicas=0")
	k.ok(t, "-n", ns, "create", "service", "clusterip", "web", "--tcp=80:80")
	k.ok(t, "-n", ns, "delete", "pod", "one", "--grace-period=0", "--force")
	describe("count/deployments.apps 1 3", "pods 0 5", "requests.cpu 0 1", "services 1 2")
	// LIMIT is empty: no limits.* resource.
	wantMatch(t, k.ok(t, "-n", ns, "get", "quota", "team"), `NAME\s+REQUEST\s+LIMIT\s+AGE`,
		`team\s+configmaps: 2/10, count/deployments\.apps: 1/3, pods: 0/5, requests\.cpu: 0/1, requests\.memory: 0/1Gi, services: 1/2\s+\S+\n`)
}

// kubectlAutoscale: `kubectl autoscale deployment` makes an HPA whose
// conditions say plainly that there are no metrics (no metrics.k8s.io),
// as upstream's do without a metrics server.
func kubectlAutoscale(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-autoscale"
	createNS(t, c, ns)
	k.ok(t, "-n", ns, "create", "deployment", "web", "--image=nginx", "--replicas=2")
	wantLines(t, k.ok(t, "-n", ns, "autoscale", "deployment", "web", "--cpu-percent=50", "--min=1", "--max=4"),
		"horizontalpodautoscaler.autoscaling/web autoscaled")
	const why = "failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)"
	// The first sync comes one sync period (15s) after the HPA, as upstream.
	eventually(t, 60*time.Second, "the HPA's conditions", func() (bool, string) {
		out, _, err := k.run(t, "-n", ns, "describe", "hpa", "web")
		flat := strings.Join(strings.Fields(out), " ")
		return err == nil && strings.Contains(flat, "ScalingActive False FailedGetResourceMetric the HPA was unable to compute the replica count: "+why), out
	})
	out := strings.Join(strings.Fields(k.ok(t, "-n", ns, "describe", "hpa", "web")), " ")
	wantContains(t, out,
		"Reference: Deployment/web",
		"resource cpu on pods (as a percentage of request): <unknown> / 50%",
		"Min replicas: 1", "Max replicas: 4",
		"Deployment pods: 2 current / 0 desired",
		"AbleToScale True SucceededGetScale the HPA controller was able to get the target's current scale",
		"Warning FailedGetResourceMetric",
		"Warning FailedComputeMetricsReplicas")
	// Nothing was scaled.
	wantEqual(t, "the deployment's replicas", jsonpath(t, k, "{.spec.replicas}", "-n", ns, "get", "deployment", "web"), "2")
}
