package streamtranslator_test

import (
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
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"

	"github.com/skiff-sh/skiff/pkg/streamtranslator"
	"github.com/skiff-sh/skiff/pkg/upgradeproxy"
)

// fakePortForwardKubelet is the SPDY end of a kubelet's port-forward
// (protocol portforward.k8s.io): each data stream is answered with
// "<port>:" and what it carried, once the client closed it. Pod "missing"
// is refused with 404.
func fakePortForwardKubelet(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/missing") {
			http.Error(w, "pod does not exist", http.StatusNotFound)
			return
		}
		if r.Header.Get("Upgrade") != "SPDY/3.1" || r.Header.Get("Sec-WebSocket-Key") != "" {
			http.Error(w, "not a SPDY upgrade", http.StatusBadRequest)
			return
		}
		if _, err := httpstream.Handshake(r, w, []string{"portforward.k8s.io"}); err != nil {
			return
		}
		conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, _ <-chan struct{}) error {
			if s.Headers().Get(corev1.StreamType) == corev1.StreamTypeData {
				go func() {
					data, _ := io.ReadAll(s)
					fmt.Fprintf(s, "%s:%s", s.Headers().Get(corev1.PortHeader), data)
					s.Close()
				}()
			}
			return nil
		})
		if conn == nil {
			return
		}
		<-conn.CloseChan()
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestPortForwardTunnel(t *testing.T) {
	kubelet := fakePortForwardKubelet(t)
	codes := make(chan int, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !streamtranslator.IsTunnelingRequest(r) {
			http.Error(w, "not translated", http.StatusTeapot)
			return
		}
		target, _ := url.Parse(kubelet.URL + "/portForward/ns/" + r.URL.Query().Get("pod"))
		code, err := streamtranslator.ServePortForward(w, r, target, upgradeproxy.Options{})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
		codes <- code
	}))
	defer srv.Close()
	dialWS := func(pod string, protocols ...string) (*websocket.Conn, error) {
		cfg, err := websocket.NewConfig(strings.Replace(srv.URL, "http", "ws", 1)+"/portforward?pod="+pod, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Protocol = protocols
		return websocket.DialConfig(cfg)
	}

	// SPDY over the WebSocket, two ports.
	ws, err := dialWS("web", "SPDY/3.1+portforward.k8s.io")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if p := ws.Config().Protocol; len(p) != 1 || p[0] != "SPDY/3.1+portforward.k8s.io" {
		t.Fatalf("negotiated %v", p)
	}
	ws.PayloadType = websocket.BinaryFrame
	_ = ws.SetDeadline(time.Now().Add(20 * time.Second))
	conn, err := spdy.NewClientConnection(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for i, port := range []string{"8080", "9090"} {
		h := http.Header{}
		h.Set(corev1.PortHeader, port)
		h.Set(corev1.PortForwardRequestIDHeader, fmt.Sprint(i))
		h.Set(corev1.StreamType, corev1.StreamTypeError)
		if _, err := conn.CreateStream(h); err != nil {
			t.Fatal(err)
		}
		h.Set(corev1.StreamType, corev1.StreamTypeData)
		data, err := conn.CreateStream(h)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(data, "hello %d", i)
		data.Close()
		got, err := io.ReadAll(data)
		if want := fmt.Sprintf("%s:hello %d", port, i); err != nil || string(got) != want {
			t.Errorf("port %s: %q %v, want %q", port, got, err, want)
		}
	}

	conn.Close()
	ws.Close()
	if code := <-codes; code != http.StatusSwitchingProtocols {
		t.Errorf("tunnel code %d", code)
	}

	// The kubelet's refusal reaches the client as it was answered.
	if _, err := dialWS("missing", "SPDY/3.1+portforward.k8s.io"); err == nil || !strings.Contains(err.Error(), "bad status") {
		t.Errorf("refused port-forward: %v", err)
	}
	if code := <-codes; code != http.StatusNotFound {
		t.Errorf("refused port-forward code %d", code)
	}

	for _, tt := range []struct {
		protocols []string
		want      bool
	}{{[]string{"SPDY/3.1+portforward.k8s.io"}, true}, {[]string{"v2.portforward.k8s.io", "SPDY/3.1+portforward.k8s.io"}, true},
		{[]string{"v2.portforward.k8s.io"}, false}, {[]string{"v5.channel.k8s.io"}, false}} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Connection", "Upgrade")
		r.Header.Set("Upgrade", "websocket")
		r.Header.Set("Sec-WebSocket-Protocol", strings.Join(tt.protocols, ","))
		if got := streamtranslator.IsTunnelingRequest(r); got != tt.want {
			t.Errorf("IsTunnelingRequest(%v) = %v", tt.protocols, got)
		}
	}
}
