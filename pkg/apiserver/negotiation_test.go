package apiserver_test

import (
	"net/http"
	"strings"
	"testing"
)

// A metadata-only watch (client-go's metadata informer, used by upstream's
// garbage collector and quota controller) lists protobuf first; skiff
// serves JSON for it, so negotiation must fall through to the JSON entry
// as a list's does.
func TestWatchNegotiatesThroughAcceptList(t *testing.T) {
	c := start(t)
	ns := c.namespace("negotiate")
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("a", nil, nil), http.StatusCreated, nil)
	const metadataAccept = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1," +
		"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
	tests := []struct {
		name, accept string
		want         int
		contains     string
	}{
		{"metadata informer", metadataAccept, http.StatusOK, `"kind":"PartialObjectMetadata"`},
		{"yaml then json", "application/yaml,application/json", http.StatusOK, `"kind":"ConfigMap"`},
		{"only yaml", "application/yaml", http.StatusNotAcceptable, ""},
		{"only protobuf metadata", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", http.StatusNotAcceptable, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, hdr, body := c.on(t).do(http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps?watch=true&timeoutSeconds=1&resourceVersion=0", nil, "", tt.accept)
			if code != tt.want {
				t.Fatalf("status %d, want %d: %s", code, tt.want, body)
			}
			if tt.want == http.StatusOK && (!strings.Contains(string(body), tt.contains) || hdr.Get("Content-Type") != "application/json") {
				t.Errorf("content type %q, body %s; want %s", hdr.Get("Content-Type"), body, tt.contains)
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
