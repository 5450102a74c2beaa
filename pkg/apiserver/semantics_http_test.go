package apiserver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Errors are metav1.Status with upstream's code, reason and message.
func TestSemanticsErrors(t *testing.T) {
	c := start(t)
	huge := configMap("huge", nil, map[string]string{"k": strings.Repeat("x", 3<<20)})
	tests := []struct {
		name        string
		method      string
		path        string
		body        any
		contentType string
		accept      string
		wantCode    int
		wantReason  metav1.StatusReason
		wantMsg     string
	}{
		{"body over 3 MiB", http.MethodPost, "/api/v1/namespaces/default/configmaps", huge, "", "",
			http.StatusRequestEntityTooLarge, metav1.StatusReasonRequestEntityTooLarge, "Request entity too large: limit is 3145728"},
		{"body over 3 MiB, chunked", http.MethodPost, "/api/v1/namespaces/default/configmaps",
			io.MultiReader(strings.NewReader(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"`),
				strings.NewReader(strings.Repeat("y", 3<<20)), strings.NewReader(`"}}`)), "", "",
			http.StatusRequestEntityTooLarge, metav1.StatusReasonRequestEntityTooLarge, "Request entity too large: limit is 3145728"},
		{"unknown group", http.MethodGet, "/apis/nope.example.com/v1/things", nil, "", "",
			http.StatusNotFound, metav1.StatusReasonNotFound, "the server could not find the requested resource"},
		{"unknown resource", http.MethodGet, "/api/v1/namespaces/default/bogus", nil, "", "",
			http.StatusNotFound, metav1.StatusReasonNotFound, "the server could not find the requested resource"},
		{"unknown path", http.MethodGet, "/nothing/here", nil, "", "",
			http.StatusNotFound, metav1.StatusReasonNotFound, "the server could not find the requested resource"},
		{"missing object", http.MethodGet, "/api/v1/namespaces/default/pods/x", nil, "", "",
			http.StatusNotFound, metav1.StatusReasonNotFound, `pods "x" not found`},
		{"missing object in a group", http.MethodGet, "/apis/apps/v1/namespaces/default/deployments/x", nil, "", "",
			http.StatusNotFound, metav1.StatusReasonNotFound, `deployments.apps "x" not found`},
		{"update of a missing object", http.MethodPut, "/api/v1/namespaces/default/configmaps/x", configMap("x", nil, nil), "", "",
			http.StatusNotFound, metav1.StatusReasonNotFound, `configmaps "x" not found`},
		{"PUT on a collection", http.MethodPut, "/api/v1/namespaces/default/configmaps", configMap("x", nil, nil), "", "",
			http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, ""},
		{"POST on an object", http.MethodPost, "/api/v1/namespaces/default/configmaps/x", configMap("x", nil, nil), "", "",
			http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, ""},
		{"unsupported body type", http.MethodPost, "/api/v1/namespaces/default/configmaps", `x`, "text/plain", "",
			http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType, ""},
		{"not acceptable", http.MethodGet, "/api/v1/namespaces/default/configmaps", nil, "", "application/xml",
			http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable, ""},
		{"malformed body", http.MethodPost, "/api/v1/namespaces/default/configmaps", `{"metadata":`, "", "",
			http.StatusBadRequest, metav1.StatusReasonBadRequest, ""},
		{"wrong kind in body", http.MethodPost, "/api/v1/namespaces/default/configmaps",
			map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"}}, "", "",
			http.StatusBadRequest, metav1.StatusReasonBadRequest, ""},
		{"name mismatch on update", http.MethodPut, "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication", configMap("other", nil, nil), "", "",
			http.StatusBadRequest, metav1.StatusReasonBadRequest, "the name of the object (other) does not match the name on the URL (extension-apiserver-authentication)"},
		{"name mismatch on update of a missing object", http.MethodPut, "/api/v1/namespaces/default/configmaps/missing", configMap("other", nil, nil), "", "",
			http.StatusBadRequest, metav1.StatusReasonBadRequest, "the name of the object (other) does not match the name on the URL (missing)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := c.on(t)
			code, hdr, data := c.do(tt.method, tt.path, tt.body, tt.contentType, tt.accept)
			st := expectStatus(t, code, data, tt.wantCode, tt.wantReason, tt.wantMsg)
			if ct := hdr.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			if tt.wantReason == metav1.StatusReasonNotFound && st.Details == nil {
				t.Errorf("NotFound without details")
			}
		})
	}
	t.Run("missing object details", func(t *testing.T) {
		c := c.on(t)
		code, _, data := c.do(http.MethodGet, "/api/v1/namespaces/default/pods/x", nil, "", "")
		st := expectStatus(t, code, data, http.StatusNotFound, metav1.StatusReasonNotFound, `pods "x" not found`)
		if st.Details == nil || st.Details.Name != "x" || st.Details.Kind != "pods" || st.Details.Group != "" {
			t.Errorf("details %+v, want name x kind pods", st.Details)
		}
	})
}

// Server-side printing: Tables with upstream's columns and metadata-only
// transformations.
func TestSemanticsTablesAndPartialMetadata(t *testing.T) {
	c := start(t)
	ns := c.namespace("tables")
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", pod("p", "nginx:1.27"), http.StatusCreated, nil)
	c.call(http.MethodPost, "/apis/apps/v1/namespaces/"+ns+"/deployments", deployment("d"), http.StatusCreated, nil)
	c.call(http.MethodPost, "/api/v1/nodes", map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "n1"}}, http.StatusCreated, nil)
	const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"
	tests := []struct {
		name     string
		path     string
		columns  []string
		wantRows int
	}{
		{"pods", "/api/v1/namespaces/" + ns + "/pods",
			[]string{"Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"}, 1},
		{"one pod", "/api/v1/namespaces/" + ns + "/pods/p",
			[]string{"Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"}, 1},
		{"deployments", "/apis/apps/v1/namespaces/" + ns + "/deployments",
			[]string{"Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images", "Selector"}, 1},
		{"nodes", "/api/v1/nodes",
			[]string{"Name", "Status", "Roles", "Age", "Version", "Internal-IP", "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := c.on(t)
			code, hdr, data := c.do(http.MethodGet, tt.path, nil, "", tableAccept)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, data)
			}
			if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q", ct)
			}
			var tbl metav1.Table
			if err := json.Unmarshal(data, &tbl); err != nil {
				t.Fatal(err)
			}
			if tbl.Kind != "Table" || tbl.APIVersion != "meta.k8s.io/v1" {
				t.Errorf("kind %s/%s, want meta.k8s.io/v1 Table", tbl.APIVersion, tbl.Kind)
			}
			var cols []string
			for _, cd := range tbl.ColumnDefinitions {
				cols = append(cols, cd.Name)
			}
			if strings.Join(cols, "|") != strings.Join(tt.columns, "|") {
				t.Errorf("columns %q, want %q", cols, tt.columns)
			}
			if len(tbl.Rows) != tt.wantRows {
				t.Fatalf("%d rows, want %d", len(tbl.Rows), tt.wantRows)
			}
			if len(tbl.Rows[0].Cells) != len(tt.columns) {
				t.Errorf("row has %d cells for %d columns", len(tbl.Rows[0].Cells), len(tt.columns))
			}
			var obj struct {
				Kind       string            `json:"kind"`
				APIVersion string            `json:"apiVersion"`
				Metadata   metav1.ObjectMeta `json:"metadata"`
			}
			if err := json.Unmarshal(tbl.Rows[0].Object.Raw, &obj); err != nil {
				t.Fatalf("row object: %v", err)
			}
			if obj.Kind != "PartialObjectMetadata" || obj.Metadata.Name == "" {
				t.Errorf("row object %s, want PartialObjectMetadata with the name", tbl.Rows[0].Object.Raw)
			}
			rvInt(t, tbl.ResourceVersion)
		})
	}
	t.Run("PartialObjectMetadataList", func(t *testing.T) {
		c := c.on(t)
		code, _, data := c.do(http.MethodGet, "/api/v1/namespaces/"+ns+"/pods", nil, "", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io")
		if code != http.StatusOK {
			t.Fatalf("status %d: %s", code, data)
		}
		var l struct {
			Kind       string          `json:"kind"`
			APIVersion string          `json:"apiVersion"`
			Metadata   metav1.ListMeta `json:"metadata"`
			Items      []map[string]json.RawMessage
		}
		if err := json.Unmarshal(data, &l); err != nil {
			t.Fatal(err)
		}
		if l.Kind != "PartialObjectMetadataList" || l.APIVersion != "meta.k8s.io/v1" {
			t.Errorf("kind %s/%s", l.APIVersion, l.Kind)
		}
		rvInt(t, l.Metadata.ResourceVersion)
		if len(l.Items) != 1 {
			t.Fatalf("%d items", len(l.Items))
		}
		if _, ok := l.Items[0]["spec"]; ok {
			t.Errorf("item carries spec: %s", data)
		}
		var m metav1.ObjectMeta
		json.Unmarshal(l.Items[0]["metadata"], &m)
		if m.Name != "p" || m.UID == "" {
			t.Errorf("item metadata %+v", m)
		}
	})
	t.Run("PartialObjectMetadata", func(t *testing.T) {
		c := c.on(t)
		code, _, data := c.do(http.MethodGet, "/api/v1/namespaces/"+ns+"/pods/p", nil, "", "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io")
		if code != http.StatusOK {
			t.Fatalf("status %d: %s", code, data)
		}
		if !bytes.Contains(data, []byte(`"kind":"PartialObjectMetadata"`)) || bytes.Contains(data, []byte(`"spec"`)) {
			t.Errorf("body %s", data)
		}
	})
}

// Discovery documents, legacy and aggregated.
func TestSemanticsDiscovery(t *testing.T) {
	c := start(t)
	t.Run("/api", func(t *testing.T) {
		c := c.on(t)
		var v metav1.APIVersions
		c.call(http.MethodGet, "/api", nil, http.StatusOK, &v)
		if v.Kind != "APIVersions" || len(v.Versions) != 1 || v.Versions[0] != "v1" || len(v.ServerAddressByClientCIDRs) == 0 {
			t.Errorf("%+v", v)
		}
	})
	t.Run("/apis", func(t *testing.T) {
		c := c.on(t)
		var l metav1.APIGroupList
		c.call(http.MethodGet, "/apis", nil, http.StatusOK, &l)
		found := false
		for _, g := range l.Groups {
			if g.Name == "apps" {
				found = g.PreferredVersion.GroupVersion == "apps/v1"
			}
		}
		if l.Kind != "APIGroupList" || !found {
			t.Errorf("no apps group preferring apps/v1 in %+v", l)
		}
	})
	t.Run("/apis/apps", func(t *testing.T) {
		c := c.on(t)
		var g metav1.APIGroup
		c.call(http.MethodGet, "/apis/apps", nil, http.StatusOK, &g)
		if g.Kind != "APIGroup" || g.Name != "apps" || g.PreferredVersion.GroupVersion != "apps/v1" {
			t.Errorf("%+v", g)
		}
	})
	t.Run("/apis/apps/v1", func(t *testing.T) {
		c := c.on(t)
		var l metav1.APIResourceList
		c.call(http.MethodGet, "/apis/apps/v1", nil, http.StatusOK, &l)
		if l.Kind != "APIResourceList" || l.GroupVersion != "apps/v1" {
			t.Errorf("kind %q groupVersion %q", l.Kind, l.GroupVersion)
		}
		byName := map[string]metav1.APIResource{}
		for _, r := range l.APIResources {
			byName[r.Name] = r
		}
		d, ok := byName["deployments"]
		if !ok || !d.Namespaced || d.Kind != "Deployment" ||
			strings.Join(d.Verbs, ",") != "create,delete,deletecollection,get,list,patch,update,watch" ||
			strings.Join(d.ShortNames, ",") != "deploy" {
			t.Errorf("deployments %+v", d)
		}
		if s, ok := byName["deployments/scale"]; !ok || s.Group != "autoscaling" || s.Version != "v1" || s.Kind != "Scale" {
			t.Errorf("deployments/scale %+v", s)
		}
		if s, ok := byName["deployments/status"]; !ok || s.Kind != "Deployment" || strings.Join(s.Verbs, ",") != "get,patch,update" {
			t.Errorf("deployments/status %+v", s)
		}
	})
	t.Run("/api/v1", func(t *testing.T) {
		c := c.on(t)
		var l metav1.APIResourceList
		c.call(http.MethodGet, "/api/v1", nil, http.StatusOK, &l)
		byName := map[string]metav1.APIResource{}
		for _, r := range l.APIResources {
			byName[r.Name] = r
		}
		if b, ok := byName["pods/binding"]; !ok || strings.Join(b.Verbs, ",") != "create" || b.Kind != "Binding" {
			t.Errorf("pods/binding %+v", b)
		}
		if n, ok := byName["nodes"]; !ok || n.Namespaced {
			t.Errorf("nodes %+v", n)
		}
	})
	aggregated := "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	for _, tt := range []struct{ path, accept, wantGroup string }{
		{"/apis", aggregated, "apps"},
		{"/api", aggregated, ""},
		{"/apis", aggregated + ",application/json", "apps"}, // kubectl's Accept
	} {
		t.Run("aggregated "+tt.path+" "+tt.accept, func(t *testing.T) {
			c := c.on(t)
			code, hdr, data := c.do(http.MethodGet, tt.path, nil, "", tt.accept)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, data)
			}
			if ct := hdr.Get("Content-Type"); ct != aggregated {
				t.Errorf("Content-Type %q, want %q", ct, aggregated)
			}
			var l apidiscoveryv2.APIGroupDiscoveryList
			if err := json.Unmarshal(data, &l); err != nil {
				t.Fatal(err)
			}
			if l.Kind != "APIGroupDiscoveryList" || l.APIVersion != "apidiscovery.k8s.io/v2" {
				t.Errorf("kind %s/%s", l.APIVersion, l.Kind)
			}
			var group *apidiscoveryv2.APIGroupDiscovery
			for i := range l.Items {
				if l.Items[i].Name == tt.wantGroup {
					group = &l.Items[i]
				}
			}
			if group == nil || len(group.Versions) == 0 {
				t.Fatalf("no group %q", tt.wantGroup)
			}
			want := map[string]string{"apps": "deployments", "": "pods"}[tt.wantGroup]
			found := false
			for _, r := range group.Versions[0].Resources {
				if r.Resource == want && r.Scope == apidiscoveryv2.ScopeNamespace && r.ResponseKind != nil && r.ResponseKind.Kind != "" {
					found = len(r.Subresources) > 0
				}
			}
			if !found {
				t.Errorf("no namespaced %s with subresources in %+v", want, group.Versions[0].Resources)
			}
		})
	}
}

// Health, readiness, version: public. Everything else needs credentials.
func TestSemanticsHealthVersionAndAuthentication(t *testing.T) {
	c := start(t)
	anon := c.anonymous()
	get := func(t *testing.T, path string) (int, []byte) {
		code, _, data := doWith(t, anon, c.env.URL, http.MethodGet, path, nil, "", "")
		return code, data
	}
	for _, path := range []string{"/healthz", "/livez", "/readyz", "/readyz/ping", "/livez/etcd"} {
		t.Run(path, func(t *testing.T) {
			code, data := get(t, path)
			if code != http.StatusOK || string(data) != "ok" {
				t.Errorf("%d %q, want 200 ok", code, data)
			}
		})
	}
	t.Run("/readyz?verbose", func(t *testing.T) {
		code, data := get(t, "/readyz?verbose")
		if code != http.StatusOK || !strings.Contains(string(data), "[+]ping ok\n") || !strings.Contains(string(data), "[+]etcd ok\n") ||
			!strings.HasSuffix(string(data), "readyz check passed\n") {
			t.Errorf("%d %q", code, data)
		}
	})
	t.Run("/version", func(t *testing.T) {
		code, data := get(t, "/version")
		var v struct {
			Major, Minor, GitVersion, Platform string
		}
		json.Unmarshal(data, &v)
		// The Kubernetes release is the one of the k8s.io/api skiff is
		// built on: v0.X.Y in go.mod is Kubernetes v1.X.Y.
		mod, err := os.ReadFile("../../go.mod")
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^\s*k8s\.io/api v0\.(\d+)\.(\d+)\s*$`).FindStringSubmatch(string(mod))
		if m == nil {
			t.Fatal("no k8s.io/api requirement in go.mod")
		}
		want := "v1." + m[1] + "." + m[2]
		if code != http.StatusOK || v.GitVersion != want || v.Major != "1" || v.Minor != m[1] || v.Platform == "" {
			t.Errorf("%d %s, want gitVersion %s", code, data, want)
		}
	})
	for _, path := range []string{"/api", "/apis", "/api/v1/namespaces", "/metrics", "/openapi/v2", "/nothing"} {
		t.Run("anonymous "+path, func(t *testing.T) {
			code, data := get(t, path)
			expectStatus(t, code, data, http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "Unauthorized")
		})
	}
}

// /metrics exposes upstream's core API server metrics.
func TestSemanticsMetrics(t *testing.T) {
	c := start(t)
	c.call(http.MethodGet, "/api/v1/namespaces", nil, http.StatusOK, nil)
	// An open watch shows in the watch gauges.
	resp, err := c.hc.Get(c.env.URL + "/api/v1/namespaces/default/configmaps?watch=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	want := []*regexp.Regexp{
		regexp.MustCompile(`(?m)^apiserver_registered_watchers\{group="",kind="ConfigMap",version="v1"\} 1$`),
		regexp.MustCompile(`(?m)^apiserver_longrunning_requests\{[^}]*resource="configmaps"[^}]*verb="WATCH"[^}]*\} 1$`),
		regexp.MustCompile(`(?m)^apiserver_request_total\{[^}]*resource="namespaces"[^}]*verb="LIST"[^}]*\} [1-9]`),
		regexp.MustCompile(`(?m)^apiserver_request_duration_seconds_bucket\{`),
		// Refreshed periodically (as upstream, every minute), so only its
		// presence is checked.
		regexp.MustCompile(`(?m)^apiserver_storage_objects\{resource="namespaces"\} [0-9]+`),
	}
	var text string
	eventually(t, "the metrics to be exported", func() bool {
		code, _, data := c.do(http.MethodGet, "/metrics", nil, "", "")
		if code != http.StatusOK {
			t.Fatalf("status %d", code)
		}
		text = string(data)
		for _, re := range want {
			if !re.MatchString(text) {
				return false
			}
		}
		return true
	})
}
