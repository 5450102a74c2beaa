package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
)

// fakeRuntime serves a few CRI calls and records the deadline each call saw.
type fakeRuntime struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer

	mu        sync.Mutex
	deadlines map[string]time.Duration // remaining time at arrival; -1: none
	manyConts int                      // ListContainers returns this many
	sock      string                   // where serve listens
}

func (f *fakeRuntime) record(ctx context.Context, method string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := time.Duration(-1)
	if dl, ok := ctx.Deadline(); ok {
		d = time.Until(dl)
	}
	f.deadlines[method] = d
}

func (f *fakeRuntime) deadline(method string) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.deadlines[method]
	if !ok {
		return -2
	}
	return d
}

func (f *fakeRuntime) Version(ctx context.Context, req *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	f.record(ctx, "Version")
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: "fake", RuntimeVersion: "1.0", RuntimeApiVersion: "v1"}, nil
}

func (f *fakeRuntime) ContainerStatus(ctx context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	f.record(ctx, "ContainerStatus")
	if req.ContainerId != "c1" {
		return nil, status.Errorf(codes.NotFound, "container %q: not found", req.ContainerId)
	}
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Id: "c1", State: runtimeapi.ContainerState_CONTAINER_EXITED}}, nil
}

func (f *fakeRuntime) RunPodSandbox(ctx context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	f.record(ctx, "RunPodSandbox")
	if req.GetConfig().GetMetadata().GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "sandbox name is empty")
	}
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: "sb-" + req.Config.Metadata.Name}, nil
}

func (f *fakeRuntime) StopContainer(ctx context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	f.record(ctx, "StopContainer")
	return &runtimeapi.StopContainerResponse{}, nil
}

func (f *fakeRuntime) ExecSync(ctx context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	f.record(ctx, fmt.Sprintf("ExecSync/%d", req.Timeout))
	return &runtimeapi.ExecSyncResponse{Stdout: []byte(strings.Join(req.Cmd, " "))}, nil
}

func (f *fakeRuntime) ListContainers(ctx context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	f.record(ctx, "ListContainers")
	resp := &runtimeapi.ListContainersResponse{}
	for i := 0; i < f.manyConts; i++ {
		resp.Containers = append(resp.Containers, &runtimeapi.Container{Id: fmt.Sprintf("%064d", i),
			Labels: map[string]string{"padding": strings.Repeat("x", 1000)}})
	}
	return resp, nil
}

func (f *fakeRuntime) PullImage(ctx context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	f.record(ctx, "PullImage")
	return &runtimeapi.PullImageResponse{ImageRef: "sha256:" + req.Image.Image}, nil
}

// serve starts the fake on a unix socket in a short temp dir.
func serve(t *testing.T, f *fakeRuntime) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cri")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "cri.sock")
	f.sock = sock
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(MaxMessageSize), grpc.MaxSendMsgSize(MaxMessageSize))
	runtimeapi.RegisterRuntimeServiceServer(srv, f)
	runtimeapi.RegisterImageServiceServer(srv, f)
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	return sock
}

func dial(t *testing.T, endpoint string) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestSocketPath(t *testing.T) {
	for _, tc := range []struct {
		endpoint, want string
		err            bool
	}{
		{endpoint: "unix:///run/containerd/containerd.sock", want: "/run/containerd/containerd.sock"},
		{endpoint: "/run/containerd/containerd.sock", want: "/run/containerd/containerd.sock"},
		{endpoint: "rel/x.sock", want: "rel/x.sock"},
		{endpoint: "unix://", err: true},
		{endpoint: "tcp://127.0.0.1:1234", err: true},
		{endpoint: "", err: true},
	} {
		got, err := SocketPath(tc.endpoint)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("SocketPath(%q) = %q, %v; want %q, error %v", tc.endpoint, got, err, tc.want, tc.err)
		}
	}
}

func TestDial(t *testing.T) {
	f := &fakeRuntime{deadlines: map[string]time.Duration{}}
	sock := serve(t, f)
	for _, endpoint := range []string{"unix://" + sock, sock} {
		c := dial(t, endpoint)
		v, err := c.Version(context.Background(), &runtimeapi.VersionRequest{Version: "v1"})
		if err != nil || v.RuntimeName != "fake" {
			t.Fatalf("%s: Version = %v, %v", endpoint, v, err)
		}
	}

	// Nothing listening: Dial fails within its context.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if c, err := Dial(ctx, filepath.Join(filepath.Dir(sock), "none.sock")); err == nil {
		c.Close()
		t.Fatal("Dial of a missing socket succeeded")
	}
	// A server without the CRI v1 services is refused.
	other := filepath.Join(filepath.Dir(sock), "other.sock")
	l, err := net.Listen("unix", other)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	go srv.Serve(l)
	defer srv.Stop()
	if c, err := Dial(ctx, other); err == nil || !errors.Is(err, cri.ErrUnsupported) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("Dial of a non-CRI server: %v, want an error wrapping cri.ErrUnsupported", err)
	}
}

func TestErrors(t *testing.T) {
	f := &fakeRuntime{deadlines: map[string]time.Duration{}}
	c := dial(t, serve(t, f))
	ctx := context.Background()

	if s, err := c.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: "c1"}); err != nil || s.Status.Id != "c1" {
		t.Fatalf("ContainerStatus(c1) = %v, %v", s, err)
	}
	_, err := c.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: "nope"})
	if !cri.IsNotFound(err) || status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), `container "nope": not found`) ||
		!strings.HasPrefix(err.Error(), "ContainerStatus: ") {
		t.Errorf("ContainerStatus(nope) error = %v (code %s), want NotFound wrapping cri.ErrNotFound", err, status.Code(err))
	}
	_, err = c.Exec(ctx, &runtimeapi.ExecRequest{ContainerId: "c1"})
	if !errors.Is(err, cri.ErrUnsupported) || cri.IsNotFound(err) {
		t.Errorf("Exec (unimplemented) error = %v, want one wrapping cri.ErrUnsupported", err)
	}
	_, err = c.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{}}})
	if err == nil || status.Code(err) != codes.InvalidArgument || errors.Is(err, cri.ErrNotFound) || errors.Is(err, cri.ErrUnsupported) {
		t.Errorf("RunPodSandbox (invalid) error = %v, want InvalidArgument", err)
	}
	r, err := c.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p"}}})
	if err != nil || r.PodSandboxId != "sb-p" {
		t.Errorf("RunPodSandbox = %v, %v", r, err)
	}
	// A caller's cancelled context comes back as context.Canceled.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Version(cctx, &runtimeapi.VersionRequest{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Version with a cancelled context: %v, want context.Canceled", err)
	}
}

func TestTimeouts(t *testing.T) {
	f := &fakeRuntime{deadlines: map[string]time.Duration{}}
	c := dial(t, serve(t, f))
	ctx := context.Background()
	if _, err := c.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: "c1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: "c1", Timeout: 30}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "busybox"}}); err != nil {
		t.Fatal(err)
	}
	for _, timeout := range []int64{0, 5} {
		if r, err := c.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: "c1", Cmd: []string{"echo", "hi"}, Timeout: timeout}); err != nil || string(r.Stdout) != "echo hi" {
			t.Fatalf("ExecSync = %v, %v", r, err)
		}
	}
	const slack = 30 * time.Second // the test's own latency
	for _, tc := range []struct {
		method string
		want   time.Duration // -1: no deadline
	}{
		{"ContainerStatus", DefaultTimeout},
		{"RunPodSandbox", 2 * DefaultTimeout},
		{"StopContainer", DefaultTimeout + 30*time.Second},
		{"PullImage", -1},
		{"ExecSync/0", -1},
		{"ExecSync/5", DefaultTimeout + 5*time.Second},
	} {
		got := f.deadline(tc.method)
		if tc.want < 0 {
			if got != -1 {
				t.Errorf("%s: deadline in %v, want none", tc.method, got)
			}
			continue
		}
		if got > tc.want || got < tc.want-slack {
			t.Errorf("%s: deadline in %v, want about %v", tc.method, got, tc.want)
		}
	}
	// WithTimeout changes the request timeout.
	ctx2, cancel2 := context.WithTimeout(ctx, 10*time.Second)
	defer cancel2()
	c2, err := Dial(ctx2, "unix://"+f.sock, WithTimeout(5*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := c2.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: "c1"}); err != nil {
		t.Fatal(err)
	}
	if got := f.deadline("ContainerStatus"); got > 5*time.Minute || got < 5*time.Minute-slack {
		t.Errorf("ContainerStatus WithTimeout(5m): deadline in %v", got)
	}
	// The caller's shorter deadline wins.
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := c.ContainerStatus(sctx, &runtimeapi.ContainerStatusRequest{ContainerId: "c1"}); err != nil {
		t.Fatal(err)
	}
	if got := f.deadline("ContainerStatus"); got > 10*time.Second {
		t.Errorf("ContainerStatus under a 10s context: deadline in %v", got)
	}
}

// A response over gRPC's default 4 MiB limit comes through.
func TestLargeMessages(t *testing.T) {
	f := &fakeRuntime{deadlines: map[string]time.Duration{}, manyConts: 6000} // ~6.5 MB
	c := dial(t, serve(t, f))
	r, err := c.ListContainers(context.Background(), &runtimeapi.ListContainersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Containers) != 6000 {
		t.Fatalf("ListContainers: %d containers, want 6000", len(r.Containers))
	}
}
