package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
)

// DefaultTimeout is the runtime request timeout (upstream's
// --runtime-request-timeout default).
const DefaultTimeout = 2 * time.Minute

// MaxMessageSize is the largest message sent or received (upstream's).
const MaxMessageSize = 16 << 20

// Client is a CRI runtime reached over gRPC. It implements
// cri.RuntimeService and cri.ImageService.
type Client struct {
	conn    *grpc.ClientConn // nil when built by New
	rt      runtimeapi.RuntimeServiceClient
	img     runtimeapi.ImageServiceClient
	timeout time.Duration
}

var (
	_ cri.RuntimeService = (*Client)(nil)
	_ cri.ImageService   = (*Client)(nil)
)

// SocketPath returns the socket path of endpoint: "unix:///run/x.sock"
// and "/run/x.sock" both name /run/x.sock. Other schemes are refused.
func SocketPath(endpoint string) (string, error) {
	if endpoint == "" {
		return "", errors.New("remote: empty container runtime endpoint")
	}
	if rest, ok := strings.CutPrefix(endpoint, "unix://"); ok {
		if rest == "" {
			return "", fmt.Errorf("remote: endpoint %q names no socket", endpoint)
		}
		return rest, nil
	}
	if i := strings.Index(endpoint, "://"); i >= 0 {
		return "", fmt.Errorf("remote: endpoint %q: only unix sockets are supported (unix:///path or a path)", endpoint)
	}
	return endpoint, nil
}

// Option tunes a client Dial makes.
type Option func(*Client)

// WithTimeout sets the runtime request timeout (upstream's
// --runtime-request-timeout; ≤ 0: DefaultTimeout).
func WithTimeout(d time.Duration) Option {
	return func(c *Client) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// Dial connects to the CRI runtime at endpoint ("unix:///path" or a path)
// and checks, within ctx, that it answers Version on CRI v1. Close the
// client when done.
func Dial(ctx context.Context, endpoint string, opts ...Option) (*Client, error) {
	path, err := SocketPath(endpoint)
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient("passthrough:///"+path,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageSize), grpc.MaxCallSendMsgSize(MaxMessageSize)),
	)
	if err != nil {
		return nil, fmt.Errorf("remote: %s: %w", endpoint, err)
	}
	c := New(conn, DefaultTimeout)
	c.conn = conn
	for _, o := range opts {
		o(c)
	}
	if _, err := c.Version(ctx, &runtimeapi.VersionRequest{Version: "v1"}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("remote: container runtime at %s does not answer on CRI v1: %w", endpoint, err)
	}
	return c, nil
}

// New is a client over an existing connection (tests, custom dialers);
// timeout is the per-call runtime request timeout (≤ 0: DefaultTimeout).
// Close does not close conn.
func New(conn grpc.ClientConnInterface, timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Client{rt: runtimeapi.NewRuntimeServiceClient(conn), img: runtimeapi.NewImageServiceClient(conn), timeout: timeout}
}

// Close closes the connection Dial made.
func (c *Client) Close() error {
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}

// Error is a failed CRI call: the call's name and the runtime's gRPC
// status. It unwraps to cri.ErrNotFound or cri.ErrUnsupported by code.
type Error struct {
	Method string
	Status *status.Status
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: rpc error: code = %s desc = %s", e.Method, e.Status.Code(), e.Status.Message())
}

// GRPCStatus lets status.FromError and status.Code see the runtime's status.
func (e *Error) GRPCStatus() *status.Status { return e.Status }

// Unwrap maps the gRPC code to cri's sentinel errors, and deadline and
// cancellation to the context's.
func (e *Error) Unwrap() error {
	switch e.Status.Code() {
	case codes.NotFound:
		return cri.ErrNotFound
	case codes.Unimplemented:
		return cri.ErrUnsupported
	case codes.DeadlineExceeded:
		return context.DeadlineExceeded
	case codes.Canceled:
		return context.Canceled
	}
	return nil
}

func wrap(method string, err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("%s: %w", method, err)
	}
	return &Error{Method: method, Status: st}
}

// call runs one unary call under the request timeout (none when timeout
// is negative) and wraps its error.
func call[Req, Resp any](ctx context.Context, timeout time.Duration, method string, req Req,
	f func(context.Context, Req, ...grpc.CallOption) (Resp, error)) (Resp, error) {
	var cancel context.CancelFunc
	if timeout >= 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	resp, err := f(ctx, req, grpc.MaxCallRecvMsgSize(MaxMessageSize), grpc.MaxCallSendMsgSize(MaxMessageSize))
	if err != nil {
		var zero Resp
		return zero, wrap(method, err)
	}
	return resp, nil
}

// RuntimeService.

func (c *Client) Version(ctx context.Context, req *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return call(ctx, c.timeout, "Version", req, c.rt.Version)
}

func (c *Client) Status(ctx context.Context, req *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	return call(ctx, c.timeout, "Status", req, c.rt.Status)
}

func (c *Client) RunPodSandbox(ctx context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	// Upstream doubles the timeout: running a sandbox may pull the pause
	// image and set up the network.
	return call(ctx, 2*c.timeout, "RunPodSandbox", req, c.rt.RunPodSandbox)
}

func (c *Client) StopPodSandbox(ctx context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	return call(ctx, c.timeout, "StopPodSandbox", req, c.rt.StopPodSandbox)
}

func (c *Client) RemovePodSandbox(ctx context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	return call(ctx, c.timeout, "RemovePodSandbox", req, c.rt.RemovePodSandbox)
}

func (c *Client) PodSandboxStatus(ctx context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	return call(ctx, c.timeout, "PodSandboxStatus", req, c.rt.PodSandboxStatus)
}

func (c *Client) ListPodSandbox(ctx context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	return call(ctx, c.timeout, "ListPodSandbox", req, c.rt.ListPodSandbox)
}

func (c *Client) CreateContainer(ctx context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	return call(ctx, c.timeout, "CreateContainer", req, c.rt.CreateContainer)
}

func (c *Client) StartContainer(ctx context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	return call(ctx, c.timeout, "StartContainer", req, c.rt.StartContainer)
}

func (c *Client) StopContainer(ctx context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	// The grace period comes on top of the request timeout.
	return call(ctx, c.timeout+time.Duration(req.GetTimeout())*time.Second, "StopContainer", req, c.rt.StopContainer)
}

func (c *Client) RemoveContainer(ctx context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	return call(ctx, c.timeout, "RemoveContainer", req, c.rt.RemoveContainer)
}

func (c *Client) ListContainers(ctx context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	return call(ctx, c.timeout, "ListContainers", req, c.rt.ListContainers)
}

func (c *Client) ContainerStatus(ctx context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	return call(ctx, c.timeout, "ContainerStatus", req, c.rt.ContainerStatus)
}

func (c *Client) UpdateContainerResources(ctx context.Context, req *runtimeapi.UpdateContainerResourcesRequest) (*runtimeapi.UpdateContainerResourcesResponse, error) {
	return call(ctx, c.timeout, "UpdateContainerResources", req, c.rt.UpdateContainerResources)
}

func (c *Client) ReopenContainerLog(ctx context.Context, req *runtimeapi.ReopenContainerLogRequest) (*runtimeapi.ReopenContainerLogResponse, error) {
	return call(ctx, c.timeout, "ReopenContainerLog", req, c.rt.ReopenContainerLog)
}

func (c *Client) ExecSync(ctx context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	timeout := time.Duration(-1) // none: the command runs until it ends or ctx does
	if req.GetTimeout() > 0 {
		timeout = c.timeout + time.Duration(req.GetTimeout())*time.Second
	}
	return call(ctx, timeout, "ExecSync", req, c.rt.ExecSync)
}

func (c *Client) Exec(ctx context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	return call(ctx, c.timeout, "Exec", req, c.rt.Exec)
}

func (c *Client) Attach(ctx context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	return call(ctx, c.timeout, "Attach", req, c.rt.Attach)
}

func (c *Client) PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	return call(ctx, c.timeout, "PortForward", req, c.rt.PortForward)
}

func (c *Client) ContainerStats(ctx context.Context, req *runtimeapi.ContainerStatsRequest) (*runtimeapi.ContainerStatsResponse, error) {
	return call(ctx, c.timeout, "ContainerStats", req, c.rt.ContainerStats)
}

func (c *Client) ListContainerStats(ctx context.Context, req *runtimeapi.ListContainerStatsRequest) (*runtimeapi.ListContainerStatsResponse, error) {
	return call(ctx, c.timeout, "ListContainerStats", req, c.rt.ListContainerStats)
}

func (c *Client) PodSandboxStats(ctx context.Context, req *runtimeapi.PodSandboxStatsRequest) (*runtimeapi.PodSandboxStatsResponse, error) {
	return call(ctx, c.timeout, "PodSandboxStats", req, c.rt.PodSandboxStats)
}

func (c *Client) ListPodSandboxStats(ctx context.Context, req *runtimeapi.ListPodSandboxStatsRequest) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	return call(ctx, c.timeout, "ListPodSandboxStats", req, c.rt.ListPodSandboxStats)
}

func (c *Client) UpdateRuntimeConfig(ctx context.Context, req *runtimeapi.UpdateRuntimeConfigRequest) (*runtimeapi.UpdateRuntimeConfigResponse, error) {
	return call(ctx, c.timeout, "UpdateRuntimeConfig", req, c.rt.UpdateRuntimeConfig)
}

// ImageService.

func (c *Client) PullImage(ctx context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	return call(ctx, -1, "PullImage", req, c.img.PullImage)
}

func (c *Client) ListImages(ctx context.Context, req *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	return call(ctx, c.timeout, "ListImages", req, c.img.ListImages)
}

func (c *Client) ImageStatus(ctx context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	return call(ctx, c.timeout, "ImageStatus", req, c.img.ImageStatus)
}

func (c *Client) RemoveImage(ctx context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error) {
	return call(ctx, c.timeout, "RemoveImage", req, c.img.RemoveImage)
}

func (c *Client) ImageFsInfo(ctx context.Context, req *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	return call(ctx, c.timeout, "ImageFsInfo", req, c.img.ImageFsInfo)
}
