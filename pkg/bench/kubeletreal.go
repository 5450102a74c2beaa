package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/skiff-sh/skiff/pkg/containerd"
	"github.com/skiff-sh/skiff/pkg/image"
)

// realNodeName is the containerd run's node.
const realNodeName = "skiff-bench-node"

// realRuntime is the containerd run's runtime: a containerd supervised by
// pkg/containerd (laid out as skiff up's, under base) with a CNI bridge of
// its own, the pause and busybox images imported.
type realRuntime struct {
	base   string
	sup    *containerd.Supervisor
	cancel context.CancelFunc
	done   chan error
	bridge string
	// image is the pods' image: busybox by its version tag.
	image string
}

func (r *realRuntime) endpoint() string { return r.sup.Endpoint() }

// stop stops containerd, removing every pod sandbox (and so every
// container) first, and deletes the bridge.
func (r *realRuntime) stop() {
	r.cancel()
	<-r.done
	if r.bridge != "" {
		_ = exec.Command("ip", "link", "del", r.bridge).Run()
	}
}

func startRealRuntime(ctx context.Context, cfg *KubeletConfig, root string) (*realRuntime, error) {
	progress := func(format string, args ...any) {
		fmt.Fprintf(cfg.Progress, "bench: containerd: "+format+"\n", args...)
	}
	base := filepath.Join(root, "node")
	pid := os.Getpid()
	r := &realRuntime{base: base, bridge: fmt.Sprintf("skb%d", pid%100000), done: make(chan error, 1)}
	// The pod network: the standard bridge and host-local plugins on a
	// bridge and /24 of the benchmark's own.
	subnet := fmt.Sprintf("10.251.%d.0/24", pid%250)
	network := containerd.BridgeNetwork{Name: "skiff-bench", Bridge: r.bridge, Subnets: []string{subnet},
		IPAMDataDir: filepath.Join(base, "cni", "ipam")}
	if err := network.Write(filepath.Join(base, "cni", "net.d", "10-bench.conflist")); err != nil {
		return nil, err
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	sup, err := containerd.New(containerd.Config{Dir: filepath.Join(base, "containerd"), Binary: cfg.Containerd,
		RemovePodsOnStop: true, Logger: logger})
	if err != nil {
		return nil, err
	}
	r.sup = sup
	sctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- sup.Run(sctx) }()
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	if err := sup.WaitReady(wctx); err != nil {
		r.stop()
		return nil, fmt.Errorf("containerd: %w (log %s)", err, logTail(sup.Layout().Log, 1500))
	}
	// Images: the sandbox image and busybox, tagged latest and with its
	// version; the pods name the version (IfNotPresent: nothing is pulled).
	busybox, err := image.BusyboxImage(cfg.BusyboxPath, nil)
	if err != nil {
		r.stop()
		return nil, err
	}
	r.image = busybox.Names[0]
	for _, n := range busybox.Names {
		if !strings.HasSuffix(n, ":latest") {
			r.image = n
		}
	}
	pause, err := image.PauseImage(runtime.GOARCH)
	if err != nil {
		r.stop()
		return nil, err
	}
	archive := filepath.Join(base, "images.tar")
	if err := image.WriteDockerArchiveFile(archive, pause, busybox); err != nil {
		r.stop()
		return nil, err
	}
	if _, err := containerd.ImportImage(ctx, sup.Socket(), archive); err != nil {
		r.stop()
		return nil, err
	}
	progress("pid %d ready on %s (snapshotter %s); imported %s and %s", sup.Pid(), sup.Socket(), sup.Snapshotter(), containerd.SandboxImage, r.image)
	return r, nil
}

// cpu is the CPU time of containerd and its shims (the processes whose
// command line names the benchmark's containerd directory), with the
// children they waited for (runc, CNI plugins), by pid.
func (r *realRuntime) cpu() map[int]time.Duration {
	out := map[int]time.Duration{}
	dir := filepath.Join(r.base, "containerd")
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), dir) {
			continue
		}
		if c, err := procCPUWithChildren(pid); err == nil {
			out[pid] = c
		}
	}
	return out
}
