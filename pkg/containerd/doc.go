// Package containerd runs and supervises a containerd for skiff's kubelet
// (as k3s does) and imports images into it.
//
// Layout (LayoutOf; skiff up uses <data-dir>/containerd):
// config.toml, root/, state/, containerd.sock and containerd.log, all under
// one directory, so that a skiff containerd never touches the machine's
// own (/var/lib/containerd, /run/containerd).
//
// Images: ImportImage puts a docker-archive or OCI tar into the CRI
// namespace (k8s.io) with ctr, as `k3s ctr images import` and
// `kind load image-archive` do; ListImages lists what the CRI plugin sees.
// Nothing is pulled from a registry: the sandbox image
// (localhost/skiff/pause:3.10) is built by pkg/image and imported.
//
// Invariants: this package knows nothing of the control plane (no
// apiserver, registry, storage or client; test/arch); it talks to
// containerd through the ctr binary and CRI (pkg/kubelet/remote).
package containerd
