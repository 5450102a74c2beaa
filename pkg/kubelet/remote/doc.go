// Package remote is the kubelet's CRI client: it implements
// pkg/kubelet/cri's RuntimeService and ImageService over gRPC on a unix
// socket (containerd's CRI plugin, or any CRI runtime), as a thin adapter
// over k8s.io/cri-api's runtime/v1 RuntimeServiceClient and
// ImageServiceClient.
//
// Dial(ctx, endpoint) accepts "unix:///path/to/sock" or a plain path and
// checks that the runtime answers Version on the v1 API (upstream's
// kubelet refuses runtimes that do not).
//
// Conventions (upstream's remote runtime client):
//   - every call runs under the runtime request timeout (2 min, upstream's
//     --runtime-request-timeout) unless its context ends sooner; image
//     pulls have none (a pull takes as long as it takes); ExecSync gets
//     its own timeout plus the request timeout (room for the runtime to
//     clean up), none when the request has none;
//   - messages up to 16 MiB each way (a node with many containers lists
//     more than gRPC's default 4 MiB);
//   - gRPC status NotFound comes back as an error wrapping cri.ErrNotFound,
//     Unimplemented as one wrapping cri.ErrUnsupported; every error keeps
//     its gRPC status (status.FromError, status.Code) and names the call.
//
// Invariants: this package depends on pkg/kubelet/cri, gRPC and
// k8s.io/cri-api only (test/arch); it holds no state besides the
// connection.
package remote
