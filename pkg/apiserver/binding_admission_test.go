package apiserver_test

import (
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

func bindingTo(name, node string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Binding", "metadata": map[string]any{"name": name},
		"target": map[string]any{"apiVersion": "v1", "kind": "Node", "name": node}}
}

// PodTopologyLabels copies the node's zone and region labels (and no
// other) onto a pod through its binding, or onto a pod created on a node,
// with upstream's alpha feature gate PodTopologyLabelsAdmission on; with
// it off (1.34's default) a binding copies no labels at all.
func TestPodTopologyLabels(t *testing.T) {
	nodeLabels := map[string]string{corev1.LabelTopologyZone: "z1", corev1.LabelTopologyRegion: "r1",
		corev1.LabelHostname: "n1", "topology.kubernetes.io/rack": "k7"}
	tests := []struct {
		name string
		gate bool
		// want are the pod's labels after binding with a Binding carrying
		// the label "from-binding": "yes".
		want map[string]string
	}{
		{name: "gate off", gate: false, want: map[string]string{"app": "web"}},
		{name: "gate on", gate: true, want: map[string]string{"app": "web", "from-binding": "yes",
			corev1.LabelTopologyZone: "z1", corev1.LabelTopologyRegion: "r1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := start(t, testenv.Config{Tweak: func(cfg *apiserver.Config) { cfg.PodTopologyLabelsAdmission = tt.gate }})
			ns := c.namespace("topo")
			c.call(http.MethodPost, "/api/v1/nodes", map[string]any{"apiVersion": "v1", "kind": "Node",
				"metadata": map[string]any{"name": "n1", "labels": nodeLabels}}, http.StatusCreated, nil)
			pods := "/api/v1/namespaces/" + ns + "/pods"
			p := pod("p", "nginx")
			// The pod's own zone label is overwritten by the node's.
			p["metadata"].(map[string]any)["labels"] = map[string]string{"app": "web"}
			c.call(http.MethodPost, pods, p, http.StatusCreated, nil)
			b := bindingTo("p", "n1")
			b["metadata"].(map[string]any)["labels"] = map[string]string{"from-binding": "yes"}
			c.call(http.MethodPost, pods+"/p/binding", b, http.StatusCreated, nil)
			var got corev1.Pod
			c.call(http.MethodGet, pods+"/p", nil, http.StatusOK, &got)
			if got.Spec.NodeName != "n1" || !mapsEqual(got.Labels, tt.want) {
				t.Errorf("bound pod: node %q labels %v, want n1 and %v", got.Spec.NodeName, got.Labels, tt.want)
			}

			// A pod created on its node gets the labels at once; one on an
			// unknown node gets none.
			onNode := pod("direct", "nginx")
			onNode["spec"].(map[string]any)["nodeName"] = "n1"
			got = corev1.Pod{}
			c.call(http.MethodPost, pods, onNode, http.StatusCreated, &got)
			if wantZone := map[bool]string{true: "z1"}[tt.gate]; got.Labels[corev1.LabelTopologyZone] != wantZone ||
				(tt.gate && got.Labels[corev1.LabelTopologyRegion] != "r1") || got.Labels[corev1.LabelHostname] != "" {
				t.Errorf("pod created on n1: labels %v", got.Labels)
			}
			c.call(http.MethodPost, pods, pod("q", "nginx"), http.StatusCreated, nil)
			c.call(http.MethodPost, pods+"/q/binding", bindingTo("q", "unknown"), http.StatusCreated, nil)
			got = corev1.Pod{}
			c.call(http.MethodGet, pods+"/q", nil, http.StatusOK, &got)
			if got.Spec.NodeName != "unknown" || len(got.Labels) != 0 {
				t.Errorf("pod bound to an unknown node: node %q labels %v, want no labels", got.Spec.NodeName, got.Labels)
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// NamespaceLifecycle refuses a binding in a terminating namespace, as
// upstream's (pods/binding and core/v1 bindings alike).
func TestBindingInTerminatingNamespace(t *testing.T) {
	c := start(t)
	ns := c.namespace("bind-going")
	pods := "/api/v1/namespaces/" + ns + "/pods"
	c.call(http.MethodPost, pods, pod("p", "nginx"), http.StatusCreated, nil)
	code, data := c.patch("/api/v1/namespaces/"+ns, "application/merge-patch+json", map[string]any{"metadata": map[string]any{"finalizers": []string{"example.com/hold"}}})
	if code != http.StatusOK {
		t.Fatalf("patch namespace: %d %s", code, data)
	}
	c.call(http.MethodDelete, "/api/v1/namespaces/"+ns, nil, http.StatusOK, nil)
	want := `pods "p" is forbidden: unable to create new content in namespace ` + ns + ` because it is being terminated`
	code, _, data = c.do(http.MethodPost, pods+"/p/binding", bindingTo("p", "n1"), "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden, want)
	code, _, data = c.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/bindings", bindingTo("p", "n1"), "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`bindings "p" is forbidden: unable to create new content in namespace `+ns+` because it is being terminated`)
	var got corev1.Pod
	c.call(http.MethodGet, pods+"/p", nil, http.StatusOK, &got)
	if got.Spec.NodeName != "" {
		t.Errorf("pod bound to %q in a terminating namespace", got.Spec.NodeName)
	}
}
