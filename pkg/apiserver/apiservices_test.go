package apiserver_test

import (
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiregistrationv1 "github.com/skiff-sh/skiff/pkg/apis/apiregistration/v1"
)

// A local APIService exists for each served group/version (upstream's
// priorities, Available because Local), one appears for a CRD's
// group/versions and goes with the CRD; a user's APIService is validated.
func TestAPIServices(t *testing.T) {
	c := start(t)
	const base = "/apis/apiregistration.k8s.io/v1/apiservices"
	var list apiregistrationv1.APIServiceList
	c.call(http.MethodGet, base, nil, http.StatusOK, &list)
	byName := map[string]apiregistrationv1.APIService{}
	for _, a := range list.Items {
		byName[a.Name] = a
	}
	for _, name := range []string{"v1.", "v1.apps", "v2.autoscaling", "v1.flowcontrol.apiserver.k8s.io", "v1.apiregistration.k8s.io", "v1.certificates.k8s.io"} {
		a, ok := byName[name]
		if !ok {
			t.Errorf("no APIService %s", name)
			continue
		}
		if a.Spec.Service != nil || len(a.Status.Conditions) != 1 || a.Status.Conditions[0].Status != "True" || a.Status.Conditions[0].Reason != "Local" {
			t.Errorf("%s: %+v", name, a)
		}
	}
	if a := byName["v1.apps"]; a.Spec.GroupPriorityMinimum != 17800 || a.Spec.VersionPriority != 15 {
		t.Errorf("v1.apps priorities = %d/%d", a.Spec.GroupPriorityMinimum, a.Spec.VersionPriority)
	}

	// client-go asks for protobuf (upstream's types have it).
	for _, path := range []string{base, base + "/v1.apps"} {
		code, h, data := c.do(http.MethodGet, path, nil, "", "application/vnd.kubernetes.protobuf")
		if code != http.StatusOK || h.Get("Content-Type") != "application/vnd.kubernetes.protobuf" || !strings.HasPrefix(string(data), "k8s\x00") ||
			!strings.Contains(string(data), "v1.apps") {
			t.Errorf("GET %s as protobuf: %d %s %q", path, code, h.Get("Content-Type"), data)
		}
	}

	// OpenAPI names, documents and merges them as upstream's.
	doc := string(c.call(http.MethodGet, "/openapi/v3/apis/apiregistration.k8s.io/v1", nil, http.StatusOK, nil))
	for _, want := range []string{`"io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService"`, `"x-kubernetes-list-map-keys":["type"]`,
		"APIService represents a server for a particular GroupVersion."} {
		if !strings.Contains(doc, want) {
			t.Errorf("OpenAPI v3 lacks %s", want)
		}
	}

	c.createCRD(crontabCRD("stable.example.com"), "/apis/stable.example.com/v1/crontabs")
	var cr apiregistrationv1.APIService
	eventually(t, "the CRD's APIServices", func() bool {
		code, _, _ := c.do(http.MethodGet, base+"/v2.stable.example.com", nil, "", "")
		return code == http.StatusOK
	})
	c.call(http.MethodGet, base+"/v1.stable.example.com", nil, http.StatusOK, &cr)
	if cr.Spec.GroupPriorityMinimum != 1000 || cr.Spec.VersionPriority != 100 || cr.Labels["kube-aggregator.kubernetes.io/automanaged"] != "true" {
		t.Errorf("CRD APIService = %+v", cr)
	}
	c.call(http.MethodDelete, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com", nil, http.StatusOK, nil)
	eventually(t, "the CRD's APIService to go", func() bool {
		code, _, _ := c.do(http.MethodGet, base+"/v1.stable.example.com", nil, "", "")
		return code == http.StatusNotFound
	})

	code, _, data := c.do(http.MethodPost, base, map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": map[string]any{"name": "v1beta1.metrics.k8s.io"},
		"spec": map[string]any{"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100, "versionPriority": 100,
			"service": map[string]any{"namespace": "kube-system", "name": "metrics-server"}, "caBundle": "cGVt", "insecureSkipTLSVerify": true},
	}, "", "")
	expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		`APIService.apiregistration.k8s.io "v1beta1.metrics.k8s.io" is invalid: spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present`)
}
