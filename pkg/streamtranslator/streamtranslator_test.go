package streamtranslator_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/websocket"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"
	"k8s.io/apimachinery/pkg/util/remotecommand"

	"github.com/skiff-sh/skiff/pkg/streamtranslator"
	"github.com/skiff-sh/skiff/pkg/upgradeproxy"
)

// fakeKubelet is the SPDY end of a kubelet's exec: it agrees to v4 and
// runs the command of the request's query:
//
//	cat:    stdin to stdout, then "bye" on stderr; Success
//	exit3:  "out" on stdout; NonZeroExitCode 3
//	fail:   a Failure status with a message
//	resize: each resize event as "WxH\n" on stdout until stdin ends
//	silent: ends with no message on the error stream
//
// A request for container "missing" is refused with 404 as text.
func fakeKubelet(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/missing") {
			http.Error(w, "pod does not exist", http.StatusNotFound)
			return
		}
		if !upgradeproxy.IsUpgradeRequest(r) || r.Header.Get("Upgrade") != "SPDY/3.1" || r.Header.Get("Sec-WebSocket-Key") != "" {
			http.Error(w, "not a SPDY upgrade", http.StatusBadRequest)
			return
		}
		if _, err := httpstream.Handshake(r, w, []string{remotecommand.StreamProtocolV4Name}); err != nil {
			return
		}
		q := r.URL.Query()
		want := 1
		for _, k := range []string{"input", "output"} {
			if q.Get(k) == "1" {
				want++
			}
		}
		if q.Get("error") == "1" && q.Get("tty") != "1" {
			want++
		}
		if q.Get("tty") == "1" {
			want++
		}
		streams := make(chan httpstream.Stream, 8)
		conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, _ <-chan struct{}) error {
			streams <- s
			return nil
		})
		if conn == nil {
			return
		}
		defer conn.Close()
		byType := map[string]httpstream.Stream{}
		timeout := time.After(10 * time.Second)
		for len(byType) < want {
			select {
			case s := <-streams:
				byType[s.Headers().Get(corev1.StreamType)] = s
			case <-timeout:
				t.Errorf("kubelet: streams %v, want %d", byType, want)
				return
			}
		}
		status := metav1.Status{Status: metav1.StatusSuccess}
		stdout := byType[corev1.StreamTypeStdout]
		switch q.Get("command") {
		case "cat":
			_, _ = io.Copy(stdout, byType[corev1.StreamTypeStdin])
			fmt.Fprint(byType[corev1.StreamTypeStderr], "bye")
		case "exit3":
			fmt.Fprint(stdout, "out")
			status = metav1.Status{Status: metav1.StatusFailure, Reason: remotecommand.NonZeroExitCodeReason,
				Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: remotecommand.ExitCodeCauseType, Message: "3"}}},
				Message: "command terminated with non-zero exit code: exit status 3"}
		case "fail":
			status = metav1.Status{Status: metav1.StatusFailure, Reason: metav1.StatusReasonInternalError, Message: "no such file"}
		case "resize":
			go func() {
				dec := json.NewDecoder(byType[corev1.StreamTypeResize])
				for {
					var size struct{ Width, Height uint16 }
					if dec.Decode(&size) != nil {
						return
					}
					fmt.Fprintf(stdout, "%dx%d\n", size.Width, size.Height)
				}
			}()
			_, _ = io.Copy(io.Discard, byType[corev1.StreamTypeStdin])
		}
		for _, s := range byType {
			if s != byType[corev1.StreamTypeError] {
				s.Close()
			}
		}
		if q.Get("command") != "silent" {
			data, _ := json.Marshal(status)
			_, _ = byType[corev1.StreamTypeError].Write(data)
		}
		byType[corev1.StreamTypeError].Close()
		// The client ends the connection once it has the status.
		select {
		case <-conn.CloseChan():
		case <-time.After(10 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// translator serves ServeRemoteCommand toward kubelet (the exec URL
// /exec/ns/pod/<container> with the query's streams, as the API server
// builds it).
func translator(t *testing.T, kubelet string, stop <-chan struct{}, codes chan<- int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !streamtranslator.IsChannelRequest(r) {
			http.Error(w, "not translated", http.StatusTeapot)
			return
		}
		q := r.URL.Query()
		opts := streamtranslator.Options{Stdin: q.Get("stdin") == "true", Stdout: q.Get("stdout") == "true", Stderr: q.Get("stderr") == "true", TTY: q.Get("tty") == "true"}
		params := url.Values{"command": q["command"]}
		for from, to := range map[string]string{"stdin": "input", "stdout": "output", "stderr": "error", "tty": "tty"} {
			if q.Get(from) == "true" {
				params.Set(to, "1")
			}
		}
		target, _ := url.Parse(kubelet + "/exec/ns/pod/" + q.Get("container") + "?" + params.Encode())
		codes <- streamtranslator.ServeRemoteCommand(w, r, target, opts, upgradeproxy.Options{Stop: stop})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// session is a WebSocket client of the channel protocol.
type session struct {
	t    *testing.T
	ws   *websocket.Conn
	b64  bool
	seen string // stdout read by waitFor
}

func dial(t *testing.T, srv *httptest.Server, query string, protocols ...string) (*session, error) {
	cfg, err := websocket.NewConfig(strings.Replace(srv.URL, "http", "ws", 1)+"/exec?"+query, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Protocol = protocols
	ws, err := websocket.DialConfig(cfg)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { ws.Close() })
	_ = ws.SetDeadline(time.Now().Add(20 * time.Second))
	return &session{t: t, ws: ws, b64: len(protocols) > 0 && strings.Contains(protocols[0], "base64")}, nil
}

func (s *session) send(channel byte, data string) {
	s.t.Helper()
	var err error
	if s.b64 {
		err = websocket.Message.Send(s.ws, string('0'+channel)+b64(data))
	} else {
		err = websocket.Message.Send(s.ws, append([]byte{channel}, data...))
	}
	if err != nil {
		s.t.Fatal(err)
	}
}

// result reads every message until the connection ends: the data of each
// channel and the status of the error channel.
func (s *session) result() (map[byte]string, *metav1.Status) {
	s.t.Helper()
	out := map[byte]string{}
	var status *metav1.Status
	for {
		var data []byte
		if err := websocket.Message.Receive(s.ws, &data); err != nil {
			return out, status
		}
		if len(data) == 0 {
			s.t.Fatalf("empty message")
		}
		ch, payload := data[0], data[1:]
		if s.b64 {
			ch -= '0'
			payload = unb64(s.t, string(payload))
		}
		if ch == remotecommand.StreamErr && len(payload) > 0 {
			status = &metav1.Status{}
			if err := json.Unmarshal(payload, status); err != nil {
				s.t.Fatalf("status %q: %v", payload, err)
			}
			continue
		}
		out[ch] += string(payload)
	}
}

func TestRemoteCommand(t *testing.T) {
	kubelet := fakeKubelet(t)
	codes := make(chan int, 1)
	srv := translator(t, kubelet.URL, nil, codes)
	success := &metav1.Status{Status: metav1.StatusSuccess}
	internal := func(msg string) *metav1.Status {
		st := apierrors.NewInternalError(fmt.Errorf("%s", msg)).Status()
		return &st
	}
	tests := []struct {
		name, query string
		protocols   []string
		stdin       []string // sent on stdin, then v5 CLOSE
		out         map[byte]string
		status      *metav1.Status
	}{
		{name: "stdin to stdout, stdin closed by v5 CLOSE", query: "command=cat&stdin=true&stdout=true&stderr=true&container=c",
			protocols: []string{"v5.channel.k8s.io"}, stdin: []string{"hello ", "world"},
			out: map[byte]string{1: "hello world", 2: "bye"}, status: success},
		{name: "exit code", query: "command=exit3&stdout=true&container=c", protocols: []string{"v5.channel.k8s.io"},
			out: map[byte]string{1: "out"}, status: &metav1.Status{Status: metav1.StatusFailure, Reason: remotecommand.NonZeroExitCodeReason,
				Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: remotecommand.ExitCodeCauseType, Message: "3"}}},
				Message: "command terminated with non-zero exit code: command terminated with exit code 3"}},
		{name: "failure status is an internal error", query: "command=fail&stdout=true&container=c", protocols: []string{"v5.channel.k8s.io"},
			out: map[byte]string{}, status: internal("no such file")},
		{name: "no message on the error stream is success", query: "command=silent&stderr=true&container=c", protocols: []string{"v5.channel.k8s.io"},
			out: map[byte]string{}, status: success},
		{name: "terminal resize events", query: "command=resize&stdin=true&stdout=true&tty=true&container=c", protocols: []string{"v5.channel.k8s.io"},
			stdin: []string{}, out: map[byte]string{1: "80x24\n100x40\n"}, status: success},
		{name: "kubelet refuses", query: "command=cat&stdout=true&container=missing", protocols: []string{"v5.channel.k8s.io"},
			out: map[byte]string{}, status: internal("unable to upgrade connection: pod does not exist")},
		{name: "v4 binary, the first protocol the client offers", query: "command=exit3&stdout=true&container=c",
			protocols: []string{"v4.channel.k8s.io", "v5.channel.k8s.io"}, out: map[byte]string{1: "out"}},
		{name: "v4 base64", query: "command=exit3&stdout=true&container=c", protocols: []string{"v4.base64.channel.k8s.io"}, out: map[byte]string{1: "out"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := dial(t, srv, tt.query, tt.protocols...)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.ws.Config().Protocol; len(got) != 1 || got[0] != tt.protocols[0] {
				t.Fatalf("negotiated %v, want %s", got, tt.protocols[0])
			}
			if tt.name == "terminal resize events" {
				s.send(remotecommand.StreamResize, `{"Width":80,"Height":24}`)
				s.send(remotecommand.StreamResize, `{"Width":100,"Height":40}`)
			}
			for _, in := range tt.stdin {
				s.send(remotecommand.StreamStdIn, in)
			}
			if tt.stdin != nil {
				if tt.name == "terminal resize events" {
					waitFor(t, s, "100x40\n") // stdin ends after the events were seen
				}
				if err := websocket.Message.Send(s.ws, []byte{remotecommand.StreamClose, remotecommand.StreamStdIn}); err != nil {
					t.Fatal(err)
				}
			}
			out, status := s.result()
			if tt.name == "terminal resize events" {
				out[1] = s.seen + out[1]
			}
			if !equalOut(out, tt.out) {
				t.Errorf("output %q, want %q", out, tt.out)
			}
			select {
			case code := <-codes:
				if want := map[bool]int{true: 500, false: 200}[strings.Contains(tt.name, "refuses") || strings.Contains(tt.name, "internal")]; code != want {
					t.Errorf("code %d, want %d", code, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("ServeRemoteCommand did not return")
			}
			if tt.status == nil {
				if status == nil || status.Reason != remotecommand.NonZeroExitCodeReason {
					t.Errorf("status %+v, want the exit code", status)
				}
				return
			}
			if status == nil || !equalStatus(status, tt.status) {
				t.Errorf("status %+v, want %+v", status, tt.status)
			}
		})
	}
}

// A client offering only other protocols is not translated; a session ends
// when the Stop channel closes.
func TestRemoteCommandRequestsAndStop(t *testing.T) {
	for _, tt := range []struct {
		protocols []string
		want      bool
	}{{[]string{"v5.channel.k8s.io"}, true}, {[]string{"channel.k8s.io", "v4.channel.k8s.io"}, true}, {[]string{"channel.k8s.io"}, false},
		{[]string{"base64.channel.k8s.io"}, false}, {[]string{"SPDY/3.1+portforward.k8s.io"}, false}} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Connection", "Upgrade")
		r.Header.Set("Upgrade", "websocket")
		r.Header.Set("Sec-WebSocket-Protocol", strings.Join(tt.protocols, ", "))
		if got := streamtranslator.IsChannelRequest(r); got != tt.want {
			t.Errorf("IsChannelRequest(%v) = %v", tt.protocols, got)
		}
		r.Header.Set("Upgrade", "SPDY/3.1")
		if streamtranslator.IsChannelRequest(r) {
			t.Errorf("a SPDY upgrade is translated")
		}
	}

	kubelet := fakeKubelet(t)
	stop := make(chan struct{})
	srv := translator(t, kubelet.URL, stop, make(chan int, 1))
	s, err := dial(t, srv, "command=cat&stdin=true&stdout=true&stderr=true&container=c", "v5.channel.k8s.io")
	if err != nil {
		t.Fatal(err)
	}
	s.send(remotecommand.StreamStdIn, "ping")
	waitFor(t, s, "ping")
	close(stop)
	done := make(chan struct{})
	go func() { s.result(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end when the server stopped")
	}
}

// waitFor reads stdout until it ends with want.
func waitFor(t *testing.T, s *session, want string) {
	t.Helper()
	for !strings.HasSuffix(s.seen, want) {
		var data []byte
		if err := websocket.Message.Receive(s.ws, &data); err != nil {
			t.Fatalf("waiting for %q (have %q): %v", want, s.seen, err)
		}
		if len(data) > 0 && data[0] == remotecommand.StreamStdOut {
			s.seen += string(data[1:])
		}
	}
}

func equalOut(got, want map[byte]string) bool {
	for k, v := range got {
		if v != "" && want[k] != v {
			return false
		}
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func equalStatus(a, b *metav1.Status) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func unb64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("base64 %q: %v", s, err)
	}
	return b
}
