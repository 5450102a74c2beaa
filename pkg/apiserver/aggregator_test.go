package apiserver_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiregistrationv1 "github.com/skiff-sh/skiff/pkg/apis/apiregistration/v1"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// metricsServer is the handler of a metrics-server-shaped aggregated API
// server (testenv.NewAggregatedServer: TLS with its own CA for
// metrics-server.kube-system.svc, trusting only clients signed by the
// front-proxy CA); it records the X-Remote-* identity headers.
type metricsServer struct {
	caPEM []byte
	port  int
	deny  bool // answer discovery with 403

	mu   sync.Mutex
	seen []http.Header
}

func startMetricsServer(t *testing.T, frontProxyCA []byte) (*metricsServer, string) {
	t.Helper()
	m := &metricsServer{}
	srv, err := testenv.NewAggregatedServer(frontProxyCA, "kube-system", "metrics-server", m)
	if errors.Is(err, testenv.ErrNoHostIP) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	m.caPEM, m.port = srv.CAData, srv.Port
	return m, srv.IP
}

func (m *metricsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if cn := r.TLS.PeerCertificates[0].Subject.CommonName; cn != "front-proxy-client" {
		http.Error(w, "unexpected client "+cn, http.StatusUnauthorized)
		return
	}
	m.mu.Lock()
	m.seen = append(m.seen, r.Header.Clone())
	deny := m.deny
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/apis/metrics.k8s.io/v1beta1":
		if deny {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		json.NewEncoder(w).Encode(metav1.APIResourceList{
			TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "metrics.k8s.io/v1beta1",
			APIResources: []metav1.APIResource{
				{Name: "nodes", SingularName: "", Kind: "NodeMetrics", Verbs: []string{"get", "list"}},
				{Name: "pods", SingularName: "", Namespaced: true, Kind: "PodMetrics", Verbs: []string{"get", "list"}},
			}})
	case "/apis/metrics.k8s.io/v1beta1/nodes":
		w.Write([]byte(`{"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[{"metadata":{"name":"n1"},"timestamp":"2026-01-01T00:00:00Z","window":"10s","usage":{"cpu":"250m","memory":"100Mi"}}]}` + "\n"))
	default:
		http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`, http.StatusNotFound)
	}
}

func (m *metricsServer) lastHeaders() http.Header {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.seen) == 0 {
		return nil
	}
	return m.seen[len(m.seen)-1]
}

// An APIService naming a service is served through the API server: the
// availability check, the proxy with the front-proxy identity headers,
// discovery merged, and 503 once the server is gone.
func TestAggregatedAPIServer(t *testing.T) {
	c := start(t)
	m, ip := startMetricsServer(t, c.env.FrontProxyCAData)

	// What aggregated servers read to trust the proxy.
	var auth corev1.ConfigMap
	c.call(http.MethodGet, "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication", nil, http.StatusOK, &auth)
	if auth.Data["requestheader-client-ca-file"] != string(c.env.FrontProxyCAData) || auth.Data["requestheader-allowed-names"] != `["front-proxy-client"]` ||
		auth.Data["requestheader-username-headers"] != `["X-Remote-User"]` || auth.Data["requestheader-group-headers"] != `["X-Remote-Group"]` ||
		auth.Data["requestheader-extra-headers-prefix"] != `["X-Remote-Extra-"]` {
		t.Errorf("extension-apiserver-authentication = %v", auth.Data)
	}

	c.call(http.MethodPost, "/api/v1/namespaces/kube-system/services", map[string]any{
		"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "metrics-server"},
		"spec": map[string]any{"ports": []any{map[string]any{"name": "https", "port": 443, "targetPort": 4443}}},
	}, http.StatusCreated, nil)
	const slicesPath = "/apis/discovery.k8s.io/v1/namespaces/kube-system/endpointslices"
	c.call(http.MethodPost, slicesPath, map[string]any{
		"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
		"metadata":    map[string]any{"name": "metrics-server-1", "labels": map[string]any{"kubernetes.io/service-name": "metrics-server"}},
		"addressType": "IPv4",
		"endpoints":   []any{map[string]any{"addresses": []any{ip}, "conditions": map[string]any{"ready": true}}},
		"ports":       []any{map[string]any{"name": "https", "port": m.port, "protocol": "TCP"}},
	}, http.StatusCreated, nil)
	const base = "/apis/apiregistration.k8s.io/v1/apiservices"
	c.call(http.MethodPost, base, map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": map[string]any{"name": "v1beta1.metrics.k8s.io"},
		"spec": map[string]any{"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100, "versionPriority": 100,
			"service": map[string]any{"namespace": "kube-system", "name": "metrics-server"}, "caBundle": m.caPEM},
	}, http.StatusCreated, nil)
	condition := func() apiregistrationv1.APIServiceCondition {
		var a apiregistrationv1.APIService
		c.call(http.MethodGet, base+"/v1beta1.metrics.k8s.io", nil, http.StatusOK, &a)
		for _, cond := range a.Status.Conditions {
			return cond
		}
		return apiregistrationv1.APIServiceCondition{}
	}
	eventually(t, "Available", func() bool { return condition().Reason == "Passed" })
	if cond := condition(); cond.Status != "True" || cond.Message != "all checks passed" {
		t.Errorf("condition = %+v", cond)
	}
	if h := m.lastHeaders(); h.Get("X-Remote-User") != "system:kube-aggregator" || h.Get("X-Remote-Group") != "system:masters" {
		t.Errorf("discovery check sent %v", h)
	}

	// Proxied: the server's answer, the caller's identity in headers, no
	// credentials forwarded, spoofed identity headers dropped.
	code, _, data := doWith(t, c.hc, c.env.URL, http.MethodGet, "/apis/metrics.k8s.io/v1beta1/nodes", nil, "", "")
	if code != http.StatusOK || !strings.Contains(string(data), `"kind":"NodeMetricsList"`) || !strings.Contains(string(data), `"cpu":"250m"`) {
		t.Fatalf("GET nodes metrics: %d %s", code, data)
	}
	h := m.lastHeaders()
	if h.Get("X-Remote-User") != "kubernetes-admin" || !slices.Contains(h.Values("X-Remote-Group"), "system:masters") ||
		!slices.Contains(h.Values("X-Remote-Group"), "system:authenticated") || h.Get("Authorization") != "" {
		t.Errorf("proxied request headers = %v", h)
	}
	req, _ := http.NewRequest(http.MethodGet, c.env.URL+"/apis/metrics.k8s.io/v1beta1/nodes", nil)
	req.Header.Set("X-Remote-User", "someone-else")
	req.Header.Set("X-Remote-Extra-Scopes", "all")
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if h := m.lastHeaders(); h.Get("X-Remote-User") != "kubernetes-admin" || h.Get("X-Remote-Extra-Scopes") != "" {
		t.Errorf("spoofed headers passed: %v", h)
	}

	// Discovery: the group in /apis (after the built-in groups), its
	// APIGroup, and its resources in the aggregated document.
	var groups metav1.APIGroupList
	eventually(t, "metrics.k8s.io in /apis", func() bool {
		groups = metav1.APIGroupList{}
		c.call(http.MethodGet, "/apis", nil, http.StatusOK, &groups)
		return slices.ContainsFunc(groups.Groups, func(g metav1.APIGroup) bool { return g.Name == "metrics.k8s.io" })
	})
	if n := len(groups.Groups); groups.Groups[n-1].Name != "metrics.k8s.io" || groups.Groups[n-1].PreferredVersion.GroupVersion != "metrics.k8s.io/v1beta1" {
		t.Errorf("/apis ends with %+v", groups.Groups[n-1])
	}
	var group metav1.APIGroup
	c.call(http.MethodGet, "/apis/metrics.k8s.io", nil, http.StatusOK, &group)
	if len(group.Versions) != 1 || group.Versions[0].Version != "v1beta1" {
		t.Errorf("/apis/metrics.k8s.io = %+v", group)
	}
	var agg apidiscoveryv2.APIGroupDiscoveryList
	eventually(t, "metrics.k8s.io in aggregated discovery", func() bool {
		_, _, data := c.do(http.MethodGet, "/apis", nil, "", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
		agg = apidiscoveryv2.APIGroupDiscoveryList{}
		json.Unmarshal(data, &agg)
		for _, g := range agg.Items {
			if g.Name == "metrics.k8s.io" {
				return true
			}
		}
		return false
	})
	for _, g := range agg.Items {
		if g.Name != "metrics.k8s.io" {
			continue
		}
		if len(g.Versions) != 1 || len(g.Versions[0].Resources) != 2 || g.Versions[0].Resources[1].Resource != "pods" ||
			g.Versions[0].Resources[1].Scope != apidiscoveryv2.ScopeNamespace || g.Versions[0].Resources[0].ResponseKind.Kind != "NodeMetrics" ||
			g.Versions[0].Freshness != apidiscoveryv2.DiscoveryFreshnessCurrent {
			t.Errorf("aggregated discovery of metrics.k8s.io = %+v", g)
		}
	}

	// The server refuses the check: FailedDiscoveryCheck, and 503.
	m.mu.Lock()
	m.deny = true
	m.mu.Unlock()
	if code, _, data := c.do(http.MethodPatch, base+"/v1beta1.metrics.k8s.io", `{"metadata":{"labels":{"poke":"1"}}}`, "application/merge-patch+json", ""); code != http.StatusOK {
		t.Fatalf("PATCH: %d %s", code, data)
	}
	eventually(t, "FailedDiscoveryCheck", func() bool { return condition().Reason == "FailedDiscoveryCheck" })
	if cond := condition(); cond.Status != "False" || !strings.Contains(cond.Message, "failing or missing response from https://"+ip+":") ||
		!strings.HasSuffix(cond.Message, ": 403") {
		t.Errorf("condition = %+v", cond)
	}
	code, _, data = doWith(t, c.hc, c.env.URL, http.MethodGet, "/apis/metrics.k8s.io/v1beta1/nodes", nil, "", "")
	if code != http.StatusServiceUnavailable || strings.TrimSpace(string(data)) != "service unavailable" {
		t.Errorf("GET while unavailable: %d %s", code, data)
	}

	// No endpoints left: MissingEndpoints... and no slices: EndpointsNotFound.
	m.mu.Lock()
	m.deny = false
	m.mu.Unlock()
	c.call(http.MethodDelete, slicesPath+"/metrics-server-1", nil, http.StatusOK, nil)
	eventually(t, "EndpointsNotFound", func() bool { return condition().Reason == "EndpointsNotFound" })
	if cond := condition(); cond.Message != `cannot find endpointslices for service/metrics-server in "kube-system"` {
		t.Errorf("condition = %+v", cond)
	}

	// The APIService gone: the group leaves discovery, the path is 404.
	c.call(http.MethodDelete, base+"/v1beta1.metrics.k8s.io", nil, http.StatusOK, nil)
	eventually(t, "metrics.k8s.io to leave /apis", func() bool {
		var groups metav1.APIGroupList
		c.call(http.MethodGet, "/apis", nil, http.StatusOK, &groups)
		return !slices.ContainsFunc(groups.Groups, func(g metav1.APIGroup) bool { return g.Name == "metrics.k8s.io" })
	})
	c.call(http.MethodGet, "/apis/metrics.k8s.io/v1beta1/nodes", nil, http.StatusNotFound, nil)
}
