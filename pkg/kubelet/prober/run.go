package prober

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
)

// UserAgent is what HTTP probes send (upstream's kube-probe/<major.minor>).
const UserAgent = "kube-probe/1.37"

// maxBody is how much of a probe's output is kept (upstream's 10 KiB).
const maxBody = 10 * 1024

type realRunner struct {
	runtime cri.RuntimeService
}

func (r *realRunner) Run(ctx context.Context, kind Kind, p *corev1.Probe, t Target) Outcome {
	switch {
	case p.Exec != nil:
		return r.exec(ctx, p, t)
	case p.HTTPGet != nil:
		return HTTPGet(ctx, p.HTTPGet, t)
	case p.TCPSocket != nil:
		port, err := resolvePort(p.TCPSocket.Port, t.Container)
		if err != nil {
			return Outcome{Err: err}
		}
		return tcpProbe(ctx, hostOr(p.TCPSocket.Host, t.PodIP), port)
	case p.GRPC != nil:
		svc := ""
		if p.GRPC.Service != nil {
			svc = *p.GRPC.Service
		}
		return grpcProbe(ctx, t.PodIP, int(p.GRPC.Port), svc, max(p.TimeoutSeconds, 1))
	}
	return Outcome{Err: fmt.Errorf("missing probe handler for %s:%s", t.Pod.Name, t.Container.Name)}
}

func hostOr(h, ip string) string {
	if h != "" {
		return h
	}
	return ip
}

func (r *realRunner) exec(ctx context.Context, p *corev1.Probe, t Target) Outcome {
	if r.runtime == nil {
		return Outcome{Err: errors.New("no runtime for exec probes")}
	}
	timeout := int64(p.TimeoutSeconds)
	if timeout < 1 {
		timeout = 1
	}
	resp, err := r.runtime.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: t.ContainerID, Cmd: p.Exec.Command, Timeout: timeout})
	if err != nil {
		if ctx.Err() != nil {
			// Upstream: a timed-out exec probe fails.
			return Outcome{Result: Failure, Output: fmt.Sprintf("command %q timed out", strings.Join(p.Exec.Command, " "))}
		}
		return Outcome{Err: err}
	}
	out := string(append(resp.Stdout, resp.Stderr...))
	if len(out) > maxBody {
		out = out[:maxBody]
	}
	if resp.ExitCode != 0 {
		if out == "" {
			out = fmt.Sprintf("command %q exited with %d", strings.Join(p.Exec.Command, " "), resp.ExitCode)
		}
		return Outcome{Result: Failure, Output: out}
	}
	return Outcome{Result: Success, Output: out}
}

// resolvePort is a probe's port: a number, or the name of one of the
// container's ports.
func resolvePort(p intstr.IntOrString, c *corev1.Container) (int, error) {
	if p.Type == intstr.Int {
		if p.IntVal < 1 || p.IntVal > 65535 {
			return 0, fmt.Errorf("invalid port number: %d", p.IntVal)
		}
		return int(p.IntVal), nil
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	if n, err := strconv.Atoi(p.StrVal); err == nil && n > 0 && n < 65536 {
		return n, nil
	}
	return 0, fmt.Errorf("couldn't find port: %v in %v", p.StrVal, c.Name)
}

// HTTPGet runs an httpGet action against t (probes and lifecycle hooks):
// the pod IP unless the action names a host, a named port from the
// container's ports.
func HTTPGet(ctx context.Context, g *corev1.HTTPGetAction, t Target) Outcome {
	port, err := resolvePort(g.Port, t.Container)
	if err != nil {
		return Outcome{Err: err}
	}
	scheme := strings.ToLower(string(g.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	host := hostOr(g.Host, t.PodIP)
	path := g.Path
	if path != "" && !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(port))}
	if pu, err := url.Parse(path); err == nil {
		u.Path, u.RawQuery = pu.Path, pu.RawQuery
	} else {
		u.Path = path
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Outcome{Err: err}
	}
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("Accept", "*/*")
	for _, h := range g.HTTPHeaders {
		switch {
		case strings.EqualFold(h.Name, "Host"):
			req.Host = h.Value
		default:
			req.Header.Add(h.Name, h.Value)
		}
	}
	warning := ""
	c := &http.Client{
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true, Proxy: nil},
		CheckRedirect: func(r *http.Request, via []*http.Request) error {
			if r.URL.Hostname() != via[0].URL.Hostname() {
				// Upstream: a redirect off the probed host is not followed;
				// the probe succeeds with a warning.
				warning = "Probe terminated redirects, Response body: "
				return http.ErrUseLastResponse
			}
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			return nil
		},
	}
	resp, err := c.Do(req)
	if err != nil {
		return Outcome{Result: Failure, Output: err.Error()}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if warning != "" {
		return Outcome{Result: Success, Warning: true, Output: warning + string(body)}
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 400 {
		return Outcome{Result: Success, Output: string(body)}
	}
	return Outcome{Result: Failure, Output: fmt.Sprintf("HTTP probe failed with statuscode: %d", resp.StatusCode)}
}

func tcpProbe(ctx context.Context, host string, port int) Outcome {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return Outcome{Result: Failure, Output: err.Error()}
	}
	_ = conn.Close()
	return Outcome{Result: Success}
}

func grpcProbe(ctx context.Context, host string, port int, service string, timeoutSeconds int32) Outcome {
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithUserAgent(UserAgent))
	if err != nil {
		return Outcome{Result: Failure, Output: fmt.Sprintf("failed to connect service %q: %v", addr, err)}
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		if ctx.Err() != nil {
			return Outcome{Result: Failure, Output: fmt.Sprintf("timeout: health rpc did not complete within %ds", timeoutSeconds)}
		}
		return Outcome{Result: Failure, Output: fmt.Sprintf("error: health rpc probe failed: %v", err)}
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return Outcome{Result: Failure, Output: fmt.Sprintf("service unhealthy (responded with %q)", resp.GetStatus().String())}
	}
	return Outcome{Result: Success}
}
