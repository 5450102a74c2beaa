package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The endpoints, endpointslice and disruption controllers in `skiff up`: a
// Deployment exposed by `kubectl expose` gets Endpoints and EndpointSlices
// with the IPs of its pods once they are marked Ready with IPs through
// the status API (there is no kubelet).
func kubectlServiceEndpoints(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-endpoints"
	createNS(t, c, ns)
	k.ok(t, "-n", ns, "create", "deployment", "web", "--image=nginx:1.25", "--replicas=2", "--port=8080")
	wantLines(t, k.ok(t, "-n", ns, "expose", "deployment", "web", "--port=80", "--target-port=8080"), "service/web exposed")
	var pods []string
	eventually(t, 30*time.Second, "two pods", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "pods", "-o", `jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}`)
		pods = strings.Fields(out)
		return len(pods) == 2, out
	})
	// Pods without IPs: an Endpoints object with no addresses.
	eventually(t, 30*time.Second, "empty Endpoints", func() (bool, string) {
		out, _, err := k.run(t, "-n", ns, "get", "endpoints", "web", "--no-headers")
		return err == nil && strings.Contains(out, "<none>"), out
	})
	for i, p := range pods {
		ip := fmt.Sprintf("10.244.7.%d", i+1)
		k.ok(t, "-n", ns, "patch", "pod", p, "--subresource=status", "--type=merge", "-p",
			`{"status":{"phase":"Running","podIP":"`+ip+`","podIPs":[{"ip":"`+ip+`"}],"conditions":[{"type":"Ready","status":"True"}]}}`)
	}
	eventually(t, 30*time.Second, "the pods' addresses in Endpoints", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "endpoints", "web")
		return strings.Contains(out, "10.244.7.1:8080,10.244.7.2:8080"), out
	})
	wantTable(t, k.ok(t, "-n", ns, "get", "endpoints", "web"), []string{"NAME", "ENDPOINTS", "AGE"},
		[]string{"web", `10\.244\.7\.1:8080,10\.244\.7\.2:8080`, age})
	eventually(t, 30*time.Second, "the pods' addresses in the EndpointSlice", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "endpointslices", "-l", "kubernetes.io/service-name=web")
		return strings.Contains(out, "10.244.7.1,10.244.7.2"), out
	})
	wantTable(t, k.ok(t, "-n", ns, "get", "endpointslices", "-l", "kubernetes.io/service-name=web"),
		[]string{"NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"},
		[]string{`web-[a-z0-9]{5}`, "IPv4", "8080", `10\.244\.7\.1,10\.244\.7\.2`, age})
	wantEqual(t, "managed-by", jsonpath(t, k, `{.items[0].metadata.labels.endpointslice\.kubernetes\.io/managed-by}`,
		"-n", ns, "get", "endpointslices", "-l", "kubernetes.io/service-name=web"), "endpointslice-controller.k8s.io")

	// The disruption controller fills a PodDisruptionBudget's status from
	// the same pods.
	wantLines(t, k.ok(t, "-n", ns, "create", "pdb", "web", "--selector=app=web", "--min-available=1"), "poddisruptionbudget.policy/web created")
	eventually(t, 30*time.Second, "the budget's status", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "pdb", "web", "-o",
			`jsonpath={.status.currentHealthy} {.status.desiredHealthy} {.status.expectedPods} {.status.disruptionsAllowed} {.status.conditions[0].reason}`)
		return out == "2 1 2 1 SufficientPods", out
	})
	wantTable(t, k.ok(t, "-n", ns, "get", "pdb", "web"), []string{"NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"},
		[]string{"web", "1", "N/A", "1", age})
}

// The endpointslice-mirroring controller: Endpoints written by hand for a
// Service without selector appear as an EndpointSlice.
func kubectlEndpointsMirroring(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-mirroring"
	createNS(t, c, ns)
	k.withStdin(`apiVersion: v1
kind: Service
metadata: {name: ext}
spec:
  ports: [{name: http, port: 80}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: ext}
subsets:
- addresses: [{ip: 192.168.10.1}, {ip: 192.168.10.2}]
  ports: [{name: http, port: 80}]
`).ok(t, "-n", ns, "apply", "-f", "-")
	eventually(t, 30*time.Second, "the mirrored EndpointSlice", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "endpointslices", "-l", "endpointslice.kubernetes.io/managed-by=endpointslicemirroring-controller.k8s.io")
		return strings.Contains(out, "192.168.10.1,192.168.10.2"), out
	})
	wantTable(t, k.ok(t, "-n", ns, "get", "endpointslices", "-l", "kubernetes.io/service-name=ext"),
		[]string{"NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"},
		[]string{`ext-[a-z0-9]{5}`, "IPv4", "80", `192\.168\.10\.1,192\.168\.10\.2`, age})
}
