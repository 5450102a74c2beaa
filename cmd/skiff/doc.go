// Command skiff is a compact Kubernetes-compatible control plane in one
// binary. `skiff up` runs a whole cluster in one process (embedded etcd or
// memory storage and the API server; the controllers, scheduler and kubelet
// join as they land); `skiff apiserver` runs the API server alone against
// an external etcd cluster; `skiff bench apiserver` measures a `skiff up`
// child process from the client side; `skiff image` builds the pause and
// busybox images as tarballs and imports/lists images in the containerd of
// a `skiff up`; `skiff version` prints versions.
//
// Invariant: this package only turns flags into component Configs and calls
// their Run; all behaviour lives in pkg/.
package main
