// Package cri is the container runtime interface the kubelet uses: the
// RuntimeService and ImageService of upstream's CRI (k8s.io/cri-api
// runtime/v1), as Go interfaces whose methods take and return the CRI
// request and response messages.
//
// Implementations: pkg/kubelet/sim (an in-memory "hollow" runtime, no
// processes) and pkg/kubelet/remote, the gRPC client of a real runtime
// such as containerd's CRI plugin (a thin adapter over
// runtimeapi.RuntimeServiceClient, whose methods have the same shapes plus
// grpc.CallOption arguments).
//
// Invariants: this package holds interfaces and label/annotation names
// only; it depends on k8s.io/cri-api and nothing of skiff. Errors follow
// CRI's conventions: a missing sandbox, container or image is an error
// for which IsNotFound reports true (gRPC code NotFound on the wire).
package cri
