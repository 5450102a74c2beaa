package standalone

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/containerd"
	"github.com/skiff-sh/skiff/pkg/image"
	"github.com/skiff-sh/skiff/pkg/kubelet"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

func TestRunRefusesAMissingRuntime(t *testing.T) {
	c, err := client.New(&client.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	err = Run(context.Background(), Config{Client: c, Endpoint: filepath.Join(t.TempDir(), "none.sock"), DialTimeout: time.Second,
		Kubelet: kubelet.Config{NodeName: "n"}})
	if err == nil {
		t.Fatal("Run without a runtime returned nil")
	}
}

// A kubelet on a supervised containerd runs pods on a CNI bridge: one that
// echoes and exits (Succeeded), one that runs (with a pod IP) until it is
// deleted.
func TestKubeletOnContainerd(t *testing.T) {
	r := newRealRuntime(t, testenv.Config{})
	c, base, ctx, subnet := r.c, r.base, r.ctx, r.subnet
	r.runKubelet(t, Config{Events: true,
		Kubelet: kubelet.Config{NodeName: "node-1", PodLogDir: filepath.Join(base, "pods")}})

	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	grace := int64(1)
	pod := func(name string, restart corev1.RestartPolicy, cmd ...string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
			NodeName: "node-1", RestartPolicy: restart, TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{Name: "main", Image: "busybox:test", Command: cmd}}}}
	}
	if _, err := pods.Create(ctx, pod("echo", corev1.RestartPolicyNever, "/bin/sh", "-c", "echo hello"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(ctx, pod("sleeper", corev1.RestartPolicyAlways, "/bin/sleep", "1000000"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var last *corev1.Pod
	waitFor(t, 60*time.Second, "pod echo Succeeded and pod sleeper Running", func() bool {
		e, err := pods.Get(ctx, "echo", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := pods.Get(ctx, "sleeper", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		last = e
		return e.Status.Phase == corev1.PodSucceeded && s.Status.Phase == corev1.PodRunning
	}, func() any { return last.Status })
	if cs := last.Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.ExitCode != 0 ||
		cs[0].State.Terminated.Reason != "Completed" {
		t.Errorf("echo's container status: %+v", cs)
	}
	s, err := pods.Get(ctx, "sleeper", metav1.GetOptions{})
	must(t, err)
	_, pnet, _ := net.ParseCIDR(subnet)
	if ip := net.ParseIP(s.Status.PodIP); ip == nil || !pnet.Contains(ip) {
		t.Errorf("sleeper's pod IP %q is not in the CNI subnet %s", s.Status.PodIP, subnet)
	}
	logs, err := filepath.Glob(filepath.Join(base, "pods", "default_echo_*", "main", "0.log"))
	must(t, err)
	if len(logs) != 1 {
		t.Errorf("echo's log files: %q", logs)
	} else if b, err := os.ReadFile(logs[0]); err != nil || !strings.Contains(string(b), " stdout F hello") {
		t.Errorf("echo's log: %q, %v", b, err)
	}
	if err := pods.Delete(ctx, "sleeper", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "pod sleeper to be gone", func() bool {
		_, err := pods.Get(ctx, "sleeper", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, nil)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool, show func() any) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			var s any
			if show != nil {
				s = show()
			}
			t.Fatalf("timed out after %v waiting for %s; %+v", timeout, what, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// writeImages writes skiff's pause image (a busybox sleeping in its place
// on other architectures than amd64) and busybox as busybox:test.
func writeImages(t *testing.T, path string) {
	t.Helper()
	busybox, err := image.BusyboxImage("", []string{"busybox:test"})
	if err != nil {
		t.Skip(err)
	}
	pause, err := image.PauseImage(runtime.GOARCH)
	if err != nil {
		pause = busybox
		pause.Names, pause.Entrypoint, pause.Cmd = []string{containerd.SandboxImage}, []string{"/bin/sleep", "1000000000"}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := image.WriteDockerArchive(f, pause, busybox); err != nil {
		t.Fatal(err)
	}
}
