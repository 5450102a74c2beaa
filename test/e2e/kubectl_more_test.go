package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// More of TestKubectl's subtests: other built-in kinds, replace/diff,
// everyday workflow commands, CRDs, finalizers and cascading deletion,
// and the auth subcommands.

func kubectlTables(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-tables"
	createNS(t, c, ns)
	// Server-side table columns (and their values for objects no
	// controller has touched) for the other built-in kinds.
	wantLines(t, k.ok(t, "-n", ns, "create", "job", "j", "--image=busybox", "--", "true"), "job.batch/j created")
	wantMatch(t, k.ok(t, "-n", ns, "get", "jobs"),
		`^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE$`, `^j\s+Running\s+0/1\s+`)
	wantMatch(t, k.ok(t, "-n", ns, "get", "jobs", "-o", "wide"),
		`^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$`,
		`^j\s+Running\s+0/1\s+.*\sj\s+busybox\s+batch\.kubernetes\.io/controller-uid=[0-9a-f-]{36}$`)
	out := k.ok(t, "-n", ns, "get", "job", "j", "-o", "yaml")
	wantContains(t, out, "  backoffLimit: 6\n", "  completionMode: NonIndexed\n", "  completions: 1\n", "  parallelism: 1\n",
		"  suspend: false\n", "  podReplacementPolicy: TerminatingOrFailed\n", "      restartPolicy: Never\n",
		"        batch.kubernetes.io/job-name: j\n", "        job-name: j\n", "    batch.kubernetes.io/job-name: j\n")
	wantMatch(t, out, `^  selector:\n    matchLabels:\n      batch\.kubernetes\.io/controller-uid: [0-9a-f-]{36}$`)

	wantLines(t, k.ok(t, "-n", ns, "create", "cronjob", "cj", "--image=busybox", "--schedule=*/5 * * * *"), "cronjob.batch/cj created")
	wantMatch(t, k.ok(t, "-n", ns, "get", "cronjobs"),
		`^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE$`,
		`^cj\s+\*/5 \* \* \* \*\s+<none>\s+False\s+0\s+<none>\s+(?:`+age+`)$`)
	out = k.ok(t, "-n", ns, "get", "cronjob", "cj", "-o", "yaml")
	wantContains(t, out, "  concurrencyPolicy: Allow\n", "  failedJobsHistoryLimit: 1\n", "  successfulJobsHistoryLimit: 3\n", "  suspend: false\n")

	k.withStdin(fmt.Sprintf(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: %[1]s}
spec:
  replicas: 1
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres:16}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds, namespace: %[1]s}
spec:
  selector: {matchLabels: {app: ds}}
  template:
    metadata: {labels: {app: ds}}
    spec:
      # No node of the shared cluster (other tests add some) is eligible.
      nodeSelector: {e2e-tables: none}
      containers: [{name: agent, image: busybox}]
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs, namespace: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: rs}}
  template:
    metadata: {labels: {app: rs}}
    spec: {containers: [{name: c, image: busybox}]}
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: l, namespace: %[1]s}
spec: {holderIdentity: h1, leaseDurationSeconds: 15}
`, ns)).ok(t, "apply", "-f", "-")
	wantTable(t, k.ok(t, "-n", ns, "get", "statefulsets"), []string{"NAME", "READY", "AGE"}, []string{"db", "0/1", age})
	out = k.ok(t, "-n", ns, "get", "statefulset", "db", "-o", "yaml")
	wantContains(t, out, "  podManagementPolicy: OrderedReady\n", "  revisionHistoryLimit: 10\n",
		"  updateStrategy:\n    rollingUpdate:\n", "      partition: 0\n", "    type: RollingUpdate\n",
		"  persistentVolumeClaimRetentionPolicy:\n    whenDeleted: Retain\n    whenScaled: Retain\n")
	wantTable(t, k.ok(t, "-n", ns, "get", "daemonsets"),
		[]string{"NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE", "SELECTOR", "AGE"},
		[]string{"ds", "0", "0", "0", "0", "0", "e2e-tables=none", age})
	out = k.ok(t, "-n", ns, "get", "daemonset", "ds", "-o", "yaml")
	wantContains(t, out, "  updateStrategy:\n    rollingUpdate:\n      maxSurge: 0\n      maxUnavailable: 1\n    type: RollingUpdate\n")
	// The ReplicaSet controller creates its pod (never Ready: no kubelet).
	eventually(t, 30*time.Second, "the ReplicaSet's pod", func() (bool, string) {
		out := k.ok(t, "-n", ns, "get", "replicasets")
		return regexp.MustCompile(`\nrs\s+1\s+1\s+0\s+`).MatchString(out), out
	})
	wantTable(t, k.ok(t, "-n", ns, "get", "replicasets"), []string{"NAME", "DESIRED", "CURRENT", "READY", "AGE"},
		[]string{"rs", "1", "1", "0", age})
	wantTable(t, k.ok(t, "-n", ns, "get", "leases"), []string{"NAME", "HOLDER", "AGE"}, []string{"l", "h1", age})
	eventually(t, 15*time.Second, "default service account", func() (bool, string) {
		_, errOut, err := k.run(t, "-n", ns, "get", "serviceaccount", "default")
		return err == nil, errOut
	})
	wantTable(t, k.ok(t, "-n", ns, "get", "serviceaccounts", "default"), []string{"NAME", "SECRETS", "AGE"}, []string{"default", "0", age})

	wantLines(t, k.ok(t, "-n", ns, "create", "role", "r", "--verb=get,list", "--resource=pods"), "role.rbac.authorization.k8s.io/r created")
	wantTable(t, k.ok(t, "-n", ns, "get", "roles"), []string{"NAME", "CREATED", "AT"},
		[]string{"r", `20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z`})
	wantLines(t, k.ok(t, "-n", ns, "create", "rolebinding", "rb", "--role=r", "--user=alice"), "rolebinding.rbac.authorization.k8s.io/rb created")
	wantMatch(t, k.ok(t, "-n", ns, "get", "rolebindings", "-o", "wide"),
		`^NAME\s+ROLE\s+AGE\s+USERS\s+GROUPS\s+SERVICEACCOUNTS$`, `^rb\s+Role/r\s+\S+\s+alice\s*$`)

	wantLines(t, k.ok(t, "-n", ns, "create", "poddisruptionbudget", "p", "--selector=app=web", "--min-available=1"),
		"poddisruptionbudget.policy/p created")
	wantTable(t, k.ok(t, "-n", ns, "get", "pdb"), []string{"NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED", "DISRUPTIONS", "AGE"},
		[]string{"p", "1", "N/A", "0", age})

	k.withStdin(appManifest(ns, "nginx:1.25", "1")).ok(t, "apply", "-f", "-")
	wantLines(t, k.ok(t, "-n", ns, "autoscale", "deployment", "web", "--min=1", "--max=3", "--cpu-percent=80"),
		"horizontalpodautoscaler.autoscaling/web autoscaled")
	wantMatch(t, k.ok(t, "-n", ns, "get", "hpa"),
		`^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE$`,
		`^web\s+Deployment/web\s+cpu: <unknown>/80%\s+1\s+3\s+[01]\s+(?:`+age+`)$`) // REPLICAS: 1 once the controller has synced (15s)

	// Cluster-scoped: priority classes, including the two system ones
	// the API server creates.
	wantLines(t, k.ok(t, "create", "priorityclass", "e2e-high", "--value=1000", "--description=e2e"),
		"priorityclass.scheduling.k8s.io/e2e-high created")
	out = k.ok(t, "get", "priorityclasses")
	wantMatch(t, out, `^NAME\s+VALUE\s+GLOBAL-DEFAULT\s+AGE\s+PREEMPTIONPOLICY$`,
		`^e2e-high\s+1000\s+false\s+\S+\s+PreemptLowerPriority$`,
		`^system-cluster-critical\s+2000000000\s+false\s+\S+\s+PreemptLowerPriority$`,
		`^system-node-critical\s+2000001000\s+false\s+\S+\s+PreemptLowerPriority$`)
	k.ok(t, "delete", "priorityclass", "e2e-high")

	// The kubernetes service's endpoints; v1 Endpoints carries the
	// upstream deprecation warning since 1.33.
	out, errOut, err := k.run(t, "-n", "default", "get", "endpoints", "kubernetes")
	if err != nil {
		t.Errorf("get endpoints: %v", err)
	}
	wantTable(t, out, []string{"NAME", "ENDPOINTS", "AGE"}, []string{"kubernetes", `[0-9.]+:` + fmt.Sprint(c.port), age})
	wantEqual(t, "endpoints warning", errOut, "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice")
	wantTable(t, k.ok(t, "-n", "default", "get", "endpointslices", "kubernetes"),
		[]string{"NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"},
		[]string{"kubernetes", "IPv4", fmt.Sprint(c.port), `[0-9.]+`, age})
}

func kubectlReplace(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-replace"
	setupApp(t, c, ns)
	live := k.ok(t, "-n", ns, "get", "configmap", "cfg", "-o", "yaml")
	edited := strings.Replace(live, `  a: "1"`, `  a: "9"`, 1)
	if edited == live {
		t.Fatalf("cannot edit:\n%s", live)
	}
	wantLines(t, k.withStdin(edited).ok(t, "replace", "-f", "-"), "configmap/cfg replaced")
	wantEqual(t, "replaced", jsonpath(t, k, "{.data.a}", "-n", ns, "get", "cm", "cfg"), "9")
	// The same (now stale) resourceVersion again: optimistic concurrency.
	errOut := k.withStdin(edited).fails(t, "replace", "-f", "-")
	wantEqual(t, "stale replace", errOut,
		`Error from server (Conflict): error when replacing "STDIN": Operation cannot be fulfilled on configmaps "cfg": the object has been modified; please apply your changes to the latest version and try again`)
	// Without a resourceVersion the replace is unconditional.
	var kept []string
	for _, l := range lines(edited) {
		if !strings.HasPrefix(l, "  resourceVersion:") {
			kept = append(kept, l)
		}
	}
	wantLines(t, k.withStdin(strings.Join(kept, "\n")).ok(t, "replace", "-f", "-"), "configmap/cfg replaced")
	// create -f of an existing object.
	errOut = k.withStdin(appManifest(ns, "nginx:1.25", "1")).fails(t, "create", "-f", "-")
	wantContains(t, errOut,
		`Error from server (AlreadyExists): error when creating "STDIN": namespaces "`+ns+`" already exists`,
		`Error from server (AlreadyExists): error when creating "STDIN": configmaps "cfg" already exists`,
		`Error from server (AlreadyExists): error when creating "STDIN": deployments.apps "web" already exists`)

	// kubectl diff: a server-side dry-run patch; exit 1 and a unified diff.
	out, _, err := k.withStdin(appManifest(ns, "nginx:1.25", "9")).run(t, "diff", "-f", "-")
	if err != nil || out != "" {
		t.Errorf("diff of an unchanged manifest: err=%v, output:\n%s", err, out)
	}
	out, _, err = k.withStdin(appManifest(ns, "nginx:1.26", "9")).run(t, "diff", "-f", "-")
	if err == nil {
		t.Errorf("diff with changes exited 0")
	}
	wantContains(t, out, "-  generation: 1\n", "+  generation: 2\n", "-      - image: nginx:1.25\n", "+      - image: nginx:1.26\n")
	wantEqual(t, "diff did not persist", jsonpath(t, k, "{.spec.template.spec.containers[0].image}", "-n", ns, "get", "deploy", "web"), "nginx:1.25")
}

func kubectlWorkflow(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-workflow"
	setupApp(t, c, ns)
	// get all: the "all" category.
	out := k.ok(t, "-n", ns, "get", "all")
	wantMatch(t, out, `^service/web\s+ClusterIP\s+`, `^deployment\.apps/web\s+0/2\s+[02]\s+0\s+`)
	wantNotContains(t, out, "configmap/", "secret/")

	wantLines(t, k.ok(t, "-n", ns, "expose", "deployment", "web", "--port=8080", "--target-port=80", "--name=web2"), "service/web2 exposed")
	wantTable(t, k.ok(t, "-n", ns, "get", "svc", "web2", "-o", "wide"),
		[]string{"NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"},
		[]string{"web2", "ClusterIP", `10\.[0-9.]+`, "<none>", "8080/TCP", age, "app=web"})
	wantLines(t, k.ok(t, "-n", ns, "create", "service", "nodeport", "np", "--tcp=80:8080"), "service/np created")
	wantMatch(t, k.ok(t, "-n", ns, "get", "svc", "np"), `^np\s+NodePort\s+10\.[0-9.]+\s+<none>\s+80:3[0-9]{4}/TCP\s+`)
	port := jsonpath(t, k, "{.spec.ports[0].nodePort}", "-n", ns, "get", "svc", "np")
	if n, err := fmt.Sscan(port, new(int)); n != 1 || err != nil {
		t.Errorf("nodePort %q", port)
	}

	wantLines(t, k.ok(t, "-n", ns, "set", "image", "deployment/web", "nginx=nginx:1.27"), "deployment.apps/web image updated")
	wantEqual(t, "image", jsonpath(t, k, "{.spec.template.spec.containers[0].image}", "-n", ns, "get", "deploy", "web"), "nginx:1.27")
	wantLines(t, k.ok(t, "-n", ns, "set", "env", "deployment/web", "MODE=prod"), "deployment.apps/web env updated")
	wantEqual(t, "env", jsonpath(t, k, "{.spec.template.spec.containers[0].env[0].value}", "-n", ns, "get", "deploy", "web"), "prod")
	wantLines(t, k.ok(t, "-n", ns, "rollout", "restart", "deployment/web"), "deployment.apps/web restarted")
	wantMatch(t, jsonpath(t, k, "{.spec.template.metadata.annotations}", "-n", ns, "get", "deploy", "web"),
		`^\{"kubectl\.kubernetes\.io/restartedAt":"20[0-9-]+T[0-9:]+Z"\}$`)
	wantEqual(t, "generation", jsonpath(t, k, "{.metadata.generation}", "-n", ns, "get", "deploy", "web"), "4")

	// Paging: kubectl lists in chunks and prints one table.
	for i := 0; i < 5; i++ {
		k.ok(t, "-n", ns, "create", "configmap", fmt.Sprintf("page-%d", i))
	}
	out, errOut, err := k.run(t, "-n", ns, "get", "configmaps", "--chunk-size=2", "-v=6")
	if err != nil {
		t.Fatalf("chunked list: %v", err)
	}
	var names []string
	for _, l := range lines(out)[1:] {
		if f := columns(l); f[0] != "kube-root-ca.crt" {
			names = append(names, f[0])
		}
	}
	wantEqual(t, "chunked list", strings.Join(names, " "), "cfg page-0 page-1 page-2 page-3 page-4")
	wantContains(t, errOut, "limit=2", "continue=")
	if n := strings.Count(out, "NAME "); n != 1 {
		t.Errorf("chunked list printed %d headers:\n%s", n, out)
	}
	// Raw paging through the API.
	raw := k.ok(t, "get", "--raw", "/api/v1/namespaces/"+ns+"/configmaps?limit=2")
	var page struct {
		Metadata struct {
			Continue           string `json:"continue"`
			RemainingItemCount *int   `json:"remainingItemCount"`
			ResourceVersion    string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []struct{} `json:"items"`
	}
	if err := json.Unmarshal([]byte(raw), &page); err != nil {
		t.Fatalf("page: %v", err)
	}
	if len(page.Items) != 2 || page.Metadata.Continue == "" || page.Metadata.RemainingItemCount == nil || page.Metadata.ResourceVersion == "" {
		t.Errorf("first page: %d items, continue %q, remainingItemCount %v, resourceVersion %q; want 2 items, a continue token, a count, an RV",
			len(page.Items), page.Metadata.Continue, page.Metadata.RemainingItemCount, page.Metadata.ResourceVersion)
	}
}

func kubectlCRD(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-crd"
	createNS(t, c, ns)
	crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.e2e.skiff.sh
spec:
  group: e2e.skiff.sh
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wdg], categories: [gadgetry]}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            description: The widget's desired state.
            x-kubernetes-validations:
            - rule: "self.color != 'red'"
              message: red widgets are not allowed
            properties:
              size: {type: integer, minimum: 1, description: How big.}
              color: {type: string, default: blue}
          status:
            type: object
            properties:
              phase: {type: string}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Color, type: string, jsonPath: .spec.color}
    - {name: Phase, type: string, jsonPath: .status.phase}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    subresources: {status: {}}
`
	wantLines(t, k.withStdin(crd).ok(t, "apply", "-f", "-"), "customresourcedefinition.apiextensions.k8s.io/widgets.e2e.skiff.sh created")
	wantLines(t, k.withStdin(crd).ok(t, "apply", "-f", "-"), "customresourcedefinition.apiextensions.k8s.io/widgets.e2e.skiff.sh unchanged")
	wantEqual(t, "storedVersions", jsonpath(t, k, "{.status.storedVersions}", "get", "crd", "widgets.e2e.skiff.sh"), `["v1"]`)
	k.waitEstablished(t, "crd/widgets.e2e.skiff.sh")
	wantMatch(t, k.ok(t, "get", "crd", "widgets.e2e.skiff.sh"), `^NAME\s+SCOPE\s+VERSIONS\s+CREATED AT$`, `^widgets\.e2e\.skiff\.sh\s+Namespaced\s+v1\(storage\)\s+20[0-9-]+T[0-9:]+Z$`)
	// An invalid definition is refused with upstream's field errors.
	bad := strings.Replace(crd, "name: widgets.e2e.skiff.sh", "name: gadgets.e2e.skiff.sh", 1)
	errOut := k.withStdin(bad).fails(t, "apply", "-f", "-")
	wantMatch(t, errOut, `^The CustomResourceDefinition "gadgets\.e2e\.skiff\.sh" is invalid: metadata\.name: Invalid value: "gadgets\.e2e\.skiff\.sh": must be spec\.names\.plural\+"\."\+spec\.group`)
	badRule := strings.Replace(crd, `rule: "self.color != 'red'"`, `rule: "self.color !="`, 1)
	wantContains(t, k.withStdin(badRule).fails(t, "apply", "-f", "-"),
		`spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value:`, `compilation failed: ERROR: <input>:1:14: Syntax error`)

	// The resource is served: discovery lists it, kubectl uses it.
	wantMatch(t, k.ok(t, "api-resources", "--api-group=e2e.skiff.sh"),
		`^NAME\s+SHORTNAMES\s+APIVERSION\s+NAMESPACED\s+KIND$`, `^widgets\s+wdg\s+e2e\.skiff\.sh/v1\s+true\s+Widget$`)
	// kubectl explain reads the published OpenAPI schema.
	eventually(t, 30*time.Second, "kubectl explain widgets.spec", func() (bool, string) {
		out, errOut, err := k.run(t, "explain", "widgets.spec")
		return err == nil && strings.Contains(out, "The widget's desired state.") && strings.Contains(out, "How big."), out + errOut
	})
	widget := func(name, color string) string {
		return "apiVersion: e2e.skiff.sh/v1\nkind: Widget\nmetadata: {name: " + name + ", namespace: " + ns + "}\nspec: {size: 3" + color + "}\n"
	}
	wantLines(t, k.withStdin(widget("w1", "")).ok(t, "apply", "-f", "-"), "widget.e2e.skiff.sh/w1 created")
	wantLines(t, k.withStdin(widget("w2", ", color: green")).ok(t, "create", "-f", "-"), "widget.e2e.skiff.sh/w2 created")
	wantEqual(t, "defaulted color", jsonpath(t, k, "{.spec.color}", "-n", ns, "get", "widget", "w1"), "blue")
	k.ok(t, "-n", ns, "patch", "widget", "w1", "--subresource=status", "--type=merge", "-p", `{"status":{"phase":"Ready"}}`)
	out := k.ok(t, "-n", ns, "get", "widgets")
	wantMatch(t, out, `^NAME\s+SIZE\s+COLOR\s+PHASE\s+AGE$`, `^w1\s+3\s+blue\s+Ready\s+[0-9]+s$`, `^w2\s+3\s+green\s+\s*[0-9]+s$`)
	wantContains(t, k.ok(t, "-n", ns, "get", "wdg", "w2"), "green")
	wantMatch(t, k.ok(t, "-n", ns, "get", "gadgetry"), `^w1\s+3\s+blue\s+Ready\s+[0-9]+s$`)
	// The CEL rule refuses a red widget with upstream's message.
	errOut = k.withStdin(widget("w3", ", color: red")).fails(t, "apply", "-f", "-")
	wantContains(t, errOut, `The Widget "w3" is invalid: spec: Invalid value: red widgets are not allowed`)
	// And the schema a size below its minimum.
	errOut = k.withStdin(strings.Replace(widget("w3", ""), "size: 3", "size: 0", 1)).fails(t, "apply", "-f", "-")
	wantContains(t, errOut, `spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1`)

	// Deleting the definition deletes its objects first.
	wantLines(t, k.ok(t, "delete", "crd", "widgets.e2e.skiff.sh", "--timeout=60s"),
		`customresourcedefinition.apiextensions.k8s.io "widgets.e2e.skiff.sh" deleted`)
	eventually(t, 30*time.Second, "the resource to go from discovery", func() (bool, string) {
		_, errOut, err := k.run(t, "get", "--raw", "/apis/e2e.skiff.sh/v1")
		return err != nil && strings.Contains(errOut, "NotFound"), errOut
	})
	wantLines(t, k.withStdin(crd).ok(t, "apply", "-f", "-"), "customresourcedefinition.apiextensions.k8s.io/widgets.e2e.skiff.sh created")
	k.waitEstablished(t, "crd/widgets.e2e.skiff.sh")
	eventually(t, 30*time.Second, "the re-created resource, empty", func() (bool, string) {
		out, errOut, err := k.run(t, "-n", ns, "get", "widgets")
		return err == nil && strings.Contains(errOut, "No resources found"), out + errOut
	})
	k.ok(t, "delete", "crd", "widgets.e2e.skiff.sh", "--timeout=60s")
}

func kubectlFinalizers(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-finalizers"
	createNS(t, c, ns)
	// An object with a finalizer only gets a deletionTimestamp.
	k.withStdin("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: held, namespace: "+ns+", finalizers: [e2e.skiff.sh/hold]}\n").ok(t, "create", "-f", "-")
	wantLines(t, k.ok(t, "-n", ns, "delete", "configmap", "held", "--wait=false"), `configmap "held" deleted`)
	out := jsonpath(t, k, "{.metadata.deletionTimestamp}|{.metadata.deletionGracePeriodSeconds}|{.metadata.finalizers}", "-n", ns, "get", "cm", "held")
	wantMatch(t, out, `^20[0-9-]+T[0-9:]+Z\|0\|\["e2e\.skiff\.sh/hold"\]$`)
	// Deleting it again changes nothing.
	rv := jsonpath(t, k, "{.metadata.resourceVersion}", "-n", ns, "get", "cm", "held")
	k.ok(t, "-n", ns, "delete", "configmap", "held", "--wait=false")
	wantEqual(t, "second delete", jsonpath(t, k, "{.metadata.resourceVersion}", "-n", ns, "get", "cm", "held"), rv)

	// The namespace cannot finish terminating while the finalizer is there.
	wantLines(t, k.ok(t, "delete", "namespace", ns, "--wait=false"), `namespace "`+ns+`" deleted`)
	eventually(t, 10*time.Second, "namespace Terminating", func() (bool, string) {
		out, errOut, _ := k.run(t, "get", "namespace", ns, "--no-headers")
		return len(columns(out)) > 1 && columns(out)[1] == "Terminating", out + errOut
	})
	wantMatch(t, k.ok(t, "describe", "namespace", ns), `^Status:\s+Terminating$`)
	errOut := k.fails(t, "-n", ns, "create", "configmap", "late")
	wantEqual(t, "create in terminating namespace", errOut,
		`error: failed to create configmap: configmaps "late" is forbidden: unable to create new content in namespace `+ns+` because it is being terminated`)
	wantEqual(t, "still held", jsonpath(t, k, "{.metadata.finalizers}", "-n", ns, "get", "cm", "held"), `["e2e.skiff.sh/hold"]`)
	wantEqual(t, "namespace still there", jsonpath(t, k, "{.status.phase}", "get", "ns", ns), "Terminating")

	// Removing the last finalizer deletes the object, then the namespace goes.
	bg := k.start(t, "wait", "--for=delete", "namespace/"+ns, "--timeout=40s", "-v=6")
	bg.watching(t)
	wantMatch(t, k.ok(t, "-n", ns, "patch", "configmap", "held", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`),
		`^configmap/held patched`)
	out, errOut, err := bg.wait(t, 45*time.Second)
	if err != nil {
		t.Errorf("wait for namespace deletion: %v\n%s", err, errOut)
	}
	wantLines(t, out, "namespace/"+ns+" condition met")
}

func kubectlCascade(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-cascade"
	createNS(t, c, ns)
	// A deployment with a replica set that it owns, per propagation policy.
	owned := func(policy string) {
		t.Helper()
		d := "d-" + policy
		k.ok(t, "-n", ns, "create", "deployment", d, "--image=nginx")
		uid := jsonpath(t, k, "{.metadata.uid}", "-n", ns, "get", "deploy", d)
		k.withStdin(fmt.Sprintf(`apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: rs-%[1]s
  namespace: %[2]s
  labels: {app: %[3]s, rs: %[1]s} # matched by the deployment's selector, else its controller releases it
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: %[3]s, uid: %[4]s, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: 0
  selector: {matchLabels: {app: %[3]s, rs: %[1]s}}
  template:
    metadata: {labels: {app: %[3]s, rs: %[1]s}}
    spec: {containers: [{name: c, image: busybox}]}
`, policy, ns, d, uid)).ok(t, "create", "-f", "-")
	}
	for _, p := range []string{"orphan", "background", "foreground"} {
		owned(p)
	}

	out := k.withTimeout(45*time.Second).ok(t, "-n", ns, "delete", "deployment", "d-orphan", "--cascade=orphan", "--timeout=40s")
	wantLines(t, out, `deployment.apps "d-orphan" deleted`)
	eventually(t, 20*time.Second, "orphaned replica set released", func() (bool, string) {
		out, errOut, err := k.run(t, "-n", ns, "get", "rs", "rs-orphan", "-o", "jsonpath={.metadata.ownerReferences}")
		return err == nil && out == "", out + errOut
	})

	out = k.withTimeout(45*time.Second).ok(t, "-n", ns, "delete", "deployment", "d-foreground", "--cascade=foreground", "--timeout=40s")
	wantLines(t, out, `deployment.apps "d-foreground" deleted`)
	// Foreground: the owner is gone only after its blocking dependents.
	errOut := k.fails(t, "-n", ns, "get", "rs", "rs-foreground")
	wantEqual(t, "foreground dependent", errOut, `Error from server (NotFound): replicasets.apps "rs-foreground" not found`)

	out = k.ok(t, "-n", ns, "delete", "deployment", "d-background")
	wantLines(t, out, `deployment.apps "d-background" deleted`)
	eventually(t, 20*time.Second, "background dependent collected", func() (bool, string) {
		_, errOut, err := k.run(t, "-n", ns, "get", "rs", "rs-background")
		return err != nil && strings.Contains(errOut, "NotFound"), errOut
	})
	// What is left: the orphaned ReplicaSets (ours and the one the
	// deployment controller made for d-orphan's template).
	eventually(t, 20*time.Second, "only d-orphan's replica sets left", func() (bool, string) {
		out := jsonpath(t, k, "{.items[*].metadata.name}", "-n", ns, "get", "rs")
		names := strings.Fields(out)
		ok := len(names) == 2
		for _, n := range names {
			ok = ok && (n == "rs-orphan" || strings.HasPrefix(n, "d-orphan-"))
		}
		return ok, out
	})
}

func kubectlAuth(t *testing.T, c *cluster, k kc) {
	// The admin kubeconfig's user is in system:masters. Each check is
	// independent (SelfSubjectAccessReview, SelfSubjectReview).
	check := func(args []string, want ...string) {
		t.Helper()
		out, errOut, err := k.run(t, args...)
		if err != nil {
			t.Errorf("kubectl %s: %v\nstderr: %s", shellJoin(args), err, errOut)
			return
		}
		wantMatch(t, out, want...)
	}
	check([]string{"auth", "can-i", "create", "deployments"}, `^yes$`)
	check([]string{"auth", "can-i", "*", "*", "--all-namespaces"}, `^yes$`)
	check([]string{"auth", "whoami"}, `^ATTRIBUTE\s+VALUE$`, `^Username\s+kubernetes-admin$`,
		`^Groups\s+\[system:masters system:authenticated\]$`)
	// TokenRequest: a JWT for the default service account.
	out, errOut, err := k.run(t, "-n", "default", "create", "token", "default")
	if err != nil {
		t.Errorf("create token: %v\nstderr: %s", err, errOut)
		return
	}
	parts := strings.Split(strings.TrimSpace(out), ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is not a JWT", out)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatalf("token payload: %v", err)
	}
	var claims struct {
		Sub string   `json:"sub"`
		Aud []string `json:"aud"`
		Exp int64    `json:"exp"`
		Iat int64    `json:"iat"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatalf("token claims: %v\n%s", err, payload)
	}
	if claims.Sub != "system:serviceaccount:default:default" || claims.Exp-claims.Iat != 3600 {
		t.Errorf("token claims %s: want sub system:serviceaccount:default:default and a 1h lifetime", payload)
	}
}
