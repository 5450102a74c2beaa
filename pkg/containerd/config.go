package containerd

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// configFile renders config.toml (containerd 1.6, config version 2).
// Every path containerd would otherwise take from the machine
// (/var/lib/containerd, /run/containerd, /opt/containerd) is under the
// layout's directory.
func configFile(l Layout, c Config, cniBinDir, snapshotter string) string {
	q := strconv.Quote
	var b strings.Builder
	fmt.Fprintf(&b, `# Written by skiff at every start of its containerd: edits are lost.
version = 2
root = %s
state = %s
# The machine's own containerd (if any) keeps /var/lib/containerd and
# /run/containerd; these plugins are not needed and only log failures.
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]

[grpc]
  address = %s

[ttrpc]
  address = %s

[debug]
  address = ""
  level = "info"

[metrics]
  address = ""

[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = %s

  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = %s
    # Sandboxed machines (containers, gVisor) refuse lowering a process's
    # oom_score_adj below the parent's: clamp instead of failing.
    restrict_oom_score_adj = true
    disable_apparmor = true
    enable_selinux = false
    # exec, attach and port-forward: on the loopback, a port of the kernel's choosing
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    enable_tls_streaming = false
    max_container_log_line_size = 16384
    # pods' network namespaces under state/, not the machine's /var/run/netns
    netns_mounts_under_state_dir = true

    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = %s
      default_runtime_name = "runc"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"

        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          # cgroupfs: the kubelet's cgroup driver
          SystemdCgroup = false
          # runc's state under state/, not the machine's /run/containerd/runc
          Root = %s

    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = %s
      conf_dir = %s
      max_conf_num = 1
`, q(l.Root), q(l.State), q(l.Socket), q(l.Socket+".ttrpc"), q(filepath.Join(l.Dir, "opt")),
		q(c.SandboxImage), q(snapshotter), q(filepath.Join(l.State, "runc")), q(cniBinDir), q(c.CNIConfDir))
	return b.String()
}

// cniBinDir is the one directory containerd 1.6 looks for CNI plugins in:
// the only existing one of dirs, or else a directory of symbolic links
// (under the layout's dir) to the plugins of each, the first dir winning.
func cniBinDir(l Layout, dirs []string) (string, error) {
	var existing []string
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			existing = append(existing, d)
		}
	}
	switch len(existing) {
	case 0:
		if len(dirs) > 0 {
			return dirs[0], nil // containerd reports the missing plugins itself
		}
		return "", nil
	case 1:
		return existing[0], nil
	}
	farm := filepath.Join(l.Dir, "cni-bin")
	if err := os.RemoveAll(farm); err != nil {
		return "", err
	}
	if err := os.MkdirAll(farm, 0o755); err != nil {
		return "", err
	}
	for _, d := range existing {
		entries, err := os.ReadDir(d)
		if err != nil {
			return "", err
		}
		for _, e := range entries {
			link := filepath.Join(farm, e.Name())
			if _, err := os.Lstat(link); err == nil {
				continue
			}
			if err := os.Symlink(filepath.Join(d, e.Name()), link); err != nil {
				return "", err
			}
		}
	}
	return farm, nil
}

// overlaySupported reports whether an overlay filesystem can be mounted
// with its upper directory under dir (not on every filesystem, not in
// every sandbox); containerd's overlayfs snapshotter needs it.
func overlaySupported(dir string) bool {
	tmp, err := os.MkdirTemp(dir, "overlay-check")
	if err != nil {
		return false
	}
	defer os.RemoveAll(tmp)
	for _, d := range []string{"lower", "upper", "work", "merged"} {
		if err := os.Mkdir(filepath.Join(tmp, d), 0o755); err != nil {
			return false
		}
	}
	merged := filepath.Join(tmp, "merged")
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s",
		filepath.Join(tmp, "lower"), filepath.Join(tmp, "upper"), filepath.Join(tmp, "work"))
	if err := syscall.Mount("overlay", merged, "overlay", 0, opts); err != nil {
		return false
	}
	syscall.Unmount(merged, 0)
	return true
}
