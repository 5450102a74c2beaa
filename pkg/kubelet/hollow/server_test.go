package hollow

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/kubelet/server"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// A single hollow node serving its kubelet API with RBAC on: the API
// server reaches it with its kubelet client certificate, the kubelet
// authorizes that identity with a SubjectAccessReview; a simulated pod's
// log is empty, exec is refused with the runtime's error, and its stats
// reach /stats/summary and /metrics/resource through nodes/proxy.
func TestSingleHollowNodeServesTheKubeletAPI(t *testing.T) {
	env := testenv.StartT(t, testenv.Config{RBAC: true})
	ctx, cancel := context.WithCancel(context.Background())
	if err := env.EnsureServiceAccount(ctx, "default", "default"); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(env.CAData)
	wh := server.NewWebhook(c, nil)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Client: c, Nodes: 1, Name: "served", Server: &server.Config{Listener: ln, ClientCA: pool, Authenticator: wh, Authorizer: wh}})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	nodes := client.For[*corev1.Node, *corev1.NodeList](c)
	waitFor(t, "the node registered with its kubelet port", func() (bool, error) {
		n, err := nodes.Get(ctx, "served", metav1.GetOptions{})
		return err == nil && n.Status.DaemonEndpoints.KubeletEndpoint.Port == int32(ln.Addr().(*net.TCPAddr).Port) &&
			len(n.Status.Addresses) > 0 && n.Status.Addresses[0].Address == "127.0.0.1", err
	})
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "busy", Annotations: map[string]string{"sim.skiff.sh/cpu-usage": "250m", "sim.skiff.sh/memory-usage": "64Mi"}},
		Spec: corev1.PodSpec{NodeName: "served", Containers: []corev1.Container{{Name: "app", Image: "busybox"}},
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}}
	if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the pod running", func() (bool, error) {
		p, err := pods.Get(ctx, "busy", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, err
	})
	hc := env.HTTPClient()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := hc.Get(env.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get("/api/v1/namespaces/default/pods/busy/log"); code != 200 || body != "" {
		t.Errorf("log of a simulated container: %d %q", code, body)
	}
	waitFor(t, "the pod's usage in the summary", func() (bool, error) {
		code, body := get("/api/v1/nodes/served/proxy/stats/summary")
		return code == 200 && strings.Contains(body, `"name":"busy"`) && strings.Contains(body, `"usageNanoCores":250000000`), fmt.Errorf("%d %s", code, body)
	})
	if code, body := get("/api/v1/nodes/served/proxy/metrics/resource"); code != 200 || !strings.Contains(body, `pod_memory_working_set_bytes{namespace="default",pod="busy"} 6.7108864e+07`) {
		t.Errorf("resource metrics: %d %s", code, body)
	}

	// exec: the simulated runtime does not stream; the error reaches the client.
	conn, err := tls.Dial("tcp", strings.TrimPrefix(env.URL, "https://"), env.TLSConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(conn, "POST /api/v1/namespaces/default/pods/busy/exec?command=ls&stdout=true HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "exec into a simulated container: not supported by this runtime") {
		t.Errorf("exec on a simulated node: %d %s", resp.StatusCode, body)
	}
}

// Many hollow nodes share one listener, each at a loopback address of its
// own: the API server reaches each node's kubelet through nodes/proxy and
// gets that node's answers.
func TestHollowNodesShareOneKubeletListener(t *testing.T) {
	env := testenv.StartT(t, testenv.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(env.CAData)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Client: c, Nodes: 3, Server: &server.Config{Listener: ln, ClientCA: pool}})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	nodes := client.For[*corev1.Node, *corev1.NodeList](c)
	port := int32(ln.Addr().(*net.TCPAddr).Port)
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("sim-node-%d", i)
		waitFor(t, name+" registered at its loopback address", func() (bool, error) {
			n, err := nodes.Get(ctx, name, metav1.GetOptions{})
			return err == nil && len(n.Status.Addresses) > 0 && n.Status.Addresses[0].Address == LoopbackIP(i) && n.Status.DaemonEndpoints.KubeletEndpoint.Port == port, err
		})
	}
	hc := env.HTTPClient()
	for i := 0; i < 3; i++ {
		resp, err := hc.Get(fmt.Sprintf("%s/api/v1/nodes/sim-node-%d/proxy/stats/summary", env.URL, i))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), fmt.Sprintf(`"nodeName":"sim-node-%d"`, i)) {
			t.Errorf("node %d: %d %s", i, resp.StatusCode, body)
		}
	}
}
