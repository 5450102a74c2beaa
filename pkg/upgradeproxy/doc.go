// Package upgradeproxy forwards an HTTP request that asks to switch
// protocols (Connection: Upgrade — SPDY/3.1 for kubectl's exec, attach and
// port-forward, WebSocket for its v5 protocols) to a backend and, once the
// backend answers 101 Switching Protocols, splices the client's hijacked
// connection and the backend's connection both ways, as upstream's
// UpgradeAwareHandler does. The API server uses it toward a kubelet, the
// kubelet toward its runtime's streaming server. Connect sends an upgrade
// request of the caller's own and hands back the upgraded connection
// (pkg/streamtranslator speaks SPDY over it).
//
// Invariants: the proxy never interprets the upgraded protocol (it copies
// bytes, so every SPDY or WebSocket subprotocol passes); a backend answer
// other than 101 reaches the client unchanged (status, headers, body), so
// a client that falls back from WebSocket to SPDY on an upgrade failure
// still can; both connections are closed when either direction ends.
// It depends on the standard library only.
package upgradeproxy
