package cluster

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
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

// The metrics-server's port is kept in the data dir: chosen once, served
// on again at the next start while free, chosen anew (and logged, and
// kept) when taken or when the file holds no port.
func TestKeptPortListener(t *testing.T) {
	const host = "127.0.0.1"
	path := MetricsServerPortPath(t.TempDir())
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	listen := func() int {
		t.Helper()
		ln, err := keptPortListener(path, host, logger)
		if err != nil {
			t.Fatal(err)
		}
		ln.Close()
		return ln.Addr().(*net.TCPAddr).Port
	}
	kept := func() string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}

	first := listen()
	if kept() != strconv.Itoa(first) {
		t.Fatalf("first start on %d keeps %q", first, kept())
	}
	if again := listen(); again != first {
		t.Errorf("restart: port %d, want the kept %d", again, first)
	}
	if logs.Len() != 0 {
		t.Errorf("logged while the kept port was free: %s", logs.String())
	}

	taken, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(first)))
	if err != nil {
		t.Fatal(err)
	}
	moved := listen()
	taken.Close()
	if moved == first {
		t.Fatalf("kept port %d taken: served on it", first)
	}
	if kept() != strconv.Itoa(moved) {
		t.Errorf("moved to %d, keeps %q", moved, kept())
	}
	if l := logs.String(); !strings.Contains(l, "the kept port is taken") || !strings.Contains(l, "port="+strconv.Itoa(first)) ||
		!strings.Contains(l, "newPort="+strconv.Itoa(moved)) {
		t.Errorf("taken port not logged with both ports: %s", l)
	}
	if again := listen(); again != moved {
		t.Errorf("restart after the move: port %d, want %d", again, moved)
	}

	logs.Reset()
	if err := os.WriteFile(path, []byte("not a port\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	chosen := listen()
	if kept() != strconv.Itoa(chosen) || !strings.Contains(logs.String(), "not a port number") {
		t.Errorf("garbage port file: served on %d, keeps %q, logged %s", chosen, kept(), logs.String())
	}
}
