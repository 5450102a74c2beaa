package standalone

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
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
	for _, bin := range []string{"containerd", "runc", "ctr"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed (apt-get install containerd runc): this test runs a real containerd", bin)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: containerd and runc need root here")
	}
	if testing.Short() {
		t.Skip("-short: this test runs a real containerd")
	}
	base, err := os.MkdirTemp("", "ctd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(base); err != nil {
			t.Errorf("removing %s: %v", base, err)
		}
	})

	env := testenv.StartT(t, testenv.Config{})
	if err := env.EnsureServiceAccount(context.Background(), "default", "default"); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}

	// Pod networking: the standard bridge and host-local plugins, on a
	// bridge and subnet of this test's own (removed at the end).
	bridge, subnet := fmt.Sprintf("skt%d", os.Getpid()%100000), fmt.Sprintf("10.251.%d.0/24", os.Getpid()%250)
	conflist := fmt.Sprintf(`{"cniVersion": "0.4.0", "name": "skiff-test", "plugins": [{"type": "bridge", "bridge": %q,
  "isGateway": true, "ipMasq": false, "ipam": {"type": "host-local", "ranges": [[{"subnet": %q}]],
  "routes": [{"dst": "0.0.0.0/0"}], "dataDir": %q}}]}`, bridge, subnet, filepath.Join(base, "cni", "ipam"))
	must(t, os.MkdirAll(filepath.Join(base, "cni", "net.d"), 0o755))
	must(t, os.WriteFile(filepath.Join(base, "cni", "net.d", "10-test.conflist"), []byte(conflist), 0o644))
	t.Cleanup(func() { exec.Command("ip", "link", "del", bridge).Run() })

	sup, err := containerd.New(containerd.Config{Dir: filepath.Join(base, "containerd"), RemovePodsOnStop: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	supDone, kDone := make(chan error, 1), make(chan error, 1)
	go func() { supDone <- sup.Run(ctx) }()
	kctx, kcancel := context.WithCancel(ctx)
	t.Cleanup(func() {
		kcancel()
		if err := <-kDone; err != nil {
			t.Errorf("kubelet: %v", err)
		}
		cancel()
		if err := <-supDone; err != nil {
			t.Errorf("containerd: %v", err)
		}
	})
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	if err := sup.WaitReady(wctx); err != nil {
		kDone <- nil
		t.Fatal(err)
	}
	writeImages(t, filepath.Join(base, "images.tar"))
	if _, err := containerd.ImportImage(ctx, sup.Socket(), filepath.Join(base, "images.tar")); err != nil {
		kDone <- nil
		t.Fatal(err)
	}
	go func() {
		kDone <- Run(kctx, Config{Client: c, Endpoint: sup.Endpoint(), Events: true,
			Kubelet: kubelet.Config{NodeName: "node-1", PodLogDir: filepath.Join(base, "pods")}})
	}()

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
