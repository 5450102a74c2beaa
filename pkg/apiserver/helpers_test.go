package apiserver_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"github.com/skiff-sh/skiff/pkg/controllermanager"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/testenv"
)

// waitTimeout bounds every wait on a condition in these tests.
const waitTimeout = 15 * time.Second

// client talks to one in-process API server over real HTTPS.
type client struct {
	t   testing.TB
	env *testenv.Environment
	hc  *http.Client
}

// start runs an API server for the test (memory storage, TLS, admin cert).
// withGC runs the garbage collector and the namespace controller of
// skiff's controller manager against the server: the API server alone
// only marks objects with the orphan and foregroundDeletion finalizers and
// namespaces as Terminating, as upstream's. (c.namespace makes the
// default service account itself.)
func withGC(cfg testenv.Config) testenv.Config {
	cfg.ControllerManager = controllermanager.InProcess(controllermanager.Config{
		Controllers: []string{"garbage-collector-controller", "namespace-controller"},
	})
	return cfg
}

func start(t testing.TB, cfg ...testenv.Config) *client {
	t.Helper()
	env := testenv.StartT(t, cfg...)
	hc := env.HTTPClient()
	t.Cleanup(hc.CloseIdleConnections)
	return &client{t: t, env: env, hc: hc}
}

// on returns the client reporting failures to t (for subtests).
func (c *client) on(t testing.TB) *client {
	cc := *c
	cc.t = t
	return &cc
}

// anonymous is an HTTP client that trusts the server but presents no
// client certificate.
func (c *client) anonymous() *http.Client {
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(c.env.CAData)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	c.t.Cleanup(hc.CloseIdleConnections)
	return hc
}

// encodeBody turns a request body into bytes: []byte and string are sent
// as is, anything else as JSON.
func encodeBody(t testing.TB, body any) io.Reader {
	switch b := body.(type) {
	case nil:
		return nil
	case []byte:
		return bytes.NewReader(b)
	case string:
		return strings.NewReader(b)
	case io.Reader:
		return b
	}
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatalf("encoding body: %v", err)
	}
	return bytes.NewReader(data)
}

// do sends one request and returns status, headers and body. contentType
// defaults to application/json when there is a body.
func (c *client) do(method, path string, body any, contentType, accept string) (int, http.Header, []byte) {
	c.t.Helper()
	return doWith(c.t, c.hc, c.env.URL, method, path, body, contentType, accept)
}

func doWith(t testing.TB, hc *http.Client, base, method, path string, body any, contentType, accept string) (int, http.Header, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, base+path, encodeBody(t, body))
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if body != nil {
		if contentType == "" {
			contentType = "application/json"
		}
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	return resp.StatusCode, resp.Header, data
}

// call sends a JSON request, fails the test unless the answer has status
// want, and decodes the body into out (when not nil).
func (c *client) call(method, path string, body any, want int, out any) []byte {
	c.t.Helper()
	code, _, data := c.do(method, path, body, "", "")
	if code != want {
		c.t.Fatalf("%s %s: status %d, want %d: %s", method, path, code, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			c.t.Fatalf("%s %s: decoding %T: %v: %s", method, path, out, err, data)
		}
	}
	return data
}

// patch sends a PATCH with the given patch type and returns code and body.
func (c *client) patch(path, patchType string, body any) (int, []byte) {
	c.t.Helper()
	code, _, data := c.do(http.MethodPatch, path, body, patchType, "")
	return code, data
}

// decodeStatus decodes a metav1.Status body, failing the test if it is not one.
func decodeStatus(t testing.TB, data []byte) metav1.Status {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatalf("not a Status: %v: %s", err, data)
	}
	if st.Kind != "Status" || st.APIVersion != "v1" {
		t.Fatalf("not a v1 Status (kind %q apiVersion %q): %s", st.Kind, st.APIVersion, data)
	}
	return st
}

// expectStatus checks a failure answer: HTTP code, Status code, reason and
// (when not empty) the exact message.
func expectStatus(t testing.TB, code int, data []byte, wantCode int, wantReason metav1.StatusReason, wantMsg string) metav1.Status {
	t.Helper()
	if code != wantCode {
		t.Fatalf("status %d, want %d: %s", code, wantCode, data)
	}
	st := decodeStatus(t, data)
	if st.Status != metav1.StatusFailure {
		t.Errorf("status.status = %q, want Failure", st.Status)
	}
	if int(st.Code) != wantCode {
		t.Errorf("status.code = %d, want %d", st.Code, wantCode)
	}
	if st.Reason != wantReason {
		t.Errorf("status.reason = %q, want %q", st.Reason, wantReason)
	}
	if wantMsg != "" && st.Message != wantMsg {
		t.Errorf("status.message =\n  %q\nwant\n  %q", st.Message, wantMsg)
	}
	return st
}

// metaOf extracts metadata from an encoded object.
func metaOf(t testing.TB, data []byte) metav1.ObjectMeta {
	t.Helper()
	var o struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(data, &o); err != nil {
		t.Fatalf("decoding metadata: %v: %s", err, data)
	}
	return o.Metadata
}

// namespace creates a namespace and returns its name.
func (c *client) namespace(name string) string {
	c.t.Helper()
	c.call(http.MethodPost, "/api/v1/namespaces", map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name},
	}, http.StatusCreated, nil)
	// What the controller manager's serviceaccount-controller creates in a
	// cluster (the API server alone does not): pods need it.
	c.call(http.MethodPost, "/api/v1/namespaces/"+name+"/serviceaccounts", map[string]any{
		"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "default"},
	}, http.StatusCreated, nil)
	return name
}

// configMap is a ConfigMap body.
func configMap(name string, labels map[string]string, data map[string]string) map[string]any {
	md := map[string]any{"name": name}
	if labels != nil {
		md["labels"] = labels
	}
	obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": md}
	if data != nil {
		obj["data"] = data
	}
	return obj
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for delay := time.Millisecond; ; {
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(delay)
		if delay < 50*time.Millisecond {
			delay *= 2
		}
	}
}

// --- watch -------------------------------------------------------------------

// watchEvent is one decoded watch event.
type watchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// watcher reads a streaming watch response.
type watcher struct {
	t      testing.TB
	code   int
	body   []byte // the whole body when the watch was refused
	events chan watchEvent
	ended  chan struct{}
	cancel context.CancelFunc
}

// watch starts a watch request (path includes the query, e.g.
// "/api/v1/namespaces/x/configmaps?watch=true&resourceVersion=5").
func (c *client) watch(path string) *watcher {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.env.URL+path, nil)
	if err != nil {
		cancel()
		c.t.Fatal(err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		cancel()
		c.t.Fatalf("watch %s: %v", path, err)
	}
	w := &watcher{t: c.t, code: resp.StatusCode, events: make(chan watchEvent, 1024), ended: make(chan struct{}), cancel: cancel}
	c.t.Cleanup(w.stop)
	if resp.StatusCode != http.StatusOK {
		w.body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		close(w.ended)
		close(w.events)
		return w
	}
	go func() {
		defer close(w.ended)
		defer close(w.events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			var ev watchEvent
			if err := json.Unmarshal(line, &ev); err != nil {
				ev = watchEvent{Type: "UNDECODABLE", Object: json.RawMessage(fmt.Sprintf("%q", line))}
			}
			w.events <- ev
		}
	}()
	return w
}

func (w *watcher) stop() { w.cancel() }

// on returns the watcher reporting failures to t (for subtests).
func (w *watcher) on(t testing.TB) *watcher {
	c := *w
	c.t = t
	return &c
}

// next returns the next event, failing the test at the deadline. ok is
// false when the stream ended.
func (w *watcher) next() (watchEvent, bool) {
	w.t.Helper()
	select {
	case ev, ok := <-w.events:
		return ev, ok
	case <-time.After(waitTimeout):
		w.t.Fatalf("timed out waiting for a watch event")
		return watchEvent{}, false
	}
}

// mustNext returns the next event; the stream must not have ended.
func (w *watcher) mustNext() watchEvent {
	w.t.Helper()
	ev, ok := w.next()
	if !ok {
		w.t.Fatalf("watch ended while an event was expected")
	}
	return ev
}

// until collects events up to and including the first one stop accepts.
func (w *watcher) until(stop func(watchEvent) bool) []watchEvent {
	w.t.Helper()
	var out []watchEvent
	for {
		ev := w.mustNext()
		out = append(out, ev)
		if stop(ev) {
			return out
		}
	}
}

// nextNonBookmark returns the next event that is not a BOOKMARK.
func (w *watcher) nextNonBookmark() watchEvent {
	w.t.Helper()
	for {
		ev := w.mustNext()
		if ev.Type != "BOOKMARK" {
			return ev
		}
	}
}

// expectEvent reads the next non-bookmark event and checks its type and name.
func (w *watcher) expectEvent(typ, name string) watchEvent {
	w.t.Helper()
	ev := w.nextNonBookmark()
	m := metaOf(w.t, ev.Object)
	if ev.Type != typ || m.Name != name {
		w.t.Fatalf("watch event %s %s, want %s %s: %s", ev.Type, m.Name, typ, name, ev.Object)
	}
	return ev
}

// pod is a one-container Pod body.
func pod(name, image string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": image}}},
	}
}

// bindPod assigns a pod to a node as the scheduler does.
func bindPod(c *client, ns, name, node string) {
	c.t.Helper()
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods/"+name+"/binding", map[string]any{
		"apiVersion": "v1", "kind": "Binding",
		"metadata": map[string]any{"name": name},
		"target":   map[string]any{"apiVersion": "v1", "kind": "Node", "name": node},
	}, http.StatusCreated, nil)
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
