package apiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const applyType = "application/apply-patch+yaml"

// managers summarizes managedFields as "manager/operation[/subresource]:fields".
func managers(t testing.TB, md metav1.ObjectMeta) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range md.ManagedFields {
		k := f.Manager + "/" + string(f.Operation)
		if f.Subresource != "" {
			k += "/" + f.Subresource
		}
		if f.Time == nil || f.FieldsType != "FieldsV1" || f.FieldsV1 == nil {
			t.Errorf("entry %s: time %v, fieldsType %q", k, f.Time, f.FieldsType)
			continue
		}
		out[k] = string(f.FieldsV1.Raw)
	}
	return out
}

func (c *client) apply(path, manager string, force bool, body string) (int, []byte) {
	c.t.Helper()
	q := "?fieldManager=" + manager
	if force {
		q += "&force=true"
	}
	return c.patch(path+q, applyType, body)
}

func TestServerSideApply(t *testing.T) {
	c := start(t)
	ns := c.namespace("ssa")
	cms := "/api/v1/namespaces/" + ns + "/configmaps"

	t.Run("apply creates a missing object", func(t *testing.T) {
		c := c.on(t)
		code, data := c.apply(cms+"/cm", "mgr-a", false, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: one\n  b: two\n")
		if code != http.StatusCreated {
			t.Fatalf("apply: %d %s", code, data)
		}
		got := managers(t, metaOf(t, data))
		want := `{"f:data":{"f:a":{},"f:b":{}}}`
		if len(got) != 1 || got["mgr-a/Apply"] != want {
			t.Errorf("managedFields %v, want mgr-a/Apply %s", got, want)
		}
		if mf := metaOf(t, data).ManagedFields[0]; mf.APIVersion != "v1" {
			t.Errorf("apiVersion %q", mf.APIVersion)
		}
	})
	t.Run("a second manager conflicts", func(t *testing.T) {
		c := c.on(t)
		code, data := c.apply(cms+"/cm", "mgr-b", false, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"a":"changed"}}`)
		st := expectStatus(t, code, data, http.StatusConflict, metav1.StatusReasonConflict,
			`Apply failed with 1 conflict: conflict with "mgr-a": .data.a`)
		if st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != ".data.a" ||
			st.Details.Causes[0].Message != `conflict with "mgr-a"` || st.Details.Causes[0].Type != metav1.CauseTypeFieldManagerConflict {
			t.Errorf("details %+v", st.Details)
		}
	})
	t.Run("two conflicts are listed by manager", func(t *testing.T) {
		c := c.on(t)
		code, data := c.apply(cms+"/cm", "mgr-b", false, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"a":"x","b":"y"}}`)
		expectStatus(t, code, data, http.StatusConflict, metav1.StatusReasonConflict,
			"Apply failed with 2 conflicts: conflicts with \"mgr-a\":\n- .data.a\n- .data.b")
	})
	t.Run("force takes the field over", func(t *testing.T) {
		c := c.on(t)
		code, data := c.apply(cms+"/cm", "mgr-b", true, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"a":"changed"}}`)
		if code != http.StatusOK {
			t.Fatalf("apply: %d %s", code, data)
		}
		var cm corev1.ConfigMap
		if err := json.Unmarshal(data, &cm); err != nil {
			t.Fatal(err)
		}
		if cm.Data["a"] != "changed" || cm.Data["b"] != "two" {
			t.Errorf("data %v", cm.Data)
		}
		got := managers(t, cm.ObjectMeta)
		if got["mgr-a/Apply"] != `{"f:data":{"f:b":{}}}` || got["mgr-b/Apply"] != `{"f:data":{"f:a":{}}}` {
			t.Errorf("managedFields %v", got)
		}
	})
	t.Run("re-applying without a field removes it", func(t *testing.T) {
		c := c.on(t)
		code, data := c.apply(cms+"/cm", "mgr-a", false, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"c":"three"}}`)
		if code != http.StatusOK {
			t.Fatalf("apply: %d %s", code, data)
		}
		var cm corev1.ConfigMap
		_ = json.Unmarshal(data, &cm)
		if _, ok := cm.Data["b"]; ok || cm.Data["c"] != "three" || cm.Data["a"] != "changed" {
			t.Errorf("data %v, want b removed, c added, a kept (owned by mgr-b)", cm.Data)
		}
	})
	t.Run("an update is recorded under the user agent", func(t *testing.T) {
		c := c.on(t)
		code, _, data := c.do(http.MethodGet, cms+"/cm", nil, "", "")
		if code != http.StatusOK {
			t.Fatal(code)
		}
		var cm corev1.ConfigMap
		_ = json.Unmarshal(data, &cm)
		cm.Labels = map[string]string{"edited": "yes"}
		req, _ := http.NewRequest(http.MethodPut, c.env.URL+cms+"/cm", strings.NewReader(mustJSON(t, cm)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "my-controller/v1.2 (linux/amd64)")
		resp, err := c.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(&cm); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("update: %d %v", resp.StatusCode, err)
		}
		got := managers(t, cm.ObjectMeta)
		if got["my-controller/Update"] != `{"f:metadata":{"f:labels":{".":{},"f:edited":{}}}}` {
			t.Errorf("managedFields %v", got)
		}
	})
	t.Run("apply needs a field manager", func(t *testing.T) {
		c := c.on(t)
		code, data := c.patch(cms+"/cm", applyType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"}}`)
		expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
			`PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`)
		code, data = c.patch(cms+"/cm?force=true", "application/merge-patch+json", `{}`)
		expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
			`PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch`)
	})
	t.Run("apply of another version or kind is refused", func(t *testing.T) {
		c := c.on(t)
		code, data := c.apply(cms+"/cm", "mgr-a", false, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"cm"}}`)
		if code != http.StatusBadRequest {
			t.Errorf("apply of a Secret to a configmap: %d %s", code, data)
		}
	})
	t.Run("dry-run apply creates nothing", func(t *testing.T) {
		c := c.on(t)
		code, data := c.patch(cms+"/dry?fieldManager=m&dryRun=All", applyType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dry"},"data":{"a":"b"}}`)
		if code != http.StatusCreated || len(metaOf(t, data).ManagedFields) != 1 {
			t.Fatalf("dry-run apply: %d %s", code, data)
		}
		if code, _, _ := c.do(http.MethodGet, cms+"/dry", nil, "", ""); code != http.StatusNotFound {
			t.Errorf("dry-run apply stored the object: %d", code)
		}
	})
	t.Run("apply-patch+cbor is refused as upstream without CBOR", func(t *testing.T) {
		c := c.on(t)
		code, data := c.patch(cms+"/cm?fieldManager=m", "application/apply-patch+cbor", []byte{0xa0})
		expectStatus(t, code, data, http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType, "")
	})
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

const deploymentApply = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: %s
        image: %s
`

func TestServerSideApplyDeployment(t *testing.T) {
	c := start(t)
	ns := c.namespace("ssa-deploy")
	path := "/apis/apps/v1/namespaces/" + ns + "/deployments/web"
	get := func(t *testing.T) *appsv1.Deployment {
		var d appsv1.Deployment
		c.on(t).call(http.MethodGet, path, nil, http.StatusOK, &d)
		return &d
	}

	t.Run("creates with defaults, owned fields only the applied ones", func(t *testing.T) {
		code, data := c.on(t).apply(path, "alpha", false, fmt.Sprintf(deploymentApply, "a", "nginx:1"))
		if code != http.StatusCreated {
			t.Fatalf("%d %s", code, data)
		}
		d := get(t)
		if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || d.Spec.Template.Spec.Containers[0].ImagePullPolicy == "" {
			t.Errorf("not defaulted: %+v", d.Spec.Strategy)
		}
		mf := managers(t, d.ObjectMeta)["alpha/Apply"]
		if !strings.Contains(mf, `"k:{\"name\":\"a\"}":{".":{},"f:image":{},"f:name":{}}`) || strings.Contains(mf, "f:strategy") {
			t.Errorf("alpha owns %s", mf)
		}
	})
	t.Run("containers merge by name across managers", func(t *testing.T) {
		tmpl := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: sidecar\n        image: busybox:1\n"
		code, data := c.on(t).apply(path, "beta", false, tmpl)
		if code != http.StatusOK {
			t.Fatalf("%d %s", code, data)
		}
		d := get(t)
		if got := containerImages(d); got != "a=nginx:1,sidecar=busybox:1" {
			t.Errorf("containers %s", got)
		}
		// alpha re-applies its own container with a new image: no conflict
		code, data = c.on(t).apply(path, "alpha", false, fmt.Sprintf(deploymentApply, "a", "nginx:2"))
		if code != http.StatusOK {
			t.Fatalf("%d %s", code, data)
		}
		if got := containerImages(get(t)); got != "a=nginx:2,sidecar=busybox:1" {
			t.Errorf("containers %s", got)
		}
		// beta removes its container by applying an empty configuration
		code, data = c.on(t).apply(path, "beta", false, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n")
		if code != http.StatusOK {
			t.Fatalf("%d %s", code, data)
		}
		if got := containerImages(get(t)); got != "a=nginx:2" {
			t.Errorf("containers %s after beta gave up its sidecar", got)
		}
	})
	t.Run("a scale write is owned through the scale subresource", func(t *testing.T) {
		code, data := c.on(t).patch(path+"/scale?fieldManager=scaler", "application/merge-patch+json", `{"spec":{"replicas":5}}`)
		if code != http.StatusOK {
			t.Fatalf("%d %s", code, data)
		}
		d := get(t)
		if got := managers(t, d.ObjectMeta)["scaler/Update/scale"]; got != `{"f:spec":{"f:replicas":{}}}` {
			t.Errorf("scaler owns %q; all: %v", got, managers(t, d.ObjectMeta))
		}
		code, data = c.on(t).apply(path, "alpha", false, fmt.Sprintf(deploymentApply, "a", "nginx:2"))
		expectStatus(t, code, data, http.StatusConflict, metav1.StatusReasonConflict,
			`Apply failed with 1 conflict: conflict with "scaler" with subresource "scale" using apps/v1: .spec.replicas`)
	})
	t.Run("apply through the scale subresource", func(t *testing.T) {
		sc := `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web"},"spec":{"replicas":6}}`
		code, data := c.on(t).apply(path+"/scale", "autoscaler", false, sc)
		expectStatus(t, code, data, http.StatusConflict, metav1.StatusReasonConflict,
			`Apply failed with 1 conflict: conflict with "scaler" with subresource "scale" using autoscaling/v1: .spec.replicas`)
		code, data = c.on(t).apply(path+"/scale", "autoscaler", true, sc)
		if code != http.StatusOK || !strings.Contains(string(data), `"kind":"Scale"`) || !strings.Contains(string(data), `"replicas":6`) {
			t.Fatalf("forced scale apply: %d %s", code, data)
		}
		d := get(t)
		all := managers(t, d.ObjectMeta)
		if *d.Spec.Replicas != 6 || all["autoscaler/Apply/scale"] != `{"f:spec":{"f:replicas":{}}}` {
			t.Errorf("replicas %d, managedFields %v", *d.Spec.Replicas, all)
		}
		for _, f := range d.ManagedFields {
			if f.Manager == "autoscaler" && f.APIVersion != "apps/v1" {
				t.Errorf("scale apply recorded in %s, want the parent's apps/v1", f.APIVersion)
			}
		}
		if _, ok := all["scaler/Update/scale"]; ok {
			t.Errorf("scaler still owns replicas: %v", all)
		}
	})
	t.Run("a status write is owned through the status subresource", func(t *testing.T) {
		d := get(t)
		d.Status.ObservedGeneration = d.Generation
		d.Status.Replicas = 1
		code, _, data := c.on(t).do(http.MethodPut, path+"/status?fieldManager=ctrl", mustJSON(t, d), "", "")
		if code != http.StatusOK {
			t.Fatalf("%d %s", code, data)
		}
		got := managers(t, metaOf(t, data))["ctrl/Update/status"]
		if !strings.Contains(got, `"f:status":{"f:observedGeneration":{},"f:replicas":{}}`) || strings.Contains(got, "f:spec") {
			t.Errorf("ctrl owns %q", got)
		}
	})
}

func TestServerSideApplyUnknownField(t *testing.T) {
	c := start(t)
	ns := c.namespace("ssa-unknown")
	code, data := c.apply("/api/v1/namespaces/"+ns+"/configmaps/cm", "m", false,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"dataa":{"a":"b"}}`)
	expectStatus(t, code, data, http.StatusInternalServerError, "",
		`failed to create typed patch object (/cm; /v1, Kind=ConfigMap): .dataa: field not declared in schema`)
	code, data = c.apply("/api/v1/namespaces/"+ns+"/configmaps/cm", "m", false, "a: [")
	expectStatus(t, code, data, http.StatusBadRequest, metav1.StatusReasonBadRequest, "")
	if st := decodeStatus(t, data); !strings.HasPrefix(st.Message, "error decoding YAML: ") {
		t.Errorf("message %q", st.Message)
	}
}

// TestServerSideApplyVersions: managedFields name the version a manager
// wrote in; conflicts are found across versions (autoscaling/v1 and v2
// HorizontalPodAutoscalers, events.k8s.io/v1 and core/v1 Events stored as
// one).
func TestServerSideApplyVersions(t *testing.T) {
	c := start(t)
	ns := c.namespace("ssa-versions")
	v1 := "/apis/autoscaling/v1/namespaces/" + ns + "/horizontalpodautoscalers/h"
	v2 := "/apis/autoscaling/v2/namespaces/" + ns + "/horizontalpodautoscalers/h"
	code, data := c.apply(v1, "old-client", false, `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"h"},
		"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":5}}`)
	if code != http.StatusCreated {
		t.Fatalf("v1 apply: %d %s", code, data)
	}
	code, _, data = c.do(http.MethodGet, v2, nil, "", "")
	if md := metaOf(t, data); code != http.StatusOK || len(md.ManagedFields) != 1 || md.ManagedFields[0].APIVersion != "autoscaling/v1" {
		t.Fatalf("read through v2: %d %+v", code, md.ManagedFields)
	}
	code, data = c.apply(v2, "new-client", false, `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"h"},
		"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":7}}`)
	expectStatus(t, code, data, http.StatusConflict, metav1.StatusReasonConflict, "")
	if st := decodeStatus(t, data); !strings.Contains(st.Message, `conflict with "old-client"`) || !strings.Contains(st.Message, ".spec.maxReplicas") {
		t.Errorf("conflict message %q", st.Message)
	}

	ev := map[string]any{"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": map[string]any{"name": "e1", "namespace": ns},
		"eventTime": "2026-01-02T03:04:05.000000Z", "reportingController": "x.io/ctl", "reportingInstance": "i", "action": "Do", "reason": "Done",
		"regarding": map[string]any{"kind": "Pod", "name": "p", "namespace": ns}, "type": "Normal"}
	code, _, data = c.do(http.MethodPost, "/apis/events.k8s.io/v1/namespaces/"+ns+"/events?fieldManager=recorder", ev, "", "")
	if code != http.StatusCreated {
		t.Fatalf("create event: %d %s", code, data)
	}
	md := metaOf(t, data)
	if len(md.ManagedFields) != 1 || md.ManagedFields[0].Manager != "recorder" || md.ManagedFields[0].APIVersion != "events.k8s.io/v1" ||
		!strings.Contains(string(md.ManagedFields[0].FieldsV1.Raw), `"f:regarding"`) {
		t.Errorf("event managedFields %+v", md.ManagedFields)
	}
}

// TestServerSideApplyCustomResource: apply on a custom resource uses the
// CRD's schema (conflicts, force, status owned through the subresource,
// conflicts across served versions); a schema preserving unknown fields
// keeps what the schema does not declare.
func TestServerSideApplyCustomResource(t *testing.T) {
	c := start(t)
	ns := c.namespace("ssa-cr")
	const group = "ssa.example.com"
	base := "/apis/" + group + "/v1/namespaces/" + ns + "/crontabs"
	c.createCRD(crontabCRD(group), base)
	ct := func(version, spec string) string {
		return `{"apiVersion":"` + group + `/` + version + `","kind":"CronTab","metadata":{"name":"ct"},"spec":` + spec + `}`
	}

	code, data := c.apply(base+"/ct", "mgr-a", false, ct("v1", `{"cronSpec":"* * * * */5","image":"img:1"}`))
	if code != http.StatusCreated {
		t.Fatalf("apply creates: %d %s", code, data)
	}
	if got := managers(t, metaOf(t, data)); got["mgr-a/Apply"] != `{"f:spec":{"f:cronSpec":{},"f:image":{}}}` {
		t.Errorf("managedFields %v", got)
	}
	code, data = c.apply(base+"/ct", "mgr-b", false, ct("v1", `{"image":"img:2"}`))
	expectStatus(t, code, data, http.StatusConflict, metav1.StatusReasonConflict, `Apply failed with 1 conflict: conflict with "mgr-a": .spec.image`)
	// The same conflict through the other served version.
	code, data = c.apply("/apis/"+group+"/v2/namespaces/"+ns+"/crontabs/ct", "mgr-b", false, ct("v2", `{"image":"img:2"}`))
	expectStatus(t, code, data, http.StatusConflict, metav1.StatusReasonConflict, `Apply failed with 1 conflict: conflict with "mgr-a": .spec.image`)
	code, data = c.apply(base+"/ct", "mgr-b", true, ct("v1", `{"image":"img:2","replicas":2}`))
	if code != http.StatusOK || !strings.Contains(string(data), `"image":"img:2"`) {
		t.Fatalf("forced apply: %d %s", code, data)
	}
	code, data = c.apply(base+"/ct/status", "ctrl", false, `{"apiVersion":"`+group+`/v1","kind":"CronTab","metadata":{"name":"ct"},"status":{"replicas":2}}`)
	if code != http.StatusOK {
		t.Fatalf("status apply: %d %s", code, data)
	}
	got := managers(t, metaOf(t, data))
	if got["ctrl/Apply/status"] != `{"f:status":{"f:replicas":{}}}` || got["mgr-b/Apply"] != `{"f:spec":{"f:image":{},"f:replicas":{}}}` {
		t.Errorf("managedFields %v", got)
	}
	// mgr-a drops cronSpec: removed; image stays (mgr-b's).
	code, data = c.apply(base+"/ct", "mgr-a", false, ct("v1", `{}`))
	if code != http.StatusOK || strings.Contains(string(data), "cronSpec") || !strings.Contains(string(data), `"image":"img:2"`) {
		t.Errorf("re-apply without cronSpec: %d %s", code, data)
	}

	// A schema that preserves unknown fields.
	open := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "blobs." + group},
		"spec": map[string]any{"group": group, "scope": "Namespaced",
			"names": map[string]any{"plural": "blobs", "singular": "blob", "kind": "Blob"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true, "schema": map[string]any{
				"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
					"spec": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}}},
	}
	blobs := "/apis/" + group + "/v1/namespaces/" + ns + "/blobs"
	c.createCRD(open, blobs)
	blob := func(spec string) string {
		return `{"apiVersion":"` + group + `/v1","kind":"Blob","metadata":{"name":"b"},"spec":` + spec + `}`
	}
	if code, data := c.apply(blobs+"/b", "one", false, blob(`{"x":{"a":1}}`)); code != http.StatusCreated {
		t.Fatalf("%d %s", code, data)
	}
	code, data = c.apply(blobs+"/b", "two", false, blob(`{"y":[1,2]}`))
	if code != http.StatusOK || !strings.Contains(string(data), `"x":{"a":1}`) || !strings.Contains(string(data), `"y":[1,2]`) {
		t.Errorf("second manager's unknown fields: %d %s", code, data)
	}
	code, data = c.apply(blobs+"/b", "two", false, blob(`{"x":{"a":2}}`))
	expectStatus(t, code, data, http.StatusConflict, metav1.StatusReasonConflict, `Apply failed with 1 conflict: conflict with "one": .spec.x.a`)
}

// TestManagedFieldsOfSystemObjects: what the API server creates at start
// is owned by "kube-apiserver", as upstream's loopback writes are.
func TestManagedFieldsOfSystemObjects(t *testing.T) {
	c := start(t)
	code, _, data := c.do(http.MethodGet, "/api/v1/namespaces/default", nil, "", "")
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, data)
	}
	md := metaOf(t, data)
	if len(md.ManagedFields) != 1 || md.ManagedFields[0].Manager != "kube-apiserver" || md.ManagedFields[0].Operation != metav1.ManagedFieldsOperationUpdate {
		t.Errorf("default namespace managedFields %+v", md.ManagedFields)
	}
}

// TestManagedFieldsReset: an update sending an empty managedFields list
// clears them, later updates of the untracked object record nothing, and
// the first apply hands its existing fields to "before-first-apply", as
// upstream does for objects written before field management.
func TestManagedFieldsReset(t *testing.T) {
	c := start(t)
	ns := c.namespace("ssa-reset")
	path := "/api/v1/namespaces/" + ns + "/configmaps/cm"
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps?fieldManager=creator", configMap("cm", nil, map[string]string{"a": "1"}), http.StatusCreated, nil)
	code, data := c.patch(path, "application/merge-patch+json", `{"metadata":{"managedFields":[]}}`)
	if code != http.StatusOK || len(metaOf(t, data).ManagedFields) != 0 {
		t.Fatalf("reset: %d %s", code, data)
	}
	code, data = c.patch(path+"?fieldManager=editor", "application/merge-patch+json", `{"data":{"b":"2"}}`)
	if code != http.StatusOK || len(metaOf(t, data).ManagedFields) != 0 {
		t.Fatalf("update of an untracked object: %d %s", code, data)
	}
	code, data = c.apply(path, "applier", false, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"a":"changed"}}`)
	expectStatus(t, code, data, http.StatusConflict, metav1.StatusReasonConflict,
		`Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.a`)
	code, data = c.apply(path, "applier", false, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"c":"3"}}`)
	if code != http.StatusOK {
		t.Fatalf("apply: %d %s", code, data)
	}
	got := managers(t, metaOf(t, data))
	if got["before-first-apply/Update"] != `{"f:data":{".":{},"f:a":{},"f:b":{}}}` || got["applier/Apply"] != `{"f:data":{"f:c":{}}}` {
		t.Errorf("managedFields %v", got)
	}
}
