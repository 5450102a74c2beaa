package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// appManifest is a namespace with a configmap, a secret (stringData), a
// two-replica deployment and a service. image and cmValue let a test
// apply a modified version.
func appManifest(ns, image, cmValue string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %[1]s
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: %[1]s
data:
  a: %[3]q
---
apiVersion: v1
kind: Secret
metadata:
  name: sec
  namespace: %[1]s
stringData:
  password: hunter2
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: %[1]s
  labels:
    app: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: %[2]s
        ports:
        - containerPort: 80
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: %[1]s
spec:
  selector:
    app: web
  ports:
  - port: 80
    targetPort: 80
`, ns, image, cmValue)
}

// setupApp applies appManifest(ns) and checks the five "created" lines.
func setupApp(t *testing.T, c *cluster, ns string) {
	t.Helper()
	out := c.k().withStdin(appManifest(ns, "nginx:1.25", "1")).ok(t, "apply", "-f", "-")
	wantLines(t, out,
		"namespace/"+ns+" created",
		"configmap/cfg created",
		"secret/sec created",
		"deployment.apps/web created",
		"service/web created")
}

// createNS creates an empty namespace and, as upstream's e2e framework,
// waits for what the controller manager puts in every namespace: the
// default service account (pods need it) and kube-root-ca.crt.
func createNS(t *testing.T, c *cluster, ns string) {
	t.Helper()
	wantLines(t, c.k().ok(t, "create", "namespace", ns), "namespace/"+ns+" created")
	eventually(t, 30*time.Second, "the default service account and kube-root-ca.crt in "+ns, func() (bool, string) {
		out, errOut, err := c.k().run(t, "-n", ns, "get", "serviceaccount/default", "configmap/kube-root-ca.crt", "-o", "name")
		return err == nil && strings.TrimSpace(out) == "serviceaccount/default\nconfigmap/kube-root-ca.crt", errOut
	})
}

func jsonpath(t *testing.T, k kc, expr string, args ...string) string {
	t.Helper()
	return k.ok(t, append(args, "-o", "jsonpath="+expr)...)
}

// TestKubectl is the full suite with the newest kubectl against one
// shared cluster. Subtests run in parallel, each in its own namespace.
func TestKubectl(t *testing.T) {
	t.Parallel()
	c := shared(t)
	k := c.k()
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, c *cluster, k kc)
	}{
		{"apply", kubectlApply},
		{"get", kubectlGet},
		{"watch", kubectlWatch},
		{"describe", kubectlDescribe},
		{"label-annotate", kubectlLabelAnnotate},
		{"patch", kubectlPatch},
		{"edit", kubectlEdit},
		{"scale", kubectlScale},
		{"delete", kubectlDelete},
		{"wait", kubectlWait},
		{"create", kubectlCreate},
		{"discovery", kubectlDiscovery},
		{"run", kubectlRun},
		{"tables", kubectlTables},
		{"replace", kubectlReplace},
		{"workflow", kubectlWorkflow},
		{"crd", kubectlCRD},
		{"finalizers", kubectlFinalizers},
		{"namespace-contents", kubectlNamespaceContents},
		{"cascade", kubectlCascade},
		{"auth", kubectlAuth},
		{"services", kubectlServices},
		{"pod-streams", kubectlPodStreams},
		{"api-resources", kubectlAPIResources},
		{"control-plane-apis", kubectlControlPlaneAPIs},
		{"replicationcontrollers", kubectlReplicationControllers},
		{"rollout", kubectlRollout},
		{"service-endpoints", kubectlServiceEndpoints},
		{"endpoints-mirroring", kubectlEndpointsMirroring},
		{"cronjob", kubectlCronJob},
		{"ttl-after-finished", kubectlTTLAfterFinished},
		{"cluster-info-dump", kubectlClusterInfoDump},
		{"server-side-apply", kubectlServerSideApply},
		{"networking-dra", kubectlNetworkingAndDRA},
		{"migrations-trustbundles", kubectlMigrationsAndTrustBundles},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, c, k)
		})
	}
}

func kubectlApply(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-apply"
	setupApp(t, c, ns)

	// Re-applying the same manifest changes nothing. The secret is the
	// upstream exception: its last-applied stringData is never in the
	// live object, so kubectl always sends a patch and reports
	// "configured" (kubernetes/kubernetes#87736).
	out := k.withStdin(appManifest(ns, "nginx:1.25", "1")).ok(t, "apply", "-f", "-")
	wantLines(t, out,
		"namespace/"+ns+" unchanged",
		"configmap/cfg unchanged",
		"secret/sec configured",
		"deployment.apps/web unchanged",
		"service/web unchanged")

	out = k.withStdin(appManifest(ns, "nginx:1.26", "2")).ok(t, "apply", "-f", "-")
	wantLines(t, out,
		"namespace/"+ns+" unchanged",
		"configmap/cfg configured",
		"secret/sec configured",
		"deployment.apps/web configured",
		"service/web unchanged")
	wantEqual(t, "configmap data", jsonpath(t, k, "{.data.a}", "-n", ns, "get", "cm", "cfg"), "2")
	wantEqual(t, "image", jsonpath(t, k, "{.spec.template.spec.containers[0].image}", "-n", ns, "get", "deploy", "web"), "nginx:1.26")
	// Only the template changed: generation 2.
	wantEqual(t, "generation", jsonpath(t, k, "{.metadata.generation}", "-n", ns, "get", "deploy", "web"), "2")
	wantEqual(t, "secret data", jsonpath(t, k, "{.data.password}", "-n", ns, "get", "secret", "sec"),
		base64.StdEncoding.EncodeToString([]byte("hunter2")))
	// stringData is write-only.
	wantEqual(t, "secret stringData", jsonpath(t, k, "{.stringData}", "-n", ns, "get", "secret", "sec"), "")
}

func kubectlGet(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-get"
	setupApp(t, c, ns)

	out := k.ok(t, "-n", ns, "get", "deployments")
	wantTable(t, out, []string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"},
		[]string{"web", "0/2", "[02]", "0", age})

	out = k.ok(t, "-n", ns, "get", "services")
	wantTable(t, out, []string{"NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"},
		[]string{"web", "ClusterIP", `[0-9.]+`, "<none>", "80/TCP", age})
	ip := jsonpath(t, k, "{.spec.clusterIP}", "-n", ns, "get", "svc", "web")
	_, serviceCIDR, _ := net.ParseCIDR("10.96.0.0/12")
	if parsed := net.ParseIP(ip); parsed == nil || !serviceCIDR.Contains(parsed) {
		t.Errorf("cluster IP %q is not in 10.96.0.0/12", ip)
	}
	wantMatch(t, out, `^web\s+ClusterIP\s+`+strings.ReplaceAll(ip, ".", `\.`)+`\s`)
	wantEqual(t, "clusterIPs", jsonpath(t, k, "{.spec.clusterIPs[0]}", "-n", ns, "get", "svc", "web"), ip)

	out = k.ok(t, "-n", ns, "get", "deploy", "-o", "wide")
	wantTable(t, out, []string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"},
		[]string{"web", "0/2", "[02]", "0", age, "nginx", "nginx:1.25", "app=web"})
	out = k.ok(t, "-n", ns, "get", "svc", "-o", "wide")
	wantTable(t, out, []string{"NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"},
		[]string{"web", "ClusterIP", `[0-9.]+`, "<none>", "80/TCP", age, "app=web"})

	out = k.ok(t, "-n", ns, "get", "configmaps", "cfg")
	wantTable(t, out, []string{"NAME", "DATA", "AGE"}, []string{"cfg", "1", age})
	out = k.ok(t, "-n", ns, "get", "secrets", "sec")
	wantTable(t, out, []string{"NAME", "TYPE", "DATA", "AGE"}, []string{"sec", "Opaque", "1", age})
	// Several types at once: kind-qualified names, blank line between tables.
	out = k.ok(t, "-n", ns, "get", "deploy,svc")
	wantMatch(t, out, `^deployment\.apps/web\s+0/2\s+[02]\s+0\s+`, `^service/web\s+ClusterIP\s+`, `\n\nNAME\s+TYPE`)

	// -o yaml shows the server's defaults and metadata.
	out = k.ok(t, "-n", ns, "get", "deploy", "web", "-o", "yaml")
	wantContains(t, out,
		"apiVersion: apps/v1\n", "kind: Deployment\n",
		"  generation: 1\n", "  name: web\n", "  namespace: "+ns+"\n",
		"  progressDeadlineSeconds: 600\n", "  revisionHistoryLimit: 10\n",
		"  strategy:\n    rollingUpdate:\n      maxSurge: 25%\n      maxUnavailable: 25%\n    type: RollingUpdate\n",
		"        imagePullPolicy: IfNotPresent\n",
		"        - containerPort: 80\n          protocol: TCP\n",
		"        terminationMessagePath: /dev/termination-log\n",
		"        terminationMessagePolicy: File\n",
		"      dnsPolicy: ClusterFirst\n", "      restartPolicy: Always\n",
		"      schedulerName: default-scheduler\n", "      securityContext: {}\n",
		"      terminationGracePeriodSeconds: 30\n",
		"kubectl.kubernetes.io/last-applied-configuration")
	wantMatch(t, out,
		`^  resourceVersion: "[0-9]+"$`,
		`^  uid: [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`,
		`^  creationTimestamp: "20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z"$`)
	out = k.ok(t, "-n", ns, "get", "svc", "web", "-o", "yaml")
	wantContains(t, out, "  type: ClusterIP\n", "  sessionAffinity: None\n", "  ipFamilyPolicy: SingleStack\n",
		"  ipFamilies:\n  - IPv4\n", "  internalTrafficPolicy: Cluster\n", "    protocol: TCP\n", "    targetPort: 80\n",
		"  clusterIP: "+ip+"\n")

	// jsonpath
	out = jsonpath(t, k, `{.metadata.name}:{.spec.replicas}:{.spec.template.spec.containers[*].image}`, "-n", ns, "get", "deploy", "web")
	wantEqual(t, "jsonpath", out, "web:2:nginx:1.25")
	out = jsonpath(t, k, `{range .items[*]}{.metadata.name}{"\n"}{end}`, "-n", ns, "get", "deploy,svc")
	wantLines(t, out, "web", "web")

	// Label selectors on a set of configmaps; "set=sel" keeps out any
	// configmap something else (kube-root-ca.crt) puts there.
	k.withStdin(fmt.Sprintf(`apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: c1, namespace: %[1]s, labels: {set: sel, env: prod, tier: web}}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: c2, namespace: %[1]s, labels: {set: sel, env: dev, tier: db}}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: c3, namespace: %[1]s, labels: {set: sel, env: test}}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: c4, namespace: %[1]s, labels: {set: sel}}}
`, ns)).ok(t, "create", "-f", "-")
	for _, tc := range []struct{ selector, want string }{
		{"set=sel,env=prod", "c1"},
		{"set=sel,env==prod", "c1"},
		{"set=sel,env!=prod", "c2 c3 c4"},
		{"set=sel,env in (dev,test)", "c2 c3"},
		{"set=sel,env notin (dev,test)", "c1 c4"},
		{"set=sel,env", "c1 c2 c3"},
		{"set=sel,!env", "c4"},
		{"set=sel,env=prod,tier=web", "c1"},
		{"set=sel,tier in (web,db),env!=dev", "c1"},
	} {
		got := jsonpath(t, k, "{.items[*].metadata.name}", "-n", ns, "get", "cm", "-l", tc.selector)
		wantEqual(t, "-l "+tc.selector, got, tc.want)
	}
	out = k.ok(t, "-n", ns, "get", "cm", "-l", "set=sel,env", "--show-labels")
	wantTable(t, out, []string{"NAME", "DATA", "AGE", "LABELS"},
		[]string{"c1", "0", age, "env=prod,set=sel,tier=web"},
		[]string{"c2", "0", age, "env=dev,set=sel,tier=db"},
		[]string{"c3", "0", age, "env=test,set=sel"})
	_, errOut, _ := k.run(t, "-n", ns, "get", "cm", "-l", "set=nothing")
	wantEqual(t, "empty selection", errOut, "No resources found in "+ns+" namespace.")

	// Field selectors.
	got := jsonpath(t, k, "{.items[*].metadata.name}", "-n", ns, "get", "cm", "-l", "set=sel", "--field-selector", "metadata.name=c2")
	wantEqual(t, "metadata.name=c2", got, "c2")
	got = jsonpath(t, k, "{.items[*].metadata.name}", "-n", ns, "get", "cm", "-l", "set=sel", "--field-selector", "metadata.name!=c2")
	wantEqual(t, "metadata.name!=c2", got, "c1 c3 c4")
	got = jsonpath(t, k, "{.items[*].metadata.name}", "get", "cm", "-A", "-l", "set=sel", "--field-selector", "metadata.namespace="+ns+",metadata.name=c3")
	wantEqual(t, "metadata.namespace", got, "c3")
	errOut = k.fails(t, "-n", ns, "get", "cm", "--field-selector", "spec.foo=bar")
	wantEqual(t, "unsupported field selector", errOut,
		`Error from server (BadRequest): Unable to find "/v1, Resource=configmaps" that match label selector "", field selector "spec.foo=bar": field label not supported: spec.foo`)

	// -A adds a NAMESPACE column.
	out = k.ok(t, "get", "deploy", "-A", "-l", "app=web", "--field-selector", "metadata.namespace="+ns)
	wantTable(t, out, []string{"NAMESPACE", "NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"},
		[]string{ns, "web", "0/2", "[02]", "0", age})
	out = k.ok(t, "get", "namespaces")
	wantMatch(t, out, `^NAME\s+STATUS\s+AGE$`, `^default\s+Active\s+`, `^kube-system\s+Active\s+`,
		`^kube-public\s+Active\s+`, `^kube-node-lease\s+Active\s+`, `^`+ns+`\s+Active\s+`)
	out = k.ok(t, "get", "svc", "-A", "-o", "wide")
	wantMatch(t, out, `^NAMESPACE\s+NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE\s+SELECTOR$`,
		`^default\s+kubernetes\s+ClusterIP\s+10\.96\.0\.1\s+<none>\s+443/TCP\s+\S+\s+<none>$`,
		`^`+ns+`\s+web\s+ClusterIP\s+`)

	// get on an empty list (the deployment's pods exist: no pods here).
	out, errOut, err := k.run(t, "-n", ns, "get", "jobs")
	if err != nil {
		t.Errorf("get jobs on a namespace without any: %v", err)
	}
	wantEqual(t, "stdout", out, "")
	wantEqual(t, "stderr", errOut, "No resources found in "+ns+" namespace.")

	// get a missing object.
	errOut = k.fails(t, "-n", ns, "get", "deploy", "nope")
	wantEqual(t, "missing deployment", errOut, `Error from server (NotFound): deployments.apps "nope" not found`)
}

func kubectlWatch(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-watch"
	createNS(t, c, ns)
	k.ok(t, "-n", ns, "create", "configmap", "before", "--from-literal=k=v")

	bg := k.start(t, "-n", ns, "get", "configmaps", "--watch", "--output-watch-events", "--request-timeout=8s")
	// The initial list is printed first; the watch then starts from
	// the list's resourceVersion, so nothing after it can be missed.
	eventually(t, 10*time.Second, "initial list", func() (bool, string) {
		out, _ := bg.output()
		return strings.Contains(out, "before"), out
	})
	k.ok(t, "-n", ns, "create", "configmap", "watched", "--from-literal=a=b")
	k.ok(t, "-n", ns, "label", "configmap", "watched", "x=y")
	k.ok(t, "-n", ns, "delete", "configmap", "watched")
	eventually(t, 10*time.Second, "watch events", func() (bool, string) {
		out, _ := bg.output()
		return strings.Contains(out, "DELETED"), out
	})
	out, errOut, _ := bg.wait(t, 20*time.Second)
	var ev []string
	for _, l := range lines(out) {
		f := columns(l)
		if len(f) >= 2 && f[1] != "kube-root-ca.crt" {
			ev = append(ev, f[0]+" "+f[1])
		}
	}
	wantEqual(t, "watch events", strings.Join(ev, "\n"),
		"EVENT NAME\nADDED before\nADDED watched\nMODIFIED watched\nDELETED watched")
	wantMatch(t, out, `^EVENT\s+NAME\s+DATA\s+AGE$`, `^ADDED\s+watched\s+1\s+`+"(?:"+age+")$")
	wantNotContains(t, errOut, "Error from server")
}

func kubectlDescribe(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-describe"
	setupApp(t, c, ns)
	// Once the deployment controller has scaled up (and recorded it):
	// two pods, none available without a kubelet.
	var out string
	eventually(t, 30*time.Second, "the deployment scaled up and its event recorded", func() (bool, string) {
		out = k.ok(t, "-n", ns, "describe", "deployment", "web")
		return strings.Contains(out, "2 desired | 2 updated | 2 total") && strings.Contains(out, "ScalingReplicaSet"), out
	})
	wantMatch(t, out,
		`^Name:\s+web$`,
		`^Namespace:\s+`+ns+`$`,
		`^CreationTimestamp:\s+\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} [+-]\d{4}$`,
		`^Labels:\s+app=web$`,
		`^Annotations:\s+deployment\.kubernetes\.io/revision|^Annotations:\s+<none>$`,
		`^Selector:\s+app=web$`,
		`^Replicas:\s+2 desired \| 2 updated \| 2 total \| 0 available \| 2 unavailable$`,
		`^StrategyType:\s+RollingUpdate$`,
		`^MinReadySeconds:\s+0$`,
		`^RollingUpdateStrategy:\s+25% max unavailable, 25% max surge$`,
		`^Pod Template:$`,
		`^  Labels:\s+app=web$`,
		`^  Containers:$`,
		`^   nginx:$`,
		`^    Image:\s+nginx:1\.25$`,
		`^    Port:\s+80/TCP$`,
		`^    Environment:\s+<none>$`,
		`^    Mounts:\s+<none>$`,
		`^  Volumes:\s+<none>$`,
		`^Events:$`,
		`^  Normal\s+ScalingReplicaSet\s+\S+\s+deployment-controller\s+Scaled up replica set web-[a-z0-9]+ from 0 to 2$`)

	ip := jsonpath(t, k, "{.spec.clusterIP}", "-n", ns, "get", "svc", "web")
	out = k.ok(t, "-n", ns, "describe", "service", "web")
	wantMatch(t, out,
		`^Name:\s+web$`,
		`^Namespace:\s+`+ns+`$`,
		`^Labels:\s+<none>$`,
		`^Selector:\s+app=web$`,
		`^Type:\s+ClusterIP$`,
		`^IP Family Policy:\s+SingleStack$`,
		`^IP Families:\s+IPv4$`,
		`^IP:\s+`+strings.ReplaceAll(ip, ".", `\.`)+`$`,
		`^IPs:\s+`+strings.ReplaceAll(ip, ".", `\.`)+`$`,
		`^Port:\s+<unset>\s+80/TCP$`,
		`^TargetPort:\s+80/TCP$`,
		`^Session Affinity:\s+None$`,
		`^Internal Traffic Policy:\s+Cluster$`,
		`^Events:\s+<none>$`)

	out = k.ok(t, "describe", "namespace", ns)
	wantMatch(t, out,
		`^Name:\s+`+ns+`$`,
		`^Labels:\s+kubernetes\.io/metadata\.name=`+ns+`$`,
		`^Annotations:\s+<none>$`,
		`^Status:\s+Active$`,
		`^No resource quota\.$`,
		`^No LimitRange resource\.$`)

	// describe by label selector and of a missing object.
	out = k.ok(t, "-n", ns, "describe", "cm", "cfg")
	wantMatch(t, out, `^Name:\s+cfg$`, `^Data\n====\na:\n----\n1\n`, `^BinaryData\n====\n`)
	errOut := k.fails(t, "-n", ns, "describe", "deployment", "nope")
	wantEqual(t, "describe missing", errOut, `Error from server (NotFound): deployments.apps "nope" not found`)
}

func kubectlLabelAnnotate(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-label"
	createNS(t, c, ns)
	wantLines(t, k.ok(t, "-n", ns, "create", "configmap", "lab", "--from-literal=k=v"), "configmap/lab created")

	wantLines(t, k.ok(t, "-n", ns, "label", "configmap", "lab", "team=a", "tier=x"), "configmap/lab labeled")
	errOut := k.fails(t, "-n", ns, "label", "configmap", "lab", "team=b")
	wantEqual(t, "label conflict", errOut, "error: 'team' already has a value (a), and --overwrite is false")
	wantEqual(t, "label unchanged", jsonpath(t, k, "{.metadata.labels.team}", "-n", ns, "get", "cm", "lab"), "a")
	wantLines(t, k.ok(t, "-n", ns, "label", "configmap", "lab", "team=b", "--overwrite"), "configmap/lab labeled")
	out := k.ok(t, "-n", ns, "get", "configmap", "lab", "--show-labels")
	wantTable(t, out, []string{"NAME", "DATA", "AGE", "LABELS"}, []string{"lab", "1", age, "team=b,tier=x"})
	wantLines(t, k.ok(t, "-n", ns, "label", "configmap", "lab", "tier-"), "configmap/lab unlabeled")
	wantEqual(t, "labels", jsonpath(t, k, "{.metadata.labels}", "-n", ns, "get", "cm", "lab"), `{"team":"b"}`)
	wantLines(t, k.ok(t, "-n", ns, "label", "configmap", "lab", "team=b", "--overwrite"), "configmap/lab not labeled")
	// Label the namespace itself, selected by a label selector.
	wantLines(t, k.ok(t, "label", "namespace", ns, "e2e=yes"), "namespace/"+ns+" labeled")
	wantEqual(t, "ns by label", jsonpath(t, k, "{.items[*].metadata.name}", "get", "ns", "-l", "e2e=yes"), ns)

	wantLines(t, k.ok(t, "-n", ns, "annotate", "configmap", "lab", "note=hello"), "configmap/lab annotated")
	errOut = k.fails(t, "-n", ns, "annotate", "configmap", "lab", "note=bye")
	wantEqual(t, "annotate conflict", errOut,
		"error: --overwrite is false but found the following declared annotation(s): 'note' already has a value (hello)")
	wantLines(t, k.ok(t, "-n", ns, "annotate", "configmap", "lab", "note=bye", "--overwrite"), "configmap/lab annotated")
	wantEqual(t, "annotation", jsonpath(t, k, "{.metadata.annotations.note}", "-n", ns, "get", "cm", "lab"), "bye")
	out = k.ok(t, "-n", ns, "describe", "configmap", "lab")
	wantMatch(t, out, `^Annotations:\s+note: bye$`, `^Labels:\s+team=b$`)
	wantLines(t, k.ok(t, "-n", ns, "annotate", "configmap", "lab", "note-"), "configmap/lab annotated")
	wantEqual(t, "annotations", jsonpath(t, k, "{.metadata.annotations}", "-n", ns, "get", "cm", "lab"), "")
}

func kubectlPatch(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-patch"
	setupApp(t, c, ns)
	get := func(expr string) string { return jsonpath(t, k, expr, "-n", ns, "get", "deploy", "web") }

	// Strategic merge (default): containers merge by name, so the port stays.
	out := k.ok(t, "-n", ns, "patch", "deployment", "web", "-p",
		`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.26"}]}}}}`)
	wantLines(t, out, "deployment.apps/web patched")
	wantEqual(t, "smp image", get("{.spec.template.spec.containers[0].image}"), "nginx:1.26")
	wantEqual(t, "smp keeps ports", get("{.spec.template.spec.containers[0].ports[0].containerPort}"), "80")
	wantEqual(t, "smp generation", get("{.metadata.generation}"), "2")
	// Strategic merge $patch: delete on a map key, adding a container.
	out = k.ok(t, "-n", ns, "patch", "deployment", "web", "-p",
		`{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"busybox"}]}}}}`)
	wantLines(t, out, "deployment.apps/web patched")
	wantEqual(t, "smp merged list", get("{.spec.template.spec.containers[*].name}"), "side nginx")

	// The same patch again is a no-op.
	out = k.ok(t, "-n", ns, "patch", "deployment", "web", "-p",
		`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.26"}]}}}}`)
	wantLines(t, out, "deployment.apps/web patched (no change)")

	// JSON merge patch: lists are replaced wholesale.
	out = k.ok(t, "-n", ns, "patch", "deployment", "web", "--type=merge", "-p",
		`{"metadata":{"labels":{"tier":"frontend"}},"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}}}}`)
	wantLines(t, out, "deployment.apps/web patched")
	wantEqual(t, "merge replicas", get("{.spec.replicas}"), "3")
	wantEqual(t, "merge labels", get("{.metadata.labels}"), `{"app":"web","tier":"frontend"}`)
	wantEqual(t, "merge replaced list", get("{.spec.template.spec.containers[*].name}"), "nginx")
	wantEqual(t, "merge dropped ports", get("{.spec.template.spec.containers[0].ports}"), "")
	// Defaults are re-applied to the replaced container.
	wantEqual(t, "merge defaulted", get("{.spec.template.spec.containers[0].imagePullPolicy}"), "IfNotPresent")
	// null removes a key.
	k.ok(t, "-n", ns, "patch", "deployment", "web", "--type=merge", "-p", `{"metadata":{"labels":{"tier":null}}}`)
	wantEqual(t, "merge null", get("{.metadata.labels}"), `{"app":"web"}`)

	// JSON patch.
	out = k.ok(t, "-n", ns, "patch", "deployment", "web", "--type=json", "-p",
		`[{"op":"test","path":"/spec/replicas","value":3},{"op":"replace","path":"/spec/replicas","value":4},{"op":"add","path":"/metadata/labels/json","value":"yes"},{"op":"remove","path":"/spec/template/spec/containers/0/imagePullPolicy"}]`)
	wantLines(t, out, "deployment.apps/web patched")
	wantEqual(t, "json replicas", get("{.spec.replicas}"), "4")
	wantEqual(t, "json label", get("{.metadata.labels.json}"), "yes")
	// Removing a defaulted field: the default comes back.
	wantEqual(t, "json re-defaulted", get("{.spec.template.spec.containers[0].imagePullPolicy}"), "IfNotPresent")

	// A JSON patch whose test op fails is rejected as a whole (422 with
	// no kind/name in the details, as upstream's patch handler builds it).
	errOut := k.fails(t, "-n", ns, "patch", "deployment", "web", "--type=json", "-p",
		`[{"op":"test","path":"/spec/replicas","value":99},{"op":"replace","path":"/spec/replicas","value":7}]`)
	wantEqual(t, "failed test op", errOut, "The request is invalid: the server rejected our request due to an error in our request")
	wantEqual(t, "replicas after failed test", get("{.spec.replicas}"), "4")
	// A patch path that does not exist.
	errOut = k.fails(t, "-n", ns, "patch", "deployment", "web", "--type=json", "-p",
		`[{"op":"replace","path":"/spec/nope/x","value":1}]`)
	wantContains(t, errOut, "The request is invalid")

	// A patch that makes the object invalid is a validation error.
	errOut = k.fails(t, "-n", ns, "patch", "deployment", "web", "--type=merge", "-p", `{"spec":{"replicas":-1}}`)
	wantEqual(t, "invalid patch", errOut,
		`The Deployment "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0`)
	// Patching a missing object.
	errOut = k.fails(t, "-n", ns, "patch", "deployment", "nope", "-p", `{"spec":{"replicas":1}}`)
	wantEqual(t, "patch missing", errOut, `Error from server (NotFound): deployments.apps "nope" not found`)
}

func kubectlEdit(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-edit"
	setupApp(t, c, ns)
	dir := t.TempDir()
	editor := filepath.Join(dir, "editor.sh")
	script := "#!/bin/sh\nset -e\nsed -i -e 's/^  replicas: 2$/  replicas: 5/' -e 's/^    app: web$/    app: web\\n    edited: \"yes\"/' \"$1\"\n"
	if err := os.WriteFile(editor, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out := k.withEnv("KUBE_EDITOR="+editor).ok(t, "-n", ns, "edit", "deployment", "web")
	wantLines(t, out, "deployment.apps/web edited")
	wantEqual(t, "replicas", jsonpath(t, k, "{.spec.replicas}", "-n", ns, "get", "deploy", "web"), "5")
	wantEqual(t, "label", jsonpath(t, k, "{.metadata.labels.edited}", "-n", ns, "get", "deploy", "web"), "yes")
	wantEqual(t, "generation", jsonpath(t, k, "{.metadata.generation}", "-n", ns, "get", "deploy", "web"), "2")

	// An editor that changes nothing.
	out, errOut, err := k.withEnv("KUBE_EDITOR=true").run(t, "-n", ns, "edit", "configmap", "cfg")
	if err != nil {
		t.Errorf("edit without changes: %v", err)
	}
	wantEqual(t, "stdout", out, "")
	wantEqual(t, "stderr", errOut, "Edit cancelled, no changes made.")
}

func kubectlScale(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-scale"
	setupApp(t, c, ns)
	wantLines(t, k.ok(t, "-n", ns, "scale", "deployment", "web", "--replicas=4"), "deployment.apps/web scaled")
	wantEqual(t, "replicas", jsonpath(t, k, "{.spec.replicas}", "-n", ns, "get", "deploy", "web"), "4")
	out := k.ok(t, "-n", ns, "get", "deploy", "web")
	wantTable(t, out, []string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"}, []string{"web", "0/4", "[0-4]", "0", age})

	raw := k.ok(t, "get", "--raw", "/apis/apps/v1/namespaces/"+ns+"/deployments/web/scale")
	var scale struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
		Metadata   struct {
			Name, Namespace, UID, ResourceVersion string
		} `json:"metadata"`
		Spec struct {
			Replicas int `json:"replicas"`
		} `json:"spec"`
		Status struct {
			Replicas int    `json:"replicas"`
			Selector string `json:"selector"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(raw), &scale); err != nil {
		t.Fatalf("scale subresource: %v\n%s", err, raw)
	}
	if scale.Kind != "Scale" || scale.APIVersion != "autoscaling/v1" || scale.Metadata.Name != "web" ||
		scale.Metadata.Namespace != ns || scale.Spec.Replicas != 4 || scale.Status.Selector != "app=web" {
		t.Errorf("scale subresource = %+v, want autoscaling/v1 Scale web/%s spec.replicas 4 status.selector app=web", scale, ns)
	}
	uid := jsonpath(t, k, "{.metadata.uid}", "-n", ns, "get", "deploy", "web")
	if scale.Metadata.UID != uid {
		t.Errorf("scale uid %q, want the deployment's %q", scale.Metadata.UID, uid)
	}

	// --current-replicas precondition.
	errOut := k.fails(t, "-n", ns, "scale", "deployment", "web", "--current-replicas=3", "--replicas=6")
	wantEqual(t, "precondition", errOut, "error: Expected replicas to be 3, was 4")
	wantLines(t, k.ok(t, "-n", ns, "scale", "deployment", "web", "--current-replicas=4", "--replicas=0"), "deployment.apps/web scaled")
	wantEqual(t, "replicas", jsonpath(t, k, "{.spec.replicas}", "-n", ns, "get", "deploy", "web"), "0")
	// Scaling a missing object.
	errOut = k.fails(t, "-n", ns, "scale", "deployment", "nope", "--replicas=1")
	wantContains(t, errOut, `deployments.apps "nope" not found`)
}

func kubectlDelete(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-delete"
	setupApp(t, c, ns)

	wantLines(t, k.ok(t, "-n", ns, "delete", "configmap", "cfg"), `configmap "cfg" deleted`)
	errOut := k.fails(t, "-n", ns, "get", "configmap", "cfg")
	wantEqual(t, "get deleted", errOut, `Error from server (NotFound): configmaps "cfg" not found`)
	errOut = k.fails(t, "-n", ns, "delete", "configmap", "cfg")
	wantEqual(t, "delete missing", errOut, `Error from server (NotFound): configmaps "cfg" not found`)
	out, errOut, err := k.run(t, "-n", ns, "delete", "configmap", "cfg", "--ignore-not-found")
	if err != nil || out != "" || errOut != "" {
		t.Errorf("delete --ignore-not-found: err=%v stdout=%q stderr=%q, want silence", err, out, errOut)
	}

	// Orphan deletion: the orphan finalizer must be processed so the
	// delete (which waits for the object to be gone) completes.
	out = k.withTimeout(45*time.Second).ok(t, "-n", ns, "delete", "deployment", "web", "--cascade=orphan", "--timeout=40s")
	wantLines(t, out, `deployment.apps "web" deleted`)
	errOut = k.fails(t, "-n", ns, "get", "deployment", "web")
	wantEqual(t, "get orphaned", errOut, `Error from server (NotFound): deployments.apps "web" not found`)

	// Delete by label, several at once.
	k.ok(t, "-n", ns, "create", "configmap", "l1")
	k.ok(t, "-n", ns, "create", "configmap", "l2")
	k.ok(t, "-n", ns, "label", "configmap", "l1", "l2", "del=me")
	out = k.ok(t, "-n", ns, "delete", "configmap", "-l", "del=me")
	wantLines(t, out, `configmap "l1" deleted`, `configmap "l2" deleted`)

	// Namespace deletion removes its contents and then the namespace.
	start := time.Now()
	out = k.withTimeout(60*time.Second).ok(t, "delete", "namespace", ns, "--wait", "--timeout=50s")
	wantLines(t, out, `namespace "`+ns+`" deleted`)
	t.Logf("namespace deletion took %v", time.Since(start))
	errOut = k.fails(t, "get", "namespace", ns)
	wantEqual(t, "namespace gone", errOut, `Error from server (NotFound): namespaces "`+ns+`" not found`)
	// Re-creating it gives an empty namespace.
	createNS(t, c, ns)
	_, errOut, _ = k.run(t, "-n", ns, "get", "deploy,svc,secrets")
	wantEqual(t, "recreated namespace", errOut, "No resources found in "+ns+" namespace.")
	errOut = k.fails(t, "-n", ns, "get", "configmap", "l1")
	wantEqual(t, "old content gone", errOut, `Error from server (NotFound): configmaps "l1" not found`)
}

func kubectlWait(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-wait"
	setupApp(t, c, ns)
	out := k.ok(t, "-n", ns, "wait", "--for=jsonpath={.spec.replicas}=2", "deploy/web", "--timeout=20s")
	wantLines(t, out, "deployment.apps/web condition met")

	// A wait that is satisfied by a later change.
	bg := k.start(t, "-n", ns, "wait", "--for=jsonpath={.spec.replicas}=7", "deploy/web", "--timeout=25s", "-v=6")
	bg.watching(t)
	k.ok(t, "-n", ns, "scale", "deploy", "web", "--replicas=7")
	out, errOut, err := bg.wait(t, 30*time.Second)
	if err != nil {
		t.Errorf("wait for replicas=7: %v (%s)", err, errOut)
	}
	wantLines(t, out, "deployment.apps/web condition met")

	// A wait that times out.
	errOut = k.fails(t, "-n", ns, "wait", "--for=jsonpath={.spec.replicas}=9", "deploy/web", "--timeout=1s")
	wantEqual(t, "wait timeout", errOut, "error: timed out waiting for the condition on deployments/web")

	// wait --for=delete.
	k.ok(t, "-n", ns, "create", "configmap", "doomed")
	bg = k.start(t, "-n", ns, "wait", "--for=delete", "configmap/doomed", "--timeout=25s", "-v=6")
	bg.watching(t)
	k.ok(t, "-n", ns, "delete", "configmap", "doomed")
	out, errOut, err = bg.wait(t, 30*time.Second)
	if err != nil {
		t.Errorf("wait --for=delete: %v (%s)", err, errOut)
	}
	wantLines(t, out, "configmap/doomed condition met")
}

func kubectlCreate(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-create"
	createNS(t, c, ns)

	// Server-side dry run: the object comes back defaulted, nothing is stored.
	out := k.ok(t, "-n", ns, "create", "deployment", "dry", "--image=nginx:1.25", "--replicas=2", "--dry-run=server", "-o", "yaml")
	wantContains(t, out, "kind: Deployment\n", "  name: dry\n", "  namespace: "+ns+"\n", "  replicas: 2\n",
		"    type: RollingUpdate\n", "      maxSurge: 25%\n", "        imagePullPolicy: IfNotPresent\n",
		"      terminationGracePeriodSeconds: 30\n", "  generation: 1\n")
	wantMatch(t, out, `^  uid: [0-9a-f-]{36}$`, `^  creationTimestamp: "`)
	errOut := k.fails(t, "-n", ns, "get", "deployment", "dry")
	wantEqual(t, "dry run not persisted", errOut, `Error from server (NotFound): deployments.apps "dry" not found`)
	out = k.ok(t, "-n", ns, "create", "configmap", "dry", "--from-literal=a=b", "--dry-run=server")
	wantLines(t, out, "configmap/dry created (server dry run)")
	errOut = k.fails(t, "-n", ns, "get", "configmap", "dry")
	wantEqual(t, "dry run not persisted", errOut, `Error from server (NotFound): configmaps "dry" not found`)

	// Create, then create again.
	wantLines(t, k.ok(t, "-n", ns, "create", "configmap", "once", "--from-literal=a=b"), "configmap/once created")
	errOut = k.fails(t, "-n", ns, "create", "configmap", "once", "--from-literal=a=b")
	wantEqual(t, "already exists", errOut, `error: failed to create configmap: configmaps "once" already exists`)

	// Unknown field: strict server-side field validation (kubectl's default).
	errOut = k.withStdin(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: strict
  namespace: `+ns+`
spec:
  foo: bar
  selector:
    matchLabels: {app: strict}
  template:
    metadata:
      labels: {app: strict}
    spec:
      containers:
      - name: c
        image: nginx
`).fails(t, "create", "-f", "-")
	wantContains(t, errOut, `strict decoding error: unknown field "spec.foo"`)
	wantEqual(t, "unknown field", errOut,
		`Error from server (BadRequest): error when creating "STDIN": Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.foo"`)

	// Bad name: from a manifest (kubectl formats the Invalid status
	// itself) and from `create configmap` (which wraps the error).
	const rfc1123 = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	errOut = k.withStdin("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n  namespace: "+ns+"\n").fails(t, "create", "-f", "-")
	wantContains(t, errOut, " is invalid", "metadata.name: Invalid value")
	wantEqual(t, "bad name", errOut, `The ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": `+rfc1123)
	errOut = k.fails(t, "-n", ns, "create", "configmap", "Bad_Name", "--from-literal=a=b")
	wantEqual(t, "bad name", errOut, `error: failed to create configmap: ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": `+rfc1123)

	// Missing image.
	errOut = k.withStdin(`apiVersion: v1
kind: Pod
metadata:
  name: noimage
  namespace: `+ns+`
spec:
  containers:
  - name: c
`).fails(t, "create", "-f", "-")
	wantEqual(t, "missing image", errOut, `The Pod "noimage" is invalid: spec.containers[0].image: Required value`)

	// Several errors at once are listed one per line.
	errOut = k.withStdin(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: multi
  namespace: `+ns+`
spec:
  replicas: -2
  selector:
    matchLabels: {app: multi}
  template:
    metadata:
      labels: {app: other}
    spec:
      containers:
      - name: c
        image: nginx
`).fails(t, "create", "-f", "-")
	wantContains(t, errOut, `The Deployment "multi" is invalid: `,
		"spec.replicas: Invalid value: -2: must be greater than or equal to 0",
		"\n* spec.replicas: Invalid value: -2: must be greater than or equal to 0\n",
		"\n* spec.template.metadata.labels: Invalid value: {\"app\":\"other\"}: `selector` does not match template `labels`")

	// Create in a namespace that does not exist.
	errOut = k.fails(t, "-n", "e2e-no-such-ns", "create", "configmap", "x")
	wantEqual(t, "missing namespace", errOut, `error: failed to create configmap: namespaces "e2e-no-such-ns" not found`)

	// Size limits: 1 MiB of configmap data (validation), 3 MiB of
	// request body (refused before decoding).
	dir := t.TempDir()
	big := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(big, []byte(strings.Repeat("a", 1100*1024)), 0o644); err != nil {
		t.Fatal(err)
	}
	errOut = k.fails(t, "-n", ns, "create", "configmap", "big", "--from-file="+big)
	wantMatch(t, errOut, `^error: failed to create configmap: ConfigMap "big" is invalid: \[\]: Too long: .*1048576 bytes$`)
	if err := os.WriteFile(big, []byte(strings.Repeat("a", 3300*1024)), 0o644); err != nil {
		t.Fatal(err)
	}
	errOut = k.fails(t, "-n", ns, "create", "configmap", "big", "--from-file="+big)
	wantEqual(t, "body too large", errOut, "error: failed to create configmap: Request entity too large: limit is 3145728")

	// generateName.
	out = k.withStdin(`apiVersion: v1
kind: ConfigMap
metadata:
  generateName: gen-
  namespace: `+ns+`
`).ok(t, "create", "-f", "-")
	wantMatch(t, out, `^configmap/gen-[a-z0-9]{5} created$`)
}

func kubectlDiscovery(t *testing.T, c *cluster, k kc) {
	out := k.ok(t, "api-resources")
	wantMatch(t, out,
		`^NAME\s+SHORTNAMES\s+APIVERSION\s+NAMESPACED\s+KIND$`,
		`^configmaps\s+cm\s+v1\s+true\s+ConfigMap$`,
		`^events\s+ev\s+v1\s+true\s+Event$`,
		`^namespaces\s+ns\s+v1\s+false\s+Namespace$`,
		`^nodes\s+no\s+v1\s+false\s+Node$`,
		`^pods\s+po\s+v1\s+true\s+Pod$`,
		`^secrets\s+v1\s+true\s+Secret$`,
		`^serviceaccounts\s+sa\s+v1\s+true\s+ServiceAccount$`,
		`^services\s+svc\s+v1\s+true\s+Service$`,
		`^customresourcedefinitions\s+crd,crds\s+apiextensions\.k8s\.io/v1\s+false\s+CustomResourceDefinition$`,
		`^deployments\s+deploy\s+apps/v1\s+true\s+Deployment$`,
		`^replicasets\s+rs\s+apps/v1\s+true\s+ReplicaSet$`,
		`^statefulsets\s+sts\s+apps/v1\s+true\s+StatefulSet$`,
		`^daemonsets\s+ds\s+apps/v1\s+true\s+DaemonSet$`,
		`^jobs\s+batch/v1\s+true\s+Job$`,
		`^cronjobs\s+cj\s+batch/v1\s+true\s+CronJob$`,
		`^leases\s+coordination\.k8s\.io/v1\s+true\s+Lease$`,
		`^endpointslices\s+discovery\.k8s\.io/v1\s+true\s+EndpointSlice$`,
		`^events\s+ev\s+events\.k8s\.io/v1\s+true\s+Event$`,
		`^clusterroles\s+rbac\.authorization\.k8s\.io/v1\s+false\s+ClusterRole$`,
		`^priorityclasses\s+pc\s+scheduling\.k8s\.io/v1\s+false\s+PriorityClass$`)
	out = k.ok(t, "api-resources", "--api-group=apps", "-o", "name")
	wantContains(t, out, "deployments.apps\n", "replicasets.apps\n")
	out = k.ok(t, "api-resources", "--namespaced=false", "--api-group=", "-o", "name")
	wantContains(t, out, "namespaces\n", "nodes\n")
	wantNotContains(t, out, "pods\n")
	out = k.ok(t, "api-resources", "-o", "wide", "--api-group=coordination.k8s.io")
	wantMatch(t, out, `^NAME\s+SHORTNAMES\s+APIVERSION\s+NAMESPACED\s+KIND\s+VERBS\s+CATEGORIES$`,
		`^leases\s+coordination\.k8s\.io/v1\s+true\s+Lease\s+create,delete,deletecollection,get,list,patch,update,watch\s*$`)

	out = k.ok(t, "api-versions")
	for _, v := range []string{"v1", "apps/v1", "batch/v1", "autoscaling/v2", "coordination.k8s.io/v1",
		"apiextensions.k8s.io/v1", "rbac.authorization.k8s.io/v1", "discovery.k8s.io/v1", "events.k8s.io/v1", "policy/v1"} {
		wantMatch(t, out, `^`+strings.ReplaceAll(v, ".", `\.`)+`$`)
	}

	out = k.ok(t, "explain", "pod.spec")
	wantMatch(t, out, `^KIND:\s+Pod$`, `^VERSION:\s+v1$`, `^FIELD: spec <PodSpec>$`, `^DESCRIPTION:$`,
		`^    Specification of the desired behavior of the pod\.`, `PodSpec is a description of a pod\.`,
		`^FIELDS:$`, `^  containers\t<\[\]Container> -required-$`, `^  restartPolicy\t<string>$`,
		`^  terminationGracePeriodSeconds\t<integer>$`)
	out = k.ok(t, "explain", "deployment.spec.strategy")
	wantMatch(t, out, `^GROUP:\s+apps$`, `^KIND:\s+Deployment$`, `^VERSION:\s+v1$`,
		`^FIELD: strategy <DeploymentStrategy>$`, `The deployment strategy to use to replace existing pods with new ones\.`,
		`^  rollingUpdate\t<RollingUpdateDeployment>$`, `^  type\t<string>$`)
	out = k.ok(t, "explain", "deployment.spec.replicas")
	wantMatch(t, out, `^FIELD: replicas <integer>$`, `Number of desired pods\.`)
	errOut := k.fails(t, "explain", "pod.spec.nope")
	wantContains(t, errOut, `field "nope" does not exist`)

	out = k.ok(t, "version")
	wantMatch(t, out, `^Client Version: v1\.[0-9]+\.[0-9]+$`, `^Server Version: v1\.37\.2$`)
	out = k.ok(t, "version", "-o", "json")
	var v struct {
		ServerVersion struct{ Major, Minor, GitVersion, Platform string } `json:"serverVersion"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("version -o json: %v", err)
	}
	if v.ServerVersion.Major != "1" || v.ServerVersion.Minor != "37" || v.ServerVersion.GitVersion != "v1.37.2" {
		t.Errorf("serverVersion = %+v, want 1/37/v1.37.2", v.ServerVersion)
	}

	out = k.ok(t, "cluster-info")
	wantMatch(t, out, `Kubernetes control plane.* is running at .*https://127\.0\.0\.1:`+fmt.Sprint(c.port))
}

func kubectlRun(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-run"
	createNS(t, c, ns)
	// The service account admission plugin needs the namespace's
	// default service account.
	eventually(t, 15*time.Second, "default service account", func() (bool, string) {
		out, errOut, err := k.run(t, "-n", ns, "get", "serviceaccount", "default", "-o", "name")
		return err == nil && strings.TrimSpace(out) == "serviceaccount/default", errOut
	})
	wantLines(t, k.ok(t, "-n", ns, "run", "nginx", "--image=nginx:1.25"), "pod/nginx created")
	out := k.ok(t, "-n", ns, "get", "pod", "nginx", "-o", "yaml")
	wantContains(t, out,
		"  serviceAccountName: default\n", "  serviceAccount: default\n",
		"  priority: 0\n", "  enableServiceLinks: true\n", "  preemptionPolicy: PreemptLowerPriority\n",
		"  schedulerName: default-scheduler\n", "  dnsPolicy: ClusterFirst\n", "  restartPolicy: Always\n",
		"  terminationGracePeriodSeconds: 30\n",
		"  tolerations:\n"+
			"  - effect: NoExecute\n    key: node.kubernetes.io/not-ready\n    operator: Exists\n    tolerationSeconds: 300\n"+
			"  - effect: NoExecute\n    key: node.kubernetes.io/unreachable\n    operator: Exists\n    tolerationSeconds: 300\n",
		"    - mountPath: /var/run/secrets/kubernetes.io/serviceaccount\n",
		"      readOnly: true\n",
		"  - name: kube-api-access-",
		"    projected:\n      defaultMode: 420\n      sources:\n      - serviceAccountToken:\n          expirationSeconds: 3607\n          path: token\n",
		"      - configMap:\n          items:\n          - key: ca.crt\n            path: ca.crt\n          name: kube-root-ca.crt\n",
		"      - downwardAPI:\n          items:\n          - fieldRef:\n              apiVersion: v1\n              fieldPath: metadata.namespace\n            path: namespace\n",
		"    imagePullPolicy: IfNotPresent\n",
		"    run: nginx\n",
		"  phase: Pending\n", "  qosClass: BestEffort\n")
	wantMatch(t, out, `^  - name: kube-api-access-[a-z0-9]{5}$`, `^      name: kube-api-access-[a-z0-9]{5}$`)

	out = k.ok(t, "-n", ns, "get", "pods")
	wantTable(t, out, []string{"NAME", "READY", "STATUS", "RESTARTS", "AGE"}, []string{"nginx", "0/1", "Pending", "0", age})
	out = k.ok(t, "-n", ns, "get", "pods", "-o", "wide")
	wantMatch(t, out, `^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$`,
		`^nginx\s+0/1\s+Pending\s+0\s+\S+\s+<none>\s+<none>\s+<none>\s+<none>$`)
	got := jsonpath(t, k, "{.items[*].metadata.name}", "-n", ns, "get", "pods", "--field-selector", "status.phase=Pending,spec.nodeName=")
	wantEqual(t, "pod field selectors", got, "nginx")
	out = k.ok(t, "-n", ns, "describe", "pod", "nginx")
	wantMatch(t, out, `^Name:\s+nginx$`, `^Service Account:\s+default$`, `^Status:\s+Pending$`,
		`^QoS Class:\s+BestEffort$`,
		`^Tolerations:\s+node\.kubernetes\.io/not-ready:NoExecute op=Exists for 300s$`,
		`^\s+node\.kubernetes\.io/unreachable:NoExecute op=Exists for 300s$`)

	// A pod that was never scheduled is deleted at once.
	wantLines(t, k.ok(t, "-n", ns, "delete", "pod", "nginx"), `pod "nginx" deleted`)
	errOut := k.fails(t, "-n", ns, "get", "pod", "nginx")
	wantEqual(t, "pod gone", errOut, `Error from server (NotFound): pods "nginx" not found`)
}
