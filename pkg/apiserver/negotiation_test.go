package apiserver_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// A metadata-only watch (client-go's metadata informer, used by upstream's
// garbage collector and quota controller) lists protobuf first and gets
// protobuf frames of PartialObjectMetadata, as from upstream; a client
// that lists only JSON forms gets JSON, and negotiation falls through the
// Accept list as a list's does.
func TestWatchNegotiatesThroughAcceptList(t *testing.T) {
	c := start(t)
	ns := c.namespace("negotiate")
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("a", nil, nil), http.StatusCreated, nil)
	const metadataAccept = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1," +
		"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
	const protobufWatch = "application/vnd.kubernetes.protobuf;stream=watch"
	tests := []struct {
		name, accept string
		want         int
		contentType  string
		contains     string
	}{
		{"metadata informer", metadataAccept, http.StatusOK, protobufWatch, "PartialObjectMetadata"},
		{"metadata, JSON only", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json", http.StatusOK, "application/json", `"kind":"PartialObjectMetadata"`},
		{"yaml then json", "application/yaml,application/json", http.StatusOK, "application/json", `"kind":"ConfigMap"`},
		{"only yaml", "application/yaml", http.StatusNotAcceptable, "", ""},
		{"protobuf table", "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1", http.StatusNotAcceptable, "", ""},
		{"only protobuf metadata", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", http.StatusOK, protobufWatch, "PartialObjectMetadata"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, hdr, body := c.on(t).do(http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps?watch=true&timeoutSeconds=1&resourceVersion=0", nil, "", tt.accept)
			if code != tt.want {
				t.Fatalf("status %d, want %d: %s", code, tt.want, body)
			}
			if tt.want != http.StatusOK {
				return
			}
			if !strings.Contains(string(body), tt.contains) || hdr.Get("Content-Type") != tt.contentType {
				t.Errorf("content type %q, body %q; want %s with %s", hdr.Get("Content-Type"), body, tt.contentType, tt.contains)
			}
			if tt.contentType == protobufWatch && strings.Contains(string(body), `"kind"`) {
				t.Errorf("protobuf watch carries JSON: %q", body)
			}
		})
	}
	// The same list works, as it did.
	code, _, body := c.do(http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps", nil, "",
		"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json")
	if code != http.StatusOK {
		t.Fatalf("metadata list: %d %s", code, body)
	}
}

// A continue token whose revision was compacted away answers 410 with a
// token that continues the list from the same key at the latest revision
// (upstream's inconsistent continuation): every remaining object comes
// once, those changed meanwhile in their new state.
func TestInconsistentContinueAfterCompaction(t *testing.T) {
	c := start(t)
	ns := c.namespace("paging")
	const total = 40
	for i := 0; i < total; i++ {
		c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap(fmt.Sprintf("cm-%02d", i), nil, nil), http.StatusCreated, nil)
	}
	type list struct {
		Metadata metav1.ListMeta `json:"metadata"`
		Items    []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"items"`
	}
	base := "/api/v1/namespaces/" + ns + "/configmaps?limit=10"
	var first list
	c.call(http.MethodGet, base, nil, http.StatusOK, &first)
	if len(first.Items) != 10 || first.Metadata.Continue == "" {
		t.Fatalf("first page: %d items, continue %q", len(first.Items), first.Metadata.Continue)
	}
	// Change something after the first page, then compact the history.
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("cm-99", nil, nil), http.StatusCreated, nil)
	if _, err := c.env.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	code, _, body := c.do(http.MethodGet, base+"&continue="+first.Metadata.Continue, nil, "", "")
	st := expectStatus(t, code, body, http.StatusGone, metav1.StatusReasonExpired, "")
	if st.ListMeta.Continue == "" {
		t.Fatalf("410 without an inconsistent continue token: %s", body)
	}
	seen := map[string]int{}
	for _, it := range first.Items {
		seen[it.Metadata.Name]++
	}
	token := st.ListMeta.Continue
	for pages := 0; token != ""; pages++ {
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		var page list
		c.call(http.MethodGet, base+"&continue="+token, nil, http.StatusOK, &page)
		for _, it := range page.Items {
			seen[it.Metadata.Name]++
		}
		token = page.Metadata.Continue
	}
	want := total + 1 // + cm-99
	if len(seen) != want {
		t.Errorf("%d distinct objects, want %d", len(seen), want)
	}
	for name, n := range seen {
		if n != 1 {
			t.Errorf("%s listed %d times", name, n)
		}
	}
}

// With Profiling (upstream's --profiling) Go's profiles are served under
// /debug/pprof/; without it the path is unknown.
func TestProfilingEndpoint(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprint("profiling=", on), func(t *testing.T) {
			c := start(t, testenv.Config{Tweak: func(cfg *apiserver.Config) { cfg.Profiling = on }})
			code, _, body := c.do(http.MethodGet, "/debug/pprof/", nil, "", "")
			switch {
			case on && (code != http.StatusOK || !strings.Contains(string(body), "goroutine")):
				t.Errorf("index: %d %.200s", code, body)
			case !on && code != http.StatusNotFound:
				t.Errorf("without profiling: %d %s", code, body)
			}
			if on {
				if code, _, body := c.do(http.MethodGet, "/debug/pprof/heap?debug=1", nil, "", ""); code != http.StatusOK || !strings.Contains(string(body), "heap profile") {
					t.Errorf("heap: %d %.200s", code, body)
				}
			}
		})
	}
}
