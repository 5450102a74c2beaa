package streamtranslator

import (
	"io"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/websocket"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"

	"github.com/skiff-sh/skiff/pkg/upgradeproxy"
)

const (
	// tunnelingPrefix and tunnelingSuffix frame a SPDY protocol tunneled
	// over a WebSocket ("SPDY/3.1+portforward.k8s.io").
	tunnelingPrefix = "SPDY/3.1+"
	tunnelingSuffix = ".k8s.io"
)

// IsTunnelingRequest reports whether r asks for a WebSocket that tunnels
// SPDY (upstream's port-forward over WebSockets).
func IsTunnelingRequest(r *http.Request) bool {
	return wsstream.IsWebSocketRequestWithTunnelingProtocol(r)
}

// ServePortForward answers a port-forward request that IsTunnelingRequest
// accepted: a SPDY upgrade to target (the kubelet's portForward URL) with
// the tunneled protocols; a refusal is relayed as the kubelet answered it;
// an agreement accepts the client's WebSocket with the agreed protocol and
// copies the bytes of both connections, inside binary WebSocket messages
// toward the client, until either ends. An error means nothing was written
// to w (the kubelet was not reached); otherwise the code upstream's
// tunneling handler counts the request by: 101 for a tunnel, the
// kubelet's code for its refusal, 400 or 500 for the failures answered.
func ServePortForward(w http.ResponseWriter, r *http.Request, target *url.URL, proxy upgradeproxy.Options) (int, error) {
	var tunneled []string
	for _, p := range requestedProtocols(r) {
		if strings.HasPrefix(p, tunnelingPrefix) && strings.HasSuffix(p, tunnelingSuffix) {
			tunneled = append(tunneled, strings.TrimPrefix(p, tunnelingPrefix))
		}
	}
	if len(tunneled) == 0 {
		http.Error(w, "unable to upgrade: no tunneling spdy protocols provided", http.StatusBadRequest)
		return http.StatusBadRequest, nil
	}
	header := http.Header{}
	header.Set("Connection", "Upgrade")
	header.Set("Upgrade", spdy.HeaderSpdy31)
	for _, p := range tunneled {
		header.Add(headerProtocolVersion, p)
	}
	resp, backend, err := upgradeproxy.Connect(r.Context(), http.MethodPost, target, header, proxy)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer resp.Body.Close()
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		return resp.StatusCode, nil
	}
	defer backend.Close()
	if !upgradedToSPDY(resp) {
		http.Error(w, "unable to upgrade: missing upgrade headers in response", http.StatusInternalServerError)
		return http.StatusInternalServerError, nil
	}
	agreed, opened := "", false
	if p := strings.TrimSpace(resp.Header.Get(headerProtocolVersion)); p != "" {
		agreed = tunnelingPrefix + p
	}
	websocket.Server{
		// The client's subprotocol that the kubelet agreed to, else none
		// (the client decides); no Origin check, as upstream's.
		Handshake: func(cfg *websocket.Config, _ *http.Request) error {
			var chosen []string
			for _, p := range cfg.Protocol {
				if agreed != "" && p == agreed {
					chosen = []string{p}
					break
				}
			}
			cfg.Protocol = chosen
			return nil
		},
		Handler: func(ws *websocket.Conn) {
			opened = true
			ws.PayloadType = websocket.BinaryFrame
			upgradeproxy.Splice(ws, ws, backend, backend, proxy.Stop)
		},
	}.ServeHTTP(hijacker{w}, r)
	if !opened {
		return http.StatusInternalServerError, nil // the WebSocket server answered
	}
	return http.StatusSwitchingProtocols, nil
}
