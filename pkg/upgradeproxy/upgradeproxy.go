package upgradeproxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// IsUpgradeRequest reports whether r asks to switch protocols: a
// Connection header naming "upgrade" and an Upgrade header.
func IsUpgradeRequest(r *http.Request) bool {
	if r.Header.Get("Upgrade") == "" {
		return false
	}
	for _, v := range r.Header.Values("Connection") {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), "upgrade") {
				return true
			}
		}
	}
	return false
}

// DialError is what Proxy returns when the backend could not be reached
// (nothing has been written to the client then).
type DialError struct{ Err error }

func (e *DialError) Error() string { return "error dialing backend: " + e.Err.Error() }
func (e *DialError) Unwrap() error { return e.Err }

// Options tune Proxy.
type Options struct {
	// TLS configures https backends (a copy is used, with ServerName
	// set from the target when empty, and HTTP/1.1 only).
	TLS *tls.Config
	// DialTimeout bounds dialing and the TLS handshake (default 30s).
	DialTimeout time.Duration
	// Header, when set, edits the headers sent to the backend (drop the
	// client's credentials, add the proxy's).
	Header func(http.Header)
	// Stop, when it closes, ends a spliced session (the server shuts down).
	Stop <-chan struct{}
}

// Proxy sends r to target (its scheme, host, path and query replace the
// request's) over a new connection. A 101 answer is relayed to the client,
// whose connection is then hijacked and spliced with the backend's until
// either side ends; any other answer is copied to w. An error before
// anything was written to w is returned (a *DialError when the backend was
// not reached); later errors end the copy silently.
func Proxy(w http.ResponseWriter, r *http.Request, target *url.URL, opts Options) error {
	ctx := r.Context()
	backend, err := dial(ctx, target, opts)
	if err != nil {
		return &DialError{Err: err}
	}
	out := r.Clone(context.WithoutCancel(ctx))
	if r.Body == nil || r.ContentLength == 0 {
		out.Body = nil
		out.ContentLength = 0
	}
	resp, br, err := roundTrip(backend, out, target, opts)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer backend.Close()
		defer resp.Body.Close()
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		return nil
	}
	client, crw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		backend.Close()
		return fmt.Errorf("unable to hijack the client's connection: %w", err)
	}
	// The 101 answer, then whatever the backend already sent after it.
	if _, err := fmt.Fprintf(crw, "HTTP/1.1 101 Switching Protocols\r\n"); err == nil {
		_ = resp.Header.Write(crw)
		_, _ = crw.WriteString("\r\n")
		_ = crw.Flush()
	}
	Splice(client, crw.Reader, backend, br, opts.Stop)
	return nil
}

// Connect sends a request of method with header (Connection and Upgrade
// are the caller's to set) to target over a new connection and reads the
// answer. On 101 Switching Protocols it returns the answer and the
// upgraded connection (its reads start with whatever the backend sent
// after the answer); on any other status the answer with its body read
// (at most 1 MiB) and the connection closed. An error before the answer
// is a *DialError when the backend was not reached.
func Connect(ctx context.Context, method string, target *url.URL, header http.Header, opts Options) (*http.Response, net.Conn, error) {
	backend, err := dial(ctx, target, opts)
	if err != nil {
		return nil, nil, &DialError{Err: err}
	}
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), method, target.String(), nil)
	if err != nil {
		backend.Close()
		return nil, nil, err
	}
	req.Header = header.Clone()
	resp, br, err := roundTrip(backend, req, target, opts)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		backend.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil, nil
	}
	return resp, &bufferedConn{Conn: backend, r: br}, nil
}

// bufferedConn reads through the reader that read the upgrade answer.
type bufferedConn struct {
	net.Conn
	r io.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// roundTrip writes out (its URL and host made target's) on backend and
// reads the answer; backend is closed on an error.
func roundTrip(backend net.Conn, out *http.Request, target *url.URL, opts Options) (*http.Response, *bufio.Reader, error) {
	out.URL = &url.URL{Scheme: target.Scheme, Host: target.Host, Path: target.Path, RawPath: target.RawPath, RawQuery: target.RawQuery}
	if !strings.HasPrefix(out.URL.Path, "/") {
		out.URL.Path, out.URL.RawPath = "/"+out.URL.Path, ""
	}
	out.Host = target.Host
	out.RequestURI = ""
	out.Close = false
	if opts.Header != nil {
		opts.Header(out.Header)
	}
	if err := out.Write(backend); err != nil {
		backend.Close()
		return nil, nil, &DialError{Err: err}
	}
	br := bufio.NewReader(backend)
	resp, err := http.ReadResponse(br, out)
	if err != nil {
		backend.Close()
		return nil, nil, fmt.Errorf("error reading the backend's answer: %w", err)
	}
	return resp, br, nil
}

// Splice copies a→b (starting with what aBuf already read from a) and b→a
// (starting with bBuf) until either direction ends or stop closes (nil:
// never), then closes both.
func Splice(a net.Conn, aBuf io.Reader, b net.Conn, bBuf io.Reader, stop <-chan struct{}) {
	var once sync.Once
	done := make(chan struct{})
	closeBoth := func() {
		once.Do(func() {
			a.Close()
			b.Close()
			close(done)
		})
	}
	go func() { _, _ = io.Copy(b, aBuf); closeBoth() }()
	go func() { _, _ = io.Copy(a, bBuf); closeBoth() }()
	select {
	case <-done:
	case <-stop:
		closeBoth()
	}
}

func dial(ctx context.Context, target *url.URL, opts Options) (net.Conn, error) {
	timeout := opts.DialTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	host := target.Host
	if target.Port() == "" {
		port := "80"
		if target.Scheme == "https" || target.Scheme == "wss" {
			port = "443"
		}
		host = net.JoinHostPort(target.Hostname(), port)
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(dctx, "tcp", host)
	if err != nil {
		return nil, err
	}
	switch target.Scheme {
	case "http", "ws":
		return conn, nil
	case "https", "wss":
	default:
		conn.Close()
		return nil, fmt.Errorf("unsupported scheme %q", target.Scheme)
	}
	tc := &tls.Config{}
	if opts.TLS != nil {
		tc = opts.TLS.Clone()
	}
	if tc.ServerName == "" {
		tc.ServerName = target.Hostname()
	}
	tc.NextProtos = []string{"http/1.1"}
	tconn := tls.Client(conn, tc)
	if err := tconn.HandshakeContext(dctx); err != nil {
		conn.Close()
		return nil, err
	}
	return tconn, nil
}

// ErrNotUpgrade is returned by callers that require an upgrade request.
var ErrNotUpgrade = errors.New("upgrade request required")
