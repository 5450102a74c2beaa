package component_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/skiff-sh/skiff/pkg/component"
)

// TestHealth: /healthz answers as upstream's healthz handler for every
// state of the checks ("ping" only when there is no other check, as
// upstream installs it).
func TestHealth(t *testing.T) {
	watchdog := component.NamedCheck("leaderElection", func(*http.Request) error { return nil })
	stuck := component.NamedCheck("leaderElection", func(*http.Request) error { return errors.New("stuck") })
	tests := []struct {
		name     string
		fixed    []component.HealthChecker
		setup    func(h *component.Health)
		path     string
		wantCode int
		wantBody string
	}{
		{name: "only ping", path: "/healthz", wantCode: 200, wantBody: "ok"},
		{name: "verbose", fixed: []component.HealthChecker{watchdog}, path: "/healthz?verbose",
			setup:    func(h *component.Health) { h.Add("b-controller"); h.Add("a-controller") },
			wantCode: 200, wantBody: "[+]leaderElection ok\n[+]a-controller ok\n[+]b-controller ok\nhealthz check passed\n"},
		{name: "a failed part", fixed: []component.HealthChecker{watchdog}, path: "/healthz",
			setup:    func(h *component.Health) { h.Add("a"); h.Add("b"); h.Fail("b", errors.New("boom")) },
			wantCode: 500, wantBody: "[+]leaderElection ok\n[+]a ok\n[-]b failed: reason withheld\nhealthz check failed\n"},
		{name: "a failed fixed check", fixed: []component.HealthChecker{stuck}, path: "/healthz",
			wantCode: 500, wantBody: "[-]leaderElection failed: reason withheld\nhealthz check failed\n"},
		{name: "removed part", path: "/healthz?verbose",
			setup:    func(h *component.Health) { h.Add("a"); h.Fail("a", errors.New("boom")); h.Remove("a") },
			wantCode: 200, wantBody: "[+]ping ok\nhealthz check passed\n"},
		{name: "one check", path: "/healthz/a", setup: func(h *component.Health) { h.Add("a") }, wantCode: 200, wantBody: "ok"},
		{name: "one failed check", path: "/healthz/a",
			setup:    func(h *component.Health) { h.Fail("a", errors.New("boom")) },
			wantCode: 500, wantBody: "internal server error: boom\n"},
		{name: "one fixed check", fixed: []component.HealthChecker{stuck}, path: "/healthz/leaderElection",
			wantCode: 500, wantBody: "internal server error: stuck\n"},
		{name: "ping", path: "/healthz/ping", wantCode: 200, wantBody: "ok"},
		{name: "no ping beside other checks", path: "/healthz/ping", setup: func(h *component.Health) { h.Add("a") }, wantCode: 404, wantBody: "404 page not found\n"},
		{name: "excluded failure", fixed: []component.HealthChecker{stuck}, path: "/healthz?exclude=leaderElection",
			setup: func(h *component.Health) { h.Add("a") }, wantCode: 200, wantBody: "ok"},
		{name: "excluded, verbose, with unknown names", fixed: []component.HealthChecker{stuck}, path: "/healthz?verbose&exclude=zz&exclude=leaderElection&exclude=b",
			wantCode: 200, wantBody: "[+]leaderElection excluded: ok\nwarn: some health checks cannot be excluded: no matches for \"b\",\"zz\"\nhealthz check passed\n"},
		{name: "excluded, still failing", fixed: []component.HealthChecker{stuck}, path: "/healthz?exclude=a",
			setup:    func(h *component.Health) { h.Fail("a", errors.New("boom")) },
			wantCode: 500, wantBody: "[-]leaderElection failed: reason withheld\n[+]a excluded: ok\nhealthz check failed\n"},
		{name: "unknown check", path: "/healthz/nope", wantCode: 404, wantBody: "404 page not found\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := component.NewHealth(tt.fixed...)
			if tt.setup != nil {
				tt.setup(h)
			}
			mux := component.NewMux(component.ServingConfig{}, h, nil)
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			body, _ := io.ReadAll(rec.Body)
			if rec.Code != tt.wantCode || string(body) != tt.wantBody {
				t.Errorf("GET %s = %d %q, want %d %q", tt.path, rec.Code, body, tt.wantCode, tt.wantBody)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

// TestHealthHandlerPath: the handler serves its checks under the path it
// is mounted on and names itself after it (a component may serve /readyz
// and /livez with other checks).
func TestHealthHandlerPath(t *testing.T) {
	ready := component.NewHealth()
	ready.Fail("sync", errors.New("not synced"))
	mux := http.NewServeMux()
	ready.Install(mux, "/readyz")
	component.NewHealth().Install(mux, "/livez")
	for _, tt := range []struct {
		path     string
		wantCode int
		wantBody string
	}{
		{"/readyz", 500, "[-]sync failed: reason withheld\nreadyz check failed\n"},
		{"/readyz/sync", 500, "internal server error: not synced\n"},
		{"/readyz/ping", 404, "404 page not found\n"}, // no ping beside other checks, as upstream's
		{"/livez?verbose", 200, "[+]ping ok\nlivez check passed\n"},
		{"/healthz", 404, "404 page not found\n"},
	} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
		if rec.Code != tt.wantCode || rec.Body.String() != tt.wantBody {
			t.Errorf("GET %s = %d %q, want %d %q", tt.path, rec.Code, rec.Body.String(), tt.wantCode, tt.wantBody)
		}
	}
}

func TestShutdownCheck(t *testing.T) {
	done := make(chan struct{})
	ready := component.NewHealth(component.ShutdownCheck(done))
	mux := http.NewServeMux()
	ready.Install(mux, "/readyz")
	get := func() string {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz/shutdown", nil))
		return fmt.Sprint(rec.Code, " ", rec.Body.String())
	}
	if got := get(); got != "200 ok" {
		t.Errorf("before shutdown: %s", got)
	}
	close(done)
	if got := get(); got != "500 internal server error: process is shutting down\n" {
		t.Errorf("after shutdown: %q", got)
	}
}
