package apiserver_test

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/websocket"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubectl logs/exec/attach/port-forward get upstream's answers up to the
// kubelet: never a bare 404 that reads as "no such pod".
func TestPodStreamSubresources(t *testing.T) {
	c := start(t)
	ns := c.namespace("streams")
	base := "/api/v1/namespaces/" + ns + "/pods/"
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", pod("p1", "nginx"), http.StatusCreated, nil)
	two := pod("p2", "nginx")
	spec := two["spec"].(map[string]any)
	spec["containers"] = append(spec["containers"].([]any), map[string]any{"name": "side", "image": "busybox"})
	spec["nodeName"] = "node-1"
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", two, http.StatusCreated, nil)
	// A node whose kubelet port nobody listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	c.call(http.MethodPost, "/api/v1/nodes", map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "node-1"},
		"status": map[string]any{"addresses": []any{map[string]any{"type": "InternalIP", "address": "127.0.0.1"}},
			"daemonEndpoints": map[string]any{"kubeletEndpoint": map[string]any{"Port": closed}}}}, http.StatusCreated, nil)

	tests := []struct {
		name, method, path string
		code               int
		reason             metav1.StatusReason
		msg                string
	}{
		{"exec without a node", http.MethodPost, "p1/exec?command=ls", 400, metav1.StatusReasonBadRequest, "pod p1 does not have a host assigned"},
		{"attach without a node", http.MethodPost, "p1/attach", 400, metav1.StatusReasonBadRequest, "pod p1 does not have a host assigned"},
		{"portforward without a node", http.MethodPost, "p1/portforward", 400, metav1.StatusReasonBadRequest, "pod p1 does not have a host assigned"},
		{"wrong container", http.MethodGet, "p1/log?container=nope", 400, metav1.StatusReasonBadRequest, "container nope is not valid for pod p1"},
		{"container must be chosen", http.MethodGet, "p2/log", 400, metav1.StatusReasonBadRequest, "a container name must be specified for pod p2, choose one of: [" + c.containerName(ns, "p2") + " side]"},
		{"missing pod", http.MethodGet, "nope/log", 404, metav1.StatusReasonNotFound, `pods "nope" not found`},
		{"exec that is not an upgrade", http.MethodPost, "p2/exec?container=side&command=ls", 400, metav1.StatusReasonBadRequest, "Upgrade request required"},
		{"log on a node without a kubelet", http.MethodGet, "p2/log?container=side", 500, metav1.StatusReasonUnknown,
			fmt.Sprintf(`Get "https://127.0.0.1:%d/containerLogs/%s/p2/side": dial tcp 127.0.0.1:%d: connect: connection refused`, closed, ns, closed)},
		{"invalid log options", http.MethodGet, "p2/log?container=side&tailLines=-1&limitBytes=0", 422, metav1.StatusReasonInvalid,
			`PodLogOptions "p2" is invalid: [tailLines: Invalid value: -1: must be greater than or equal to 0, limitBytes: Invalid value: 0: must be greater than 0]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, body := c.on(t).do(tt.method, base+tt.path, nil, "", "")
			expectStatus(t, code, body, tt.code, tt.reason, tt.msg)
		})
	}
	// An exec upgrade toward a kubelet nobody serves: upstream's answer.
	conn, err := tls.Dial("tcp", strings.TrimPrefix(c.env.URL, "https://"), c.env.TLSConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(conn, "POST %sp2/exec?container=side&command=ls&stdout=true HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n", base)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	expectStatus(t, resp.StatusCode, data, 500, metav1.StatusReasonUnknown,
		fmt.Sprintf("error dialing backend: dial tcp 127.0.0.1:%d: connect: connection refused", closed))

	// A WebSocket exec is accepted and translated: the unreachable kubelet
	// is reported on its error channel (upstream's translator answers so).
	wsURL := strings.Replace(c.env.URL, "https://", "wss://", 1) + base
	cfg, err := websocket.NewConfig(wsURL+"p2/exec?container=side&command=ls&stdout=true", c.env.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.TlsConfig, cfg.Protocol = c.env.TLSConfig(), []string{"v5.channel.k8s.io"}
	ws, err := websocket.DialConfig(cfg)
	if err != nil {
		t.Fatalf("WebSocket exec: %v", err)
	}
	_ = ws.SetDeadline(time.Now().Add(20 * time.Second))
	var status metav1.Status
	for {
		var msg []byte
		if err := websocket.Message.Receive(ws, &msg); err != nil {
			t.Fatalf("WebSocket exec: no status: %v", err)
		}
		if len(msg) > 1 && msg[0] == 3 {
			if err := json.Unmarshal(msg[1:], &status); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	ws.Close()
	wantMsg := fmt.Sprintf("Internal error occurred: error dialing backend: dial tcp 127.0.0.1:%d: connect: connection refused", closed)
	if status.Status != metav1.StatusFailure || status.Reason != metav1.StatusReasonInternalError || status.Message != wantMsg {
		t.Errorf("WebSocket exec status: %+v, want %q", status, wantMsg)
	}
	// A WebSocket port-forward toward it is upstream's dial error.
	cfg, _ = websocket.NewConfig(wsURL+"p2/portforward?ports=80", c.env.URL)
	cfg.TlsConfig, cfg.Protocol = c.env.TLSConfig(), []string{"SPDY/3.1+portforward.k8s.io"}
	if _, err := websocket.DialConfig(cfg); err == nil || !strings.Contains(err.Error(), "bad status") {
		t.Errorf("WebSocket port-forward to a dead kubelet: %v", err)
	}

	// Upstream's metrics count them as translated (and the exec's 500,
	// counted when the session's handler returns: waited for).
	for _, want := range []string{`apiserver_stream_translator_requests_total{code="500"} 1`,
		`apiserver_websocket_streaming_requests_total{proxy_type="translated_at_apiserver",subresource="exec"} 1`,
		`apiserver_websocket_streaming_requests_total{proxy_type="translated_at_apiserver",subresource="portforward"} 1`} {
		eventually(t, "metric "+want, func() bool {
			_, _, metrics := c.do(http.MethodGet, "/metrics", nil, "", "")
			return strings.Contains(string(metrics), want+"\n")
		})
	}

	// An unscheduled pod's log is empty, as upstream answers it.
	code, _, body := c.do(http.MethodGet, base+"p1/log", nil, "", "")
	if code != http.StatusOK || len(body) != 0 {
		t.Errorf("log of an unscheduled pod: %d %q", code, body)
	}
}

func (c *client) containerName(ns, name string) string {
	var p struct {
		Spec struct {
			Containers []struct{ Name string } `json:"containers"`
		} `json:"spec"`
	}
	c.call(http.MethodGet, "/api/v1/namespaces/"+ns+"/pods/"+name, nil, http.StatusOK, &p)
	return p.Spec.Containers[0].Name
}
