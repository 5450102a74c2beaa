package e2e

import (
	"strings"
	"testing"
	"time"
)

// The CronJob controller in `skiff up`, through kubectl: create cronjob
// (stored with upstream's table columns), create job --from=cronjob (a
// Job owned by the CronJob, which the controller then reports as a Job it
// did not create). Schedule times themselves are tested with fake clocks
// in pkg/controller/cronjob: nothing here waits for a minute to pass.
func kubectlCronJob(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-cronjob"
	createNS(t, c, ns)
	wantLines(t, k.ok(t, "-n", ns, "create", "cronjob", "x", "--image=busybox", "--schedule=*/1 * * * *"), "cronjob.batch/x created")
	// The controller may already have started the first minute's Job.
	wantMatch(t, k.ok(t, "-n", ns, "get", "cronjobs"),
		`^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE$`,
		`^x\s+\*/1 \* \* \* \*\s+<none>\s+False\s+(?:0\s+<none>|1\s+(?:`+age+`))\s+(?:`+age+`)$`)
	wantMatch(t, k.ok(t, "-n", ns, "get", "cronjobs", "-o", "wide"),
		`^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$`,
		`^x\s+\*/1 \* \* \* \*\s+<none>\s+False\s+.*\sx\s+busybox\s+<none>$`)

	wantLines(t, k.ok(t, "-n", ns, "create", "job", "--from=cronjob/x", "manual"), "job.batch/manual created")
	wantEqual(t, "owner", jsonpath(t, k, `{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {.metadata.annotations.cronjob\.kubernetes\.io/instantiate}`, "-n", ns, "get", "job", "manual"),
		"CronJob/x manual")
	eventually(t, 30*time.Second, "the controller's UnexpectedJob event", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "events", "--field-selector", "involvedObject.kind=CronJob,involvedObject.name=x",
			"-o", `jsonpath={range .items[*]}{.type} {.reason} {.source.component}: {.message}{"\n"}{end}`)
		return strings.Contains(out, "Warning UnexpectedJob cronjob-controller: Saw a job that the controller did not create or forgot: manual\n"), out
	})

	// Suspended, then deleted: its Jobs go with it (garbage collector).
	k.ok(t, "-n", ns, "patch", "cronjob", "x", "--type=merge", "-p", `{"spec":{"suspend":true}}`)
	wantMatch(t, k.ok(t, "-n", ns, "get", "cronjob", "x"), `^x\s+\*/1 \* \* \* \*\s+<none>\s+True\s+`)
	k.ok(t, "-n", ns, "delete", "cronjob", "x")
	eventually(t, 30*time.Second, "the Jobs deleted with their CronJob", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "jobs", "-o", "name")
		return out == "", out
	})
}

// The TTL-after-finished controller in `skiff up`: a finished Job with
// ttlSecondsAfterFinished 0 is deleted. The Job is suspended (no pods)
// and finished through the status API, standing in for pods that ran.
func kubectlTTLAfterFinished(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-ttl"
	createNS(t, c, ns)
	k.withStdin(`apiVersion: batch/v1
kind: Job
metadata: {name: done, namespace: `+ns+`}
spec:
  suspend: true
  ttlSecondsAfterFinished: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: kept, namespace: `+ns+`}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
`).ok(t, "apply", "-f", "-")
	now := time.Now().UTC().Format(time.RFC3339)
	for _, j := range []string{"done", "kept"} {
		k.ok(t, "-n", ns, "patch", "job", j, "--subresource=status", "--type=merge", "-p",
			`{"status":{"startTime":"`+now+`","completionTime":"`+now+`","succeeded":1,"conditions":[`+
				`{"type":"SuccessCriteriaMet","status":"True","lastTransitionTime":"`+now+`"},`+
				`{"type":"Complete","status":"True","lastTransitionTime":"`+now+`"}]}}`)
	}
	eventually(t, 30*time.Second, "the finished Job with a TTL deleted", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "jobs", "-o", "name")
		return out == "job.batch/kept\n", out
	})
}

// TestPodGCStandalone: `skiff controller-manager
// --terminated-pod-gc-threshold=2 --controllers=podgc` deletes the oldest
// terminated pods beyond two at its first pass, and leaves running ones.
func TestPodGCStandalone(t *testing.T) {
	t.Parallel()
	c := ownCluster(t, "memory", "--disable=controller-manager,scheduler")
	k := c.k()
	const ns = "e2e-podgc"
	wantLines(t, k.ok(t, "create", "namespace", ns), "namespace/"+ns+" created")
	// No controller manager yet: the service account pods need is ours.
	k.ok(t, "-n", ns, "create", "serviceaccount", "default")
	for _, p := range []string{"p1", "p2", "p3", "p4", "running"} {
		k.ok(t, "-n", ns, "run", p, "--image=busybox", "--restart=Never")
		phase := "Succeeded"
		if p == "running" {
			phase = "Running"
		}
		k.ok(t, "-n", ns, "patch", "pod", p, "--subresource=status", "--type=merge", "-p", `{"status":{"phase":"`+phase+`"}}`)
	}
	startCM(t, c, "--terminated-pod-gc-threshold=2", "--controllers=podgc")
	eventually(t, 60*time.Second, "two terminated pods collected", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "pods", "-o", "name")
		return out == "pod/p3\npod/p4\npod/running\n", out
	})
}
