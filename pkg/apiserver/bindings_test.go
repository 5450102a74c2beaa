package apiserver_test

import (
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// core/v1 bindings, the older form of pods/binding upstream still serves:
// create-only, listed in discovery, the Binding's own name naming the pod.
func TestBindingsResource(t *testing.T) {
	c := start(t)
	ns := c.namespace("bindings")
	base := "/api/v1/namespaces/" + ns
	c.call(http.MethodPost, base+"/pods", pod("p1", "nginx:1.27"), http.StatusCreated, nil)
	binding := func(name, node string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Binding", "metadata": map[string]any{"name": name},
			"target": map[string]any{"apiVersion": "v1", "kind": "Node", "name": node}}
	}
	var st metav1.Status
	c.call(http.MethodPost, base+"/bindings", binding("p1", "node-1"), http.StatusCreated, &st)
	if st.Status != metav1.StatusSuccess {
		t.Errorf("bindings answered %+v", st)
	}
	var p corev1.Pod
	c.call(http.MethodGet, base+"/pods/p1", nil, http.StatusOK, &p)
	if p.Spec.NodeName != "node-1" {
		t.Errorf("pod bound to %q, want node-1", p.Spec.NodeName)
	}
	code, _, data := c.do(http.MethodPost, base+"/bindings", binding("p1", "node-2"), "", "")
	expectStatus(t, code, data, http.StatusConflict, metav1.StatusReasonConflict,
		`Operation cannot be fulfilled on pods/binding "p1": pod p1 is already assigned to node "node-1"`)
	code, _, data = c.do(http.MethodPost, base+"/bindings", binding("nope", "node-1"), "", "")
	expectStatus(t, code, data, http.StatusNotFound, metav1.StatusReasonNotFound, `pods "nope" not found`)
	code, _, _ = c.do(http.MethodGet, base+"/bindings", nil, "", "")
	if code != http.StatusMethodNotAllowed && code != http.StatusNotFound {
		t.Errorf("GET bindings: %d, want 405 (create only)", code)
	}

	var list metav1.APIResourceList
	c.call(http.MethodGet, "/api/v1", nil, http.StatusOK, &list)
	found := false
	for _, r := range list.APIResources {
		if r.Name == "bindings" {
			found = true
			if !r.Namespaced || r.Kind != "Binding" || len(r.Verbs) != 1 || r.Verbs[0] != "create" {
				t.Errorf("discovery: %+v", r)
			}
		}
	}
	if !found {
		t.Errorf("/api/v1 does not list bindings")
	}
}
