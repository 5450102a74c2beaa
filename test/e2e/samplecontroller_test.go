package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The Foo sample controller (examples/sample-controller), built and run
// as its README says against `skiff up`: kubectl applies the Foo CRD and
// the example Foo; the controller creates the Foo's Deployment
// (controlled by the Foo), the controller manager its ReplicaSet and pod;
// with the pod marked Ready through the status API the Foo's
// status.availableReplicas becomes 1; scaling the Foo scales the
// Deployment; deleting the Foo deletes the Deployment.
func TestSampleControllerFoo(t *testing.T) {
	c := shared(t)
	k := c.k()
	const ns = "sample-foo"
	k.ok(t, "create", "namespace", ns)
	defer k.run(t, "delete", "namespace", ns, "--wait=false")

	bin := filepath.Join(workDir, "sample-controller")
	build := exec.Command("go", "build", "-o", bin, "./examples/sample-controller")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/sample-controller: %v\n%s", err, out)
	}
	artifacts := filepath.Join("..", "..", "examples", "sample-controller", "artifacts", "examples")
	out := k.ok(t, "apply", "-f", filepath.Join(artifacts, "crd.yaml"))
	wantContains(t, out, "customresourcedefinition.apiextensions.k8s.io/foos.samplecontroller.k8s.io created")
	defer k.run(t, "delete", "-f", filepath.Join(artifacts, "crd.yaml"), "--wait=false")
	k.waitEstablished(t, "crd/foos.samplecontroller.k8s.io")

	log := &cluster{} // a log buffer only
	ctl := exec.Command(bin, "--kubeconfig", c.kubeconfig)
	ctl.Stdout, ctl.Stderr = syncWriter{log}, syncWriter{log}
	if err := ctl.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ctl.Wait() }()
	defer func() {
		_ = ctl.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("sample-controller output:\n%s", log.logs())
		}
	}()

	out = k.ok(t, "-n", ns, "apply", "-f", filepath.Join(artifacts, "example-foo.yaml"))
	wantContains(t, out, "foo.samplecontroller.k8s.io/example-foo created")
	eventually(t, 30*time.Second, "the Foo's Deployment, controlled by the Foo", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "deploy", "example-foo", "-o",
			`jsonpath={.metadata.ownerReferences[?(@.controller==true)].kind}/{.metadata.ownerReferences[0].name} {.spec.replicas}`)
		return out == "Foo/example-foo 1", out
	})
	stop := playKubelet(t, k, ns)
	defer stop()
	eventually(t, 60*time.Second, "the Foo's status.availableReplicas = 1", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "foo", "example-foo", "-o", "jsonpath={.status.availableReplicas}")
		return out == "1", out
	})
	out = k.ok(t, "-n", ns, "get", "rs,pods", "-l", "controller=example-foo", "-o", "name")
	if rs, pods := strings.Count(out, "replicaset.apps/example-foo-"), strings.Count(out, "pod/example-foo-"); rs != 1 || pods != 1 {
		t.Errorf("ReplicaSets %d, pods %d, want 1 and 1:\n%s", rs, pods, out)
	}
	out = k.ok(t, "-n", ns, "get", "events", "--field-selector", "involvedObject.kind=Foo", "-o", "jsonpath={range .items[*]}{.reason}{\"\\n\"}{end}")
	wantContains(t, out, "Synced")

	k.ok(t, "-n", ns, "patch", "foo", "example-foo", "--type=merge", "-p", `{"spec":{"replicas":2}}`)
	eventually(t, 60*time.Second, "Deployment scaled to 2 and the Foo's status following", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "foo", "example-foo", "-o", "jsonpath={.status.availableReplicas}")
		return out == "2", out
	})

	k.ok(t, "-n", ns, "delete", "foo", "example-foo")
	eventually(t, 30*time.Second, "the Foo's Deployment garbage-collected", func() (bool, string) {
		_, errOut, err := k.run(t, "-n", ns, "get", "deploy", "example-foo")
		return err != nil && strings.Contains(errOut, "NotFound"), errOut
	})
}
