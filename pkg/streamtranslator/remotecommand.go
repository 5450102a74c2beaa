package streamtranslator

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"
	"k8s.io/apimachinery/pkg/util/remotecommand"

	"github.com/skiff-sh/skiff/pkg/upgradeproxy"
)

const (
	// v4Base64 is the text variant of v4 (channel numbers as ASCII digits,
	// data base64-encoded).
	v4Base64 = "v4.base64.channel.k8s.io"
	// idleTimeout is the WebSocket's read/write deadline, upstream's.
	idleTimeout = 4 * time.Hour
	// statusWriteTimeout bounds writing the final status.
	statusWriteTimeout = 10 * time.Second
	// pingPeriod is how often the SPDY connection to the kubelet is pinged.
	pingPeriod = 5 * time.Second
	// headerProtocolVersion names the remote command protocol in SPDY upgrades.
	headerProtocolVersion = "X-Stream-Protocol-Version"
)

// channelProtocols are the WebSocket protocols ServeRemoteCommand accepts.
var channelProtocols = []string{remotecommand.StreamProtocolV5Name, remotecommand.StreamProtocolV4Name, v4Base64}

// spdyProtocols are the remote command protocols offered to the kubelet,
// preferred first.
var spdyProtocols = []string{remotecommand.StreamProtocolV4Name, remotecommand.StreamProtocolV3Name, remotecommand.StreamProtocolV2Name}

// Options are the streams an exec or attach session asked for.
type Options struct {
	Stdin, Stdout, Stderr, TTY bool
}

// requestedProtocols are the WebSocket subprotocols r offers, as the
// WebSocket server reads them (the first Sec-WebSocket-Protocol header).
func requestedProtocols(r *http.Request) []string {
	var out []string
	for _, p := range strings.Split(r.Header.Get(wsstream.WebSocketProtocolHeader), ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// IsChannelRequest reports whether r asks for a WebSocket of a remote
// command protocol ServeRemoteCommand translates (v5 or v4).
func IsChannelRequest(r *http.Request) bool {
	if !wsstream.IsWebSocketRequest(r) {
		return false
	}
	for _, p := range requestedProtocols(r) {
		for _, c := range channelProtocols {
			if p == c {
				return true
			}
		}
	}
	return false
}

// hijacker lets the WebSocket server hijack a wrapped ResponseWriter.
type hijacker struct{ http.ResponseWriter }

func (h hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(h.ResponseWriter).Hijack()
}

// terminalSize is a resize event (upstream's TerminalSize, JSON keys
// "Width" and "Height").
type terminalSize struct {
	Width  uint16
	Height uint16
}

// ServeRemoteCommand answers an exec or attach request that IsChannelRequest
// accepted: it accepts the WebSocket (a failed handshake is answered by
// the WebSocket server), then runs the session over SPDY with target (the
// kubelet's exec or attach URL, reached with proxy's TLS configuration)
// and ends it with the status on the error channel. It returns when the
// session ended, with the code upstream's translator counts the session
// by: 400 when the WebSocket was not accepted, 200 for a command that ran
// (whatever its exit code), else the code of the error status.
func ServeRemoteCommand(w http.ResponseWriter, r *http.Request, target *url.URL, opts Options, proxy upgradeproxy.Options) int {
	channels := make([]wsstream.ChannelType, 5)
	channels[remotecommand.StreamStdIn] = pick(opts.Stdin, wsstream.ReadChannel)
	channels[remotecommand.StreamStdOut] = pick(opts.Stdout, wsstream.WriteChannel)
	channels[remotecommand.StreamStdErr] = pick(opts.Stderr, wsstream.WriteChannel)
	channels[remotecommand.StreamErr] = wsstream.WriteChannel
	channels[remotecommand.StreamResize] = wsstream.ReadChannel
	protocols := map[string]wsstream.ChannelProtocolConfig{}
	for _, p := range channelProtocols {
		protocols[p] = wsstream.ChannelProtocolConfig{Binary: p != v4Base64, Channels: channels}
	}
	conn := wsstream.NewConn(protocols)
	conn.SetIdleTimeout(idleTimeout)
	_, streams, err := conn.Open(hijacker{w}, r)
	if err != nil {
		return http.StatusBadRequest // the WebSocket server answered
	}
	defer conn.Close()
	// An empty message on the lowest writable channel tells the client the
	// session is open (upstream's translator does so).
	first := remotecommand.StreamErr
	switch {
	case opts.Stdout:
		first = remotecommand.StreamStdOut
	case opts.Stderr:
		first = remotecommand.StreamStdErr
	}
	if _, err := streams[first].Write([]byte{}); err != nil {
		return http.StatusBadRequest
	}
	status := runSPDY(r.Context(), streams, target, opts, proxy)
	if data, err := json.Marshal(status); err == nil {
		conn.SetWriteDeadline(statusWriteTimeout)
		_, _ = streams[remotecommand.StreamErr].Write(data)
	}
	switch {
	case status.Status == metav1.StatusSuccess || status.Reason == remotecommand.NonZeroExitCodeReason:
		return http.StatusOK
	case status.Code != 0:
		return int(status.Code)
	}
	return http.StatusInternalServerError
}

func pick(real bool, t wsstream.ChannelType) wsstream.ChannelType {
	if real {
		return t
	}
	return wsstream.IgnoreChannel
}

// runSPDY runs the session with the kubelet over SPDY, the WebSocket's
// streams connected to it, and returns its final status.
func runSPDY(ctx context.Context, ws []io.ReadWriteCloser, target *url.URL, opts Options, proxy upgradeproxy.Options) *metav1.Status {
	header := http.Header{}
	header.Set("Connection", "Upgrade")
	header.Set("Upgrade", spdy.HeaderSpdy31)
	for _, p := range spdyProtocols {
		header.Add(headerProtocolVersion, p)
	}
	resp, nc, err := upgradeproxy.Connect(ctx, http.MethodPost, target, header, proxy)
	if err != nil {
		return internalError(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols || !upgradedToSPDY(resp) {
		if nc != nil {
			nc.Close()
		}
		return upgradeFailure(resp)
	}
	sc, err := spdy.NewClientConnectionWithPings(nc, pingPeriod)
	if err != nil {
		nc.Close()
		return internalError(err)
	}
	defer sc.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-proxy.Stop:
			sc.Close()
		case <-done:
		}
	}()
	protocol := resp.Header.Get(headerProtocolVersion)

	// The streams in the order upstream's client creates them.
	create := func(streamType string) (httpstream.Stream, error) {
		h := http.Header{}
		h.Set(corev1.StreamType, streamType)
		return sc.CreateStream(h)
	}
	errorStream, err := create(corev1.StreamTypeError)
	if err != nil {
		return internalError(err)
	}
	var stdin, stdout, stderr, resize httpstream.Stream
	if opts.Stdin {
		if stdin, err = create(corev1.StreamTypeStdin); err != nil {
			return internalError(err)
		}
	}
	if opts.Stdout {
		if stdout, err = create(corev1.StreamTypeStdout); err != nil {
			return internalError(err)
		}
	}
	if opts.Stderr && !opts.TTY {
		if stderr, err = create(corev1.StreamTypeStderr); err != nil {
			return internalError(err)
		}
	}
	if opts.TTY && protocol != remotecommand.StreamProtocolV2Name {
		if resize, err = create(corev1.StreamTypeResize); err != nil {
			return internalError(err)
		}
	}

	type result struct {
		msg []byte
		err error
	}
	errc := make(chan result, 1)
	go func() {
		msg, err := io.ReadAll(errorStream)
		errc <- result{msg, err}
	}()
	// Resize events: decoded from the WebSocket, encoded to the kubelet
	// (discarded without a terminal).
	go func() {
		dec := json.NewDecoder(ws[remotecommand.StreamResize])
		var enc *json.Encoder
		if resize != nil {
			enc = json.NewEncoder(resize)
		}
		for {
			var size terminalSize
			if err := dec.Decode(&size); err != nil {
				_, _ = io.Copy(io.Discard, ws[remotecommand.StreamResize])
				return
			}
			if enc != nil {
				_ = enc.Encode(&size)
			}
		}
	}()
	// stdin: copied until the client closes it (v5 CLOSE or the end of
	// the WebSocket), then half-closed; or closed when the kubelet closes it.
	if stdin != nil {
		var once sync.Once
		closeStdin := func() { once.Do(func() { stdin.Close() }) }
		go func() {
			_, err := io.Copy(stdin, ws[remotecommand.StreamStdIn])
			closeStdin()
			if err != nil {
				// The connection to the kubelet failed: what the client
				// still sends is dropped (unread, it would stall the
				// WebSocket's reader until the session is torn down).
				_, _ = io.Copy(io.Discard, ws[remotecommand.StreamStdIn])
			}
		}()
		go func() {
			_, _ = io.Copy(io.Discard, stdin)
			closeStdin()
		}()
	}
	// stdout and stderr: copied until the kubelet ends them; a client that
	// went away ends the session.
	var wg sync.WaitGroup
	for _, p := range []struct {
		from httpstream.Stream
		to   io.Writer
	}{{stdout, ws[remotecommand.StreamStdOut]}, {stderr, ws[remotecommand.StreamStdErr]}} {
		if p.from == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := io.Copy(p.to, p.from); err != nil {
				sc.Close()
			}
			_, _ = io.Copy(io.Discard, p.from)
		}()
	}
	wg.Wait()
	res := <-errc
	switch {
	case res.err != nil && !errors.Is(res.err, io.EOF):
		return internalError(fmt.Errorf("error reading from error stream: %w", res.err))
	case len(res.msg) == 0:
		return &metav1.Status{Status: metav1.StatusSuccess}
	case protocol == remotecommand.StreamProtocolV4Name || protocol == remotecommand.StreamProtocolV5Name:
		return decodeV4(res.msg)
	}
	return internalError(fmt.Errorf("error executing remote command: %s", res.msg))
}

// upgradedToSPDY reports whether a 101 answer names the SPDY upgrade.
func upgradedToSPDY(resp *http.Response) bool {
	return strings.Contains(strings.ToLower(resp.Header.Get("Connection")), "upgrade") &&
		strings.Contains(strings.ToLower(resp.Header.Get("Upgrade")), strings.ToLower(spdy.HeaderSpdy31))
}

// upgradeFailure is the status of a kubelet that refused the upgrade: the
// status it answered, else an internal error with its body.
func upgradeFailure(resp *http.Response) *metav1.Status {
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return internalError(errors.New("unable to upgrade connection: unable to read error from server response"))
	}
	var st metav1.Status
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" {
		return &st
	}
	return internalError(fmt.Errorf("unable to upgrade connection: %s", strings.TrimSpace(string(body))))
}

// decodeV4 is the final status of a v4 error stream message (a
// metav1.Status): Success; a non-zero exit code as upstream's translator
// reports it; anything else an internal error with upstream's client's
// message.
func decodeV4(msg []byte) *metav1.Status {
	var st metav1.Status
	if err := json.Unmarshal(msg, &st); err != nil {
		return internalError(fmt.Errorf("error stream protocol error: %v in %q", err, string(msg)))
	}
	switch st.Status {
	case metav1.StatusSuccess:
		return &metav1.Status{Status: metav1.StatusSuccess}
	case metav1.StatusFailure:
		if st.Reason != remotecommand.NonZeroExitCodeReason {
			return internalError(errors.New(st.Message))
		}
		if st.Details == nil {
			return internalError(errors.New("error stream protocol error: details must be set"))
		}
		for _, c := range st.Details.Causes {
			if c.Type != remotecommand.ExitCodeCauseType {
				continue
			}
			rc, err := strconv.ParseUint(c.Message, 10, 8)
			if err != nil {
				return internalError(fmt.Errorf("error stream protocol error: invalid exit code value %q", c.Message))
			}
			return &metav1.Status{Status: metav1.StatusFailure, Reason: remotecommand.NonZeroExitCodeReason,
				Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: remotecommand.ExitCodeCauseType, Message: strconv.FormatUint(rc, 10)}}},
				Message: fmt.Sprintf("command terminated with non-zero exit code: command terminated with exit code %d", rc)}
		}
		return internalError(fmt.Errorf("error stream protocol error: no %s cause given", remotecommand.ExitCodeCauseType))
	}
	return internalError(errors.New("error stream protocol error: unknown error"))
}

func internalError(err error) *metav1.Status {
	st := apierrors.NewInternalError(err).Status()
	return &st
}
