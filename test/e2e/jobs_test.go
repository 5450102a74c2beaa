package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestJobs: the Job controller in `skiff up` driven by kubectl. A
// created Job gets a pod with upstream's labels, controller reference and
// tracking finalizer; the pod marked Succeeded through the status API
// completes the Job (`kubectl get jobs`, `kubectl wait`); an Indexed Job
// gets one pod per index named <job>-<index>-..., and its pods go when
// it is deleted.
func TestJobs(t *testing.T) {
	t.Parallel()
	c := shared(t)
	k := c.k()
	const ns = "e2e-jobs"
	createNS(t, c, ns)

	wantLines(t, k.ok(t, "-n", ns, "create", "job", "pi", "--image=busybox", "--", "true"), "job.batch/pi created")
	uid := jsonpath(t, k, "{.metadata.uid}", "-n", ns, "get", "job", "pi")
	var pod string
	eventually(t, 30*time.Second, "the Job's pod", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "pods", "-l", "batch.kubernetes.io/job-name=pi", "-o", "name")
		pod = strings.TrimPrefix(strings.TrimSpace(out), "pod/")
		return pod != "" && !strings.Contains(pod, "\n"), out
	})
	wantMatch(t, pod, `^pi-[bcdfghjklmnpqrstvwxz2456789]{5}$`)
	meta := jsonpath(t, k, `{.metadata.labels.batch\.kubernetes\.io/controller-uid} {.metadata.labels.controller-uid} {.metadata.labels.job-name} {.metadata.finalizers} {.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {.metadata.ownerReferences[0].controller}`,
		"-n", ns, "get", "pod", pod)
	wantEqual(t, "pod metadata", meta, fmt.Sprintf(`%[1]s %[1]s pi ["batch.kubernetes.io/job-tracking"] Job/pi true`, uid))
	eventually(t, 30*time.Second, "status.active 1", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "job", "pi", "-o", "jsonpath={.status.active} {.status.startTime}")
		return strings.HasPrefix(out, "1 2"), out
	})
	wantMatch(t, k.ok(t, "-n", ns, "get", "jobs"), `^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE$`, `^pi\s+Running\s+0/1\s+`)

	k.ok(t, "-n", ns, "patch", "pod", pod, "--subresource=status", "--type=merge", "-p", `{"status":{"phase":"Succeeded"}}`)
	wantLines(t, k.withTimeout(40*time.Second).ok(t, "-n", ns, "wait", "--for=condition=complete", "job/pi", "--timeout=30s"), "job.batch/pi condition met")
	wantMatch(t, k.ok(t, "-n", ns, "get", "jobs"), `^pi\s+Complete\s+1/1\s+\S+\s+(?:`+age+`)$`)
	wantEqual(t, "conditions", jsonpath(t, k, `{range .status.conditions[*]}{.type}={.status} {end}`, "-n", ns, "get", "job", "pi"),
		"SuccessCriteriaMet=True Complete=True ")
	wantEqual(t, "finalizers of the counted pod", jsonpath(t, k, "{.metadata.finalizers}", "-n", ns, "get", "pod", pod), "")
	eventually(t, 30*time.Second, "the Job's events", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "events", "--field-selector=involvedObject.name=pi", "-o", `jsonpath={range .items[*]}{.reason}{"\n"}{end}`)
		return strings.Contains(out, "SuccessfulCreate") && strings.Contains(out, "Completed"), out
	})

	k.withStdin(`apiVersion: batch/v1
kind: Job
metadata: {name: idx}
spec:
  completionMode: Indexed
  completions: 3
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
`).ok(t, "-n", ns, "apply", "-f", "-")
	indexed := regexp.MustCompile(`^idx-([0-9])-[bcdfghjklmnpqrstvwxz2456789]{5}$`)
	eventually(t, 30*time.Second, "pods of indexes 0 and 1", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "pods", "-l", "batch.kubernetes.io/job-name=idx", "-o",
			`jsonpath={range .items[*]}{.metadata.name} {.metadata.labels.batch\.kubernetes\.io/job-completion-index} {.spec.hostname}{"\n"}{end}`)
		seen := map[string]bool{}
		for _, l := range lines(out) {
			f := strings.Fields(l)
			if len(f) != 3 {
				return false, out
			}
			m := indexed.FindStringSubmatch(f[0])
			if m == nil || m[1] != f[1] || f[2] != "idx-"+m[1] {
				return false, out
			}
			seen[m[1]] = true
		}
		return len(seen) == 2 && seen["0"] && seen["1"], out
	})

	// Deleting a Job: the garbage collector deletes its pods, whose
	// tracking finalizers the Job controller then removes.
	wantLines(t, k.ok(t, "-n", ns, "delete", "job", "idx"), `job.batch "idx" deleted`)
	eventually(t, 30*time.Second, "the deleted Job's pods gone", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "pods", "-l", "batch.kubernetes.io/job-name=idx", "-o", "name")
		return strings.TrimSpace(out) == "", out
	})
}
