package standalone

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/kubelet"
	"github.com/skiff-sh/skiff/pkg/kubelet/server"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// Real kubectl against a real containerd through the API server and the
// kubelet's HTTPS API: logs (--tail, -f), exec with and without stdin,
// port-forward. The API server presents its kubelet client certificate,
// the kubelet checks it against the cluster CA and reviews access with
// SubjectAccessReviews (RBAC on: the bootstrap policy's binding).
func TestKubectlThroughTheKubeletOnContainerd(t *testing.T) {
	for _, bin := range []string{"containerd", "runc", "ctr", "kubectl"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed: this test runs a real containerd and kubectl", bin)
		}
	}
	r := newRealRuntime(t, testenv.Config{RBAC: true})
	c, base, ctx, env := r.c, r.base, r.ctx, r.env
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(env.CAData)
	wh := server.NewWebhook(c, nil)
	r.runKubelet(t, Config{Kubelet: kubelet.Config{NodeName: "node-1", PodLogDir: filepath.Join(base, "pods"), RootDir: filepath.Join(base, "kubelet")},
		Server: &server.Config{Listener: ln, ClientCA: pool, Authenticator: wh, Authorizer: wh}})

	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	grace := int64(1)
	pod := func(name string, cmd ...string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
			NodeName: "node-1", TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{Name: "main", Image: "busybox:test", Command: cmd}}}}
	}
	// "talker" prints a line a second; "web" serves HTTP on 8080;
	// "crasher" says which run it is and fails (restarted after 10 s).
	for _, p := range []*corev1.Pod{
		pod("talker", "/bin/sh", "-c", "echo first; echo second; i=0; while true; do i=$((i+1)); echo tick $i; sleep 1; done"),
		pod("web", "/bin/sh", "-c", "mkdir -p /www && echo pong > /www/ping && exec httpd -f -p 8080 -h /www"),
		pod("crasher", "/bin/sh", "-c", "echo run at $(date +%s%N); sleep 1; exit 1"),
	} {
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 90*time.Second, "pods talker and web Running", func() bool {
		n := 0
		for _, name := range []string{"talker", "web"} {
			if p, err := pods.Get(ctx, name, metav1.GetOptions{}); err == nil && p.Status.Phase == corev1.PodRunning {
				n++
			}
		}
		return n == 2
	}, nil)

	kubectl := func(stdin string, args ...string) (string, error) {
		cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
		defer ccancel()
		cmd := exec.CommandContext(cctx, "kubectl", append([]string{"--kubeconfig", env.KubeconfigPath, "-n", "default"}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if err != nil {
			return out.String(), fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, errb.String())
		}
		return out.String(), nil
	}
	out, err := kubectl("", "logs", "talker", "--tail=-1")
	if err != nil || !strings.HasPrefix(out, "first\nsecond\n") {
		t.Errorf("kubectl logs: %q %v", out, err)
	}
	out, err = kubectl("", "logs", "talker", "--tail=1")
	if err != nil || !strings.HasPrefix(out, "tick ") || strings.Count(out, "\n") != 1 {
		t.Errorf("kubectl logs --tail=1: %q %v", out, err)
	}
	// -f: new lines keep coming.
	fctx, fcancel := context.WithTimeout(ctx, 30*time.Second)
	follow := exec.CommandContext(fctx, "kubectl", "--kubeconfig", env.KubeconfigPath, "-n", "default", "logs", "-f", "talker", "--tail=0")
	fout, _ := follow.StdoutPipe()
	must(t, follow.Start())
	buf := make([]byte, 64)
	var got string
	for !strings.Contains(got, "tick") {
		n, err := fout.Read(buf)
		got += string(buf[:n])
		if err != nil {
			t.Errorf("kubectl logs -f: %q %v", got, err)
			break
		}
	}
	fcancel()
	_ = follow.Wait()

	// The runtime's statistics through nodes/proxy: the pods' and the machine's.
	waitFor(t, 30*time.Second, "talker's CPU in the summary and the resource metrics", func() bool {
		sum, err := kubectl("", "get", "--raw", "/api/v1/nodes/node-1/proxy/stats/summary")
		if err != nil || !strings.Contains(sum, `"name":"talker"`) || !strings.Contains(sum, `"usageCoreNanoSeconds"`) {
			return false
		}
		res, err := kubectl("", "get", "--raw", "/api/v1/nodes/node-1/proxy/metrics/resource")
		return err == nil && strings.Contains(res, `container_cpu_usage_seconds_total{container="main",namespace="default",pod="talker"}`) &&
			strings.Contains(res, "node_cpu_usage_seconds_total ") && strings.Contains(res, "node_memory_working_set_bytes ")
	}, nil)

	out, err = kubectl("", "exec", "talker", "--", "echo", "hello from exec")
	if err != nil || out != "hello from exec\n" {
		t.Errorf("kubectl exec: %q %v", out, err)
	}
	t.Logf("exec said %q", out)
	out, err = kubectl("piped in\n", "exec", "-i", "talker", "--", "cat")
	t.Logf("exec -i said %q", out)
	if err != nil || out != "piped in\n" {
		t.Errorf("kubectl exec -i: %q %v", out, err)
	}
	out, err = kubectl("", "exec", "talker", "--", "sh", "-c", "exit 3")
	if err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("kubectl exec of a failing command: %q %v", out, err)
	}

	// attach: the running process's output.
	actx, acancel := context.WithTimeout(ctx, 30*time.Second)
	attach := exec.CommandContext(actx, "kubectl", "--kubeconfig", env.KubeconfigPath, "-n", "default", "attach", "talker")
	aout, _ := attach.StdoutPipe()
	must(t, attach.Start())
	got = ""
	for !strings.Contains(got, "tick") {
		n, err := aout.Read(buf)
		got += string(buf[:n])
		if err != nil {
			t.Errorf("kubectl attach: %q %v", got, err)
			break
		}
	}
	acancel()
	_ = attach.Wait()
	t.Logf("attach got %q", got)

	// --previous: the log of the run before the restart.
	waitFor(t, 60*time.Second, "crasher restarted", func() bool {
		p, err := pods.Get(ctx, "crasher", metav1.GetOptions{})
		return err == nil && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 1 &&
			p.Status.ContainerStatuses[0].LastTerminationState.Terminated != nil
	}, nil)
	// (the current run may not have printed yet: asked again until it has)
	var prev, cur string
	var err2 error
	waitFor(t, 30*time.Second, "kubectl logs --previous and the current run's log", func() bool {
		prev, err = kubectl("", "logs", "crasher", "--previous")
		cur, err2 = kubectl("", "logs", "crasher")
		return err == nil && err2 == nil && strings.HasPrefix(prev, "run at ") && strings.HasPrefix(cur, "run at ") && prev != cur
	}, func() any { return fmt.Sprintf("previous %q (%v), current %q (%v)", prev, err, cur, err2) })

	// port-forward to the pod's 8080.
	pfl, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	local := pfl.Addr().(*net.TCPAddr).Port
	pfl.Close()
	pctx, pcancel := context.WithTimeout(ctx, 60*time.Second)
	defer pcancel()
	pf := exec.CommandContext(pctx, "kubectl", "--kubeconfig", env.KubeconfigPath, "-n", "default", "port-forward", "pod/web", fmt.Sprintf("%d:8080", local))
	var pfErr bytes.Buffer
	pf.Stderr = &pfErr
	must(t, pf.Start())
	defer func() { pcancel(); _ = pf.Wait() }()
	var body string
	waitFor(t, 30*time.Second, "an answer through kubectl port-forward", func() bool {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/ping", local))
		if err != nil {
			return false
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(b)
		return true
	}, func() any { return pfErr.String() })
	t.Logf("port-forward got %q; kubectl logs -f got %q", body, got)
	if body != "pong\n" {
		t.Errorf("through port-forward: %q (%s)", body, pfErr.String())
	}
}
