package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestStartServesAndStops(t *testing.T) {
	start := time.Now()
	env := StartT(t)
	t.Logf("started in %v", time.Since(start))
	c := env.HTTPClient()
	cases := []struct {
		path string
		code int
		body string
	}{
		{"/readyz", 200, "ok"},
		{"/api/v1/namespaces/default", 200, `"name":"default"`},
		{"/api/v1/namespaces/nope", 404, `"reason":"NotFound"`},
	}
	for _, tc := range cases {
		resp, err := c.Get(env.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.body) {
			t.Errorf("%s: %d %s", tc.path, resp.StatusCode, b)
		}
	}
	// Without a client certificate: 401 with a Status body.
	anon := &http.Client{Transport: &http.Transport{TLSClientConfig: env.TLSConfig().Clone()}}
	anon.Transport.(*http.Transport).TLSClientConfig.Certificates = nil
	resp, err := anon.Get(env.URL + "/api/v1/namespaces")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(string(b), `"reason":"Unauthorized"`) {
		t.Fatalf("anonymous: %d %s", resp.StatusCode, b)
	}
	if err := env.Stop(); err != nil {
		t.Fatal(err)
	}
}

// watchFirst opens a watch of default's ConfigMaps from rv and returns the
// HTTP status and either the first event's type and object (on 200) or the
// Status in the body.
func watchFirst(t *testing.T, c *http.Client, env *Environment, rv string) (code int, typ string, obj map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, env.URL+"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion="+rv, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&obj); err != nil {
			t.Fatalf("watch from %s: HTTP %d: %v", rv, resp.StatusCode, err)
		}
		return resp.StatusCode, "", obj
	}
	var ev struct {
		Type   string         `json:"type"`
		Object map[string]any `json:"object"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ev); err != nil {
		t.Fatalf("watch from %s: %v", rv, err)
	}
	return resp.StatusCode, ev.Type, ev.Object
}

// TestCompactExpiresOlderResourceVersions: after Compact, the server
// answers a watch from an older resourceVersion with 410 Gone (which the
// watch caches would not do after a mere storage compaction), and a watch
// from the compacted revision works.
func TestCompactExpiresOlderResourceVersions(t *testing.T) {
	for _, st := range []string{"memory", "etcd"} {
		t.Run(st, func(t *testing.T) { testCompact(t, StartT(t, Config{Storage: st})) })
	}
}

func testCompact(t *testing.T, env *Environment) {
	c := env.HTTPClient()
	createCM := func(name string) string {
		t.Helper()
		body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"}}`
		resp, err := c.Post(env.URL+"/api/v1/namespaces/default/configmaps", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("create %s: %d %v", name, resp.StatusCode, err)
		}
		return out.Metadata.ResourceVersion
	}
	old := createCM("a")
	createCM("b")
	// Before: the watch cache still holds the events after old.
	if code, typ, obj := watchFirst(t, c, env, old); code != http.StatusOK || typ != "ADDED" {
		t.Fatalf("watch from %s before Compact: %d %s %v", old, code, typ, obj)
	}

	rev, err := env.Compact(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// After: 410 Gone (Expired), as the HTTP answer or as an ERROR event.
	code, typ, obj := watchFirst(t, c, env, old)
	if !(code == http.StatusGone || code == http.StatusOK && typ == "ERROR") || obj["code"] != float64(http.StatusGone) || obj["reason"] != "Expired" {
		t.Fatalf("watch from %s after Compact: HTTP %d %s %v, want 410 Expired", old, code, typ, obj)
	}
	// A watch from the compacted revision goes on.
	createCM("c")
	code, typ, obj = watchFirst(t, c, env, fmt.Sprint(rev))
	if meta, _ := obj["metadata"].(map[string]any); code != http.StatusOK || typ != "ADDED" || meta["name"] != "c" {
		t.Fatalf("watch from %d after Compact: HTTP %d %s %v, want c ADDED", rev, code, typ, obj)
	}
}
