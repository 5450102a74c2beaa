package apiserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func containerImages(d *appsv1.Deployment) string {
	var out []string
	for _, c := range d.Spec.Template.Spec.Containers {
		out = append(out, c.Name+"="+c.Image)
	}
	return strings.Join(out, ",")
}

// JSON patch, JSON merge patch and strategic merge patch on a deployment
// (whose containers a=nginx:1.27, b=busybox:1.36).
func TestSemanticsPatch(t *testing.T) {
	c := start(t)
	ns := c.namespace("patch")
	base := "/apis/apps/v1/namespaces/" + ns + "/deployments"
	tests := []struct {
		name           string
		patchType      string
		patch          string
		wantCode       int
		wantReason     metav1.StatusReason
		wantContainers string
		wantGeneration int64
		check          func(t *testing.T, d *appsv1.Deployment)
	}{
		{
			name: "json patch replace", patchType: "application/json-patch+json",
			patch:    `[{"op":"replace","path":"/spec/replicas","value":3},{"op":"add","path":"/metadata/labels/patched","value":"yes"}]`,
			wantCode: http.StatusOK, wantContainers: "a=nginx:1.27,b=busybox:1.36", wantGeneration: 2,
			check: func(t *testing.T, d *appsv1.Deployment) {
				if *d.Spec.Replicas != 3 || d.Labels["patched"] != "yes" {
					t.Errorf("replicas %d labels %v", *d.Spec.Replicas, d.Labels)
				}
			},
		},
		{
			name: "json patch on a list element", patchType: "application/json-patch+json",
			patch:    `[{"op":"replace","path":"/spec/template/spec/containers/1/image","value":"busybox:2"}]`,
			wantCode: http.StatusOK, wantContainers: "a=nginx:1.27,b=busybox:2", wantGeneration: 2,
		},
		{
			name: "json patch failing test op", patchType: "application/json-patch+json",
			patch:    `[{"op":"test","path":"/spec/replicas","value":99},{"op":"replace","path":"/spec/replicas","value":3}]`,
			wantCode: http.StatusUnprocessableEntity, wantReason: metav1.StatusReasonInvalid,
		},
		{
			name: "malformed json patch", patchType: "application/json-patch+json",
			patch: `{"op":"replace"}`, wantCode: http.StatusBadRequest, wantReason: metav1.StatusReasonBadRequest,
		},
		{
			name: "merge patch replaces lists", patchType: "application/merge-patch+json",
			patch:    `{"metadata":{"labels":{"merged":"yes"}},"spec":{"template":{"spec":{"containers":[{"name":"b","image":"busybox:2"}]}}}}`,
			wantCode: http.StatusOK, wantContainers: "b=busybox:2", wantGeneration: 2,
			check: func(t *testing.T, d *appsv1.Deployment) {
				if d.Labels["merged"] != "yes" || d.Labels["app"] == "" {
					t.Errorf("labels %v, want merged added and app kept", d.Labels)
				}
			},
		},
		{
			name: "merge patch null deletes a key", patchType: "application/merge-patch+json",
			patch:    `{"metadata":{"labels":{"app":null}}}`,
			wantCode: http.StatusOK, wantContainers: "a=nginx:1.27,b=busybox:1.36", wantGeneration: 1,
			check: func(t *testing.T, d *appsv1.Deployment) {
				if _, ok := d.Labels["app"]; ok {
					t.Errorf("label app still there: %v", d.Labels)
				}
			},
		},
		{
			name: "strategic merge patch merges containers by name", patchType: "application/strategic-merge-patch+json",
			patch:    `{"spec":{"template":{"spec":{"containers":[{"name":"b","image":"busybox:2"}]}}}}`,
			wantCode: http.StatusOK, wantContainers: "a=nginx:1.27,b=busybox:2", wantGeneration: 2,
		},
		{
			name: "strategic merge patch adds a container", patchType: "application/strategic-merge-patch+json",
			patch:    `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"redis:7"}]}}}}`,
			wantCode: http.StatusOK, wantContainers: "c=redis:7,a=nginx:1.27,b=busybox:1.36", wantGeneration: 2,
		},
		{
			name: "strategic merge patch $patch: delete", patchType: "application/strategic-merge-patch+json",
			patch:    `{"spec":{"template":{"spec":{"containers":[{"name":"a","$patch":"delete"}]}}}}`,
			wantCode: http.StatusOK, wantContainers: "b=busybox:1.36", wantGeneration: 2,
		},
		{
			name: "stale resourceVersion in a patch conflicts", patchType: "application/merge-patch+json",
			patch:    `{"metadata":{"resourceVersion":"1","labels":{"x":"y"}}}`,
			wantCode: http.StatusConflict, wantReason: metav1.StatusReasonConflict,
		},
		{
			name: "unsupported patch content type", patchType: "application/foo",
			patch: `{}`, wantCode: http.StatusUnsupportedMediaType, wantReason: metav1.StatusReasonUnsupportedMediaType,
		},
		{
			name: "spec change via patch of status fields is ignored", patchType: "application/merge-patch+json",
			patch:    `{"status":{"replicas":5}}`,
			wantCode: http.StatusOK, wantContainers: "a=nginx:1.27,b=busybox:1.36", wantGeneration: 1,
			check: func(t *testing.T, d *appsv1.Deployment) {
				if d.Status.Replicas != 0 {
					t.Errorf("patching the main resource changed status.replicas to %d", d.Status.Replicas)
				}
			},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := c.on(t)
			name := "d" + strings.Repeat("x", i)
			body := deployment(name)
			c.call(http.MethodPost, base, body, http.StatusCreated, nil)
			code, data := c.patch(base+"/"+name, tt.patchType, tt.patch)
			if tt.wantCode != http.StatusOK {
				expectStatus(t, code, data, tt.wantCode, tt.wantReason, "")
				var after appsv1.Deployment
				c.call(http.MethodGet, base+"/"+name, nil, http.StatusOK, &after)
				if after.Generation != 1 || containerImages(&after) != "a=nginx:1.27,b=busybox:1.36" {
					t.Errorf("a refused patch changed the object")
				}
				return
			}
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, data)
			}
			var d appsv1.Deployment
			if err := json.Unmarshal(data, &d); err != nil {
				t.Fatal(err)
			}
			if got := containerImages(&d); got != tt.wantContainers {
				t.Errorf("containers %s, want %s", got, tt.wantContainers)
			}
			if d.Generation != tt.wantGeneration {
				t.Errorf("generation %d, want %d", d.Generation, tt.wantGeneration)
			}
			if tt.check != nil {
				tt.check(t, &d)
			}
		})
	}
	t.Run("unsupported content type message", func(t *testing.T) {
		c := c.on(t)
		code, data := c.patch(base+"/d", "text/plain", `{}`)
		st := expectStatus(t, code, data, http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType, "")
		if !strings.HasPrefix(st.Message, "the body of the request was in an unknown format - accepted media types include: ") ||
			!strings.Contains(st.Message, "application/strategic-merge-patch+json") {
			t.Errorf("message %q", st.Message)
		}
	})
	t.Run("missing object", func(t *testing.T) {
		c := c.on(t)
		code, data := c.patch(base+"/nope", "application/merge-patch+json", `{"metadata":{"labels":{"a":"b"}}}`)
		expectStatus(t, code, data, http.StatusNotFound, metav1.StatusReasonNotFound, `deployments.apps "nope" not found`)
	})
}
