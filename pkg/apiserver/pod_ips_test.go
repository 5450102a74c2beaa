package apiserver_test

import (
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A status write that sets only status.podIP (as kwok and older kubelets
// do) gets status.podIPs too, as upstream's conversion gives it: the
// EndpointSlice controller reads podIPs.
func TestPodStatusIPsKeptInStep(t *testing.T) {
	c := start(t)
	ns := c.namespace("podips")
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", pod("web", "nginx"), http.StatusCreated, nil)
	code, body := c.patch("/api/v1/namespaces/"+ns+"/pods/web/status", "application/merge-patch+json",
		map[string]any{"status": map[string]any{"podIP": "10.0.0.7", "hostIP": "192.168.1.2"}})
	if code != http.StatusOK {
		t.Fatalf("status patch: %d %s", code, body)
	}
	var got corev1.Pod
	c.call(http.MethodGet, "/api/v1/namespaces/"+ns+"/pods/web", nil, http.StatusOK, &got)
	if len(got.Status.PodIPs) != 1 || got.Status.PodIPs[0].IP != "10.0.0.7" {
		t.Errorf("podIPs = %v, want [10.0.0.7]", got.Status.PodIPs)
	}
	if len(got.Status.HostIPs) != 1 || got.Status.HostIPs[0].IP != "192.168.1.2" {
		t.Errorf("hostIPs = %v, want [192.168.1.2]", got.Status.HostIPs)
	}
}
