package upgradeproxy_test

import (
	"bufio"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/skiff-sh/skiff/pkg/upgradeproxy"
)

// EchoBackend answers an upgrade request with 101 (the protocol the client
// asked for; for WebSocket, the accept key and the first subprotocol) and
// then echoes every byte; anything else gets 400 "not an upgrade". It is
// what the kubelet's and the API server's proxy tests stand a runtime's
// streaming server with.
func echoBackend(t *testing.T) *httptest.Server {
	t.Helper()
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
		fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: %s\r\n", r.Header.Get("Upgrade"))
		if key := r.Header.Get("Sec-WebSocket-Key"); key != "" {
			h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
			fmt.Fprintf(rw, "Sec-WebSocket-Accept: %s\r\n", base64.StdEncoding.EncodeToString(h[:]))
			proto, _, _ := strings.Cut(r.Header.Get("Sec-WebSocket-Protocol"), ",")
			fmt.Fprintf(rw, "Sec-WebSocket-Protocol: %s\r\n", strings.TrimSpace(proto))
		}
		if v := r.Header.Get("X-Stream-Protocol-Version"); v != "" {
			fmt.Fprintf(rw, "X-Stream-Protocol-Version: %s\r\n", v)
		}
		fmt.Fprintf(rw, "X-Echo-Path: %s\r\n\r\n", r.URL.RequestURI())
		rw.Flush()
		_, _ = io.Copy(conn, rw)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func proxyTo(t *testing.T, target string) *httptest.Server {
	t.Helper()
	u, _ := url.Parse(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		to := u.JoinPath(r.URL.Path)
		to.RawQuery = r.URL.RawQuery
		err := upgradeproxy.Proxy(w, r, to, upgradeproxy.Options{Header: func(h http.Header) { h.Del("Authorization") }})
		var de *upgradeproxy.DialError
		if errors.As(err, &de) {
			http.Error(w, de.Error(), http.StatusBadGateway)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestProxySplicesUpgradedConnections(t *testing.T) {
	backend := echoBackend(t)
	front := proxyTo(t, backend.URL)
	for _, tt := range []struct{ name, headers, wantHeader, want string }{
		{"spdy", "Upgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n", "X-Stream-Protocol-Version", "v4.channel.k8s.io"},
		{"websocket", "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: v5.channel.k8s.io, v4.channel.k8s.io\r\n",
			"Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(front.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			// The first bytes of the stream travel with the request.
			fmt.Fprintf(conn, "POST /exec/ns/pod/c?command=sh HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret\r\nConnection: Upgrade\r\n%s\r\nhello ", tt.headers)
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusSwitchingProtocols {
				t.Fatalf("status %d", resp.StatusCode)
			}
			var raw strings.Builder
			_ = resp.Header.Write(&raw)
			if resp.Header.Get(tt.wantHeader) != tt.want || resp.Header.Get("X-Echo-Path") != "/exec/ns/pod/c?command=sh" {
				t.Errorf("headers of the 101 answer:\n%s", raw.String())
			}
			fmt.Fprintf(conn, "world")
			buf := make([]byte, len("hello world"))
			if _, err := io.ReadFull(br, buf); err != nil || string(buf) != "hello world" {
				t.Fatalf("echo: %q, %v", buf, err)
			}
		})
	}
}

func TestProxyPassesOtherAnswers(t *testing.T) {
	backend := echoBackend(t)
	front := proxyTo(t, backend.URL)
	resp, err := http.Get(front.URL + "/exec/ns/pod/c")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || string(body) != "not an upgrade\n" {
		t.Errorf("got %d %q", resp.StatusCode, body)
	}
}

func TestProxyDialError(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	front := proxyTo(t, "http://"+addr)
	resp, err := http.Get(front.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || !strings.HasPrefix(string(body), "error dialing backend: dial tcp "+addr) {
		t.Errorf("got %d %q", resp.StatusCode, body)
	}
}

// A spliced session ends when Stop closes (the server shutting down).
func TestProxyStop(t *testing.T) {
	backend := echoBackend(t)
	u, _ := url.Parse(backend.URL)
	stop := make(chan struct{})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = upgradeproxy.Proxy(w, r, u.JoinPath(r.URL.Path), upgradeproxy.Options{Stop: stop})
	}))
	defer front.Close()
	conn, err := net.Dial("tcp", strings.TrimPrefix(front.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "POST /x HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("%v %v", resp, err)
	}
	fmt.Fprint(conn, "a")
	if b, err := br.ReadByte(); err != nil || b != 'a' {
		t.Fatalf("echo %q %v", b, err)
	}
	close(stop)
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after Stop: %v, want EOF", err)
	}
}
