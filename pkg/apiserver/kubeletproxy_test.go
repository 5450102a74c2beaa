package apiserver_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	skiffclient "github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
	"github.com/skiff-sh/skiff/pkg/kubelet/server"
	"github.com/skiff-sh/skiff/pkg/pki"
	"github.com/skiff-sh/skiff/pkg/testenv"
	"github.com/skiff-sh/skiff/pkg/upgradeproxy"
)

// kubeletRuntime is the runtime behind the test kubelet: container "c1"
// of pod uid "uid-k" logs to a file; exec and port-forward go to an echo
// streaming server.
type kubeletRuntime struct {
	cri.RuntimeService
	mu        sync.Mutex
	logPath   string
	running   bool
	streamURL string
}

func (k *kubeletRuntime) ContainerStatus(_ context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	st := runtimeapi.ContainerState_CONTAINER_EXITED
	if k.running {
		st = runtimeapi.ContainerState_CONTAINER_RUNNING
	}
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Id: req.ContainerId, State: st, LogPath: k.logPath}}, nil
}

func (k *kubeletRuntime) ListContainers(context.Context, *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	return &runtimeapi.ListContainersResponse{Containers: []*runtimeapi.Container{{Id: "c1", State: runtimeapi.ContainerState_CONTAINER_RUNNING,
		Labels: map[string]string{cri.LabelPodUID: "uid-k", cri.LabelContainerName: "app"}}}}, nil
}

func (k *kubeletRuntime) ListPodSandbox(context.Context, *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	return &runtimeapi.ListPodSandboxResponse{Items: []*runtimeapi.PodSandbox{{Id: "sb1", State: runtimeapi.PodSandboxState_SANDBOX_READY,
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "web", Namespace: "kubelet-proxy", Uid: "uid-k"}, Labels: map[string]string{cri.LabelPodUID: "uid-k"}}}}, nil
}

func (k *kubeletRuntime) ListContainerStats(context.Context, *runtimeapi.ListContainerStatsRequest) (*runtimeapi.ListContainerStatsResponse, error) {
	return &runtimeapi.ListContainerStatsResponse{}, nil
}

func (k *kubeletRuntime) Exec(context.Context, *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	return &runtimeapi.ExecResponse{Url: k.streamURL + "/exec/abc"}, nil
}

func (k *kubeletRuntime) PortForward(context.Context, *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	return &runtimeapi.PortForwardResponse{Url: k.streamURL + "/portforward/abc"}, nil
}

type onePod struct{ pod *corev1.Pod }

func (o onePod) GetPodByName(ns, name string) (*corev1.Pod, bool) {
	return o.pod, o.pod.Namespace == ns && o.pod.Name == name
}
func (o onePod) GetPods() []*corev1.Pod { return []*corev1.Pod{o.pod} }

func criLogLine(msg string) string {
	return time.Now().UTC().Format(time.RFC3339Nano) + " stdout F " + msg + "\n"
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// With RBAC on, the API server reaches a pod's kubelet with its kubelet
// client certificate, which the kubelet authenticates against the cluster
// CA and authorizes with a SubjectAccessReview (the bootstrap policy binds
// kube-apiserver-kubelet-client to system:kubelet-api-admin): logs stream
// through (tail, follow), exec and port-forward upgrades are spliced, and
// nodes/proxy reaches the kubelet's own paths.
func TestPodStreamsThroughTheKubelet(t *testing.T) {
	c := start(t, testenv.Config{RBAC: true})
	env := c.env
	ctx := context.Background()
	dir := t.TempDir()
	logPath := filepath.Join(dir, "0.log")
	appendFile(t, logPath, criLogLine("one")+criLogLine("two"))

	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !upgradeproxy.IsUpgradeRequest(r) {
			http.Error(w, "not an upgrade", http.StatusBadRequest)
			return
		}
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: %s\r\nX-Stream-Protocol-Version: %s\r\nX-Path: %s\r\n\r\n",
			r.Header.Get("Upgrade"), r.Header.Get("X-Stream-Protocol-Version"), r.URL.Path)
		rw.Flush()
		_, _ = io.Copy(conn, rw)
	}))
	defer echo.Close()
	rt := &kubeletRuntime{logPath: logPath, running: true, streamURL: echo.URL}

	// The kubelet reviews with an identity of its own node (here the
	// admin: the reviews are what is tested, not the kubelet's rights).
	kc, err := skiffclient.New(&skiffclient.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(env.CAData)
	kpod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kubelet-proxy", Name: "web", UID: "uid-k"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "app", ContainerID: "fake://c1",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	webhook := server.NewWebhook(kc, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ks, err := server.New(server.Config{NodeName: "kubelet-node", Host: onePod{kpod}, Runtime: rt, ClientCA: pool, Listener: ln,
		Authenticator: webhook, Authorizer: webhook, LogPollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	kctx, stop := context.WithCancel(ctx)
	kdone := make(chan error, 1)
	go func() { kdone <- ks.Run(kctx) }()
	t.Cleanup(func() { stop(); <-kdone })

	ns := c.namespace("kubelet-proxy")
	c.call(http.MethodPost, "/api/v1/nodes", map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "kubelet-node"},
		"status": map[string]any{"addresses": []any{map[string]any{"type": "InternalIP", "address": "127.0.0.1"}, map[string]any{"type": "Hostname", "address": "kubelet-node.invalid"}},
			"daemonEndpoints": map[string]any{"kubeletEndpoint": map[string]any{"Port": ln.Addr().(*net.TCPAddr).Port}}}}, http.StatusCreated, nil)
	p := pod("web", "busybox")
	p["spec"].(map[string]any)["nodeName"] = "kubelet-node"
	p["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["name"] = "app"
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", p, http.StatusCreated, nil)
	base := "/api/v1/namespaces/" + ns + "/pods/web/"

	code, _, body := c.do(http.MethodGet, base+"log", nil, "", "")
	if code != 200 || string(body) != "one\ntwo\n" {
		t.Fatalf("log: %d %q", code, body)
	}
	code, _, body = c.do(http.MethodGet, base+"log?tailLines=1", nil, "", "")
	if code != 200 || string(body) != "two\n" {
		t.Fatalf("log tail: %d %q", code, body)
	}
	// A container status the kubelet refuses: its message, as upstream's.
	code, _, body = c.do(http.MethodGet, base+"log?previous=true", nil, "", "")
	expectStatus(t, code, body, 400, metav1.StatusReasonBadRequest, `previous terminated container "app" in pod "web" not found`)

	// follow: lines come as they are written, the stream ends with the container.
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(fctx, http.MethodGet, env.URL+base+"log?follow=true&tailLines=0", nil)
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	appendFile(t, logPath, criLogLine("three"))
	if line, err := br.ReadString('\n'); err != nil || line != "three\n" {
		t.Fatalf("followed line: %q %v", line, err)
	}
	rt.mu.Lock()
	rt.running = false
	rt.mu.Unlock()
	if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
		t.Fatalf("after the container ended: %q %v", rest, err)
	}

	// exec and port-forward: SPDY upgrades spliced through both proxies.
	for _, tt := range []struct{ path, backend string }{
		{base + "exec?command=sh&stdin=true&stdout=true&tty=true", "/exec/abc"},
		{base + "portforward?ports=8080", "/portforward/abc"},
	} {
		conn, err := tls.Dial("tcp", strings.TrimPrefix(env.URL, "https://"), env.TLSConfig())
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n", tt.path)
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("X-Path") != tt.backend || resp.Header.Get("X-Stream-Protocol-Version") != "v4.channel.k8s.io" {
			body, _ := io.ReadAll(io.LimitReader(br, 2000))
			t.Fatalf("%s: %d %v %s", tt.path, resp.StatusCode, resp.Header, body)
		}
		fmt.Fprint(conn, "hello")
		buf := make([]byte, 5)
		if _, err := io.ReadFull(br, buf); err != nil || string(buf) != "hello" {
			t.Fatalf("%s: echo %q %v", tt.path, buf, err)
		}
		conn.Close()
	}

	// nodes/proxy reaches the kubelet's own paths.
	code, _, body = c.do(http.MethodGet, "/api/v1/nodes/kubelet-node/proxy/healthz", nil, "", "")
	if code != 200 || string(body) != "ok" {
		t.Errorf("nodes/proxy/healthz: %d %q", code, body)
	}
	code, _, body = c.do(http.MethodGet, "/api/v1/nodes/kubelet-node/proxy/stats/summary", nil, "", "")
	if code != 200 || !strings.Contains(string(body), `"nodeName":"kubelet-node"`) {
		t.Errorf("nodes/proxy/stats/summary: %d %s", code, body)
	}
	code, _, body = c.do(http.MethodGet, "/api/v1/nodes/kubelet-node/proxy/containerLogs/kubelet-proxy/web/app?tailLines=1", nil, "", "")
	if code != 200 || string(body) != "three\n" {
		t.Errorf("nodes/proxy/containerLogs: %d %q", code, body)
	}
	code, _, body = c.do(http.MethodGet, "/api/v1/nodes/nope/proxy/healthz", nil, "", "")
	expectStatus(t, code, body, 404, metav1.StatusReasonNotFound, `nodes "nope" not found`)
}

// With a kubelet certificate authority the kubelet's serving certificate
// is verified (a self-signed one fails), unless the log request asks
// insecureSkipTLSVerifyBackend.
func TestKubeletCertificateAuthority(t *testing.T) {
	caDir := t.TempDir()
	other, err := pki.EnsureCA(caDir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	c := start(t, testenv.Config{Tweak: func(cfg *apiserver.Config) { cfg.KubeletCAPEM = other.CertPEM }})
	dir := t.TempDir()
	logPath := filepath.Join(dir, "0.log")
	appendFile(t, logPath, criLogLine("verified?"))
	kpod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kubelet-ca", Name: "web", UID: "uid-k"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "app", ContainerID: "fake://c1",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ks, err := server.New(server.Config{NodeName: "ca-node", Host: onePod{kpod}, Runtime: &kubeletRuntime{logPath: logPath}, Listener: ln, Anonymous: true})
	if err != nil {
		t.Fatal(err)
	}
	kctx, stop := context.WithCancel(context.Background())
	kdone := make(chan error, 1)
	go func() { kdone <- ks.Run(kctx) }()
	t.Cleanup(func() { stop(); <-kdone })
	ns := c.namespace("kubelet-ca")
	c.call(http.MethodPost, "/api/v1/nodes", map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "ca-node"},
		"status": map[string]any{"addresses": []any{map[string]any{"type": "InternalIP", "address": "127.0.0.1"}},
			"daemonEndpoints": map[string]any{"kubeletEndpoint": map[string]any{"Port": ln.Addr().(*net.TCPAddr).Port}}}}, http.StatusCreated, nil)
	p := pod("web", "busybox")
	p["spec"].(map[string]any)["nodeName"] = "ca-node"
	p["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["name"] = "app"
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", p, http.StatusCreated, nil)
	base := "/api/v1/namespaces/" + ns + "/pods/web/"
	code, _, body := c.do(http.MethodGet, base+"log", nil, "", "")
	if st := expectStatus(t, code, body, 500, metav1.StatusReasonUnknown, ""); !strings.Contains(st.Message, "x509: certificate signed by unknown authority") {
		t.Errorf("log from a kubelet the CA did not sign: %q", st.Message)
	}
	code, _, body = c.do(http.MethodGet, base+"log?insecureSkipTLSVerifyBackend=true", nil, "", "")
	if code != 200 || string(body) != "verified?\n" {
		t.Errorf("insecureSkipTLSVerifyBackend: %d %q", code, body)
	}
}
