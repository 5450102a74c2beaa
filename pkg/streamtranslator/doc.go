// Package streamtranslator lets WebSocket clients reach a kubelet that
// speaks SPDY, as upstream's API server does (its StreamTranslatorHandler
// and TunnelingHandler, feature gates TranslateStreamCloseWebsocketRequests
// and PortForwardWebsockets, on by default since 1.30/1.31):
//
//   - ServeRemoteCommand accepts an exec or attach WebSocket of the
//     v5.channel.k8s.io protocol (and v4.channel.k8s.io, v4.base64.channel.k8s.io)
//     and runs the session over a new SPDY connection to the kubelet
//     (streams error, stdin, stdout, stderr, resize of the v4 remote
//     command protocol): each WebSocket channel is copied to its SPDY
//     stream and back, v5's CLOSE of stdin half-closes the SPDY stdin
//     stream, and the result of the SPDY error stream (a metav1.Status in
//     v4) is written to the WebSocket error channel as upstream's
//     translator writes it (Success; NonZeroExitCode with the ExitCode
//     cause; anything else an InternalError).
//   - ServePortForward accepts a port-forward WebSocket of a tunneling
//     protocol ("SPDY/3.1+portforward.k8s.io"): it upgrades a connection to
//     the kubelet to SPDY with the tunneled protocol and, once the kubelet
//     agreed, accepts the WebSocket with that protocol and copies the SPDY
//     bytes inside binary WebSocket messages both ways; the client's SPDY
//     session is the kubelet's.
//
// Invariants: the kubelet never sees a WebSocket; a session ends when either
// side ends or the Stop channel of the upgradeproxy.Options closes; the
// client's credentials never reach the kubelet (requests to it are built
// afresh). It depends on the standard library, apimachinery (httpstream,
// spdy, wsstream, remotecommand constants, metav1, api errors), k8s.io/api
// core/v1 constants, golang.org/x/net/websocket and pkg/upgradeproxy.
package streamtranslator
