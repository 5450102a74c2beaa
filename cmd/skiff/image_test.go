package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/containerd"
	"github.com/skiff-sh/skiff/pkg/image"
	"github.com/skiff-sh/skiff/pkg/kubelet/remote"
)

// runSkiff runs the skiff command line in this process.
func runSkiff(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestImageCommandsWithoutContainerd(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"image", "ls", "--data-dir", dir},
		{"image", "import", "--data-dir", dir, filepath.Join(dir, "x.tar")},
	} {
		out, err := runSkiff(t, args...)
		want := fmt.Sprintf("no containerd at %s/containerd/containerd.sock: is `skiff up --data-dir %s` running with containerd?", dir, dir)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: %v (%s), want %q", args, err, out, want)
		}
	}
	if _, err := runSkiff(t, "image", "build-pause", "--arch", "arm64", "-o", filepath.Join(dir, "p.tar")); err == nil ||
		!strings.Contains(err.Error(), "amd64 only") {
		t.Errorf("build-pause for arm64: %v", err)
	}
}

func TestHumanSize(t *testing.T) {
	for n, want := range map[uint64]string{0: "0B", 221: "221B", 1100: "1.1kB", 2_131_000: "2.13MB", 5_000_000_000: "5GB"} {
		if got := humanSize(n); got != want {
			t.Errorf("humanSize(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestPrintImages(t *testing.T) {
	var out bytes.Buffer
	printImages(&out, []containerd.Image{
		{ID: "sha256:c46442f49ad03814ae78", RepoTags: []string{"localhost/skiff/pause:3.10"}, Size: 2770},
		{ID: "sha256:62ec9b76a6479d2d1719", RepoTags: []string{"docker.io/library/busybox:1.35.0", "localhost:5000/bb:x"}, Size: 2_130_000},
		{ID: "sha256:0123456789abcdef0123", RepoDigests: []string{"example.com/a@sha256:ff"}, Size: 10},
	}, false)
	want := `REPOSITORY                  TAG      IMAGE ID        SIZE
localhost/skiff/pause       3.10     c46442f49ad03   2.77kB
docker.io/library/busybox   1.35.0   62ec9b76a6479   2.13MB
localhost:5000/bb           x        62ec9b76a6479   2.13MB
example.com/a               <none>   0123456789abc   10B
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// startContainerd runs a containerd under dataDir as skiff up does (the
// pkg/containerd supervisor with dataDir/containerd), and stops it, and
// whatever container is left, when the test ends.
func startContainerd(t *testing.T, dataDir string) string {
	t.Helper()
	for _, bin := range []string{"containerd", "ctr", "runc"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed (Debian: apt-get install containerd runc); CI installs it", bin)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: containerd and runc need root here")
	}
	if testing.Short() {
		t.Skip("-short: this test runs a real containerd")
	}
	var log bytes.Buffer
	sup, err := containerd.New(containerd.Config{
		Dir:              containerd.DirOf(dataDir),
		RemovePodsOnStop: true,
		Logger:           slog.New(slog.NewTextHandler(&syncWriter{w: &log}, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- sup.Run(ctx) }()
	sock := sup.Socket()
	t.Cleanup(func() {
		// Kill what ctr run left (a failed test's containers; CRI pods are
		// the supervisor's to remove) so that no shim outlives the test,
		// then stop containerd.
		ctr := func(args ...string) string {
			out, _ := exec.Command("ctr", append([]string{"--address", sock, "--namespace", containerd.Namespace}, args...)...).CombinedOutput()
			return string(out)
		}
		for _, id := range []string{"skiff-busybox-test", "skiff-pause-test"} {
			if !strings.Contains(ctr("tasks", "ls", "-q"), id) {
				continue
			}
			ctr("tasks", "kill", "-s", "SIGKILL", id)
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(ctr("tasks", "ls"), "STOPPED") && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			ctr("tasks", "delete", "-f", id)
			ctr("containers", "rm", id)
		}
		cancel()
		if err := <-runErr; err != nil {
			t.Errorf("containerd supervisor: %v", err)
		}
		if t.Failed() {
			b, _ := os.ReadFile(sup.Layout().Log)
			t.Logf("supervisor log:\n%s\ncontainerd log:\n%s", log.String(), b)
		}
	})
	waitCtx, waitCancel := context.WithTimeout(ctx, time.Minute)
	defer waitCancel()
	if err := sup.WaitReady(waitCtx); err != nil {
		t.Fatalf("containerd did not start: %v", err)
	}
	return sock
}

// syncWriter serialises writes of the supervisor's logger.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// TestImagesInContainerd builds the pause and busybox images, imports them
// with `skiff image import` into a containerd supervised as skiff up's,
// lists them with `skiff image ls` and runs both with ctr: the pause
// program runs as a container's PID 1 and exits 0 on SIGTERM, busybox's
// shell runs applets; through CRI, a pod sandbox of the pause image runs a
// busybox container.
func TestImagesInContainerd(t *testing.T) {
	if _, err := os.Stat(image.DefaultBusyboxPath); err != nil {
		t.Skipf("%s not installed (Debian: busybox-static); CI installs it", image.DefaultBusyboxPath)
	}
	// A short directory: unix socket paths are limited to 108 bytes.
	dataDir, err := os.MkdirTemp("", "skiff-img")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dataDir) })
	sock := startContainerd(t, dataDir)

	pauseTar, busyboxTar := filepath.Join(dataDir, "pause.tar"), filepath.Join(dataDir, "busybox.tar")
	if out, err := runSkiff(t, "image", "build-pause", "-o", pauseTar); err != nil {
		t.Fatalf("build-pause: %v: %s", err, out)
	}
	out, err := runSkiff(t, "image", "build-busybox", "-o", busyboxTar, "--tag", "docker.io/library/busybox:latest", "--tag", "localhost/skiff/busybox:test")
	if err != nil {
		t.Fatalf("build-busybox: %v: %s", err, out)
	}
	out, err = runSkiff(t, "image", "import", "--data-dir", dataDir, pauseTar, busyboxTar)
	if err != nil {
		t.Fatalf("import: %v: %s", err, out)
	}
	for _, want := range []string{"imported " + image.PauseImageName, "imported docker.io/library/busybox:latest", "imported localhost/skiff/busybox:test"} {
		if !strings.Contains(out, want) {
			t.Errorf("import printed %q, want %q", out, want)
		}
	}

	// The CRI plugin sees them (its cache follows containerd's events).
	pauseImg, _ := image.PauseImage("amd64")
	built, err := image.Build(pauseImg)
	if err != nil {
		t.Fatal(err)
	}
	pauseRow := "localhost/skiff/pause       3.10     " + strings.TrimPrefix(built.ID, "sha256:")[:13]
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, err = runSkiff(t, "image", "ls", "--data-dir", dataDir)
		if err == nil && strings.Contains(out, pauseRow) && strings.Contains(out, "docker.io/library/busybox   latest") &&
			strings.Contains(out, "localhost/skiff/busybox     test") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("image ls: %v:\n%s\nwant a row %q and busybox's", err, out, pauseRow)
		}
		time.Sleep(50 * time.Millisecond)
	}

	ctr := func(ctx context.Context, args ...string) *exec.Cmd {
		return exec.CommandContext(ctx, "ctr", append([]string{"--address", sock, "--namespace", containerd.Namespace}, args...)...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// busybox: a shell and applets through their symlinks.
	b, err := ctr(ctx, "run", "--rm", "docker.io/library/busybox:latest", "skiff-busybox-test",
		"sh", "-c", "echo hello from busybox; id -u; ls /bin/wget").CombinedOutput()
	if err != nil || string(b) != "hello from busybox\n0\n/bin/wget\n" {
		t.Errorf("busybox container: %v: %q", err, b)
	}

	// pause: runs as PID 1 until SIGTERM, then exits 0.
	run := ctr(ctx, "run", "--rm", image.PauseImageName, "skiff-pause-test")
	var runOut bytes.Buffer
	run.Stdout, run.Stderr = &runOut, &runOut
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- run.Wait() }()
	deadline = time.Now().Add(30 * time.Second)
	for {
		ls, _ := ctr(ctx, "tasks", "ls").CombinedOutput()
		if strings.Contains(string(ls), "skiff-pause-test") && strings.Contains(string(ls), "RUNNING") {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the pause container ended by itself: %v: %s", err, runOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pause container is not running: %s", ls)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if b, err := ctr(ctx, "tasks", "kill", "-s", "SIGTERM", "skiff-pause-test").CombinedOutput(); err != nil {
		t.Fatalf("kill: %v: %s", err, b)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the pause container after SIGTERM: %v (want exit status 0): %s", err, runOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the pause container ignored SIGTERM")
	}

	criPod(t, ctx, sock, dataDir)
}

// criPod runs, as the kubelet will, a pod sandbox (host network: no CNI
// here) of the pause image the CRI plugin is configured with and a busybox
// container in it, and reads the container's log.
func criPod(t *testing.T, ctx context.Context, sock, dataDir string) {
	c, err := remote.Dial(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	logDir := filepath.Join(dataDir, "pod-logs")
	sandboxConfig := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: "images-test", Namespace: "default", Uid: "0c6d2b3e-images-test"},
		LogDirectory: logDir,
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE},
		}},
	}
	sb, err := c.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig})
	if err != nil {
		t.Fatalf("RunPodSandbox with %s: %v", image.PauseImageName, err)
	}
	defer func() {
		c.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.PodSandboxId})
		c.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.PodSandboxId})
	}()
	st, err := c.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.PodSandboxId})
	if err != nil || st.Status.State != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Fatalf("sandbox status %v: %v", st, err)
	}
	ctrResp, err := c.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId: sb.PodSandboxId,
		Config: &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: "bb"},
			Image:    &runtimeapi.ImageSpec{Image: "docker.io/library/busybox:latest"},
			Command:  []string{"sh", "-c", "echo hello from a pod"},
			LogPath:  "bb/0.log",
		},
		SandboxConfig: sandboxConfig,
	})
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	if _, err := c.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: ctrResp.ContainerId}); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		cs, err := c.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: ctrResp.ContainerId})
		if err != nil {
			t.Fatal(err)
		}
		if cs.Status.State == runtimeapi.ContainerState_CONTAINER_EXITED {
			if cs.Status.ExitCode != 0 {
				t.Fatalf("container exited %d: %s", cs.Status.ExitCode, cs.Status.Message)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("container still %v", cs.Status.State)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// CRI log format: "<time> stdout F hello from a pod".
	log, err := os.ReadFile(filepath.Join(logDir, "bb/0.log"))
	if err != nil || !strings.Contains(string(log), " stdout F hello from a pod") {
		t.Errorf("container log %q: %v", log, err)
	}
	c.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: ctrResp.ContainerId})
}
