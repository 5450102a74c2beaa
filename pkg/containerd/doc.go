// Package containerd runs and supervises a containerd for skiff's kubelet
// (as k3s does) and imports images into it.
//
// Layout (LayoutOf; skiff up uses <data-dir>/containerd):
// config.toml, root/, state/, containerd.sock and containerd.log, all under
// one directory, so that a skiff containerd never touches the machine's
// own (/var/lib/containerd, /run/containerd).
//
// Supervision (New(Config), Run(ctx)): Run writes config.toml (config
// version 2, as containerd 1.6 reads it) at every start, runs
// `containerd --config`, appends its output to containerd.log, is Ready
// once the CRI socket answers Version, restarts containerd with back-off
// (1 s doubling to 30 s) when it exits, and stops it (SIGTERM, SIGKILL
// after StopTimeout) when ctx ends; containers keep running across a
// containerd restart (their shims do), and are removed on stop only with
// RemovePodsOnStop. containerd runs in its own process group with
// SIGTERM as its parent-death signal, so a killed skiff does not leave it
// behind.
//
// What the configuration holds, and why:
//   - restrict_oom_score_adj = true: sandboxed machines refuse an
//     oom_score_adj below the parent's; containerd clamps instead;
//   - disable_apparmor = true: no profile can be loaded in a sandbox;
//   - the streaming server (exec, attach, port-forward) on 127.0.0.1 with a
//     kernel-chosen port (stream_server_port = "0"; the URLs CRI returns
//     carry the real port);
//   - runc with cgroupfs (SystemdCgroup = false), the overlayfs snapshotter
//     when an overlay mount works under Dir (probed), native otherwise;
//   - CNI plugins from /usr/lib/cni (Debian) and /opt/cni/bin: containerd
//     1.6 takes one bin_dir, so when both exist it gets a directory of
//     links to both; configuration from <data-dir>/cni/net.d;
//   - the sandbox image localhost/skiff/pause:3.10, never pulled;
//   - runc's state (Root) and the pods' network namespaces
//     (netns_mounts_under_state_dir) under state/, so that several
//     containerds (tests, a machine's own) do not share them; only the
//     shims' sockets stay in /run/containerd/s (containerd 1.6 fixes that
//     path; they are named after the containerd's socket).
//
// Available says whether a supervised containerd can run here (binaries,
// root).
//
// Run refuses to start when a containerd already answers on the socket (a
// skiff killed without stopping its containerd), and moves a
// containerd.log over 10 MiB to containerd.log.1 at start.
//
// Config.Images (skiff up: the pause image of pkg/image) are imported
// after every start, those containerd lacks, before Ready.
//
// Images: ImportImage puts a docker-archive or OCI tar into the CRI
// namespace (k8s.io) with ctr, as `k3s ctr images import` and
// `kind load image-archive` do; EnsureImages imports pkg/image images
// the runtime lacks; ListImages lists what the CRI plugin sees.
// Nothing is pulled from a registry: the sandbox image
// (localhost/skiff/pause:3.10) is built by pkg/image and imported.
//
// Pod network: BridgeNetwork is a conflist of the standard CNI plugins
// (bridge, host-local, optionally portmap) for the configuration
// directory the CRI plugin reads; skiff up's node network (pkg/cluster)
// and the real-runtime tests and benchmark write theirs with it, each
// with its own name, bridge and subnets, with or without masquerading and
// portmap. Write replaces the file atomically (the CRI plugin watches the
// directory).
//
// Invariants: this package knows nothing of the control plane (no
// apiserver, registry, storage or client; test/arch); it talks to
// containerd through the ctr binary and CRI (pkg/kubelet/remote).
package containerd
