package prober

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
)

func target(ports ...corev1.ContainerPort) Target {
	return Target{Pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, Container: &corev1.Container{Name: "c", Ports: ports},
		ContainerID: "cid", PodIP: "127.0.0.1"}
}

func hostPort(t *testing.T, rawURL string) (string, int) {
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	return u.Hostname(), port
}

func TestHTTPProbe(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		if r.UserAgent() != UserAgent || r.Header.Get("X-Custom") != "v" {
			http.Error(w, "bad headers", http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte("fine"))
	})
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "nope", http.StatusInternalServerError) })
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok?x=1", http.StatusFound) })
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://example.invalid/", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	_, port := hostPort(t, srv.URL)
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	_, closedPort := hostPort(t, closedURL)

	tests := []struct {
		name        string
		path        string
		port        intstr.IntOrString
		want        Result
		warning     bool
		output      string
		wantErr     bool
		headersOnly bool
	}{
		{name: "200", path: "/ok", port: intstr.FromInt32(int32(port)), want: Success, output: "fine"},
		{name: "named port", path: "/ok", port: intstr.FromString("http"), want: Success},
		{name: "500", path: "/fail", port: intstr.FromInt32(int32(port)), want: Failure, output: "HTTP probe failed with statuscode: 500"},
		{name: "redirect on the same host is followed", path: "/redirect", port: intstr.FromInt32(int32(port)), want: Success, output: "fine"},
		{name: "redirect elsewhere succeeds with a warning", path: "/away", port: intstr.FromInt32(int32(port)), want: Success, warning: true},
		{name: "connection refused", path: "/", port: intstr.FromInt32(int32(closedPort)), want: Failure, output: "connection refused"},
		{name: "unknown named port", path: "/", port: intstr.FromString("metrics"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: tt.path, Port: tt.port,
				HTTPHeaders: []corev1.HTTPHeader{{Name: "X-Custom", Value: "v"}}}}}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			out := (&realRunner{}).Run(ctx, Readiness, p, target(corev1.ContainerPort{Name: "http", ContainerPort: int32(port)}))
			if (out.Err != nil) != tt.wantErr {
				t.Fatalf("err %v, want error %v", out.Err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if out.Result != tt.want || out.Warning != tt.warning || !strings.Contains(out.Output, tt.output) {
				t.Errorf("got %v warning=%v %q, want %v warning=%v containing %q", out.Result, out.Warning, out.Output, tt.want, tt.warning, tt.output)
			}
		})
	}
}

func TestTCPProbe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	open := l.Addr().(*net.TCPAddr).Port
	l2, _ := net.Listen("tcp", "127.0.0.1:0")
	closedPort := l2.Addr().(*net.TCPAddr).Port
	l2.Close()
	defer l.Close()
	for _, tc := range []struct {
		port int
		want Result
	}{{open, Success}, {closedPort, Failure}} {
		p := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(tc.port))}}}
		if out := (&realRunner{}).Run(context.Background(), Liveness, p, target()); out.Result != tc.want {
			t.Errorf("port %d: %v (%s), want %v", tc.port, out.Result, out.Output, tc.want)
		}
	}
}

func TestGRPCProbe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(s, hs)
	go func() { _ = s.Serve(l) }()
	defer s.Stop()
	port := int32(l.Addr().(*net.TCPAddr).Port)
	down := "down"
	for _, tc := range []struct {
		service *string
		want    Result
		output  string
	}{{nil, Success, ""}, {&down, Failure, `service unhealthy (responded with "NOT_SERVING")`}} {
		p := &corev1.Probe{TimeoutSeconds: 5, ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: port, Service: tc.service}}}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		out := (&realRunner{}).Run(ctx, Liveness, p, target())
		cancel()
		if out.Result != tc.want || out.Output != tc.output {
			t.Errorf("service %v: %v %q, want %v %q", tc.service, out.Result, out.Output, tc.want, tc.output)
		}
	}
}

// execRuntime answers ExecSync with a scripted exit code.
type execRuntime struct {
	cri.RuntimeService
	exit int32
	got  *runtimeapi.ExecSyncRequest
}

func (e *execRuntime) ExecSync(_ context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	e.got = req
	return &runtimeapi.ExecSyncResponse{ExitCode: e.exit, Stdout: []byte("out")}, nil
}

func TestExecProbe(t *testing.T) {
	for _, tc := range []struct {
		exit int32
		want Result
	}{{0, Success}, {1, Failure}} {
		rt := &execRuntime{exit: tc.exit}
		p := &corev1.Probe{TimeoutSeconds: 3, ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/healthy"}}}}
		out := (&realRunner{runtime: rt}).Run(context.Background(), Liveness, p, target())
		if out.Result != tc.want || out.Output != "out" {
			t.Errorf("exit %d: %v %q, want %v", tc.exit, out.Result, out.Output, tc.want)
		}
		if rt.got.ContainerId != "cid" || rt.got.Timeout != 3 || strings.Join(rt.got.Cmd, " ") != "cat /tmp/healthy" {
			t.Errorf("ExecSync request %v", rt.got)
		}
	}
}
