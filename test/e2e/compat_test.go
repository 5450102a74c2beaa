package e2e

import (
	"testing"
	"time"
)

// TestKubectlOldest is a smoke subset with the oldest kubectl we support
// (1.27), which predates some discovery and printing changes.
func TestKubectlOldest(t *testing.T) {
	t.Parallel()
	c := shared(t)
	k := c.kOld()
	const ns = "e2e-oldest"

	out := k.withStdin(appManifest(ns, "nginx:1.25", "1")).ok(t, "apply", "-f", "-")
	wantLines(t, out,
		"namespace/"+ns+" created",
		"configmap/cfg created",
		"secret/sec created",
		"deployment.apps/web created",
		"service/web created")
	out = k.withStdin(appManifest(ns, "nginx:1.25", "1")).ok(t, "apply", "-f", "-")
	wantLines(t, out,
		"namespace/"+ns+" unchanged",
		"configmap/cfg unchanged",
		"secret/sec configured",
		"deployment.apps/web unchanged",
		"service/web unchanged")

	out = k.ok(t, "-n", ns, "get", "deployments")
	wantTable(t, out, []string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"}, []string{"web", "0/2", "[02]", "0", age})
	out = k.ok(t, "-n", ns, "get", "services", "-o", "wide")
	wantTable(t, out, []string{"NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"},
		[]string{"web", "ClusterIP", `10\.[0-9.]+`, "<none>", "80/TCP", age, "app=web"})
	out = k.ok(t, "-n", ns, "get", "deployment", "web", "-o", "yaml")
	wantContains(t, out, "kind: Deployment\n", "  generation: 1\n", "    type: RollingUpdate\n", "      maxSurge: 25%\n",
		"        imagePullPolicy: IfNotPresent\n", "      terminationGracePeriodSeconds: 30\n")
	wantMatch(t, out, `^  uid: [0-9a-f-]{36}$`, `^  resourceVersion: "[0-9]+"$`)
	wantEqual(t, "jsonpath", jsonpath(t, k, "{.spec.replicas}", "-n", ns, "get", "deploy", "web"), "2")

	wantLines(t, k.ok(t, "-n", ns, "delete", "configmap", "cfg"), `configmap "cfg" deleted`)
	errOut := k.fails(t, "-n", ns, "delete", "configmap", "cfg")
	wantEqual(t, "delete missing", errOut, `Error from server (NotFound): configmaps "cfg" not found`)
	wantLines(t, k.ok(t, "-n", ns, "delete", "deployment", "web"), `deployment.apps "web" deleted`)
	_, errOut, _ = k.run(t, "-n", ns, "get", "deployments")
	wantEqual(t, "no deployments", errOut, "No resources found in "+ns+" namespace.")

	out = k.ok(t, "api-resources")
	wantMatch(t, out,
		`^NAME\s+SHORTNAMES\s+APIVERSION\s+NAMESPACED\s+KIND$`,
		`^pods\s+po\s+v1\s+true\s+Pod$`,
		`^deployments\s+deploy\s+apps/v1\s+true\s+Deployment$`,
		`^leases\s+coordination\.k8s\.io/v1\s+true\s+Lease$`,
		`^bindings\s+v1\s+true\s+Binding$`,
		`^replicationcontrollers\s+rc\s+v1\s+true\s+ReplicationController$`,
		`^csinodes\s+storage\.k8s\.io/v1\s+false\s+CSINode$`,
		`^runtimeclasses\s+node\.k8s\.io/v1\s+false\s+RuntimeClass$`,
		`^customresourcedefinitions\s+crd,crds\s+apiextensions\.k8s\.io/v1\s+false\s+CustomResourceDefinition$`,
		`^certificatesigningrequests\s+csr\s+certificates\.k8s\.io/v1\s+false\s+CertificateSigningRequest$`,
		`^flowschemas\s+flowcontrol\.apiserver\.k8s\.io/v1\s+false\s+FlowSchema$`,
		`^apiservices\s+apiregistration\.k8s\.io/v1\s+false\s+APIService$`,
		`^validatingadmissionpolicies\s+admissionregistration\.k8s\.io/v1\s+false\s+ValidatingAdmissionPolicy$`)
	wantMatch(t, k.ok(t, "api-versions"), `^apps/v1$`, `^v1$`, `^node\.k8s\.io/v1$`, `^storage\.k8s\.io/v1$`)
	// server-side apply with the oldest kubectl: create, conflict, force
	ssaCM := func(v string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ssa, namespace: " + ns + "}\ndata: {a: " + v + "}\n"
	}
	wantLines(t, k.withStdin(ssaCM("one")).ok(t, "apply", "--server-side", "-f", "-"), "configmap/ssa serverside-applied")
	errOut = k.withStdin(ssaCM("two")).fails(t, "apply", "--server-side", "--field-manager=other", "-f", "-")
	wantContains(t, errOut, `Apply failed with 1 conflict: conflict with "kubectl": .data.a`)
	wantLines(t, k.withStdin(ssaCM("two")).ok(t, "apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", "-"), "configmap/ssa serverside-applied")
	wantContains(t, k.ok(t, "-n", ns, "get", "cm", "ssa", "-o", "yaml", "--show-managed-fields"), "    manager: other\n    operation: Apply\n")
	// cluster-info dump lists every kind it knows in each namespace
	wantContains(t, k.withTimeout(60*time.Second).ok(t, "cluster-info", "dump", "--namespaces", ns),
		`"kind": "NodeList"`, `"kind": "ReplicationControllerList"`, `"kind": "DaemonSetList"`, `"kind": "EventList"`)
}
