package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"strings"
	"testing"
	"time"
)

// TestMiscControllers: the ResourceQuota, horizontal pod autoscaler, CSR
// approving and ClusterRole aggregation controllers of `skiff up`, driven
// with kubectl on the shared cluster.
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
		{"node-csr", kubectlNodeCSR},
		{"clusterrole-aggregation", kubectlClusterRoleAggregation},
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

// kubectlNodeCSR: a node client certificate request
// (kubernetes.io/kube-apiserver-client-kubelet, O=system:nodes,
// CN=system:node:<name>) is approved by the approving controller (the
// SubjectAccessReview allows it while RBAC is not enforced) and issued by
// the signing controller, without kubectl certificate approve; a request
// that breaks the node rules is left pending.
func kubectlNodeCSR(t *testing.T, _ *cluster, k kc) {
	request := func(subject pkix.Name, dns []string) string {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject, DNSNames: dns}, key)
		if err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
	}
	csr := func(name, req string) string {
		return `apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: ` + name + `}
spec:
  request: ` + req + `
  signerName: kubernetes.io/kube-apiserver-client-kubelet
  usages: [digital signature, client auth]
`
	}
	node := pkix.Name{CommonName: "system:node:e2e-node", Organization: []string{"system:nodes"}}
	k.withStdin(csr("e2e-node-client", request(node, nil))).ok(t, "create", "-f", "-")
	k.withStdin(csr("e2e-node-san", request(node, []string{"e2e-node.example"}))).ok(t, "create", "-f", "-")
	eventually(t, 30*time.Second, "the node's CSR approved and issued", func() (bool, string) {
		out, _, _ := k.run(t, "get", "csr", "e2e-node-client")
		return strings.Contains(out, "Approved,Issued"), out
	})
	wantEqual(t, "the approval", jsonpath(t, k, `{.status.conditions[?(@.type=="Approved")].reason}: {.status.conditions[?(@.type=="Approved")].message}`, "get", "csr", "e2e-node-client"),
		"AutoApproved: Auto approving kubelet client certificate after SubjectAccessReview.")
	// The approver has long had its chance at the other one.
	wantTable(t, k.ok(t, "get", "csr", "e2e-node-san"),
		[]string{"NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION"},
		[]string{"e2e-node-san", `\S+`, "kubernetes.io/kube-apiserver-client-kubelet", `\S+`, "<none>", "Pending"})
	k.ok(t, "delete", "csr", "e2e-node-client", "e2e-node-san")
}

// kubectlClusterRoleAggregation: `kubectl create clusterrole
// --aggregation-rule` gets the rules of the roles its selector matches,
// and follows a new one.
func kubectlClusterRoleAggregation(t *testing.T, _ *cluster, k kc) {
	defer k.run(t, "delete", "clusterrole", "e2e-agg", "e2e-agg-pods", "e2e-agg-secrets")
	k.ok(t, "create", "clusterrole", "e2e-agg", "--aggregation-rule=e2e.skiff.sh/aggregate-to-agg=true")
	k.ok(t, "create", "clusterrole", "e2e-agg-pods", "--verb=get,list", "--resource=pods")
	k.ok(t, "label", "clusterrole", "e2e-agg-pods", "e2e.skiff.sh/aggregate-to-agg=true")
	rules := func(want string) {
		t.Helper()
		eventually(t, 30*time.Second, "e2e-agg's rules "+want, func() (bool, string) {
			out, _, _ := k.run(t, "get", "clusterrole", "e2e-agg", "-o", `jsonpath={range .rules[*]}{.resources}:{.verbs} {end}`)
			return strings.TrimSpace(out) == want, out
		})
	}
	rules(`["pods"]:["get","list"]`)
	k.ok(t, "create", "clusterrole", "e2e-agg-secrets", "--verb=get", "--resource=secrets")
	k.ok(t, "label", "clusterrole", "e2e-agg-secrets", "e2e.skiff.sh/aggregate-to-agg=true")
	rules(`["pods"]:["get","list"] ["secrets"]:["get"]`)
	wantEqual(t, "the rules' manager", jsonpath(t, k, `{.metadata.managedFields[?(@.operation=="Apply")].manager}`, "get", "clusterrole", "e2e-agg", "--show-managed-fields"),
		"clusterrole-aggregation-controller")
}
