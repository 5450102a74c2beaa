package containerd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/image"
	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
	"github.com/skiff-sh/skiff/pkg/kubelet/remote"
)

// needContainerd skips a test that runs a real containerd where it cannot.
func needContainerd(t *testing.T) {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("%v: this test runs a real containerd", err)
	}
	if testing.Short() {
		t.Skip("-short: this test runs a real containerd")
	}
}

// shortTempDir is a temporary directory with a path short enough for unix
// sockets, removed at the end of the test.
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ctd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("removing %s: %v", dir, err)
		}
	})
	return dir
}

// processesUsing lists the processes whose command line mentions s.
func processesUsing(s string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if cmd := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(cmd, s) {
			found = append(found, e.Name()+": "+cmd)
		}
	}
	return found
}

// eventually polls cond every 50 ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestConfigFile(t *testing.T) {
	l := LayoutOf("/d/containerd")
	s := configFile(l, Config{SandboxImage: SandboxImage, CNIConfDir: "/d/cni/net.d"}, "/usr/lib/cni", "overlayfs")
	for _, want := range []string{
		`version = 2`, `root = "/d/containerd/root"`, `state = "/d/containerd/state"`,
		`address = "/d/containerd/containerd.sock"`, `address = "/d/containerd/containerd.sock.ttrpc"`,
		`path = "/d/containerd/opt"`,
		`sandbox_image = "localhost/skiff/pause:3.10"`, `restrict_oom_score_adj = true`,
		`stream_server_address = "127.0.0.1"`, `stream_server_port = "0"`, `snapshotter = "overlayfs"`,
		`SystemdCgroup = false`, `Root = "/d/containerd/state/runc"`, `netns_mounts_under_state_dir = true`, `bin_dir = "/usr/lib/cni"`, `conf_dir = "/d/cni/net.d"`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("config.toml lacks %q:\n%s", want, s)
		}
	}
}

func TestCNIBinDir(t *testing.T) {
	base := t.TempDir()
	l := LayoutOf(filepath.Join(base, "containerd"))
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	for _, f := range []string{"a/bridge", "a/loopback", "b/bridge", "b/portmap"} {
		must(t, os.MkdirAll(filepath.Join(base, filepath.Dir(f)), 0o755))
		must(t, os.WriteFile(filepath.Join(base, f), nil, 0o755))
	}
	missing := filepath.Join(base, "missing")
	for _, tc := range []struct {
		dirs []string
		want string
	}{
		{dirs: []string{a, missing}, want: a},
		{dirs: []string{missing}, want: missing},
		{dirs: []string{a, b}, want: filepath.Join(l.Dir, "cni-bin")},
	} {
		got, err := cniBinDir(l, tc.dirs)
		if err != nil || got != tc.want {
			t.Fatalf("cniBinDir(%v) = %q, %v; want %q", tc.dirs, got, err, tc.want)
		}
	}
	// The merged directory links each plugin, the first directory winning.
	for name, target := range map[string]string{"bridge": "a/bridge", "loopback": "a/loopback", "portmap": "b/portmap"} {
		got, err := os.Readlink(filepath.Join(l.Dir, "cni-bin", name))
		if err != nil || got != filepath.Join(base, target) {
			t.Errorf("cni-bin/%s -> %q, %v; want %s", name, got, err, target)
		}
	}
}

func TestNewRefusesLongSocketPaths(t *testing.T) {
	if _, err := New(Config{Dir: "/" + strings.Repeat("x", 100)}); err == nil {
		t.Error("New accepted a directory whose socket path cannot be a unix socket address")
	}
	if _, err := New(Config{}); err == nil {
		t.Error("New accepted an empty Dir")
	}
}

func TestRotateLog(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "containerd.log")
	must(t, os.WriteFile(log, make([]byte, 100), 0o600))
	rotateLog(log)
	if _, err := os.Stat(log + ".1"); err == nil {
		t.Fatal("a small log was rotated")
	}
	must(t, os.WriteFile(log, make([]byte, maxLogSize+1), 0o600))
	rotateLog(log)
	if fi, err := os.Stat(log + ".1"); err != nil || fi.Size() != maxLogSize+1 {
		t.Fatalf("a large log was not rotated: %v", err)
	}
	if _, err := os.Stat(log); !os.IsNotExist(err) {
		t.Fatalf("the log is still there: %v", err)
	}
}

func TestRunWithoutBinary(t *testing.T) {
	s, err := New(Config{Dir: t.TempDir(), Binary: "no-such-containerd-binary"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(context.Background()); !errors.Is(err, exec.ErrNotFound) {
		t.Fatalf("Run without a binary: %v, want exec.ErrNotFound", err)
	}
	if err := s.WaitReady(context.Background()); err == nil {
		t.Fatal("WaitReady after a failed Run returned nil")
	}
}

// TestContainerd runs a real containerd under the supervisor, imports a
// busybox image and a pause image built from it, runs a host-network pod
// with a container that echoes through CRI, survives a containerd crash,
// and leaves no process behind.
func TestContainerd(t *testing.T) {
	needContainerd(t)
	base := shortTempDir(t)
	pause, busybox := testImages(t)
	s, err := New(Config{Dir: filepath.Join(base, "containerd"), RemovePodsOnStop: true, Images: []image.Image{pause}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- s.Run(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-runDone:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(2 * time.Minute):
			t.Errorf("Run did not return within 2 min of its context's end")
		}
	}
	t.Cleanup(stop)

	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	if err := s.WaitReady(wctx); err != nil {
		log, _ := os.ReadFile(s.Layout().Log)
		t.Fatalf("containerd not ready: %v\n%s", err, log)
	}
	if v := s.Version(); v.RuntimeName != "containerd" || v.RuntimeApiVersion != "v1" {
		t.Errorf("Version = %+v", v)
	}
	t.Logf("containerd %s, snapshotter %s", s.Version().RuntimeVersion, s.Snapshotter())
	// A second supervisor of the same directory refuses to start another.
	s2, err := New(Config{Dir: s.Layout().Dir})
	must(t, err)
	if err := s2.Run(ctx); err == nil || !strings.Contains(err.Error(), "already serves") {
		t.Errorf("a second supervisor of the same directory: %v", err)
	}
	conf, err := os.ReadFile(s.Layout().Config)
	must(t, err)
	if !strings.Contains(string(conf), "restrict_oom_score_adj = true") {
		t.Errorf("config.toml:\n%s", conf)
	}

	// Images: the supervisor imported the pause image (Config.Images)
	// before Ready; busybox comes from a docker-archive.
	tarPath := filepath.Join(base, "images.tar")
	must(t, image.WriteDockerArchiveFile(tarPath, busybox))
	names, err := ImportImage(ctx, s.Socket(), tarPath)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"docker.io/library/busybox:test"}; !slices.Equal(names, want) {
		t.Errorf("ImportImage = %q, want %q", names, want)
	}
	if names, err := EnsureImages(ctx, s.Socket(), base, pause, busybox); err != nil || len(names) != 0 {
		t.Errorf("EnsureImages of present images = %q, %v; want nothing imported", names, err)
	}
	images, err := ListImages(ctx, s.Endpoint())
	must(t, err)
	var tags []string
	for _, im := range images {
		tags = append(tags, im.RepoTags...)
		if im.Size == 0 || !strings.HasPrefix(im.ID, "sha256:") {
			t.Errorf("image %+v: no size or ID", im)
		}
	}
	for _, want := range []string{"docker.io/library/busybox:test", SandboxImage} {
		if !slices.Contains(tags, want) {
			t.Errorf("ListImages: %q lacks %s", tags, want)
		}
	}

	c, err := remote.Dial(ctx, s.Endpoint())
	must(t, err)
	defer c.Close()

	// A host-network pod (no CNI configuration needed).
	logDir := filepath.Join(base, "pods", "default_echo_uid1")
	// No Hostname: runc refuses one without a private UTS namespace (the
	// kubelet sets it only for pods off the host network, as upstream).
	sbConfig := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: "echo", Uid: "uid1", Namespace: "default"},
		LogDirectory: logDir,
		Labels:       map[string]string{"io.kubernetes.pod.name": "echo"},
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE}}},
	}
	must(t, os.MkdirAll(logDir, 0o755))
	sb, err := c.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sbConfig})
	if err != nil {
		log, _ := os.ReadFile(s.Layout().Log)
		t.Fatalf("RunPodSandbox: %v\n%s", err, log)
	}
	create := func(name string, cmd ...string) string {
		t.Helper()
		r, err := c.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, SandboxConfig: sbConfig,
			Config: &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: name}, Image: &runtimeapi.ImageSpec{Image: "busybox:test"},
				Command: cmd, LogPath: name + "/0.log"}})
		if err != nil {
			t.Fatalf("CreateContainer %s: %v", name, err)
		}
		if _, err := c.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: r.ContainerId}); err != nil {
			t.Fatalf("StartContainer %s: %v", name, err)
		}
		return r.ContainerId
	}
	echo := create("echo", "/bin/sh", "-c", "echo hello from skiff")
	var st *runtimeapi.ContainerStatus
	eventually(t, 30*time.Second, "the echo container to exit", func() bool {
		r, err := c.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: echo})
		must(t, err)
		st = r.Status
		return st.State == runtimeapi.ContainerState_CONTAINER_EXITED
	})
	if st.ExitCode != 0 {
		t.Errorf("echo exited %d (%s: %s)", st.ExitCode, st.Reason, st.Message)
	}
	logs, err := os.ReadFile(filepath.Join(logDir, "echo", "0.log"))
	must(t, err)
	if !strings.Contains(string(logs), " stdout F hello from skiff") {
		t.Errorf("echo's log (CRI format) = %q", logs)
	}

	// A long-running container: ExecSync, the streaming server's URL, and
	// it keeps running while containerd is killed and restarted.
	sleeper := create("sleeper", "/bin/sleep", "1000000000")
	eventually(t, 30*time.Second, "the sleeper to run", func() bool {
		r, err := c.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: sleeper})
		must(t, err)
		return r.Status.State == runtimeapi.ContainerState_CONTAINER_RUNNING
	})
	ex, err := c.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: sleeper, Cmd: []string{"/bin/echo", "inside"}, Timeout: 10})
	if err != nil || ex.ExitCode != 0 || strings.TrimSpace(string(ex.Stdout)) != "inside" {
		t.Errorf("ExecSync = %+v, %v", ex, err)
	}
	er, err := c.Exec(ctx, &runtimeapi.ExecRequest{ContainerId: sleeper, Cmd: []string{"/bin/true"}, Stdout: true})
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	t.Logf("exec URL %s", er.Url)
	if u, err := url.Parse(er.Url); err != nil || u.Hostname() != "127.0.0.1" || u.Port() == "" || u.Port() == "0" {
		t.Errorf("Exec URL %q: want the streaming server on 127.0.0.1 with a real port", er.Url)
	}

	// Stats (kubectl top, the kubelet's summary) come from the container's cgroup.
	stats, err := c.ContainerStats(ctx, &runtimeapi.ContainerStatsRequest{ContainerId: sleeper})
	if err != nil {
		t.Errorf("ContainerStats: %v", err)
	} else if stats.Stats.GetMemory().GetWorkingSetBytes().GetValue() == 0 || stats.Stats.GetCpu() == nil {
		t.Errorf("ContainerStats: %+v", stats.Stats)
	}
	fs, err := c.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
	if err != nil || len(fs.ImageFilesystems) == 0 {
		t.Errorf("ImageFsInfo: %+v, %v", fs, err)
	}

	// The sandbox's and the sleeper's processes, to check they are gone at the end.
	var pids []int
	sbs, err := c.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.PodSandboxId, Verbose: true})
	must(t, err)
	pids = append(pids, infoPid(t, sbs.Info))
	cs, err := c.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: sleeper, Verbose: true})
	must(t, err)
	pids = append(pids, infoPid(t, cs.Info))

	old := s.Pid()
	must(t, syscall.Kill(old, syscall.SIGKILL))
	eventually(t, 30*time.Second, "containerd to be restarted", func() bool {
		if s.Pid() == old {
			return false
		}
		cctx, ccancel := context.WithTimeout(ctx, time.Second)
		defer ccancel()
		_, err := c.Version(cctx, &runtimeapi.VersionRequest{})
		return err == nil
	})
	r, err := c.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: sleeper})
	if err != nil || r.Status.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Errorf("after containerd's restart, the sleeper: %+v, %v", r.GetStatus().GetState(), err)
	}
	if _, err := c.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: "no-such-container"}); !errors.Is(err, remoteNotFound()) {
		t.Errorf("ContainerStatus of a missing container: %v, want cri.ErrNotFound", err)
	}

	// Stopping removes the pods (RemovePodsOnStop) and containerd: nothing
	// of this containerd is left running.
	stop()
	if left := processesUsing(s.Layout().Dir); len(left) > 0 {
		t.Errorf("processes left behind:\n%s", strings.Join(left, "\n"))
	}
	for _, pid := range pids {
		if running(pid) {
			t.Errorf("container process %d left behind", pid)
		}
	}
}

// infoPid reads the process id from a verbose CRI status's info.
func infoPid(t *testing.T, info map[string]string) int {
	t.Helper()
	var v struct{ Pid int }
	if err := json.Unmarshal([]byte(info["info"]), &v); err != nil || v.Pid <= 0 {
		t.Fatalf("no pid in the verbose status info %q: %v", info["info"], err)
	}
	return v.Pid
}

// running reports whether process pid exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

func remoteNotFound() error { return cri.ErrNotFound }

// testImages are skiff's pause image (on other architectures than amd64,
// a busybox sleeping in its place) and busybox as busybox:test.
func testImages(t *testing.T) (pause, busybox image.Image) {
	t.Helper()
	busybox, err := image.BusyboxImage("", []string{"busybox:test"})
	if err != nil {
		t.Skip(err)
	}
	pause, err = image.PauseImage(runtime.GOARCH)
	if err != nil {
		t.Logf("no pause image here (%v): a busybox sleeping stands in", err)
		pause = busybox
		pause.Names, pause.Entrypoint, pause.Cmd = []string{SandboxImage}, []string{"/bin/sleep", "1000000000"}, nil
	}
	return pause, busybox
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
