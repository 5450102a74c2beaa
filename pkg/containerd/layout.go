package containerd

import "path/filepath"

// Namespace is the containerd namespace of the CRI plugin (images the
// kubelet can run are imported there).
const Namespace = "k8s.io"

// SandboxImage is the pod sandbox ("pause") image skiff builds and imports
// (pkg/image); containerd's CRI plugin is configured with it.
const SandboxImage = "localhost/skiff/pause:3.10"

// Layout is where a supervised containerd keeps its files, all under Dir
// (skiff up: <data-dir>/containerd).
type Layout struct {
	Dir    string
	Config string // Dir/config.toml
	Root   string // Dir/root: persistent data (content, snapshots, metadata)
	State  string // Dir/state: runtime state (sockets, shim bundles)
	Socket string // Dir/containerd.sock: the gRPC (and CRI) socket
	Log    string // Dir/containerd.log: containerd's output
}

// LayoutOf is the layout under dir.
func LayoutOf(dir string) Layout {
	return Layout{Dir: dir, Config: filepath.Join(dir, "config.toml"), Root: filepath.Join(dir, "root"),
		State: filepath.Join(dir, "state"), Socket: filepath.Join(dir, "containerd.sock"), Log: filepath.Join(dir, "containerd.log")}
}

// DirOf is the containerd directory of a skiff data dir.
func DirOf(dataDir string) string { return filepath.Join(dataDir, "containerd") }

// SocketOf is the containerd socket of a skiff data dir
// (<data-dir>/containerd/containerd.sock).
func SocketOf(dataDir string) string { return LayoutOf(DirOf(dataDir)).Socket }
