package openapi

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	openapiv3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func testResources() []Resource {
	status := Subresource{Name: "status", Verbs: []string{"get", "update", "patch"}}
	scale := Subresource{Name: "scale", Object: &autoscalingv1.Scale{}, Verbs: []string{"get", "update", "patch"}}
	r := func(g, v, res, kind string, ns bool, o, l runtime.Object, subs ...Subresource) Resource {
		return Resource{Group: g, Version: v, Resource: res, Kind: kind, Namespaced: ns, Verbs: allVerbs, Object: o, List: l, Subresources: subs}
	}
	pods := r("", "v1", "pods", "Pod", true, &corev1.Pod{}, &corev1.PodList{}, status,
		Subresource{Name: "binding", Object: &corev1.Binding{}, Verbs: []string{"create"}},
		Subresource{Name: "eviction", Object: &policyv1.Eviction{}, Verbs: []string{"create"}},
		Subresource{Name: "ephemeralcontainers", Verbs: []string{"get", "update", "patch"}})
	pods.DeleteReturnsObject = true
	namespaces := r("", "v1", "namespaces", "Namespace", false, &corev1.Namespace{}, &corev1.NamespaceList{}, status,
		Subresource{Name: "finalize", Verbs: []string{"update"}})
	namespaces.Verbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	return []Resource{
		pods, namespaces,
		r("", "v1", "configmaps", "ConfigMap", true, &corev1.ConfigMap{}, &corev1.ConfigMapList{}),
		r("", "v1", "events", "Event", true, &corev1.Event{}, &corev1.EventList{}),
		r("", "v1", "services", "Service", true, &corev1.Service{}, &corev1.ServiceList{}, status),
		r("", "v1", "nodes", "Node", false, &corev1.Node{}, &corev1.NodeList{}, status),
		r("apps", "v1", "deployments", "Deployment", true, &appsv1.Deployment{}, &appsv1.DeploymentList{}, status, scale),
		r("apps", "v1", "statefulsets", "StatefulSet", true, &appsv1.StatefulSet{}, &appsv1.StatefulSetList{}, status, scale),
		r("batch", "v1", "jobs", "Job", true, &batchv1.Job{}, &batchv1.JobList{}, status),
	}
}

func newTestHandler(t *testing.T) *Handler {
	t.Helper()
	h, err := New(Info{Title: "Kubernetes", Version: "v1.37.2"}, testResources())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func get(t *testing.T, h http.Handler, target string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

type doc = map[string]any

func decode(t *testing.T, b []byte) doc {
	t.Helper()
	var d doc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("decode: %v\n%.300s", err, b)
	}
	return d
}

// at walks a decoded document along keys (map keys or array indexes).
func at(t *testing.T, v any, keys ...any) any {
	t.Helper()
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: not an object: %.200v", keys, v)
			}
			if v, ok = m[k]; !ok {
				t.Fatalf("at %v: no key %q", keys, k)
			}
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("at %v: no index %d in %.200v", keys, k, v)
			}
			v = a[k]
		}
	}
	return v
}

func v3Doc(t *testing.T, h http.Handler, key string) doc {
	t.Helper()
	rec := get(t, h, "/openapi/v3/"+key)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", key, rec.Code, rec.Body)
	}
	return decode(t, rec.Body.Bytes())
}

func TestV3Index(t *testing.T) {
	h := newTestHandler(t)
	rec := get(t, h, "/openapi/v3")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("index: %d %v", rec.Code, rec.Header())
	}
	idx := decode(t, rec.Body.Bytes())
	paths := at(t, idx, "paths").(map[string]any)
	var keys []string
	for k := range paths {
		keys = append(keys, k)
	}
	if want := []string{"api/v1", "apis/apps/v1", "apis/batch/v1"}; len(keys) != len(want) {
		t.Fatalf("index paths %v, want %v", keys, want)
	}
	for _, k := range []string{"api/v1", "apis/apps/v1", "apis/batch/v1"} {
		u := at(t, paths, k, "serverRelativeURL").(string)
		if !strings.HasPrefix(u, "/openapi/v3/"+k+"?hash=") {
			t.Fatalf("%s: serverRelativeURL %q", k, u)
		}
		// The URL serves the document with immutable caching; the hash is its ETag.
		rec := get(t, h, u)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d", u, rec.Code)
		}
		hash := strings.TrimPrefix(u, "/openapi/v3/"+k+"?hash=")
		if got := rec.Header().Get("Etag"); got != `"`+hash+`"` {
			t.Errorf("%s: Etag %s, want hash %s", u, got, hash)
		}
		if cc := rec.Header().Get("Cache-Control"); cc != "public, immutable" {
			t.Errorf("%s: Cache-Control %q", u, cc)
		}
		if rec.Header().Get("Expires") == "" {
			t.Errorf("%s: no Expires", u)
		}
	}
}

func TestV3HashRedirectAndConditional(t *testing.T) {
	h := newTestHandler(t)
	rec := get(t, h, "/openapi/v3/apis/apps/v1?hash=0123")
	if rec.Code != http.StatusMovedPermanently {
		t.Fatalf("stale hash: %d", rec.Code)
	}
	loc, err := url.Parse(rec.Header().Get("Location"))
	if err != nil || loc.Path != "/openapi/v3/apis/apps/v1" || loc.Query().Get("hash") == "" {
		t.Fatalf("redirect to %q", rec.Header().Get("Location"))
	}
	ok := get(t, h, "/openapi/v3/apis/apps/v1")
	if cc := ok.Header().Get("Cache-Control"); strings.Contains(cc, "immutable") {
		t.Errorf("no hash: Cache-Control %q", cc)
	}
	etag := ok.Header().Get("Etag")
	if etag != `"`+loc.Query().Get("hash")+`"` {
		t.Errorf("etag %s vs redirect hash %s", etag, loc.Query().Get("hash"))
	}
	if rec := get(t, h, "/openapi/v3/apis/apps/v1", "If-None-Match", etag); rec.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", rec.Code)
	}
	if rec := get(t, h, "/openapi/v3/apis/nope/v1"); rec.Code != http.StatusNotFound {
		t.Errorf("unknown group version: %d", rec.Code)
	}
	if rec := get(t, h, "/openapi/v3/apis/apps/v1", "Accept", "text/html"); rec.Code != http.StatusNotAcceptable {
		t.Errorf("text/html: %d", rec.Code)
	}
	req := httptest.NewRequest(http.MethodPost, "/openapi/v2", nil)
	rw := httptest.NewRecorder()
	h.ServeHTTP(rw, req)
	if rw.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", rw.Code)
	}
}

func TestPodSchema(t *testing.T) {
	h := newTestHandler(t)
	d := v3Doc(t, h, "api/v1")
	if d["openapi"] != "3.0.0" || at(t, d, "info", "title") != "Kubernetes" || at(t, d, "info", "version") != "v1.37.2" {
		t.Fatalf("header: %v %v", d["openapi"], d["info"])
	}
	schemas := at(t, d, "components", "schemas")
	pod := at(t, schemas, "io.k8s.api.core.v1.Pod")
	if got := at(t, pod, "x-kubernetes-group-version-kind"); !reflect.DeepEqual(got, []any{map[string]any{"group": "", "version": "v1", "kind": "Pod"}}) {
		t.Errorf("Pod GVK %v", got)
	}
	if !strings.HasPrefix(at(t, pod, "description").(string), "Pod is a collection of containers") {
		t.Errorf("Pod description %q", at(t, pod, "description"))
	}
	if got := at(t, pod, "properties", "spec", "allOf", 0, "$ref"); got != "#/components/schemas/io.k8s.api.core.v1.PodSpec" {
		t.Errorf("spec ref %v", got)
	}
	if got := at(t, pod, "properties", "metadata", "default"); !reflect.DeepEqual(got, map[string]any{}) {
		t.Errorf("metadata default %v", got)
	}
	spec := at(t, schemas, "io.k8s.api.core.v1.PodSpec")
	containers := at(t, spec, "properties", "containers")
	if !strings.HasPrefix(at(t, containers, "description").(string), "List of containers belonging to the pod.") {
		t.Errorf("containers description %q", at(t, containers, "description"))
	}
	if at(t, containers, "type") != "array" || at(t, containers, "items", "allOf", 0, "$ref") != "#/components/schemas/io.k8s.api.core.v1.Container" {
		t.Errorf("containers %v", containers)
	}
	for k, want := range map[string]any{
		"x-kubernetes-list-type":       "map",
		"x-kubernetes-list-map-keys":   []any{"name"},
		"x-kubernetes-patch-strategy":  "merge",
		"x-kubernetes-patch-merge-key": "name",
	} {
		if got := at(t, containers, k); !reflect.DeepEqual(got, want) {
			t.Errorf("containers %s = %v, want %v", k, got, want)
		}
	}
	if req := at(t, spec, "required"); !contains(req, "containers") {
		t.Errorf("PodSpec required %v", req)
	}
	container := at(t, schemas, "io.k8s.api.core.v1.Container")
	if req := at(t, container, "required"); !reflect.DeepEqual(req, []any{"name"}) {
		t.Errorf("Container required %v", req)
	}
	ports := at(t, container, "properties", "ports")
	if got := at(t, ports, "x-kubernetes-list-map-keys"); !reflect.DeepEqual(got, []any{"containerPort", "protocol"}) {
		t.Errorf("ports list-map-keys %v", got)
	}
	pull := at(t, container, "properties", "imagePullPolicy")
	if got := at(t, pull, "enum"); !reflect.DeepEqual(got, []any{"Always", "IfNotPresent", "Never"}) {
		t.Errorf("imagePullPolicy enum %v", got)
	}
	if !strings.Contains(at(t, pull, "description").(string), "\n\nPossible enum values:\n - `\"Always\"` means") {
		t.Errorf("imagePullPolicy description %q", at(t, pull, "description"))
	}
	if got := at(t, schemas, "io.k8s.api.core.v1.ContainerPort", "properties", "protocol", "default"); got != "TCP" {
		t.Errorf("ContainerPort.protocol default %v", got)
	}
	if got := at(t, container, "properties", "name", "default"); got != "" {
		t.Errorf("name default %v", got)
	}
	// Kinds referenced from elsewhere carry their GVK too; meta kinds list every served group version.
	appsSchemas := at(t, v3Doc(t, h, "apis/apps/v1"), "components", "schemas")
	if got := at(t, appsSchemas, "io.k8s.api.autoscaling.v1.Scale", "x-kubernetes-group-version-kind"); !reflect.DeepEqual(got, []any{map[string]any{"group": "autoscaling", "version": "v1", "kind": "Scale"}}) {
		t.Errorf("Scale GVK %v", got)
	}
	if got := at(t, schemas, "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions", "x-kubernetes-group-version-kind"); len(got.([]any)) != 3 {
		t.Errorf("DeleteOptions GVK %v", got)
	}
	// Every referenced schema is present.
	raw, _ := json.Marshal(d)
	for _, m := range regexpRefs(string(raw)) {
		if _, ok := schemas.(map[string]any)[m]; !ok {
			t.Errorf("dangling $ref %s", m)
		}
	}
}

func regexpRefs(s string) []string {
	var out []string
	for _, part := range strings.Split(s, `"$ref":"#/components/schemas/`)[1:] {
		out = append(out, part[:strings.IndexByte(part, '"')])
	}
	return out
}

func contains(list any, s string) bool {
	l, _ := list.([]any)
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

func TestSpecialTypes(t *testing.T) {
	h := newTestHandler(t)
	s3 := at(t, v3Doc(t, h, "api/v1"), "components", "schemas")
	rec := get(t, h, "/openapi/v2")
	if rec.Code != http.StatusOK {
		t.Fatalf("v2: %d", rec.Code)
	}
	v2 := decode(t, rec.Body.Bytes())
	if v2["swagger"] != "2.0" {
		t.Fatalf("swagger %v", v2["swagger"])
	}
	s2 := at(t, v2, "definitions")
	q3 := at(t, s3, "io.k8s.apimachinery.pkg.api.resource.Quantity").(map[string]any)
	if !reflect.DeepEqual(q3["oneOf"], []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}) || q3["type"] != nil {
		t.Errorf("v3 Quantity %v", q3)
	}
	if !strings.HasPrefix(q3["description"].(string), "Quantity is a fixed-point representation of a number.") {
		t.Errorf("Quantity description %q", q3["description"])
	}
	q2 := at(t, s2, "io.k8s.apimachinery.pkg.api.resource.Quantity").(map[string]any)
	if q2["type"] != "string" || q2["oneOf"] != nil {
		t.Errorf("v2 Quantity %v", q2)
	}
	i3 := at(t, s3, "io.k8s.apimachinery.pkg.util.intstr.IntOrString").(map[string]any)
	if i3["format"] != "int-or-string" || !reflect.DeepEqual(i3["oneOf"], []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}) {
		t.Errorf("v3 IntOrString %v", i3)
	}
	i2 := at(t, s2, "io.k8s.apimachinery.pkg.util.intstr.IntOrString").(map[string]any)
	if i2["format"] != "int-or-string" || i2["type"] != "string" {
		t.Errorf("v2 IntOrString %v", i2)
	}
	for _, n := range []string{"Time", "MicroTime"} {
		tm := at(t, s3, "io.k8s.apimachinery.pkg.apis.meta.v1."+n).(map[string]any)
		if tm["type"] != "string" || tm["format"] != "date-time" {
			t.Errorf("%s %v", n, tm)
		}
	}
	if raw := at(t, s3, "io.k8s.apimachinery.pkg.runtime.RawExtension").(map[string]any); raw["type"] != "object" || raw["properties"] != nil {
		t.Errorf("RawExtension %v", raw)
	}
	// Uses of custom-unmarshalling types carry no default.
	ct := at(t, s3, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "properties", "creationTimestamp").(map[string]any)
	if _, ok := ct["default"]; ok {
		t.Errorf("creationTimestamp %v", ct)
	}
	// v2: plain $ref with sibling description, and no defaults at all.
	spec2 := at(t, s2, "io.k8s.api.core.v1.Pod", "properties", "spec").(map[string]any)
	if spec2["$ref"] != "#/definitions/io.k8s.api.core.v1.PodSpec" || spec2["description"] == nil {
		t.Errorf("v2 Pod.spec %v", spec2)
	}
	if strings.Contains(rec.Body.String(), `"default":`) {
		t.Errorf("v2 document has defaults")
	}
	if got := at(t, s2, "io.k8s.api.apps.v1.Deployment", "x-kubernetes-group-version-kind"); !reflect.DeepEqual(got, []any{map[string]any{"group": "apps", "version": "v1", "kind": "Deployment"}}) {
		t.Errorf("v2 Deployment GVK %v", got)
	}
}

// TestPatchOperations checks what kubectl's query parameter verifier needs:
// every PATCH operation of a kind lists fieldValidation (and the other
// write options) among its own parameters.
func TestPatchOperations(t *testing.T) {
	h := newTestHandler(t)
	for _, key := range []string{"api/v1", "apis/apps/v1", "apis/batch/v1"} {
		d := v3Doc(t, h, key)
		n := 0
		for path, item := range at(t, d, "paths").(map[string]any) {
			for method, op := range item.(map[string]any) {
				if method == "parameters" {
					continue
				}
				o := op.(map[string]any)
				if o["operationId"] == nil || o["description"] == nil || o["responses"] == nil {
					t.Errorf("%s %s: incomplete operation %v", method, path, o)
				}
				if method != "patch" {
					continue
				}
				n++
				if o["x-kubernetes-action"] != "patch" || o["x-kubernetes-group-version-kind"] == nil {
					t.Errorf("%s: extensions %v %v", path, o["x-kubernetes-action"], o["x-kubernetes-group-version-kind"])
				}
				var names []string
				for _, p := range o["parameters"].([]any) {
					names = append(names, p.(map[string]any)["name"].(string))
				}
				if !reflect.DeepEqual(names, []string{"dryRun", "fieldManager", "fieldValidation", "force"}) {
					t.Errorf("%s PATCH parameters %v", path, names)
				}
				content := at(t, o, "requestBody", "content").(map[string]any)
				if _, ok := content["application/strategic-merge-patch+json"]; !ok {
					t.Errorf("%s PATCH content types %v", path, content)
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no PATCH operations", key)
		}
	}

	d := v3Doc(t, h, "api/v1")
	item := at(t, d, "paths", "/api/v1/namespaces/{namespace}/pods/{name}")
	if got := at(t, item, "patch", "operationId"); got != "patchCoreV1NamespacedPod" {
		t.Errorf("operationId %v", got)
	}
	if got := at(t, item, "delete", "responses", "200", "content", "application/json", "schema", "$ref"); got != "#/components/schemas/io.k8s.api.core.v1.Pod" {
		t.Errorf("pod delete returns %v", got)
	}
	var common []string
	for _, p := range at(t, item, "parameters").([]any) {
		common = append(common, p.(map[string]any)["name"].(string))
	}
	if !reflect.DeepEqual(common, []string{"name", "namespace", "pretty"}) {
		t.Errorf("path parameters %v", common)
	}
	binding := at(t, d, "paths", "/api/v1/namespaces/{namespace}/pods/{name}/binding")
	if got := at(t, binding, "post", "x-kubernetes-group-version-kind"); !reflect.DeepEqual(got, map[string]any{"group": "", "version": "v1", "kind": "Binding"}) {
		t.Errorf("binding GVK %v", got)
	}
	if got := at(t, binding, "post", "description"); got != "create binding of a Pod" {
		t.Errorf("binding description %v", got)
	}
	eviction := at(t, d, "paths", "/api/v1/namespaces/{namespace}/pods/{name}/eviction", "post")
	if got := at(t, eviction, "x-kubernetes-group-version-kind", "group"); got != "policy" {
		t.Errorf("eviction group %v", got)
	}
	if got := at(t, d, "paths", "/api/v1/pods", "get", "operationId"); got != "listCoreV1PodForAllNamespaces" {
		t.Errorf("all namespaces list %v", got)
	}
	if got := at(t, d, "paths", "/api/v1/namespaces/{name}/finalize", "put", "operationId"); got != "replaceCoreV1NamespaceFinalize" {
		t.Errorf("finalize %v", got)
	}
	apps := v3Doc(t, h, "apis/apps/v1")
	scale := at(t, apps, "paths", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale")
	if got := at(t, scale, "get", "operationId"); got != "readAppsV1NamespacedDeploymentScale" {
		t.Errorf("scale operationId %v", got)
	}
	if got := at(t, scale, "put", "x-kubernetes-group-version-kind", "kind"); got != "Scale" {
		t.Errorf("scale GVK kind %v", got)
	}
	list := at(t, apps, "paths", "/apis/apps/v1/namespaces/{namespace}/deployments", "get")
	if got := at(t, list, "tags"); !reflect.DeepEqual(got, []any{"apps_v1"}) {
		t.Errorf("tags %v", got)
	}
	if _, ok := at(t, list, "responses", "200", "content").(map[string]any)["application/json;stream=watch"]; !ok {
		t.Errorf("list lacks watch content type")
	}
}

func TestV2Protobuf(t *testing.T) {
	h := newTestHandler(t)
	rec := get(t, h, "/openapi/v2", "Accept", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
	if rec.Code != http.StatusOK {
		t.Fatalf("v2 protobuf: %d %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/com.github.proto-openapi.spec.v2.v1.0+protobuf" {
		t.Errorf("Content-Type %q", ct)
	}
	var d openapiv2.Document
	if err := proto.Unmarshal(rec.Body.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if d.Swagger != "2.0" || d.Info.GetTitle() != "Kubernetes" {
		t.Errorf("header %q %v", d.Swagger, d.Info)
	}
	found := false
	for _, nd := range d.GetDefinitions().GetAdditionalProperties() {
		if nd.Name != "io.k8s.api.core.v1.PodSpec" {
			continue
		}
		found = true
		for _, p := range nd.Value.GetProperties().GetAdditionalProperties() {
			if p.Name == "containers" && !strings.HasPrefix(p.Value.Description, "List of containers") {
				t.Errorf("containers description %q", p.Value.Description)
			}
		}
	}
	if !found {
		t.Error("no PodSpec definition")
	}
	hasPatch := false
	for _, p := range d.GetPaths().GetPath() {
		if p.Name == "/api/v1/namespaces/{namespace}/pods/{name}" && p.Value.Patch != nil {
			hasPatch = true
		}
	}
	if !hasPatch {
		t.Error("no pod patch operation")
	}
	// Same ETag as the JSON form; conditional requests work on both.
	js := get(t, h, "/openapi/v2")
	if js.Header().Get("Etag") != rec.Header().Get("Etag") || js.Header().Get("Etag") == "" {
		t.Errorf("etags %q %q", js.Header().Get("Etag"), rec.Header().Get("Etag"))
	}
	if r := get(t, h, "/openapi/v2", "Accept", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf", "If-None-Match", js.Header().Get("Etag")); r.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", r.Code)
	}
}

func TestV3Protobuf(t *testing.T) {
	h := newTestHandler(t)
	rec := get(t, h, "/openapi/v3/apis/apps/v1", "Accept", "application/com.github.proto-openapi.spec.v3@v1.0+protobuf")
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	var d openapiv3.Document
	if err := proto.Unmarshal(rec.Body.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if d.Openapi != "3.0.0" || len(d.GetComponents().GetSchemas().GetAdditionalProperties()) == 0 {
		t.Errorf("v3 protobuf document %q", d.Openapi)
	}
}

func TestGzip(t *testing.T) {
	h := newTestHandler(t)
	plain := get(t, h, "/openapi/v3/api/v1")
	zipped := get(t, h, "/openapi/v3/api/v1", "Accept-Encoding", "gzip")
	if zipped.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("no gzip: %v", zipped.Header())
	}
	zr, err := gzip.NewReader(zipped.Body)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, plain.Body.Bytes()) {
		t.Error("gzip body differs")
	}
	if zipped.Body.Len() >= plain.Body.Len()/3 {
		t.Errorf("gzip %d vs %d bytes", zipped.Body.Len(), plain.Body.Len())
	}
}

func TestUpdate(t *testing.T) {
	h := newTestHandler(t)
	before := decode(t, get(t, h, "/openapi/v3").Body.Bytes())
	oldURL := at(t, before, "paths", "api/v1", "serverRelativeURL").(string)

	res := testResources()
	res = append(res, Resource{Group: "stable.example.com", Version: "v1", Resource: "crontabs", Kind: "CronTab", Namespaced: true,
		Verbs: allVerbs,
		Schema: map[string]any{
			"type":        "object",
			"description": "A cron tab.",
			"properties": map[string]any{
				"spec": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"cronSpec": map[string]any{"type": "string", "description": "the schedule", "nullable": true},
						"replicas": map[string]any{"x-kubernetes-int-or-string": true, "anyOf": []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}},
					},
				},
			},
		},
		Subresources: []Subresource{
			{Name: "status", Verbs: []string{"get", "update", "patch"}},
			{Name: "scale", Object: &autoscalingv1.Scale{}, Verbs: []string{"get", "update", "patch"}},
		},
	}, Resource{Group: "stable.example.com", Version: "v1", Resource: "anythings", Kind: "Anything", Namespaced: true,
		Verbs:  allVerbs,
		Schema: map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
	})
	if err := h.Update(res); err != nil {
		t.Fatal(err)
	}
	after := decode(t, get(t, h, "/openapi/v3").Body.Bytes())
	newURL := at(t, after, "paths", "api/v1", "serverRelativeURL").(string)
	if newURL == oldURL {
		// api/v1 did not change, but the meta kinds' GVK lists did.
		t.Errorf("api/v1 hash unchanged after a group was added")
	}
	if rec := get(t, h, oldURL); rec.Code != http.StatusMovedPermanently {
		t.Errorf("old URL: %d", rec.Code)
	}
	d := v3Doc(t, h, "apis/stable.example.com/v1")
	schemas := at(t, d, "components", "schemas")
	ct := at(t, schemas, "com.example.stable.v1.CronTab")
	if got := at(t, ct, "x-kubernetes-group-version-kind"); !reflect.DeepEqual(got, []any{map[string]any{"group": "stable.example.com", "version": "v1", "kind": "CronTab"}}) {
		t.Errorf("CronTab GVK %v", got)
	}
	if got := at(t, ct, "properties", "metadata", "allOf", 0, "$ref"); got != "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" {
		t.Errorf("CronTab metadata %v", got)
	}
	at(t, schemas, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
	if got := at(t, schemas, "com.example.stable.v1.CronTabList", "properties", "items", "items", "$ref"); got != "#/components/schemas/com.example.stable.v1.CronTab" {
		t.Errorf("CronTabList items %v", got)
	}
	patch := at(t, d, "paths", "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}", "patch")
	if got := at(t, patch, "operationId"); got != "patchStableExampleComV1NamespacedCronTab" {
		t.Errorf("operationId %v", got)
	}
	if _, smp := at(t, patch, "requestBody", "content").(map[string]any)["application/strategic-merge-patch+json"]; smp {
		t.Error("custom resource PATCH offers strategic merge patch")
	}
	// v2: the literal schema loses what v2 cannot say.
	v2 := decode(t, get(t, h, "/openapi/v2").Body.Bytes())
	spec := at(t, v2, "definitions", "com.example.stable.v1.CronTab", "properties", "spec", "properties").(map[string]any)
	if _, ok := spec["cronSpec"].(map[string]any)["nullable"]; ok {
		t.Error("v2 keeps nullable")
	}
	if _, ok := spec["replicas"].(map[string]any)["anyOf"]; ok {
		t.Error("v2 keeps anyOf")
	}
	if _, ok := spec["cronSpec"].(map[string]any)["type"]; ok {
		t.Error("v2 keeps a nullable field's type (upstream drops it for kubectl)")
	}
	// A schema preserving unknown fields at its root is only an object in
	// v2 (upstream's form: kubectl then accepts any field); v3 keeps it all.
	anything := at(t, v2, "definitions", "com.example.stable.v1.Anything").(map[string]any)
	delete(anything, "x-kubernetes-group-version-kind")
	if !reflect.DeepEqual(anything, map[string]any{"type": "object"}) {
		t.Errorf("v2 Anything = %v, want only type object", anything)
	}
	if got := at(t, v3Doc(t, h, "apis/stable.example.com/v1"), "components", "schemas", "com.example.stable.v1.Anything", "x-kubernetes-preserve-unknown-fields"); got != true {
		t.Errorf("v3 Anything preserve-unknown-fields = %v", got)
	}
	if got := at(t, v2, "definitions", "com.example.stable.v1.CronTab", "properties", "metadata", "allOf", 0, "$ref"); got != "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" {
		t.Errorf("v2 metadata ref %v", got)
	}

	// A failed update leaves the served documents alone.
	if err := h.Update([]Resource{{Version: "v1", Resource: "pods", Kind: "Pod"}}); err == nil {
		t.Error("Update accepted a resource without Object")
	}
	if rec := get(t, h, "/openapi/v3/apis/stable.example.com/v1"); rec.Code != http.StatusOK {
		t.Errorf("after failed update: %d", rec.Code)
	}
}

func TestInvalidResources(t *testing.T) {
	for name, r := range map[string]Resource{
		"no kind":       {Version: "v1", Resource: "pods", Object: &corev1.Pod{}},
		"no object":     {Version: "v1", Resource: "pods", Kind: "Pod"},
		"bad verb":      {Version: "v1", Resource: "pods", Kind: "Pod", Object: &corev1.Pod{}, Verbs: []string{"frobnicate"}},
		"list, no List": {Version: "v1", Resource: "pods", Kind: "Pod", Object: &corev1.Pod{}, Verbs: []string{"list"}},
		"unnamed sub":   {Version: "v1", Resource: "pods", Kind: "Pod", Object: &corev1.Pod{}, Subresources: []Subresource{{}}},
		"unknown kind":  {Version: "v1", Resource: "pods", Kind: "Pod", Object: &corev1.Pod{}, Subresources: []Subresource{{Name: "x", Object: &struct{ runtime.Object }{}, Verbs: []string{"get"}}}},
	} {
		if _, err := New(Info{}, []Resource{r}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	pods := Resource{Version: "v1", Resource: "pods", Kind: "Pod", Object: &corev1.Pod{}, List: &corev1.PodList{}, Verbs: allVerbs}
	if _, err := New(Info{}, []Resource{pods, pods}); err == nil {
		t.Error("duplicate resource: no error")
	}
}

func TestConcurrentServeAndUpdate(t *testing.T) {
	h := newTestHandler(t)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 5; j++ {
				for _, p := range []string{"/openapi/v3", "/openapi/v3/api/v1", "/openapi/v2"} {
					if rec := get(t, h, p); rec.Code != http.StatusOK {
						t.Errorf("%s: %d", p, rec.Code)
					}
				}
			}
		}()
	}
	for j := 0; j < 5; j++ {
		if err := h.Update(testResources()); err != nil {
			t.Error(err)
		}
	}
	wg.Wait()
}
