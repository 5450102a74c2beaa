// Command skiff is a compact Kubernetes-compatible control plane in one
// binary. `skiff up` runs a whole cluster in one process (embedded etcd or
// memory storage, the API server, the controller manager, the scheduler,
// metrics-server and a node: a kubelet on a containerd it supervises, or
// on the simulated runtime without one; pkg/cluster); `skiff kubelet` runs
// more nodes (joining with a bootstrap token: --bootstrap-kubeconfig,
// pkg/kubelet/certificate); `skiff token create` makes bootstrap tokens
// (pkg/bootstraptoken); `skiff apiserver` runs the API server alone against
// an external etcd cluster; `skiff bench apiserver` measures a `skiff up`
// child process from the client side; `skiff image` builds the pause and
// busybox images as tarballs and imports/lists images in the containerd of
// a `skiff up`; `skiff version` prints versions.
//
// Invariant: this package only turns flags into component Configs and calls
// their Run; all behaviour lives in pkg/.
package main
