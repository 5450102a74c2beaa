package compat

// Upstream's own components against skiff's API server: kube-scheduler and
// kube-controller-manager (built from the Go module proxy by
// ../shared/tools/build-upstream.sh) and kwok (fake nodes and pod
// lifecycles) attach to `skiff up --disable=controller-manager,scheduler`,
// sync their informers and do their work: a Deployment gets a ReplicaSet
// and Pods, the Pods are bound to kwok's nodes and become Running, and a
// deleted Pod stays, terminating, until kwok (the node's agent) finishes it.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// upstreamVersion and kwokVersion are what build-upstream.sh builds.
const (
	upstreamVersion = "v1.34.4"
	kwokVersion     = "v0.8.0"
)

// upstreamWait bounds each wait on upstream's components.
const upstreamWait = 90 * time.Second

// upstreamBinaries builds (or reuses) kube-scheduler, kube-controller-manager
// and kwok in a cache directory shared across runs.
func upstreamBinaries(t *testing.T) string {
	t.Helper()
	if os.Getenv("SKIFF_SKIP_UPSTREAM") != "" {
		t.Skip("SKIFF_SKIP_UPSTREAM is set")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "skiff-upstream-"+upstreamVersion)
	need := false
	for _, b := range []string{"kube-scheduler", "kube-controller-manager", "kwok"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			need = true
		}
	}
	if need {
		// Only building needs the script (a worktree finds the cache alone).
		_, file, _, _ := runtime.Caller(0)
		repo := filepath.Join(filepath.Dir(file), "..", "..")
		script := filepath.Join(repo, "..", "shared", "tools", "build-upstream.sh")
		if _, err := os.Stat(script); err != nil {
			t.Fatalf("upstream's components are built by %s, which is missing (set SKIFF_SKIP_UPSTREAM=1 to skip): %v", script, err)
		}
		cmd := exec.Command("bash", script, dir, "kube-scheduler", "kube-controller-manager", "kwok")
		cmd.Env = append(os.Environ(), "K8S_VERSION="+upstreamVersion, "KWOK_VERSION="+kwokVersion)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building upstream's components: %v\n%s", err, out)
		}
	}
	return dir
}

// kwokStages are kwok's own stage files (fast node start, heartbeat with a
// lease, the general pod lifecycle), read from its module.
func kwokStages(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(strings.TrimSpace(string(out)), "sigs.k8s.io", "kwok@"+kwokVersion, "kustomize", "stage")
	var files []string
	for _, dir := range []string{"node/fast", "node/heartbeat-with-lease", "pod/general"} {
		matches, _ := filepath.Glob(filepath.Join(base, dir, "*.yaml"))
		for _, m := range matches {
			if !strings.HasSuffix(m, "kustomization.yaml") {
				files = append(files, m)
			}
		}
	}
	if len(files) == 0 {
		t.Fatalf("no kwok stages under %s", base)
	}
	return files
}

// proc is a started component whose output is kept for failures.
type proc struct {
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
}

func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

func startProc(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	p := &proc{name: filepath.Base(name)}
	p.cmd = exec.Command(name, args...)
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	t.Cleanup(func() {
		p.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("--- %s output (last 60 lines):\n%s", p.name, tail(p.output(), 60))
		}
	})
	return p
}

func tail(s string, n int) string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(upstreamWait)
	var last string
	for time.Now().Before(deadline) {
		ok, detail := cond()
		if ok {
			return
		}
		last = detail
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s (last: %s)", what, last)
}

func TestUpstreamComponentsAttach(t *testing.T) {
	bin := upstreamBinaries(t)
	work := t.TempDir()
	skiff := filepath.Join(work, "skiff")
	// Built in the main module (its go.sum has the binary's dependencies).
	build := exec.Command("go", "build", "-o", skiff, "./cmd/skiff")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building skiff: %v\n%s", err, out)
	}
	data := filepath.Join(work, "data")
	port := freeTCPPort(t)
	startProc(t, skiff, "up", "--storage=memory", "--data-dir", data, "--secure-port", strconv.Itoa(port),
		"--disable=controller-manager,scheduler")
	kubeconfig := filepath.Join(data, "kubeconfig")
	waitFor(t, "skiff's kubeconfig", func() (bool, string) {
		_, err := os.Stat(kubeconfig)
		return err == nil, fmt.Sprint(err)
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	waitFor(t, "skiff to serve", func() (bool, string) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})

	pki := filepath.Join(data, "pki")
	// As kubeadm runs them against skiff's default Node,RBAC: each with the
	// identity skiff up issued it (system:kube-scheduler,
	// system:kube-controller-manager), the controllers as their kube-system
	// service accounts: upstream's components work with skiff's bootstrap
	// policy, service accounts and TokenRequest.
	schedKC, kcmKC := filepath.Join(data, "scheduler.kubeconfig"), filepath.Join(data, "controller-manager.kubeconfig")
	sched := startProc(t, filepath.Join(bin, "kube-scheduler"), "--kubeconfig", schedKC,
		"--authentication-kubeconfig", schedKC, "--authorization-kubeconfig", schedKC,
		"--leader-elect=false", "--secure-port", strconv.Itoa(freeTCPPort(t)), "--bind-address=127.0.0.1")
	kcm := startProc(t, filepath.Join(bin, "kube-controller-manager"), "--kubeconfig", kcmKC,
		"--authentication-kubeconfig", kcmKC, "--authorization-kubeconfig", kcmKC, "--use-service-account-credentials",
		"--leader-elect=false", "--secure-port", strconv.Itoa(freeTCPPort(t)), "--bind-address=127.0.0.1",
		"--controllers=*", "--root-ca-file", filepath.Join(pki, "ca.crt"),
		"--service-account-private-key-file", filepath.Join(pki, "sa.key"),
		"--cluster-signing-cert-file", filepath.Join(pki, "ca.crt"), "--cluster-signing-key-file", filepath.Join(pki, "ca.key"))
	kwokArgs := []string{"--kubeconfig", kubeconfig, "--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--server-address", "127.0.0.1:" + strconv.Itoa(freeTCPPort(t)), "--node-lease-duration-seconds=40"}
	for _, f := range kwokStages(t) {
		kwokArgs = append(kwokArgs, "--config", f)
	}
	kwok := startProc(t, filepath.Join(bin, "kwok"), kwokArgs...)

	// Three fake nodes, made Ready by kwok.
	for i := 0; i < 3; i++ {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:        fmt.Sprintf("kwok-node-%d", i),
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
			Labels:      map[string]string{"type": "kwok", "kubernetes.io/hostname": fmt.Sprintf("kwok-node-%d", i)},
		}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "kwok.x-k8s.io/node", Value: "fake", Effect: corev1.TaintEffectNoSchedule}}}}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "kwok's nodes to be Ready", func() (bool, string) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "type=kwok"})
		if err != nil {
			return false, err.Error()
		}
		ready := 0
		for _, n := range nodes.Items {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready == 3, fmt.Sprintf("%d of 3 ready", ready)
	})

	labels := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(4)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers:  []corev1.Container{{Name: "web", Image: "nginx"}},
					Tolerations: []corev1.Toleration{{Key: "kwok.x-k8s.io/node", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
						NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "type", Operator: corev1.NodeSelectorOpIn, Values: []string{"kwok"}}}}},
					}}},
				},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the Deployment's ReplicaSet", func() (bool, string) {
		rss, err := cs.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err.Error()
		}
		return len(rss.Items) == 1 && metav1.IsControlledBy(&rss.Items[0], mustGetDeployment(ctx, t, cs)), fmt.Sprintf("%d replica sets", len(rss.Items))
	})
	waitFor(t, "4 pods bound to kwok nodes and Running", func() (bool, string) {
		pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err.Error()
		}
		running := 0
		for _, p := range pods.Items {
			if strings.HasPrefix(p.Spec.NodeName, "kwok-node-") && p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == 4, fmt.Sprintf("%d of %d running", running, len(pods.Items))
	})
	waitFor(t, "the Deployment to be available", func() (bool, string) {
		d := mustGetDeployment(ctx, t, cs)
		return d.Status.AvailableReplicas == 4, fmt.Sprintf("%+v", d.Status)
	})

	// A pod deleted with a grace period stays, terminating, until kwok
	// deletes it at its deletionTimestamp; the ReplicaSet replaces it.
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	victim := pods.Items[0].Name
	if err := cs.CoreV1().Pods("default").Delete(ctx, victim, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(3))}); err != nil {
		t.Fatal(err)
	}
	p, err := cs.CoreV1().Pods("default").Get(ctx, victim, metav1.GetOptions{})
	if err != nil || p.DeletionTimestamp == nil {
		t.Fatalf("right after a graceful delete the pod should be terminating: %v %v", p, err)
	}
	waitFor(t, "kwok to finish the deletion", func() (bool, string) {
		_, err := cs.CoreV1().Pods("default").Get(ctx, victim, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	waitFor(t, "the ReplicaSet to replace the pod", func() (bool, string) {
		d := mustGetDeployment(ctx, t, cs)
		return d.Status.AvailableReplicas == 4 && d.Status.Replicas == 4, fmt.Sprintf("%+v", d.Status)
	})
	// Every informer synced: no component is still missing a resource.
	for _, p := range []*proc{sched, kcm, kwok} {
		if out := p.output(); strings.Contains(out, "the server could not find the requested resource") {
			t.Errorf("%s asked for a resource skiff does not serve:\n%s", p.name, grepLines(out, "could not find the requested resource", 5))
		}
	}
	// kwok's own delete (grace 0, at the deletionTimestamp) is the one that
	// removed the pod: it logs "Delete pod" only when its delete succeeded.
	// (kwok may delete a second time on the event of its own delete and
	// get 404, against upstream's API server too.)
	if out := kwok.output(); !strings.Contains(grepLines(out, `"msg":"Delete pod"`, 100), `"pod":"default/`+victim+`"`) {
		t.Errorf("kwok never deleted %s itself (something else removed it first):\n%s", victim, grepLines(out, victim, 10))
	}
}

func mustGetDeployment(ctx context.Context, t *testing.T, cs kubernetes.Interface) *appsv1.Deployment {
	d, err := cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func grepLines(s, sub string, n int) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
			if len(out) == n {
				break
			}
		}
	}
	return strings.Join(out, "\n")
}
