package apiserver_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiregistrationv1 "github.com/skiff-sh/skiff/pkg/apis/apiregistration/v1"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// A local APIService exists for each served group/version (upstream's
// priorities, Available because Local), one appears for a CRD's
// group/versions and goes with the CRD; a user's APIService is validated.
func TestAPIServices(t *testing.T) {
	fake := clock.NewFake(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	c := start(t, testenv.Config{Clock: fake})
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

	// A deleted local APIService comes back.
	c.call(http.MethodDelete, base+"/v1.apps", nil, http.StatusOK, nil)
	eventually(t, "v1.apps to come back", func() bool {
		fake.Step(5 * time.Second)
		code, _, _ := c.do(http.MethodGet, base+"/v1.apps", nil, "", "")
		return code == http.StatusOK
	})

	// An APIService served elsewhere: its service is missing, then has no
	// EndpointSlices (aggregator_test.go goes on to serve it).
	c.call(http.MethodPost, base, map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": map[string]any{"name": "v1beta1.metrics.k8s.io"},
		"spec": map[string]any{"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100, "versionPriority": 100,
			"service": map[string]any{"namespace": "kube-system", "name": "metrics-server"}},
	}, http.StatusCreated, nil)
	available := func() string {
		var a apiregistrationv1.APIService
		c.call(http.MethodGet, base+"/v1beta1.metrics.k8s.io", nil, http.StatusOK, &a)
		for _, cond := range a.Status.Conditions {
			return string(cond.Status) + " " + cond.Reason
		}
		return ""
	}
	eventually(t, "ServiceNotFound", func() bool { fake.Step(5 * time.Second); return available() == "False ServiceNotFound" })
	c.call(http.MethodPost, "/api/v1/namespaces/kube-system/services", map[string]any{
		"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "metrics-server"},
		"spec": map[string]any{"ports": []any{map[string]any{"name": "https", "port": 443}}},
	}, http.StatusCreated, nil)
	eventually(t, "EndpointsNotFound", func() bool { fake.Step(5 * time.Second); return available() == "False EndpointsNotFound" })

	code, _, data := c.do(http.MethodPost, base, map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": map[string]any{"name": "v1beta1.other.k8s.io"},
		"spec": map[string]any{"group": "other.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100, "versionPriority": 100,
			"service": map[string]any{"namespace": "kube-system", "name": "metrics-server"}, "caBundle": "cGVt", "insecureSkipTLSVerify": true},
	}, "", "")
	expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		`APIService.apiregistration.k8s.io "v1beta1.other.k8s.io" is invalid: spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present`)
}
