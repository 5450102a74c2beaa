package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// snapshotExpr prints "Kind/namespace/name uid resourceVersion" per object.
const snapshotExpr = `{range .items[*]}{.kind}/{.metadata.namespace}/{.metadata.name} {.metadata.uid} {.metadata.resourceVersion}{"\n"}{end}`

// snapshotTypes are the kinds compared across a restart: nothing in them
// is rewritten by a restarting API server upstream.
const snapshotTypes = "namespaces,configmaps,secrets,deployments,services,serviceaccounts,pods,roles"

type objState struct{ uid, rv string }

func snapshot(t *testing.T, k kc) map[string]objState {
	t.Helper()
	out := k.ok(t, "get", snapshotTypes, "-A", "-o", "jsonpath="+snapshotExpr)
	m := map[string]objState{}
	for _, l := range lines(out) {
		f := strings.Fields(l)
		if len(f) != 3 {
			t.Fatalf("snapshot line %q", l)
		}
		m[f[0]] = objState{f[1], f[2]}
	}
	return m
}

// TestRestart stops skiff and starts it again on the same data directory:
// every object must come back unchanged (same uid and resourceVersion),
// the old kubeconfig must still work, and writes must continue with
// larger resourceVersions.
func TestRestart(t *testing.T) {
	t.Parallel()
	// Without controllers, which would keep writing (pods, status) while
	// the deployment settles: this is about what storage keeps.
	// (Nor the metrics-server: it points its Service at a new port each start.)
	c := ownCluster(t, "etcd", "--disable=controller-manager,kubelet,metrics-server")
	k := c.k()
	const ns = "e2e-restart"
	setupApp(t, c, ns)
	// Some history: an object updated several times, one deleted, a role.
	k.ok(t, "-n", ns, "create", "configmap", "updated", "--from-literal=v=0")
	for i := 1; i <= 3; i++ {
		k.ok(t, "-n", ns, "patch", "configmap", "updated", "--type=merge", "-p", `{"data":{"v":"`+strconv.Itoa(i)+`"}}`)
	}
	k.ok(t, "-n", ns, "create", "configmap", "gone")
	k.ok(t, "-n", ns, "delete", "configmap", "gone")
	k.ok(t, "-n", ns, "create", "role", "reader", "--verb=get,list", "--resource=pods")
	k.ok(t, "-n", ns, "scale", "deployment", "web", "--replicas=3")

	before := snapshot(t, k)
	for _, key := range []string{"Namespace//" + ns, "ConfigMap/" + ns + "/cfg", "ConfigMap/" + ns + "/updated",
		"Secret/" + ns + "/sec", "Deployment/" + ns + "/web", "Service/" + ns + "/web", "Role/" + ns + "/reader",
		"Namespace//default", "Service/default/kubernetes"} {
		if _, ok := before[key]; !ok {
			t.Errorf("snapshot before restart lacks %s", key)
		}
	}
	oldKubeconfig, err := os.ReadFile(c.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}

	if err := c.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := c.start(); err != nil {
		t.Fatalf("restart: %v", err)
	}

	after := snapshot(t, k)
	var keys []string
	for key := range before {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	maxRV := 0
	for _, key := range keys {
		b := before[key]
		if rv, _ := strconv.Atoi(b.rv); rv > maxRV {
			maxRV = rv
		}
		a, ok := after[key]
		switch {
		case !ok:
			t.Errorf("%s missing after restart", key)
		case a != b:
			t.Errorf("%s changed across restart: uid/rv %s/%s -> %s/%s", key, b.uid, b.rv, a.uid, a.rv)
		}
	}
	for key := range after {
		if _, ok := before[key]; !ok && strings.Contains(key, "/"+ns+"/") {
			t.Errorf("%s appeared after restart", key)
		}
	}
	if _, _, err := k.run(t, "-n", ns, "get", "configmap", "gone"); err == nil {
		t.Errorf("deleted configmap came back after restart")
	}
	wantEqual(t, "data after restart", jsonpath(t, k, "{.data.v}", "-n", ns, "get", "cm", "updated"), "3")
	wantEqual(t, "replicas after restart", jsonpath(t, k, "{.spec.replicas}", "-n", ns, "get", "deploy", "web"), "3")

	// The kubeconfig written before the restart still works (same CA,
	// same client certificate).
	oldPath := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(oldPath, oldKubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	old := k
	old.c = &cluster{kubeconfig: oldPath}
	wantEqual(t, "old kubeconfig", old.ok(t, "-n", ns, "get", "configmap", "cfg", "-o", "name"), "configmap/cfg")

	// Re-applying is a no-op; new writes get larger resourceVersions.
	out := k.withStdin(appManifest(ns, "nginx:1.25", "1")).ok(t, "apply", "-f", "-")
	wantLines(t, out,
		"namespace/"+ns+" unchanged",
		"configmap/cfg unchanged",
		"secret/sec configured",
		"deployment.apps/web configured", // replicas 3 -> 2 from the manifest
		"service/web unchanged")
	wantLines(t, k.ok(t, "-n", ns, "create", "configmap", "after-restart", "--from-literal=a=b"), "configmap/after-restart created")
	rv, err := strconv.Atoi(jsonpath(t, k, "{.metadata.resourceVersion}", "-n", ns, "get", "cm", "after-restart"))
	if err != nil || rv <= maxRV {
		t.Errorf("resourceVersion after restart = %d (%v), want > %d (the largest before the restart)", rv, err, maxRV)
	}
	wantLines(t, k.ok(t, "-n", ns, "delete", "configmap", "cfg"), `configmap "cfg" deleted`)
	out = k.ok(t, "-n", ns, "get", "configmaps", "-o", "name")
	wantContains(t, out, "configmap/after-restart\n", "configmap/updated\n")
	wantNotContains(t, out, "configmap/cfg\n")
}

// TestMemoryStorage: `skiff up --storage=memory` serves, and keeps nothing
// across a restart.
func TestMemoryStorage(t *testing.T) {
	t.Parallel()
	c := ownCluster(t, "memory")
	k := c.k()
	eventually(t, 10*time.Second, "ready message", func() (bool, string) {
		l := c.logs()
		return strings.Contains(l, "(storage: memory)"), l
	})
	wantMatch(t, c.logs(), `skiff is up at https://127\.0\.0\.1:`+strconv.Itoa(c.port)+` \(storage: memory\)\. Kubeconfig: `+
		regexp.QuoteMeta(c.kubeconfig))
	out := k.ok(t, "get", "namespaces")
	wantTable(t, out, []string{"NAME", "STATUS", "AGE"},
		[]string{"default", "Active", age},
		[]string{"kube-node-lease", "Active", age},
		[]string{"kube-public", "Active", age},
		[]string{"kube-system", "Active", age})
	wantLines(t, k.ok(t, "create", "configmap", "mem", "--from-literal=a=b"), "configmap/mem created")
	wantEqual(t, "configmap", jsonpath(t, k, "{.data.a}", "get", "configmap", "mem"), "b")
	out = k.ok(t, "get", "svc", "kubernetes")
	wantTable(t, out, []string{"NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"},
		[]string{"kubernetes", "ClusterIP", `10\.96\.0\.1`, "<none>", "443/TCP", age})

	if err := c.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := c.start(); err != nil {
		t.Fatalf("restart: %v", err)
	}
	errOut := k.fails(t, "get", "configmap", "mem")
	wantEqual(t, "memory storage after restart", errOut, `Error from server (NotFound): configmaps "mem" not found`)
	wantMatch(t, k.ok(t, "get", "namespaces"), `^default\s+Active\s+`)
}

func TestSkiffVersion(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(skiffBin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("skiff version: %v\n%s", err, out)
	}
	wantMatch(t, string(out), `^skiff \S+ \(Kubernetes API v1\.37\.2, go1\.[0-9.]+, [a-z0-9]+/[a-z0-9]+\)$`)
	if n := len(lines(string(out))); n != 1 {
		t.Errorf("skiff version printed %d lines, want 1", n)
	}
}

func TestSkiffUpBadFlags(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(skiffBin, "up", "--data-dir", t.TempDir(), "--storage", "sqlite")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("skiff up --storage=sqlite succeeded:\n%s", out)
	}
	wantContains(t, string(out), `--storage must be etcd or memory, not "sqlite"`)
}
