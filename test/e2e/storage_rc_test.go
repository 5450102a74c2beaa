package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const rcManifest = `apiVersion: v1
kind: ReplicationController
metadata: {name: web, namespace: %[1]s}
spec:
  replicas: 2
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: nginx:1.27}]}
`

// ReplicationControllers and the storage.k8s.io / node.k8s.io resources
// upstream's scheduler and CSI sidecars watch: kubectl's tables (wide
// included), scale, and `kubectl delete rc` (propagationPolicy=Background)
// deleting the controller's pods.
func kubectlReplicationControllers(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-rc"
	createNS(t, c, ns)
	wantLines(t, k.withStdin(fmt.Sprintf(rcManifest, ns)).ok(t, "apply", "-f", "-"), "replicationcontroller/web created")
	wantTable(t, k.ok(t, "-n", ns, "get", "rc", "-o", "wide"),
		[]string{"NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"},
		[]string{"web", "2", "[02]", "0", `\d+s`, "app", "nginx:1.27", "app=web"})
	wantLines(t, k.ok(t, "-n", ns, "scale", "rc", "web", "--replicas=3"), "replicationcontroller/web scaled")
	wantEqual(t, "replicas after scale", jsonpath(t, k, "{.spec.replicas}", "-n", ns, "get", "rc", "web"), "3")

	uid := jsonpath(t, k, "{.metadata.uid}", "-n", ns, "get", "rc", "web")
	k.withStdin(fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: web-1
  namespace: %s
  labels: {app: web}
  ownerReferences: [{apiVersion: v1, kind: ReplicationController, name: web, uid: %s, controller: true, blockOwnerDeletion: true}]
spec: {containers: [{name: app, image: nginx:1.27}]}
`, ns, uid)).ok(t, "apply", "-f", "-")
	wantLines(t, k.ok(t, "-n", ns, "delete", "rc", "web"), `replicationcontroller "web" deleted`)
	eventually(t, 30*time.Second, "the controller's pod to be collected", func() (bool, string) {
		_, errOut, err := k.run(t, "-n", ns, "get", "pod", "web-1")
		return err != nil && strings.Contains(errOut, "NotFound"), errOut
	})

	// storage.k8s.io and node.k8s.io, as upstream prints them.
	k.withStdin(`apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: e2e.csi.example.com}
spec: {podInfoOnMount: true}
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttributesClass
metadata: {name: e2e-gold}
driverName: e2e.csi.example.com
parameters: {iops: "1000"}
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: e2e-gvisor}
handler: runsc
`).ok(t, "apply", "-f", "-")
	wantTable(t, k.ok(t, "get", "csidriver", "e2e.csi.example.com"),
		[]string{"NAME", "ATTACHREQUIRED", "PODINFOONMOUNT", "STORAGECAPACITY", "TOKENREQUESTS", "REQUIRESREPUBLISH", "MODES", "AGE"},
		[]string{"e2e.csi.example.com", "true", "true", "false", "<unset>", "false", "Persistent", `\d+s`})
	wantTable(t, k.ok(t, "get", "vac", "e2e-gold"), []string{"NAME", "DRIVERNAME", "AGE"}, []string{"e2e-gold", "e2e.csi.example.com", `\d+s`})
	wantTable(t, k.ok(t, "get", "runtimeclass", "e2e-gvisor"), []string{"NAME", "HANDLER", "AGE"}, []string{"e2e-gvisor", "runsc", `\d+s`})
	errOut := k.withStdin(`apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: e2e-bad}
handler: Not.A.Label
`).fails(t, "apply", "-f", "-")
	wantContains(t, errOut, `The RuntimeClass "e2e-bad" is invalid: handler: Invalid value: "Not.A.Label"`)
	k.ok(t, "delete", "csidriver", "e2e.csi.example.com")
	k.ok(t, "delete", "vac", "e2e-gold")
	k.ok(t, "delete", "runtimeclass", "e2e-gvisor")
}

// `kubectl cluster-info dump` lists nodes and, per namespace, events,
// replication controllers, services, daemon sets, deployments, replica
// sets and pods, and the logs of every pod's containers: it completes,
// to stdout and to a directory.
func kubectlClusterInfoDump(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-dump"
	createNS(t, c, ns)
	k.withStdin(fmt.Sprintf(rcManifest, ns)+fmt.Sprintf(`---
apiVersion: v1
kind: Pod
metadata: {name: lonely, namespace: %s}
spec: {containers: [{name: app, image: nginx:1.27}]}
`, ns)).ok(t, "apply", "-f", "-")
	k.ok(t, "-n", ns, "create", "deployment", "d", "--image=nginx")

	out := k.withTimeout(60*time.Second).ok(t, "cluster-info", "dump", "--namespaces", ns+",default,kube-system")
	wantContains(t, out, `"kind": "NodeList"`, `"kind": "ReplicationControllerList"`, `"name": "web"`, `"kind": "DeploymentList"`,
		`"kind": "DaemonSetList"`, `"kind": "ReplicaSetList"`, `"kind": "ServiceList"`, `"kind": "EventList"`,
		"==== START logs for container app of pod "+ns+"/lonely ====",
		"==== END logs for container app of pod "+ns+"/lonely ====")

	dir := t.TempDir()
	out = k.withTimeout(60*time.Second).ok(t, "cluster-info", "dump", "--all-namespaces", "--output-directory", dir)
	wantContains(t, out, "Cluster info dumped to "+dir)
	for _, f := range []string{"nodes.json", ns + "/replication-controllers.json", ns + "/pods.json", ns + "/events.json",
		ns + "/deployments.json", ns + "/replicasets.json", ns + "/daemonsets.json", ns + "/services.json", ns + "/lonely/logs.txt",
		"kube-system/pods.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("cluster-info dump wrote no %s: %v", f, err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, ns, "replication-controllers.json"))
	if err != nil || !strings.Contains(string(data), `"name": "web"`) {
		t.Errorf("replication-controllers.json lacks web (%v):\n%s", err, data)
	}
}
