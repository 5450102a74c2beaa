package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// markReady marks pod Running and Ready through the status API (skiff has
// no kubelet yet).
func markReady(t *testing.T, k kc, ns, pod string) {
	t.Helper()
	k.ok(t, "-n", ns, "patch", "pod", pod, "--subresource=status", "--type=merge",
		"-p", `{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`)
}

func podNames(t *testing.T, k kc, ns, selector string) string {
	t.Helper()
	out, _, _ := k.run(t, "-n", ns, "get", "pods", "-l", selector, "-o", `jsonpath={range .items[?(@.metadata.deletionTimestamp)]}{end}{range .items[*]}{.metadata.name}{" "}{end}`)
	return strings.TrimSpace(out)
}

// TestStatefulSets: the StatefulSet controller in `skiff up` driven by
// kubectl. A 3-replica OrderedReady set creates web-0, web-1, web-2 one
// at a time as the previous is marked Ready, with its PVCs; `rollout
// status`, `set image` (pods replaced from the highest ordinal), `rollout
// history` and `rollout undo` read and write its ControllerRevisions.
func TestStatefulSets(t *testing.T) {
	t.Parallel()
	c := shared(t)
	k := c.k()
	const ns = "e2e-statefulsets"
	createNS(t, c, ns)
	k.withStdin(`apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  clusterIP: None
  selector: {app: web}
  ports: [{port: 80}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  replicas: 3
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: nginx, image: "nginx:1.25"}]}
  volumeClaimTemplates:
  - metadata: {name: www}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
`).ok(t, "-n", ns, "apply", "-f", "-")

	for i, want := range []string{"web-0", "web-0 web-1", "web-0 web-1 web-2"} {
		eventually(t, 30*time.Second, want, func() (bool, string) {
			out := podNames(t, k, ns, "app=web")
			return out == want, out
		})
		pod := fmt.Sprintf("web-%d", i)
		meta := jsonpath(t, k, `{.spec.hostname}.{.spec.subdomain} {.metadata.labels.statefulset\.kubernetes\.io/pod-name} {.metadata.labels.apps\.kubernetes\.io/pod-index} {.spec.volumes[0].persistentVolumeClaim.claimName} {.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}`,
			"-n", ns, "get", "pod", pod)
		wantEqual(t, pod, meta, fmt.Sprintf("%[1]s.web %[1]s %[2]d www-%[1]s StatefulSet/web", pod, i))
		// The next ordinal waits for this one: still only i+1 pods.
		wantEqual(t, "pods before "+pod+" is ready", podNames(t, k, ns, "app=web"), want)
		markReady(t, k, ns, pod)
	}
	wantMatch(t, k.ok(t, "-n", ns, "get", "pvc", "-o", "name"), `persistentvolumeclaim/www-web-0\n`, `persistentvolumeclaim/www-web-2\n`)
	out := k.withTimeout(60*time.Second).ok(t, "-n", ns, "rollout", "status", "statefulset/web", "--timeout=50s")
	// A RollingUpdate with a partition (defaulted to 0, as upstream) reads
	// as a partitioned roll out to kubectl.
	wantContains(t, out, "partitioned roll out complete: 3 new pods have been updated...")
	wantTable(t, k.ok(t, "-n", ns, "get", "statefulset", "web"), []string{"NAME", "READY", "AGE"}, []string{"web", "3/3", age})
	rev1 := jsonpath(t, k, "{.status.currentRevision}", "-n", ns, "get", "statefulset", "web")
	wantEqual(t, "controller-revision-hash of web-0", jsonpath(t, k, `{.metadata.labels.controller-revision-hash}`, "-n", ns, "get", "pod", "web-0"), rev1)
	wantMatch(t, k.ok(t, "-n", ns, "get", "controllerrevisions"), `^NAME\s+CONTROLLER\s+REVISION\s+AGE$`, `^`+regexp.QuoteMeta(rev1)+`\s+statefulset\.apps/web\s+1\s+`)

	stop := playKubelet(t, k, ns)
	defer stop()
	wantLines(t, k.ok(t, "-n", ns, "set", "image", "statefulset/web", "nginx=nginx:1.27"), "statefulset.apps/web image updated")
	k.withTimeout(90*time.Second).ok(t, "-n", ns, "rollout", "status", "statefulset/web", "--timeout=80s")
	wantEqual(t, "images", jsonpath(t, k, `{range .items[*]}{.spec.containers[0].image} {end}`, "-n", ns, "get", "pods", "-l", "app=web"),
		"nginx:1.27 nginx:1.27 nginx:1.27 ")
	wantMatch(t, k.ok(t, "-n", ns, "rollout", "history", "statefulset/web"), `REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>\n`)
	wantMatch(t, k.ok(t, "-n", ns, "rollout", "history", "statefulset/web", "--revision=1"), `Image:\s+nginx:1\.25`)

	wantLines(t, k.ok(t, "-n", ns, "rollout", "undo", "statefulset/web"), "statefulset.apps/web rolled back")
	k.withTimeout(90*time.Second).ok(t, "-n", ns, "rollout", "status", "statefulset/web", "--timeout=80s")
	wantEqual(t, "image after undo", jsonpath(t, k, "{.spec.template.spec.containers[0].image}", "-n", ns, "get", "statefulset", "web"), "nginx:1.25")
	wantEqual(t, "current revision after undo", jsonpath(t, k, "{.status.currentRevision}", "-n", ns, "get", "statefulset", "web"), rev1)
	wantMatch(t, k.ok(t, "-n", ns, "rollout", "history", "statefulset/web"), `\n2\s+<none>\n3\s+<none>\n`)

	eventually(t, 30*time.Second, "the StatefulSet's events", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "events", "--field-selector=involvedObject.kind=StatefulSet,involvedObject.name=web",
			"-o", `jsonpath={range .items[*]}{.reason}: {.message}{"\n"}{end}`)
		return strings.Contains(out, "SuccessfulCreate: create Pod web-0 in StatefulSet web successful\n") &&
			strings.Contains(out, "SuccessfulCreate: create Claim www-web-2 Pod web-2 in StatefulSet web success\n") &&
			strings.Contains(out, "SuccessfulDelete: delete Pod web-2 in StatefulSet web successful\n"), out
	})
	wantLines(t, k.ok(t, "-n", ns, "scale", "statefulset", "web", "--replicas=1"), "statefulset.apps/web scaled")
	eventually(t, 30*time.Second, "scaled down to web-0", func() (bool, string) {
		out := podNames(t, k, ns, "app=web")
		return out == "web-0", out
	})
	// Retained claims (the default policy) stay.
	wantMatch(t, k.ok(t, "-n", ns, "get", "pvc", "-o", "name"), `persistentvolumeclaim/www-web-2\n`)

	// whenScaled/whenDeleted: Delete: the claims get owner references and
	// the garbage collector removes them with the scaled-down pod, then
	// with the set.
	k.withStdin(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  podManagementPolicy: Parallel
  serviceName: db
  selector: {matchLabels: {app: db}}
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete, whenScaled: Delete}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: "postgres:16"}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
`).ok(t, "-n", ns, "apply", "-f", "-")
	claims := func() string {
		out, _, _ := k.run(t, "-n", ns, "get", "pvc", "-l", "app=db", "-o", `jsonpath={range .items[?(@.metadata.ownerReferences)]}{.metadata.name}={.metadata.ownerReferences[0].kind} {end}`)
		return strings.TrimSpace(out)
	}
	eventually(t, 30*time.Second, "db's claims owned by the set", func() (bool, string) {
		out := claims()
		return out == "data-db-0=StatefulSet data-db-1=StatefulSet", out
	})
	k.ok(t, "-n", ns, "scale", "statefulset", "db", "--replicas=1")
	eventually(t, 30*time.Second, "data-db-1 collected with db-1", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "pvc", "-l", "app=db", "-o", "name")
		return strings.TrimSpace(out) == "persistentvolumeclaim/data-db-0", out
	})
	k.ok(t, "-n", ns, "delete", "statefulset", "db")
	eventually(t, 30*time.Second, "data-db-0 collected with the set", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "pvc", "-l", "app=db", "-o", "name")
		return strings.TrimSpace(out) == "", out
	})
}

// TestDaemonSets: the DaemonSet controller in `skiff up` (a private
// cluster: its Node objects would reach the shared cluster's DaemonSets).
// Two Ready nodes get one pod each, bound by a metadata.name node
// affinity; `rollout status`, `set image`, `rollout history` and `rollout
// undo` work; a node that stops matching loses its pod.
func TestDaemonSets(t *testing.T) {
	t.Parallel()
	c := ownCluster(t, "memory", "--disable=kubelet") // only the test's two nodes
	k := c.k()
	const ns = "e2e-daemonsets"
	createNS(t, c, ns)
	for _, n := range []string{"node-a", "node-b"} {
		k.withStdin(fmt.Sprintf("apiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {pool: agents}}\n", n)).ok(t, "apply", "-f", "-")
	}
	// Ready and heartbeating: the node lifecycle controller takes off
	// admission's not-ready taint and keeps the nodes untainted.
	stopNodes := playNodeKubelets(t, k, "node-a", "node-b")
	defer stopNodes()
	k.withStdin(`apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      nodeSelector: {pool: agents}
      containers: [{name: agent, image: "busybox:1.36"}]
`).ok(t, "-n", ns, "apply", "-f", "-")
	eventually(t, 30*time.Second, "one pod per node", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "pods", "-l", "app=agent", "-o",
			`jsonpath={range .items[*]}{.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values[0]}{" "}{end}`)
		f := strings.Fields(out)
		return len(f) == 2 && f[0] != f[1], out
	})
	stop := playKubelet(t, k, ns)
	defer stop()
	out := k.withTimeout(60*time.Second).ok(t, "-n", ns, "rollout", "status", "daemonset/agent", "--timeout=50s")
	wantContains(t, out, `daemon set "agent" successfully rolled out`)
	wantTable(t, k.ok(t, "-n", ns, "get", "daemonset", "agent"),
		[]string{"NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE", "SELECTOR", "AGE"},
		[]string{"agent", "2", "2", "2", "2", "2", "pool=agents", age})

	wantLines(t, k.ok(t, "-n", ns, "set", "image", "daemonset/agent", "agent=busybox:1.37"), "daemonset.apps/agent image updated")
	k.withTimeout(90*time.Second).ok(t, "-n", ns, "rollout", "status", "daemonset/agent", "--timeout=80s")
	wantEqual(t, "images", jsonpath(t, k, `{range .items[*]}{.spec.containers[0].image} {.metadata.labels.pod-template-generation} {end}`, "-n", ns, "get", "pods", "-l", "app=agent"),
		"busybox:1.37 2 busybox:1.37 2 ")
	wantMatch(t, k.ok(t, "-n", ns, "rollout", "history", "daemonset/agent"), `REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>\n`)
	wantLines(t, k.ok(t, "-n", ns, "rollout", "undo", "daemonset/agent"), "daemonset.apps/agent rolled back")
	k.withTimeout(90*time.Second).ok(t, "-n", ns, "rollout", "status", "daemonset/agent", "--timeout=80s")
	wantEqual(t, "image after undo", jsonpath(t, k, "{.spec.template.spec.containers[0].image}", "-n", ns, "get", "daemonset", "agent"), "busybox:1.36")
	wantMatch(t, k.ok(t, "-n", ns, "rollout", "history", "daemonset/agent"), `\n2\s+<none>\n3\s+<none>\n`)

	eventually(t, 30*time.Second, "the DaemonSet's events", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "events", "--field-selector=involvedObject.kind=DaemonSet,involvedObject.name=agent",
			"-o", `jsonpath={range .items[*]}{.reason}: {.message}{"\n"}{end}`)
		return regexp.MustCompile(`SuccessfulCreate: Created pod: agent-[a-z0-9]{5}\n`).MatchString(out) &&
			regexp.MustCompile(`SuccessfulDelete: Deleted pod: agent-[a-z0-9]{5}\n`).MatchString(out), out
	})
	k.ok(t, "label", "node", "node-b", "pool-")
	eventually(t, 30*time.Second, "node-b's pod gone", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "daemonset", "agent", "-o", "jsonpath={.status.desiredNumberScheduled} {.status.currentNumberScheduled} {.status.numberMisscheduled}")
		return out == "1 1 0", out
	})
}
