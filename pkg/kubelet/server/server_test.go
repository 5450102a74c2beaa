package server_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
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

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
	"github.com/skiff-sh/skiff/pkg/kubelet/server"
	"github.com/skiff-sh/skiff/pkg/pki"
	"github.com/skiff-sh/skiff/pkg/upgradeproxy"
)

// fakeRuntime serves what the server asks of a runtime from fixed data.
type fakeRuntime struct {
	cri.RuntimeService
	mu         sync.Mutex
	containers map[string]*runtimeapi.ContainerStatus // by ID
	labels     map[string]map[string]string
	sandboxes  []*runtimeapi.PodSandbox
	stats      []*runtimeapi.ContainerStats
	streamURL  string
	streamErr  error
	lastExec   *runtimeapi.ExecRequest
}

func (f *fakeRuntime) ContainerStatus(_ context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.containers[req.ContainerId]
	if !ok {
		return nil, fmt.Errorf("container %q: %w", req.ContainerId, cri.ErrNotFound)
	}
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Id: c.Id, State: c.State, LogPath: c.LogPath, Metadata: c.Metadata}}, nil
}

func (f *fakeRuntime) setState(id string, st runtimeapi.ContainerState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.containers[id].State = st
}

func (f *fakeRuntime) ListContainers(_ context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*runtimeapi.Container
	for id, c := range f.containers {
		fl := req.GetFilter()
		if fl.GetState() != nil && fl.GetState().State != c.State {
			continue
		}
		match := true
		for k, v := range fl.GetLabelSelector() {
			if f.labels[id][k] != v {
				match = false
			}
		}
		if match {
			out = append(out, &runtimeapi.Container{Id: id, State: c.State, CreatedAt: c.CreatedAt, Labels: f.labels[id], Metadata: c.Metadata})
		}
	}
	return &runtimeapi.ListContainersResponse{Containers: out}, nil
}

func (f *fakeRuntime) ListPodSandbox(_ context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	var out []*runtimeapi.PodSandbox
	for _, sb := range f.sandboxes {
		if uid := req.GetFilter().GetLabelSelector()[cri.LabelPodUID]; uid != "" && sb.Labels[cri.LabelPodUID] != uid {
			continue
		}
		out = append(out, sb)
	}
	return &runtimeapi.ListPodSandboxResponse{Items: out}, nil
}

func (f *fakeRuntime) ListContainerStats(context.Context, *runtimeapi.ListContainerStatsRequest) (*runtimeapi.ListContainerStatsResponse, error) {
	return &runtimeapi.ListContainerStatsResponse{Stats: f.stats}, nil
}

func (f *fakeRuntime) Exec(_ context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	f.mu.Lock()
	f.lastExec = req
	f.mu.Unlock()
	if f.streamErr != nil {
		return nil, f.streamErr
	}
	return &runtimeapi.ExecResponse{Url: f.streamURL + "/exec/token1"}, nil
}

func (f *fakeRuntime) Attach(context.Context, *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	if f.streamErr != nil {
		return nil, f.streamErr
	}
	return &runtimeapi.AttachResponse{Url: f.streamURL + "/attach/token2"}, nil
}

func (f *fakeRuntime) PortForward(_ context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	if f.streamErr != nil {
		return nil, f.streamErr
	}
	return &runtimeapi.PortForwardResponse{Url: f.streamURL + "/portforward/" + req.PodSandboxId}, nil
}

type fakeHost struct{ pods []*corev1.Pod }

func (h *fakeHost) GetPodByName(ns, name string) (*corev1.Pod, bool) {
	for _, p := range h.pods {
		if p.Namespace == ns && p.Name == name {
			return p, true
		}
	}
	return nil, false
}

func (h *fakeHost) GetPods() []*corev1.Pod { return h.pods }

var t0 = time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)

// writeLog writes CRI-format lines, the i-th i seconds after t0.
func writeLog(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

func criLine(sec int, stream, tag, msg string) string {
	return t0.Add(time.Duration(sec)*time.Second).Format(time.RFC3339Nano) + " " + stream + " " + tag + " " + msg
}

type fixture struct {
	rt   *fakeRuntime
	host *fakeHost
	srv  *server.Server
	url  string
	dir  string
	hc   *http.Client
}

// newFixture serves a node "node-1" with pod ns/web: container "app"
// running (ID c2, its previous instance c1), "side" waiting, and an
// AlwaysAllow authorizer with anonymous requests allowed unless cfg
// says otherwise.
func newFixture(t *testing.T, tweak func(*server.Config)) *fixture {
	t.Helper()
	dir := t.TempDir()
	rt := &fakeRuntime{containers: map[string]*runtimeapi.ContainerStatus{
		"c1": {Id: "c1", State: runtimeapi.ContainerState_CONTAINER_EXITED, LogPath: filepath.Join(dir, "0.log"), Metadata: &runtimeapi.ContainerMetadata{Name: "app"}},
		"c2": {Id: "c2", State: runtimeapi.ContainerState_CONTAINER_RUNNING, LogPath: filepath.Join(dir, "1.log"), CreatedAt: 2, Metadata: &runtimeapi.ContainerMetadata{Name: "app"}},
		"c3": {Id: "c3", State: runtimeapi.ContainerState_CONTAINER_RUNNING, Metadata: &runtimeapi.ContainerMetadata{Name: "nolog"}},
	}, labels: map[string]map[string]string{
		"c1": {cri.LabelPodUID: "uid-1", cri.LabelContainerName: "app"},
		"c2": {cri.LabelPodUID: "uid-1", cri.LabelContainerName: "app"},
		"c3": {cri.LabelPodUID: "uid-1", cri.LabelContainerName: "nolog"},
	}, sandboxes: []*runtimeapi.PodSandbox{{Id: "sb1", State: runtimeapi.PodSandboxState_SANDBOX_READY, CreatedAt: t0.UnixNano(),
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "web", Namespace: "ns", Uid: "uid-1"}, Labels: map[string]string{cri.LabelPodUID: "uid-1"}}}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "uid-1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}, {Name: "side"}, {Name: "nolog"}}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
			{Name: "app", ContainerID: "fake://c2", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ContainerID: "fake://c1"}}},
			{Name: "side", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}},
			{Name: "nolog", ContainerID: "fake://c3", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
		}}}
	host := &fakeHost{pods: []*corev1.Pod{pod}}
	cfg := server.Config{NodeName: "node-1", Host: host, Runtime: rt, Anonymous: true, LogPollInterval: 5 * time.Millisecond}
	if tweak != nil {
		tweak(&cfg)
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv.Handler())
	ts.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	return &fixture{rt: rt, host: host, srv: srv, url: ts.URL, dir: dir, hc: ts.Client()}
}

func (f *fixture) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := f.hc.Get(f.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestContainerLogs(t *testing.T) {
	f := newFixture(t, nil)
	writeLog(t, filepath.Join(f.dir, "0.log"), criLine(0, "stdout", "F", "old run"))
	writeLog(t, filepath.Join(f.dir, "1.log"),
		criLine(1, "stdout", "F", "one"),
		criLine(2, "stderr", "F", "two"),
		criLine(3, "stdout", "P", "thr"),
		criLine(3, "stdout", "F", "ee"),
		criLine(4, "stdout", "F", "four"))
	ts := func(sec int) string { return t0.Add(time.Duration(sec) * time.Second).Format(time.RFC3339Nano) }
	tests := []struct {
		name, query string
		code        int
		body        string
	}{
		{"all", "", 200, "one\ntwo\nthree\nfour\n"},
		{"tail", "?tailLines=2", 200, "ee\nfour\n"},
		{"old tail all", "?tail=all", 200, "one\ntwo\nthree\nfour\n"},
		{"tail zero", "?tailLines=0", 200, ""},
		{"timestamps", "?tailLines=1&timestamps=true", 200, ts(4) + " four\n"},
		{"limitBytes", "?limitBytes=6", 200, "one\ntw"},
		{"sinceTime", "?sinceTime=" + t0.Add(2*time.Second).Format(time.RFC3339), 200, "two\nthree\nfour\n"},
		{"stderr only", "?stream=Stderr", 200, "two\n"},
		{"previous", "?previous=true", 200, "old run\n"},
		{"negative tail", "?tailLines=-1", 422, `{"message": "Invalid request."}`},
		{"since twice", "?sinceSeconds=5&sinceTime=" + t0.Format(time.RFC3339), 422, `{"message": "Invalid request."}`},
		{"bad follow", "?follow=maybe", 400, `{"message": "Unable to decode query."}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := f.get(t, "/containerLogs/ns/web/app"+tt.query)
			if code != tt.code || body != tt.body {
				t.Errorf("got %d %q, want %d %q", code, body, tt.code, tt.body)
			}
		})
	}
	for _, tt := range []struct {
		path string
		code int
		body string
	}{
		{"/containerLogs/ns/nope/app", 404, `pod "nope" does not exist`},
		{"/containerLogs/ns/web/nope", 404, `container "nope" not found in pod "web"`},
		{"/containerLogs/ns/web/side", 400, `container "side" in pod "web" is waiting to start: ContainerCreating`},
		{"/containerLogs/ns/web/side?previous=true", 400, `previous terminated container "side" in pod "web" not found`},
		// A runtime that keeps no log file (the simulated one): empty.
		{"/containerLogs/ns/web/nolog", 200, ""},
	} {
		if code, body := f.get(t, tt.path); code != tt.code || body != tt.body {
			t.Errorf("%s: got %d %q, want %d %q", tt.path, code, body, tt.code, tt.body)
		}
	}
}

// readUntil reads lines from br until their concatenation is want.
func readUntil(t *testing.T, br *bufio.Reader, want string) {
	t.Helper()
	var got strings.Builder
	for got.Len() < len(want) {
		line, err := br.ReadString('\n')
		got.WriteString(line)
		if err != nil {
			t.Fatalf("read %q, want %q: %v", got.String(), want, err)
		}
	}
	if got.String() != want {
		t.Fatalf("read %q, want %q", got.String(), want)
	}
}

func TestContainerLogsFollowAcrossRotation(t *testing.T) {
	f := newFixture(t, nil)
	path := filepath.Join(f.dir, "1.log")
	writeLog(t, path, criLine(1, "stdout", "F", "before"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.url+"/containerLogs/ns/web/app?follow=true", nil)
	resp, err := f.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	readUntil(t, br, "before\n")
	writeLog(t, path, criLine(2, "stdout", "F", "appended"))
	readUntil(t, br, "appended\n")
	// Rotation as the kubelet's log manager does it: rename, then the
	// runtime reopens a new file at the path. A line written to the old
	// file after the rename is not lost.
	if err := os.Rename(path, path+".20261126-060000"); err != nil {
		t.Fatal(err)
	}
	writeLog(t, path+".20261126-060000", criLine(3, "stdout", "F", "late in old"))
	writeLog(t, path, criLine(4, "stdout", "F", "in new"))
	readUntil(t, br, "late in old\nin new\n")
	// The container ends: the stream ends after the last lines.
	writeLog(t, path, criLine(5, "stdout", "F", "last"))
	f.rt.setState("c2", runtimeapi.ContainerState_CONTAINER_EXITED)
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "last\n" {
		t.Fatalf("after the container ended: %q, %v", rest, err)
	}
}

// fakeAuth authorizes from a table of user → allowed subresources.
type fakeAuth struct {
	allowed map[string][]string
	mu      sync.Mutex
	asked   []server.Attributes
}

func (a *fakeAuth) Authorize(_ context.Context, at server.Attributes) (bool, string, error) {
	a.mu.Lock()
	a.asked = append(a.asked, at)
	a.mu.Unlock()
	for _, s := range a.allowed[at.User.Username] {
		if s == at.Subresource {
			return true, "", nil
		}
	}
	return false, "", nil
}

type fakeTokens map[string]string

func (f fakeTokens) AuthenticateToken(_ context.Context, token string) (*authenticationv1.UserInfo, bool, error) {
	u, ok := f[token]
	if !ok {
		return nil, false, nil
	}
	return &authenticationv1.UserInfo{Username: u, Groups: []string{"system:authenticated"}}, true, nil
}

func TestAuthentication(t *testing.T) {
	dir := t.TempDir()
	ca, err := pki.EnsureCA(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	alice, err := pki.EnsureClient(dir, "alice", ca, "alice", []string{"devs"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	auth := &fakeAuth{allowed: map[string][]string{"alice": {"proxy"}, "bob": {"healthz", "stats"}}}
	f := newFixture(t, func(c *server.Config) {
		c.Anonymous, c.ClientCA, c.Authorizer, c.Authenticator = false, pool, auth, fakeTokens{"bob-token": "bob"}
	})
	cert, err := tls.X509KeyPair(alice.CertPEM, alice.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	withCert := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{cert}}}} //nolint:gosec // test server
	tests := []struct {
		name   string
		client *http.Client
		token  string
		method string
		path   string
		code   int
		body   string
	}{
		{"no credentials", f.hc, "", "GET", "/healthz", 401, "Unauthorized"},
		{"unknown token", f.hc, "nope", "GET", "/healthz", 401, "Unauthorized"},
		{"certificate, healthz through proxy", withCert, "", "GET", "/healthz", 200, "ok"},
		{"certificate, stats denied", withCert, "", "GET", "/stats/summary", 403, "Forbidden (user=alice, verb=get, resource=nodes, subresource(s)=[stats])\n"},
		{"certificate, exec verb create", withCert, "", "POST", "/exec/ns/web/app?command=ls&output=1", 400, "Upgrade request required"},
		{"token, healthz", f.hc, "bob-token", "GET", "/healthz", 200, "ok"},
		{"token, logs denied", f.hc, "bob-token", "GET", "/containerLogs/ns/web/nolog", 403, "Forbidden (user=bob, verb=get, resource=nodes, subresource(s)=[proxy])\n"},
		{"token, pods denied", f.hc, "bob-token", "GET", "/pods", 403, "Forbidden (user=bob, verb=get, resource=nodes, subresource(s)=[pods proxy])\n"},
		{"token, metrics denied", f.hc, "bob-token", "GET", "/metrics/resource", 403, "Forbidden (user=bob, verb=get, resource=nodes, subresource(s)=[metrics])\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, f.url+tt.path, nil)
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := tt.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.code || string(body) != tt.body {
				t.Errorf("got %d %q, want %d %q", resp.StatusCode, body, tt.code, tt.body)
			}
		})
	}
	// The attributes are upstream's: resource nodes, the node's name.
	// With anonymous requests allowed, no credentials is system:anonymous,
	// but a certificate that does not verify is still a 401.
	other, err := pki.EnsureCA(filepath.Join(dir, "other"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	mallory, err := pki.EnsureClient(filepath.Join(dir, "other"), "mallory", other, "alice", nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	anon := newFixture(t, func(c *server.Config) { c.ClientCA, c.Authorizer = pool, auth })
	badCert, _ := tls.X509KeyPair(mallory.CertPEM, mallory.KeyPEM)
	withBad := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{badCert}}}} //nolint:gosec // test server
	for _, tt := range []struct {
		client *http.Client
		code   int
		body   string
	}{
		{anon.hc, 403, "Forbidden (user=system:anonymous, verb=get, resource=nodes, subresource(s)=[healthz proxy])\n"},
		{withBad, 401, "Unauthorized"},
	} {
		resp, err := tt.client.Get(anon.url + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.code || string(body) != tt.body {
			t.Errorf("anonymous allowed: got %d %q, want %d %q", resp.StatusCode, body, tt.code, tt.body)
		}
	}
	for _, a := range auth.asked {
		if a.Name != "node-1" || a.Path == "" {
			t.Errorf("attributes %+v", a)
		}
	}
}

// echoBackend stands in for a runtime's streaming server: it switches
// protocols and echoes.
func echoBackend(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !upgradeproxy.IsUpgradeRequest(r) {
			http.Error(w, "not an upgrade", http.StatusBadRequest)
			return
		}
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: %s\r\nX-Path: %s\r\nX-Stream-Protocol-Version: %s\r\n\r\n",
			r.Header.Get("Upgrade"), r.URL.Path, r.Header.Get("X-Stream-Protocol-Version"))
		rw.Flush()
		_, _ = io.Copy(conn, rw)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// upgrade sends an SPDY upgrade request over TLS to the server and
// returns the connection after the answer's headers.
func upgrade(t *testing.T, url, path string) (*http.Response, net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := tls.Dial("tcp", strings.TrimPrefix(url, "https://"), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // test server
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: kubelet\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n", path)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp, conn, br
}

func TestStreamingProxiesToTheRuntime(t *testing.T) {
	f := newFixture(t, nil)
	f.rt.streamURL = echoBackend(t).URL
	for _, tt := range []struct{ path, backendPath string }{
		{"/exec/ns/web/app?command=sh&command=-c&command=date&input=1&output=1&tty=1", "/exec/token1"},
		{"/exec/ns/web/uid-1/app?command=ls&output=1&error=1", "/exec/token1"},
		{"/attach/ns/web/app?output=1", "/attach/token2"},
		{"/portForward/ns/web?port=8080", "/portforward/sb1"},
	} {
		resp, conn, br := upgrade(t, f.url, tt.path)
		if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("X-Path") != tt.backendPath ||
			resp.Header.Get("X-Stream-Protocol-Version") != "v4.channel.k8s.io" {
			t.Fatalf("%s: %d %v", tt.path, resp.StatusCode, resp.Header)
		}
		fmt.Fprint(conn, "ping")
		buf := make([]byte, 4)
		if _, err := io.ReadFull(br, buf); err != nil || string(buf) != "ping" {
			t.Fatalf("%s: echo %q %v", tt.path, buf, err)
		}
	}
	if e := f.rt.lastExec; e.ContainerId != "c2" || strings.Join(e.Cmd, " ") != "ls" || !e.Stdout || !e.Stderr || e.Stdin || e.Tty {
		t.Errorf("exec request %+v", e)
	}
	// Unsupported by the runtime (the simulated one): upstream's 500 with
	// the runtime's error; a missing container or pod: 404 / 500.
	f.rt.streamErr = fmt.Errorf("exec into a simulated container: %w", cri.ErrUnsupported)
	for _, tt := range []struct {
		path string
		code int
		body string
	}{
		{"/exec/ns/web/app?command=ls&output=1", 500, "exec into a simulated container: not supported by this runtime"},
		{"/exec/ns/nope/app?command=ls&output=1", 404, "pod does not exist"},
		{"/exec/ns/web/side?command=ls&output=1", 500, `container not found ("side")`},
		{"/exec/ns/web/app?command=ls", 400, "you must specify at least 1 of stdin, stdout, stderr"},
	} {
		resp, _, br := upgrade(t, f.url, tt.path)
		body, _ := io.ReadAll(io.LimitReader(br, resp.ContentLength))
		if resp.StatusCode != tt.code || string(body) != tt.body {
			t.Errorf("%s: got %d %q, want %d %q", tt.path, resp.StatusCode, body, tt.code, tt.body)
		}
	}
}

func TestSystemLogs(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "syslog"), []byte("booted\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(c *server.Config) { c.SystemLogDir = dir })
	if code, body := f.get(t, "/logs/syslog"); code != 200 || body != "booted\n" {
		t.Errorf("/logs/syslog: %d %q", code, body)
	}
	if code, body := f.get(t, "/logs/"); code != 200 || !strings.Contains(body, `href="syslog"`) {
		t.Errorf("/logs/: %d %q", code, body)
	}
}

func TestStatsAndMetrics(t *testing.T) {
	f := newFixture(t, nil)
	ts := t0.Add(time.Minute).UnixNano()
	f.rt.stats = []*runtimeapi.ContainerStats{{
		Attributes: &runtimeapi.ContainerAttributes{Id: "c2", Metadata: &runtimeapi.ContainerMetadata{Name: "app"}, Labels: map[string]string{cri.LabelPodUID: "uid-1"}},
		Cpu:        &runtimeapi.CpuUsage{Timestamp: ts, UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: 1_500_000_000}, UsageNanoCores: &runtimeapi.UInt64Value{Value: 250_000_000}},
		Memory:     &runtimeapi.MemoryUsage{Timestamp: ts, WorkingSetBytes: &runtimeapi.UInt64Value{Value: 64 << 20}},
	}, {
		Attributes: &runtimeapi.ContainerAttributes{Id: "c1", Metadata: &runtimeapi.ContainerMetadata{Name: "app"}, Labels: map[string]string{cri.LabelPodUID: "uid-1"}},
		Cpu:        &runtimeapi.CpuUsage{Timestamp: ts, UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: 7}},
	}}
	code, body := f.get(t, "/stats/summary")
	if code != 200 {
		t.Fatalf("summary: %d %s", code, body)
	}
	var sum struct {
		Node struct {
			NodeName string `json:"nodeName"`
			CPU      struct {
				UsageNanoCores uint64 `json:"usageNanoCores"`
			} `json:"cpu"`
			Memory struct {
				WorkingSetBytes uint64 `json:"workingSetBytes"`
			} `json:"memory"`
		} `json:"node"`
		Pods []struct {
			PodRef     map[string]string `json:"podRef"`
			Containers []struct {
				Name string `json:"name"`
			} `json:"containers"`
			Memory struct {
				WorkingSetBytes uint64 `json:"workingSetBytes"`
			} `json:"memory"`
		} `json:"pods"`
	}
	if err := json.Unmarshal([]byte(body), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Node.NodeName != "node-1" || sum.Node.CPU.UsageNanoCores != 250_000_000 || sum.Node.Memory.WorkingSetBytes != 64<<20 ||
		len(sum.Pods) != 1 || sum.Pods[0].PodRef["uid"] != "uid-1" || sum.Pods[0].PodRef["name"] != "web" ||
		len(sum.Pods[0].Containers) != 1 || sum.Pods[0].Memory.WorkingSetBytes != 64<<20 {
		t.Errorf("summary (the exited container c1 must not count):\n%s", body)
	}
	code, body = f.get(t, "/metrics/resource")
	ms := t0.Add(time.Minute).UnixMilli()
	for _, want := range []string{
		fmt.Sprintf(`container_cpu_usage_seconds_total{container="app",namespace="ns",pod="web"} 1.5 %d`, ms),
		fmt.Sprintf(`container_memory_working_set_bytes{container="app",namespace="ns",pod="web"} 6.7108864e+07 %d`, ms),
		fmt.Sprintf(`pod_cpu_usage_seconds_total{namespace="ns",pod="web"} 1.5 %d`, ms),
		`node_cpu_usage_seconds_total 1.5 `,
		"# TYPE node_memory_working_set_bytes gauge",
		"resource_scrape_error 0\n",
	} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics/resource lacks %q:\n%s", want, body)
		}
	}
	code, body = f.get(t, "/metrics")
	if code != 200 || !strings.Contains(body, "kubelet_running_pods 1") || !strings.Contains(body, `kubelet_running_containers{container_state="running"} 2`) ||
		!strings.Contains(body, `kubelet_node_name{node="node-1"} 1`) || !strings.Contains(body, `kubelet_desired_pods{static="false"} 1`) {
		t.Errorf("/metrics:\n%s", body)
	}
	if code, _ := f.get(t, "/logs/"); code != 404 {
		t.Errorf("/logs/ without a system log directory: %d", code)
	}
	if code, body := f.get(t, "/pods"); code != 200 || !strings.Contains(body, `"kind":"PodList"`) || !strings.Contains(body, `"name":"web"`) {
		t.Errorf("/pods: %d %s", code, body)
	}
}

// The plain health port answers without credentials.
func TestHealthzPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	tls, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{NodeName: "n", Host: &fakeHost{}, Runtime: &fakeRuntime{}, Listener: tls, HealthzAddress: addr})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(body) != "ok" {
				t.Errorf("healthz port: %d %q", resp.StatusCode, body)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
