package apiserver_test

import (
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The RuntimeClass admission plugin (on by default, as upstream's): a pod
// naming a RuntimeClass gets its overhead and scheduling, a missing class
// or a conflicting overhead or node selector is refused with upstream's
// messages.
func TestRuntimeClassAdmission(t *testing.T) {
	c := start(t)
	ns := c.namespace("rc")
	c.call(http.MethodPost, "/apis/node.k8s.io/v1/runtimeclasses", map[string]any{"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
		"metadata": map[string]any{"name": "kata"}, "handler": "kata",
		"overhead":   map[string]any{"podFixed": map[string]any{"cpu": "250m", "memory": "120Mi"}},
		"scheduling": map[string]any{"nodeSelector": map[string]string{"runtime": "kata"}, "tolerations": []any{map[string]any{"key": "kata", "operator": "Exists"}}},
	}, http.StatusCreated, nil)
	podWith := func(name string, spec map[string]any) map[string]any {
		p := pod(name, "nginx")
		for k, v := range spec {
			p["spec"].(map[string]any)[k] = v
		}
		return p
	}
	pods := "/api/v1/namespaces/" + ns + "/pods"

	var got corev1.Pod
	c.call(http.MethodPost, pods, podWith("ok", map[string]any{"runtimeClassName": "kata", "nodeSelector": map[string]string{"zone": "a"},
		"tolerations": []any{map[string]any{"key": "kata", "operator": "Equal", "value": "x"}}}), http.StatusCreated, &got)
	if got.Spec.Overhead.Cpu().String() != "250m" || got.Spec.Overhead.Memory().String() != "120Mi" {
		t.Errorf("overhead %v, want the class's", got.Spec.Overhead)
	}
	if got.Spec.NodeSelector["runtime"] != "kata" || got.Spec.NodeSelector["zone"] != "a" {
		t.Errorf("nodeSelector %v, want the pod's and the class's", got.Spec.NodeSelector)
	}
	// The class's Exists toleration covers the pod's Equal one.
	var kata []corev1.Toleration
	for _, tol := range got.Spec.Tolerations {
		if tol.Key == "kata" {
			kata = append(kata, tol)
		}
	}
	if len(kata) != 1 || kata[0].Operator != corev1.TolerationOpExists {
		t.Errorf("kata tolerations %v, want the class's Exists only", kata)
	}

	for _, tt := range []struct {
		name string
		spec map[string]any
		want string
	}{
		{"missing", map[string]any{"runtimeClassName": "gvisor"}, `pods "missing" is forbidden: pod rejected: RuntimeClass "gvisor" not found`},
		{"conflict", map[string]any{"runtimeClassName": "kata", "nodeSelector": map[string]string{"runtime": "runc"}},
			`pods "conflict" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[runtime] = kata; pod.spec.nodeSelector[runtime] = runc`},
		{"overhead", map[string]any{"runtimeClassName": "kata", "overhead": map[string]string{"cpu": "1"}},
			`pods "overhead" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`},
		{"overhead-without-class", map[string]any{"overhead": map[string]string{"cpu": "1"}},
			`pods "overhead-without-class" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, data := c.do(http.MethodPost, pods, podWith(tt.name, tt.spec), "", "")
			expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden, tt.want)
		})
	}
}
