package testenv

import (
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
