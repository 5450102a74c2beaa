package e2e

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Services: deleting a namespace releases its Services' cluster IPs and
// node ports, so the same Service can be created again at once; the
// allocations are IPAddress objects kubectl can show.
func kubectlServices(t *testing.T, c *cluster, k kc) {
	const ns, again = "e2e-svc", "e2e-svc-again"
	svc := func(ns string) string {
		return `apiVersion: v1
kind: Service
metadata: {name: fixed, namespace: ` + ns + `}
spec:
  type: NodePort
  clusterIP: 10.96.123.45
  selector: {app: fixed}
  ports: [{port: 80, nodePort: 31234}]
`
	}
	createNS(t, c, ns)
	wantLines(t, k.withStdin(svc(ns)).ok(t, "apply", "-f", "-"), "service/fixed created")
	out := k.ok(t, "get", "ipaddress", "10.96.123.45")
	wantTable(t, out, []string{"NAME", "PARENTREF"}, []string{"10.96.123.45", "services/" + ns + "/fixed"})
	wantContains(t, k.ok(t, "get", "servicecidr", "kubernetes"), "10.96.0.0/12")
	// A second Service cannot take the address.
	createNS(t, c, again)
	errOut := k.withStdin(svc(again)).fails(t, "apply", "-f", "-")
	wantContains(t, errOut, "provided IP is already allocated")
	wantLines(t, k.ok(t, "delete", "namespace", ns, "--timeout=60s"), `namespace "`+ns+`" deleted`)
	eventually(t, 30*time.Second, "the namespace to go", func() (bool, string) {
		_, errOut, err := k.run(t, "get", "namespace", ns)
		return err != nil && strings.Contains(errOut, "NotFound"), errOut
	})
	// Re-created at once with the same address and node port.
	wantLines(t, k.withStdin(svc(again)).ok(t, "apply", "-f", "-"), "service/fixed created")
	wantContains(t, k.ok(t, "-n", again, "get", "service", "fixed", "-o", "wide"), "10.96.123.45", "80:31234/TCP")
}

// Logs, exec and port-forward on a pod no node runs answer as upstream
// does, not with a 404 that reads as "no such pod".
func kubectlPodStreams(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-streams"
	createNS(t, c, ns)
	pod := `apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: ` + ns + `}
spec:
  containers: [{name: app, image: nginx}]
`
	wantLines(t, k.withStdin(pod).ok(t, "apply", "-f", "-"), "pod/p1 created")
	wantEqual(t, "logs of an unscheduled pod", k.ok(t, "-n", ns, "logs", "p1"), "")
	wantContains(t, k.fails(t, "-n", ns, "logs", "p1", "-c", "nope"), "container nope is not valid for pod p1")
	wantContains(t, k.fails(t, "-n", ns, "exec", "p1", "--", "ls"), "pod p1 does not have a host assigned")
	wantContains(t, k.fails(t, "-n", ns, "logs", "nope"), `pods "nope" not found`)
}

// `kubectl api-resources` lists every resource served, with the names,
// short names and kinds upstream uses.
func kubectlAPIResources(t *testing.T, c *cluster, k kc) {
	// Exactly what upstream kube-apiserver 1.37 serves by default (its GA
	// versions; beta and alpha are off).
	want := []string{
		"bindings", "componentstatuses", "configmaps", "endpoints", "events", "limitranges", "namespaces", "nodes", "persistentvolumeclaims", "persistentvolumes", "pods", "podtemplates", "replicationcontrollers", "resourcequotas", "secrets", "serviceaccounts", "services",
		"mutatingadmissionpolicies.admissionregistration.k8s.io", "mutatingadmissionpolicybindings.admissionregistration.k8s.io", "mutatingwebhookconfigurations.admissionregistration.k8s.io", "validatingadmissionpolicies.admissionregistration.k8s.io", "validatingadmissionpolicybindings.admissionregistration.k8s.io", "validatingwebhookconfigurations.admissionregistration.k8s.io",
		"customresourcedefinitions.apiextensions.k8s.io",
		"apiservices.apiregistration.k8s.io",
		"controllerrevisions.apps", "daemonsets.apps", "deployments.apps", "replicasets.apps", "statefulsets.apps",
		"selfsubjectreviews.authentication.k8s.io", "tokenreviews.authentication.k8s.io",
		"localsubjectaccessreviews.authorization.k8s.io", "selfsubjectaccessreviews.authorization.k8s.io", "selfsubjectrulesreviews.authorization.k8s.io", "subjectaccessreviews.authorization.k8s.io",
		"horizontalpodautoscalers.autoscaling",
		"cronjobs.batch", "jobs.batch",
		"certificatesigningrequests.certificates.k8s.io", "clustertrustbundles.certificates.k8s.io", "podcertificaterequests.certificates.k8s.io",
		"leases.coordination.k8s.io",
		"endpointslices.discovery.k8s.io",
		"events.events.k8s.io",
		"flowschemas.flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations.flowcontrol.apiserver.k8s.io",
		"ingressclasses.networking.k8s.io", "ingresses.networking.k8s.io", "ipaddresses.networking.k8s.io", "networkpolicies.networking.k8s.io", "servicecidrs.networking.k8s.io",
		"runtimeclasses.node.k8s.io",
		"poddisruptionbudgets.policy",
		"clusterrolebindings.rbac.authorization.k8s.io", "clusterroles.rbac.authorization.k8s.io", "rolebindings.rbac.authorization.k8s.io", "roles.rbac.authorization.k8s.io",
		"deviceclasses.resource.k8s.io", "devicetaintrules.resource.k8s.io", "resourceclaims.resource.k8s.io", "resourceclaimtemplates.resource.k8s.io", "resourceslices.resource.k8s.io",
		"priorityclasses.scheduling.k8s.io",
		"csidrivers.storage.k8s.io", "csinodes.storage.k8s.io", "csistoragecapacities.storage.k8s.io", "storageclasses.storage.k8s.io", "volumeattachments.storage.k8s.io", "volumeattributesclasses.storage.k8s.io",
		"storageversionmigrations.storagemigration.k8s.io",
	}
	// Other subtests may have custom resources served meanwhile: only
	// built-in groups are compared.
	builtin := map[string]bool{}
	for _, r := range want {
		_, g, _ := strings.Cut(r, ".")
		builtin[g] = true
	}
	custom := func(name string) bool {
		var g string
		if group, _, ok := strings.Cut(name, "/"); ok { // api-versions: group/version
			g = group
		} else if _, group, ok := strings.Cut(name, "."); ok { // api-resources: plural.group
			g = group
		}
		return g != "" && !builtin[g]
	}
	wantSet(t, "api-resources", k.ok(t, "api-resources", "--no-headers", "-o", "name"), want, custom)
	wantSet(t, "api-versions", k.ok(t, "api-versions"), []string{
		"v1", "admissionregistration.k8s.io/v1", "apiextensions.k8s.io/v1", "apiregistration.k8s.io/v1",
		"apps/v1", "authentication.k8s.io/v1", "authorization.k8s.io/v1", "autoscaling/v1", "autoscaling/v2",
		"batch/v1", "certificates.k8s.io/v1", "coordination.k8s.io/v1", "discovery.k8s.io/v1",
		"events.k8s.io/v1", "flowcontrol.apiserver.k8s.io/v1", "networking.k8s.io/v1", "node.k8s.io/v1",
		"policy/v1", "rbac.authorization.k8s.io/v1", "resource.k8s.io/v1", "scheduling.k8s.io/v1",
		"storage.k8s.io/v1", "storagemigration.k8s.io/v1",
	}, custom)
	wantContains(t, k.ok(t, "get", "componentstatuses"), "etcd-0", "Healthy")
}

// wantSet checks that out's lines are exactly want (in any order).
// Lines for which ignore is true are not compared.
func wantSet(t *testing.T, what, out string, want []string, ignore func(string) bool) {
	t.Helper()
	have := map[string]bool{}
	for _, l := range lines(out) {
		if l = strings.TrimSpace(l); l != "" && !ignore(l) {
			have[l] = true
		}
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("%s lacks %s", what, w)
		}
		delete(have, w)
	}
	for extra := range have {
		t.Errorf("%s has %s, which upstream does not serve by default", what, extra)
	}
}

// A second `skiff up` on a data dir a running one holds fails at once and
// says who holds it; Ctrl-C says the data is kept.
func TestSkiffUpDataDirInUse(t *testing.T) {
	t.Parallel()
	c := ownCluster(t, "etcd")
	cmd := exec.Command(skiffBin, "up", "--data-dir", c.dataDir, "--secure-port", "0")
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("a second skiff up on a held data dir did not fail within 20s")
	}
	if err == nil {
		t.Fatalf("second skiff up succeeded:\n%s", out)
	}
	wantContains(t, string(out), "data dir "+c.dataDir+" is in use by skiff (pid ")
	if err := c.stop(); err != nil {
		t.Fatal(err)
	}
	wantContains(t, c.logs(), "skiff stopped; the cluster's data is kept in "+c.dataDir)
}
