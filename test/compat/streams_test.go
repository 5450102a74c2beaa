package compat

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	clientexec "k8s.io/client-go/util/exec"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming"
	streamingremotecommand "k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"

	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
	"github.com/skiff-sh/skiff/pkg/kubelet/server"
)

// streamsRuntime is the container runtime behind the test kubelet: one
// running container "c1" of one sandbox "sb1", its exec, attach and
// port-forward served by upstream's CRI streaming server
// (k8s.io/cri-streaming, the one containerd uses) over the commands below.
type streamsRuntime struct {
	cri.RuntimeService
	uid    string
	stream streaming.Server
}

func (r *streamsRuntime) ListContainers(context.Context, *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	return &runtimeapi.ListContainersResponse{Containers: []*runtimeapi.Container{{Id: "c1", State: runtimeapi.ContainerState_CONTAINER_RUNNING,
		Labels: map[string]string{cri.LabelPodUID: r.uid, cri.LabelContainerName: "app"}}}}, nil
}

func (r *streamsRuntime) ListPodSandbox(context.Context, *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	return &runtimeapi.ListPodSandboxResponse{Items: []*runtimeapi.PodSandbox{{Id: "sb1", State: runtimeapi.PodSandboxState_SANDBOX_READY,
		Labels: map[string]string{cri.LabelPodUID: r.uid}}}}, nil
}

func (r *streamsRuntime) Exec(_ context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	return r.stream.GetExec(req)
}

func (r *streamsRuntime) Attach(_ context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	return r.stream.GetAttach(req)
}

func (r *streamsRuntime) PortForward(_ context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	return r.stream.GetPortForward(req)
}

// streamCommands is what the container does:
//
//	cat:      stdin to stdout, then "stdin closed" on stderr
//	exit N:   "bye" on stdout, exit code N
//	size:     the first terminal size as "WxH"
//	attach:   "attached:" and stdin on stdout
//	port P:   "port P\n" then an echo
type streamCommands struct{}

func (streamCommands) Exec(_ context.Context, _ string, cmd []string, in io.Reader, out, errw io.WriteCloser, _ bool, resize <-chan remotecommandSize) error {
	switch cmd[0] {
	case "cat":
		_, _ = io.Copy(out, in)
		fmt.Fprint(errw, "stdin closed")
	case "exit":
		code, _ := strconv.Atoi(cmd[1])
		fmt.Fprint(out, "bye")
		return utilexec.CodeExitError{Err: fmt.Errorf("exit status %d", code), Code: code}
	case "size":
		size := <-resize
		fmt.Fprintf(out, "%dx%d", size.Width, size.Height)
	}
	return nil
}

func (streamCommands) Attach(_ context.Context, _ string, in io.Reader, out, _ io.WriteCloser, _ bool, _ <-chan remotecommandSize) error {
	fmt.Fprint(out, "attached:")
	_, _ = io.Copy(out, in)
	return nil
}

func (streamCommands) PortForward(_ context.Context, _ string, port int32, stream io.ReadWriteCloser) error {
	fmt.Fprintf(stream, "port %d\n", port)
	_, _ = io.Copy(stream, stream)
	return nil
}

type podHost struct{ pod *corev1.Pod }

func (h podHost) GetPodByName(ns, name string) (*corev1.Pod, bool) {
	return h.pod, h.pod.Namespace == ns && h.pod.Name == name
}
func (h podHost) GetPods() []*corev1.Pod { return []*corev1.Pod{h.pod} }

type sizes []remotecommand.TerminalSize

func (s *sizes) Next() *remotecommand.TerminalSize {
	if len(*s) == 0 {
		select {} // no more: the session ends first
	}
	next := (*s)[0]
	*s = (*s)[1:]
	return &next
}

// A client-go program using only WebSockets — remotecommand's
// NewWebSocketExecutor (v5.channel.k8s.io, no SPDY fallback) and
// portforward's NewSPDYOverWebsocketDialer (SPDY/3.1+portforward.k8s.io) —
// execs, attaches and port-forwards through skiff's API server, which
// translates to SPDY toward the node's kubelet (pkg/kubelet/server) and its
// runtime's streaming server (upstream's): stdin to its end (v5 CLOSE),
// stdout and stderr apart, exit codes as client-go's CodeExitError, a
// terminal size, and a forwarded port.
func TestWebSocketStreams(t *testing.T) {
	env := startEnv(t)
	cfg := restConfig(t, env)
	cs := clientset(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// The runtime's streaming server (upstream's) and the node's kubelet.
	sln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	scfg := streaming.DefaultConfig
	scfg.Addr = sln.Addr().String()
	stream, err := streaming.NewServer(scfg, streamCommands{})
	if err != nil {
		t.Fatal(err)
	}
	ssrv := &http.Server{Handler: stream}
	go func() { _ = ssrv.Serve(sln) }()
	t.Cleanup(func() { ssrv.Close() })

	pod, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ws"},
		Spec: corev1.PodSpec{NodeName: "ws-node", Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(env.CAData)
	kln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ks, err := server.New(server.Config{NodeName: "ws-node", Host: podHost{pod}, Runtime: &streamsRuntime{uid: string(pod.UID), stream: stream},
		ClientCA: pool, Listener: kln})
	if err != nil {
		t.Fatal(err)
	}
	kctx, stop := context.WithCancel(context.Background())
	kdone := make(chan error, 1)
	go func() { kdone <- ks.Run(kctx) }()
	t.Cleanup(func() { stop(); <-kdone })
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ws-node"},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(kln.Addr().(*net.TCPAddr).Port)}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	run := func(t *testing.T, sub string, opts runtimeOptions, so remotecommand.StreamOptions) error {
		t.Helper()
		req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace("default").Name("ws").SubResource(sub)
		if sub == "exec" {
			req = req.VersionedParams(&corev1.PodExecOptions{Container: "app", Command: opts.command, Stdin: so.Stdin != nil,
				Stdout: so.Stdout != nil, Stderr: so.Stderr != nil, TTY: so.Tty}, scheme.ParameterCodec)
		} else {
			req = req.VersionedParams(&corev1.PodAttachOptions{Container: "app", Stdin: so.Stdin != nil,
				Stdout: so.Stdout != nil, Stderr: so.Stderr != nil, TTY: so.Tty}, scheme.ParameterCodec)
		}
		exec, err := remotecommand.NewWebSocketExecutor(cfg, "GET", req.URL().String())
		if err != nil {
			t.Fatal(err)
		}
		return exec.StreamWithContext(ctx, so)
	}

	t.Run("exec with stdin", func(t *testing.T) {
		var out, errb bytes.Buffer
		err := run(t, "exec", runtimeOptions{command: []string{"cat"}}, remotecommand.StreamOptions{Stdin: strings.NewReader("hello over websockets"), Stdout: &out, Stderr: &errb})
		if err != nil || out.String() != "hello over websockets" || errb.String() != "stdin closed" {
			t.Errorf("exec cat: %v, stdout %q, stderr %q", err, out.String(), errb.String())
		}
	})
	t.Run("exit code", func(t *testing.T) {
		var out bytes.Buffer
		err := run(t, "exec", runtimeOptions{command: []string{"exit", "3"}}, remotecommand.StreamOptions{Stdout: &out})
		var ce clientexec.CodeExitError
		if !errors.As(err, &ce) || ce.Code != 3 || err.Error() != "command terminated with exit code 3" || out.String() != "bye" {
			t.Errorf("exec exit 3: %v (%T), stdout %q", err, err, out.String())
		}
	})
	t.Run("terminal size", func(t *testing.T) {
		var out bytes.Buffer
		err := run(t, "exec", runtimeOptions{command: []string{"size"}}, remotecommand.StreamOptions{Stdout: &out, Tty: true,
			TerminalSizeQueue: &sizes{{Width: 120, Height: 40}}})
		if err != nil || out.String() != "120x40" {
			t.Errorf("exec size: %v, stdout %q", err, out.String())
		}
	})
	t.Run("attach", func(t *testing.T) {
		var out bytes.Buffer
		err := run(t, "attach", runtimeOptions{}, remotecommand.StreamOptions{Stdin: strings.NewReader("typed"), Stdout: &out})
		if err != nil || out.String() != "attached:typed" {
			t.Errorf("attach: %v, stdout %q", err, out.String())
		}
	})
	t.Run("port-forward", func(t *testing.T) {
		u := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace("default").Name("ws").SubResource("portforward").URL()
		dialer, err := portforward.NewSPDYOverWebsocketDialer(u, cfg)
		if err != nil {
			t.Fatal(err)
		}
		stopCh, ready := make(chan struct{}), make(chan struct{})
		defer close(stopCh)
		var pfOut, pfErr bytes.Buffer
		pf, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:8080"}, stopCh, ready, &pfOut, &pfErr)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- pf.ForwardPorts() }()
		select {
		case <-ready:
		case err := <-done:
			t.Fatalf("port-forward: %v (%s)", err, pfErr.String())
		case <-ctx.Done():
			t.Fatal("port-forward not ready")
		}
		ports, err := pf.GetPorts()
		if err != nil || len(ports) != 1 {
			t.Fatalf("ports %v %v", ports, err)
		}
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", ports[0].Local))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		fmt.Fprint(conn, "ping\n")
		br := bufio.NewReader(conn)
		for _, want := range []string{"port 8080\n", "ping\n"} {
			if line, err := br.ReadString('\n'); err != nil || line != want {
				t.Fatalf("through the forwarded port: %q %v, want %q", line, err, want)
			}
		}
	})
}

type runtimeOptions struct{ command []string }

type remotecommandSize = streamingremotecommand.TerminalSize
