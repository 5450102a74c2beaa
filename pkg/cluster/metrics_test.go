package cluster

import (
	"encoding/json"
	"io"
	"testing"
	"time"
)

// TestUpMetricsServer: skiff up installs its metrics-server as upstream's
// manifest does (the APIService v1beta1.metrics.k8s.io, its Service and
// RBAC), the API server finds it Available, and the metrics API answers
// through the aggregation.
func TestUpMetricsServer(t *testing.T) {
	if hostIP("") == "" {
		t.Skip("no non-loopback IPv4 address: skiff up does not start its metrics-server")
	}
	c, url, stop := startUp(t, t.TempDir(), "memory", freePort(t))
	defer stop()
	get := func(path string, into any) int {
		t.Helper()
		resp, err := c.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if into != nil && resp.StatusCode == 200 {
			if err := json.Unmarshal(b, into); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
		return resp.StatusCode
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var svc struct {
			Status struct {
				Conditions []struct{ Type, Status, Reason, Message string }
			}
		}
		if get("/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io", &svc) == 200 {
			if len(svc.Status.Conditions) > 0 && svc.Status.Conditions[0].Status == "True" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("APIService not Available: %+v", svc.Status.Conditions)
			}
		} else if time.Now().After(deadline) {
			t.Fatal("no APIService v1beta1.metrics.k8s.io")
		}
		time.Sleep(20 * time.Millisecond)
	}
	var list struct {
		Kind  string
		Items []any
	}
	if code := get("/apis/metrics.k8s.io/v1beta1/nodes", &list); code != 200 || list.Kind != "NodeMetricsList" {
		t.Errorf("nodes metrics: %d %+v", code, list)
	}
	if code := get("/apis/rbac.authorization.k8s.io/v1/clusterroles/system:aggregated-metrics-reader", nil); code != 200 {
		t.Errorf("system:aggregated-metrics-reader: %d", code)
	}
}
