package e2e

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// playKubelet marks the namespace's pods Running and Ready through the
// status API until stopped (skiff has no kubelet yet), so that rollouts
// can finish.
func playKubelet(t *testing.T, k kc, ns string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(200 * time.Millisecond):
			}
			out, _, err := k.run(t, "-n", ns, "get", "pods", "-o", `jsonpath={range .items[?(@.status.phase!="Running")]}{.metadata.name}{"\n"}{end}`)
			if err != nil {
				continue
			}
			for _, p := range strings.Fields(out) {
				_, _, _ = k.run(t, "-n", ns, "patch", "pod", p, "--subresource=status", "--type=merge",
					"-p", `{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`)
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

func rolloutStatus(t *testing.T, k kc, ns string) {
	t.Helper()
	out := k.withTimeout(90*time.Second).ok(t, "-n", ns, "rollout", "status", "deployment/web", "--timeout=80s")
	wantContains(t, out, `deployment "web" successfully rolled out`)
}

// The workload controllers in `skiff up`: create deployment → ReplicaSet
// and pods; rollout status, set image (a new ReplicaSet), history, undo,
// scale, pause/resume and restart, with pods marked Ready through the
// status API.
func kubectlRollout(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-rollout"
	createNS(t, c, ns)
	wantLines(t, k.ok(t, "-n", ns, "create", "deployment", "web", "--image=nginx:1.25", "--replicas=2"), "deployment.apps/web created")
	eventually(t, 30*time.Second, "a ReplicaSet and two pods", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "rs,pods", "-o", "name")
		var rs, pods int
		for _, l := range strings.Fields(out) {
			switch {
			case strings.HasPrefix(l, "replicaset.apps/web-"):
				rs++
			case strings.HasPrefix(l, "pod/web-"):
				pods++
			}
		}
		return rs == 1 && pods == 2, out
	})
	hash := jsonpath(t, k, `{.items[0].metadata.labels.pod-template-hash}`, "-n", ns, "get", "rs")
	wantMatch(t, k.ok(t, "-n", ns, "get", "pods", "-o", "name"), `pod/web-`+hash+`-[bcdfghjklmnpqrstvwxz2456789]{5}\n`)

	stop := playKubelet(t, k, ns)
	defer stop()
	rolloutStatus(t, k, ns)
	wantTable(t, k.ok(t, "-n", ns, "get", "deploy", "web"), []string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"},
		[]string{"web", "2/2", "2", "2", age})

	wantLines(t, k.ok(t, "-n", ns, "set", "image", "deployment/web", "nginx=nginx:1.27"), "deployment.apps/web image updated")
	rolloutStatus(t, k, ns)
	out := k.ok(t, "-n", ns, "get", "rs", "-o", `jsonpath={range .items[*]}{.metadata.annotations.deployment\.kubernetes\.io/revision} {.spec.replicas} {.spec.template.spec.containers[0].image}{"\n"}{end}`)
	wantContains(t, out, "1 0 nginx:1.25\n", "2 2 nginx:1.27\n")
	wantMatch(t, k.ok(t, "-n", ns, "rollout", "history", "deployment/web"), `REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>\n`)

	wantLines(t, k.ok(t, "-n", ns, "rollout", "undo", "deployment/web"), "deployment.apps/web rolled back")
	rolloutStatus(t, k, ns)
	wantEqual(t, "image after undo", jsonpath(t, k, "{.spec.template.spec.containers[0].image}", "-n", ns, "get", "deploy", "web"), "nginx:1.25")
	wantEqual(t, "revision after undo", jsonpath(t, k, `{.metadata.annotations.deployment\.kubernetes\.io/revision}`, "-n", ns, "get", "deploy", "web"), "3")
	wantMatch(t, k.ok(t, "-n", ns, "rollout", "history", "deployment/web"), `\n2\s+<none>\n3\s+<none>\n`)

	wantLines(t, k.ok(t, "-n", ns, "scale", "deployment", "web", "--replicas=3"), "deployment.apps/web scaled")
	rolloutStatus(t, k, ns)
	wantTable(t, k.ok(t, "-n", ns, "get", "deploy", "web"), []string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"},
		[]string{"web", "3/3", "3", "3", age})

	wantLines(t, k.ok(t, "-n", ns, "rollout", "pause", "deployment/web"), "deployment.apps/web paused")
	k.ok(t, "-n", ns, "set", "image", "deployment/web", "nginx=nginx:1.28")
	eventually(t, 30*time.Second, "the paused condition", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "deploy", "web", "-o", `jsonpath={.status.conditions[?(@.type=="Progressing")].reason}`)
		return out == "DeploymentPaused", out
	})
	if n := strings.Count(k.ok(t, "-n", ns, "get", "rs", "-o", "name"), "\n"); n != 2 {
		t.Fatalf("%d ReplicaSets while paused, want 2", n)
	}
	wantLines(t, k.ok(t, "-n", ns, "rollout", "resume", "deployment/web"), "deployment.apps/web resumed")
	rolloutStatus(t, k, ns)
	wantLines(t, k.ok(t, "-n", ns, "rollout", "restart", "deployment/web"), "deployment.apps/web restarted")
	rolloutStatus(t, k, ns)
	wantMatch(t, k.ok(t, "-n", ns, "rollout", "history", "deployment/web"), `\n5\s+<none>\n`)
}
